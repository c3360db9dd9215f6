// Original file: ax/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface GetRunRequest {
  'run_id'?: (number | string | Long);
}

export interface GetRunRequest__Output {
  'run_id': (string);
}
