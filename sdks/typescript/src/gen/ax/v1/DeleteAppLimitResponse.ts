// Original file: ax/v1/admin.proto


export interface DeleteAppLimitResponse {
}

export interface DeleteAppLimitResponse__Output {
}
