// Original file: ax/v1/admin.proto


export interface DeleteTaskRequest {
  'name'?: (string);
}

export interface DeleteTaskRequest__Output {
  'name': (string);
}
