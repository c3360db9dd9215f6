// Original file: ax/v1/admin.proto

import type { Task as _ax_v1_Task, Task__Output as _ax_v1_Task__Output } from '../../ax/v1/Task';
import type { TaskEvent as _ax_v1_TaskEvent, TaskEvent__Output as _ax_v1_TaskEvent__Output } from '../../ax/v1/TaskEvent';

export interface GetTaskResponse {
  'task'?: (_ax_v1_Task | null);
  'events'?: (_ax_v1_TaskEvent)[];
}

export interface GetTaskResponse__Output {
  'task': (_ax_v1_Task__Output | null);
  'events': (_ax_v1_TaskEvent__Output)[];
}
