// Original file: ax/v1/admin.proto


export interface DeleteAlertRuleRequest {
  'name'?: (string);
}

export interface DeleteAlertRuleRequest__Output {
  'name': (string);
}
