// Original file: ax/v1/worker.proto

import type { Long } from '@grpc/proto-loader';

export interface ResultAck {
  'instance_id'?: (number | string | Long);
  'attempt'?: (number);
  'applied'?: (boolean);
  'note'?: (string);
}

export interface ResultAck__Output {
  'instance_id': (string);
  'attempt': (number);
  'applied': (boolean);
  'note': (string);
}
