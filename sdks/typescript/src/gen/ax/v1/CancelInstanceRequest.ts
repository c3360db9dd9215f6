// Original file: ax/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface CancelInstanceRequest {
  'id'?: (number | string | Long);
  'reason'?: (string);
}

export interface CancelInstanceRequest__Output {
  'id': (string);
  'reason': (string);
}
