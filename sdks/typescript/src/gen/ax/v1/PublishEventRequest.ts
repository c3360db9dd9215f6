// Original file: ax/v1/admin.proto


export interface PublishEventRequest {
  'app'?: (string);
  'name'?: (string);
  'payload'?: (string);
  'id'?: (string);
}

export interface PublishEventRequest__Output {
  'app': (string);
  'name': (string);
  'payload': (string);
  'id': (string);
}
