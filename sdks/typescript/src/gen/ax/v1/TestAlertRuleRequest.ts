// Original file: ax/v1/admin.proto


export interface TestAlertRuleRequest {
  'name'?: (string);
}

export interface TestAlertRuleRequest__Output {
  'name': (string);
}
