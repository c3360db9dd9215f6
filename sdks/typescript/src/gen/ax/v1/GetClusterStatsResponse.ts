// Original file: ax/v1/admin.proto

import type { StatusCount as _ax_v1_StatusCount, StatusCount__Output as _ax_v1_StatusCount__Output } from '../../ax/v1/StatusCount';
import type { SchedulerHealth as _ax_v1_SchedulerHealth, SchedulerHealth__Output as _ax_v1_SchedulerHealth__Output } from '../../ax/v1/SchedulerHealth';
import type { Long } from '@grpc/proto-loader';

export interface GetClusterStatsResponse {
  'tasks'?: (number | string | Long);
  'enabled_tasks'?: (number | string | Long);
  'instances'?: (_ax_v1_StatusCount)[];
  'workers'?: (number | string | Long);
  'schedulers'?: (number | string | Long);
  'answered_by'?: (_ax_v1_SchedulerHealth | null);
}

export interface GetClusterStatsResponse__Output {
  'tasks': (string);
  'enabled_tasks': (string);
  'instances': (_ax_v1_StatusCount__Output)[];
  'workers': (string);
  'schedulers': (string);
  'answered_by': (_ax_v1_SchedulerHealth__Output | null);
}
