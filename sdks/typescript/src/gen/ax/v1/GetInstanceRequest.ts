// Original file: ax/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface GetInstanceRequest {
  'id'?: (number | string | Long);
}

export interface GetInstanceRequest__Output {
  'id': (string);
}
