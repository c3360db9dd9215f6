// Original file: ax/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface RetryInstanceRequest {
  'id'?: (number | string | Long);
}

export interface RetryInstanceRequest__Output {
  'id': (string);
}
