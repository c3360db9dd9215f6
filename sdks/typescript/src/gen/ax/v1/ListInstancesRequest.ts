// Original file: ax/v1/admin.proto

import type { InstanceStatus as _ax_v1_InstanceStatus, InstanceStatus__Output as _ax_v1_InstanceStatus__Output } from '../../ax/v1/InstanceStatus';

export interface ListInstancesRequest {
  'task_name'?: (string);
  'status'?: (_ax_v1_InstanceStatus);
  'page_size'?: (number);
  'page_token'?: (string);
}

export interface ListInstancesRequest__Output {
  'task_name': (string);
  'status': (_ax_v1_InstanceStatus__Output);
  'page_size': (number);
  'page_token': (string);
}
