// Original file: ax/v1/admin.proto

import type { Instance as _ax_v1_Instance, Instance__Output as _ax_v1_Instance__Output } from '../../ax/v1/Instance';

export interface TriggerTaskResponse {
  'instance'?: (_ax_v1_Instance | null);
  'created'?: (boolean);
  'done'?: (boolean);
}

export interface TriggerTaskResponse__Output {
  'instance': (_ax_v1_Instance__Output | null);
  'created': (boolean);
  'done': (boolean);
}
