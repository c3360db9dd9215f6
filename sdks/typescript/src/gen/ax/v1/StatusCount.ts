// Original file: ax/v1/admin.proto

import type { InstanceStatus as _ax_v1_InstanceStatus, InstanceStatus__Output as _ax_v1_InstanceStatus__Output } from '../../ax/v1/InstanceStatus';
import type { Long } from '@grpc/proto-loader';

export interface StatusCount {
  'status'?: (_ax_v1_InstanceStatus);
  'count'?: (number | string | Long);
}

export interface StatusCount__Output {
  'status': (_ax_v1_InstanceStatus__Output);
  'count': (string);
}
