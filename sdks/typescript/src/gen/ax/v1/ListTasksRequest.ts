// Original file: ax/v1/admin.proto


export interface ListTasksRequest {
  'app'?: (string);
  'page_size'?: (number);
  'page_token'?: (string);
}

export interface ListTasksRequest__Output {
  'app': (string);
  'page_size': (number);
  'page_token': (string);
}
