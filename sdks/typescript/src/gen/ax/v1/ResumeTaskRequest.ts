// Original file: ax/v1/admin.proto


export interface ResumeTaskRequest {
  'name'?: (string);
}

export interface ResumeTaskRequest__Output {
  'name': (string);
}
