// Original file: ax/v1/admin.proto

import type { SchedulerNode as _ax_v1_SchedulerNode, SchedulerNode__Output as _ax_v1_SchedulerNode__Output } from '../../ax/v1/SchedulerNode';

export interface ListSchedulersResponse {
  'schedulers'?: (_ax_v1_SchedulerNode)[];
}

export interface ListSchedulersResponse__Output {
  'schedulers': (_ax_v1_SchedulerNode__Output)[];
}
