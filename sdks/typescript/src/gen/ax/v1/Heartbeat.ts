// Original file: ax/v1/worker.proto

import type { Long } from '@grpc/proto-loader';

export interface Heartbeat {
  'running'?: (number);
  'seq'?: (number | string | Long);
}

export interface Heartbeat__Output {
  'running': (number);
  'seq': (string);
}
