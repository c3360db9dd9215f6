// Original file: ax/v1/worker.proto

import type { Long } from '@grpc/proto-loader';

export interface Progress {
  'instance_id'?: (number | string | Long);
  'attempt'?: (number);
  'percent'?: (number);
  'message'?: (string);
}

export interface Progress__Output {
  'instance_id': (string);
  'attempt': (number);
  'percent': (number);
  'message': (string);
}
