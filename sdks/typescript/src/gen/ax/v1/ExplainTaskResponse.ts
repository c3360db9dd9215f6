// Original file: ax/v1/admin.proto

import type { Task as _ax_v1_Task, Task__Output as _ax_v1_Task__Output } from '../../ax/v1/Task';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { ExplainFinding as _ax_v1_ExplainFinding, ExplainFinding__Output as _ax_v1_ExplainFinding__Output } from '../../ax/v1/ExplainFinding';
import type { Fire as _ax_v1_Fire, Fire__Output as _ax_v1_Fire__Output } from '../../ax/v1/Fire';
import type { ExplainedFire as _ax_v1_ExplainedFire, ExplainedFire__Output as _ax_v1_ExplainedFire__Output } from '../../ax/v1/ExplainedFire';
import type { TaskEvent as _ax_v1_TaskEvent, TaskEvent__Output as _ax_v1_TaskEvent__Output } from '../../ax/v1/TaskEvent';
import type { ExplainWorkers as _ax_v1_ExplainWorkers, ExplainWorkers__Output as _ax_v1_ExplainWorkers__Output } from '../../ax/v1/ExplainWorkers';

export interface ExplainTaskResponse {
  'task'?: (_ax_v1_Task | null);
  'at'?: (_google_protobuf_Timestamp | null);
  'findings'?: (_ax_v1_ExplainFinding)[];
  'next_fires'?: (_ax_v1_Fire)[];
  'recent'?: (_ax_v1_ExplainedFire)[];
  'events'?: (_ax_v1_TaskEvent)[];
  'workers'?: (_ax_v1_ExplainWorkers | null);
}

export interface ExplainTaskResponse__Output {
  'task': (_ax_v1_Task__Output | null);
  'at': (_google_protobuf_Timestamp__Output | null);
  'findings': (_ax_v1_ExplainFinding__Output)[];
  'next_fires': (_ax_v1_Fire__Output)[];
  'recent': (_ax_v1_ExplainedFire__Output)[];
  'events': (_ax_v1_TaskEvent__Output)[];
  'workers': (_ax_v1_ExplainWorkers__Output | null);
}
