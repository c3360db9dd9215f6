// Original file: ax/v1/admin.proto


export interface EnableTaskRequest {
  'name'?: (string);
}

export interface EnableTaskRequest__Output {
  'name': (string);
}
