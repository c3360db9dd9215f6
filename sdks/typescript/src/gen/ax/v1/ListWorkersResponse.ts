// Original file: ax/v1/admin.proto

import type { WorkerSession as _ax_v1_WorkerSession, WorkerSession__Output as _ax_v1_WorkerSession__Output } from '../../ax/v1/WorkerSession';

export interface ListWorkersResponse {
  'workers'?: (_ax_v1_WorkerSession)[];
}

export interface ListWorkersResponse__Output {
  'workers': (_ax_v1_WorkerSession__Output)[];
}
