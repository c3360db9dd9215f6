// Original file: ax/v1/admin.proto


export interface DeleteAlertRuleResponse {
}

export interface DeleteAlertRuleResponse__Output {
}
