// Original file: ax/v1/types.proto

import type { Long } from '@grpc/proto-loader';

export interface InstanceAttempt {
  'instance_id'?: (number | string | Long);
  'attempt'?: (number);
}

export interface InstanceAttempt__Output {
  'instance_id': (string);
  'attempt': (number);
}
