// Original file: ax/v1/admin.proto


export interface ListWorkersRequest {
  'app'?: (string);
}

export interface ListWorkersRequest__Output {
  'app': (string);
}
