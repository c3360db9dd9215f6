// Original file: ax/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface DeleteTaskResponse {
  'canceled_instances'?: (number | string | Long);
}

export interface DeleteTaskResponse__Output {
  'canceled_instances': (string);
}
