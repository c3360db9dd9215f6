// Original file: ax/v1/admin.proto

import type { TaskSpec as _ax_v1_TaskSpec, TaskSpec__Output as _ax_v1_TaskSpec__Output } from '../../ax/v1/TaskSpec';

export interface CreateTaskRequest {
  'task'?: (_ax_v1_TaskSpec | null);
}

export interface CreateTaskRequest__Output {
  'task': (_ax_v1_TaskSpec__Output | null);
}
