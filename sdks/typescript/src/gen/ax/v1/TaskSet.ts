// Original file: ax/v1/admin.proto

import type { TaskSpec as _ax_v1_TaskSpec, TaskSpec__Output as _ax_v1_TaskSpec__Output } from '../../ax/v1/TaskSpec';

export interface TaskSet {
  'tasks'?: (_ax_v1_TaskSpec)[];
}

export interface TaskSet__Output {
  'tasks': (_ax_v1_TaskSpec__Output)[];
}
