// Original file: ax/v1/admin.proto

import type { TaskSpec as _ax_v1_TaskSpec, TaskSpec__Output as _ax_v1_TaskSpec__Output } from '../../ax/v1/TaskSpec';

export interface ApplyTasksRequest {
  'tasks'?: (_ax_v1_TaskSpec)[];
  'prune'?: (boolean);
  'apps'?: (string)[];
  'dry_run'?: (boolean);
  'change_note'?: (string);
}

export interface ApplyTasksRequest__Output {
  'tasks': (_ax_v1_TaskSpec__Output)[];
  'prune': (boolean);
  'apps': (string)[];
  'dry_run': (boolean);
  'change_note': (string);
}
