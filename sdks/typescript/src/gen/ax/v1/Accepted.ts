// Original file: ax/v1/worker.proto

import type { Long } from '@grpc/proto-loader';

export interface Accepted {
  'instance_id'?: (number | string | Long);
  'attempt'?: (number);
}

export interface Accepted__Output {
  'instance_id': (string);
  'attempt': (number);
}
