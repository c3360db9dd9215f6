// Original file: ax/v1/admin.proto


export interface ListAlertRulesRequest {
  'app'?: (string);
}

export interface ListAlertRulesRequest__Output {
  'app': (string);
}
