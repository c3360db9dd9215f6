// Original file: ax/v1/admin.proto

import type { TaskChange as _ax_v1_TaskChange, TaskChange__Output as _ax_v1_TaskChange__Output } from '../../ax/v1/TaskChange';

export interface ApplyTasksResponse {
  'changes'?: (_ax_v1_TaskChange)[];
  'applied'?: (boolean);
}

export interface ApplyTasksResponse__Output {
  'changes': (_ax_v1_TaskChange__Output)[];
  'applied': (boolean);
}
