// Original file: ax/v1/admin.proto

import type { TaskChangeKind as _ax_v1_TaskChangeKind, TaskChangeKind__Output as _ax_v1_TaskChangeKind__Output } from '../../ax/v1/TaskChangeKind';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface TaskChange {
  'name'?: (string);
  'app'?: (string);
  'kind'?: (_ax_v1_TaskChangeKind);
  'changed_fields'?: (string)[];
  'next_fire_before'?: (_google_protobuf_Timestamp | null);
  'next_fire_after'?: (_google_protobuf_Timestamp | null);
  'edges_removed'?: (string)[];
  'edges_added'?: (string)[];
  'calendars'?: (string)[];
}

export interface TaskChange__Output {
  'name': (string);
  'app': (string);
  'kind': (_ax_v1_TaskChangeKind__Output);
  'changed_fields': (string)[];
  'next_fire_before': (_google_protobuf_Timestamp__Output | null);
  'next_fire_after': (_google_protobuf_Timestamp__Output | null);
  'edges_removed': (string)[];
  'edges_added': (string)[];
  'calendars': (string)[];
}
