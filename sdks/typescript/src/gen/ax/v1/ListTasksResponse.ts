// Original file: ax/v1/admin.proto

import type { Task as _ax_v1_Task, Task__Output as _ax_v1_Task__Output } from '../../ax/v1/Task';

export interface ListTasksResponse {
  'tasks'?: (_ax_v1_Task)[];
  'next_page_token'?: (string);
}

export interface ListTasksResponse__Output {
  'tasks': (_ax_v1_Task__Output)[];
  'next_page_token': (string);
}
