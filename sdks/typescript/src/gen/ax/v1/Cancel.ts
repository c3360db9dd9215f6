// Original file: ax/v1/worker.proto

import type { Long } from '@grpc/proto-loader';

export interface Cancel {
  'instance_id'?: (number | string | Long);
  'attempt'?: (number);
  'reason'?: (string);
}

export interface Cancel__Output {
  'instance_id': (string);
  'attempt': (number);
  'reason': (string);
}
