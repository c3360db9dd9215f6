// Original file: ax/v1/admin.proto

import type { Task as _ax_v1_Task, Task__Output as _ax_v1_Task__Output } from '../../ax/v1/Task';

export interface ResumeTaskResponse {
  'task'?: (_ax_v1_Task | null);
}

export interface ResumeTaskResponse__Output {
  'task': (_ax_v1_Task__Output | null);
}
