// Original file: ax/v1/worker.proto

import type { Long } from '@grpc/proto-loader';

export interface Reject {
  'instance_id'?: (number | string | Long);
  'attempt'?: (number);
  'reason'?: (string);
}

export interface Reject__Output {
  'instance_id': (string);
  'attempt': (number);
  'reason': (string);
}
