// Original file: ax/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface WatchInstanceRequest {
  'id'?: (number | string | Long);
  'logs'?: (boolean);
}

export interface WatchInstanceRequest__Output {
  'id': (string);
  'logs': (boolean);
}
