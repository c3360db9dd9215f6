// Original file: ax/v1/admin.proto

import type { TaskSpec as _ax_v1_TaskSpec, TaskSpec__Output as _ax_v1_TaskSpec__Output } from '../../ax/v1/TaskSpec';
import type { FieldMask as _google_protobuf_FieldMask, FieldMask__Output as _google_protobuf_FieldMask__Output } from '../../google/protobuf/FieldMask';

export interface UpdateTaskRequest {
  'name'?: (string);
  'task'?: (_ax_v1_TaskSpec | null);
  'update_mask'?: (_google_protobuf_FieldMask | null);
}

export interface UpdateTaskRequest__Output {
  'name': (string);
  'task': (_ax_v1_TaskSpec__Output | null);
  'update_mask': (_google_protobuf_FieldMask__Output | null);
}
