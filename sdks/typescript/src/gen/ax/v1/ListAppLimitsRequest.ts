// Original file: ax/v1/admin.proto


export interface ListAppLimitsRequest {
}

export interface ListAppLimitsRequest__Output {
}
