// Original file: ax/v1/admin.proto


export interface DeleteAppLimitRequest {
  'app'?: (string);
}

export interface DeleteAppLimitRequest__Output {
  'app': (string);
}
