// Original file: ax/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface GetInstanceLogsRequest {
  'id'?: (number | string | Long);
  'after_seq'?: (number | string | Long);
  'limit'?: (number);
}

export interface GetInstanceLogsRequest__Output {
  'id': (string);
  'after_seq': (string);
  'limit': (number);
}
