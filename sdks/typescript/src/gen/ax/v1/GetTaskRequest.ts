// Original file: ax/v1/admin.proto


export interface GetTaskRequest {
  'name'?: (string);
}

export interface GetTaskRequest__Output {
  'name': (string);
}
