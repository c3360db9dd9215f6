// Original file: ax/v1/admin.proto

import type { Task as _ax_v1_Task, Task__Output as _ax_v1_Task__Output } from '../../ax/v1/Task';
import type { SchedulePreview as _ax_v1_SchedulePreview, SchedulePreview__Output as _ax_v1_SchedulePreview__Output } from '../../ax/v1/SchedulePreview';

export interface UpdateTaskResponse {
  'task'?: (_ax_v1_Task | null);
  'preview'?: (_ax_v1_SchedulePreview | null);
}

export interface UpdateTaskResponse__Output {
  'task': (_ax_v1_Task__Output | null);
  'preview': (_ax_v1_SchedulePreview__Output | null);
}
