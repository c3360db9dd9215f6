// Original file: ax/v1/admin.proto

import type { TaskSpec as _ax_v1_TaskSpec, TaskSpec__Output as _ax_v1_TaskSpec__Output } from '../../ax/v1/TaskSpec';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { TaskPause as _ax_v1_TaskPause, TaskPause__Output as _ax_v1_TaskPause__Output } from '../../ax/v1/TaskPause';
import type { Long } from '@grpc/proto-loader';

export interface Task {
  'id'?: (number | string | Long);
  'spec'?: (_ax_v1_TaskSpec | null);
  'next_fire_time'?: (_google_protobuf_Timestamp | null);
  'create_time'?: (_google_protobuf_Timestamp | null);
  'update_time'?: (_google_protobuf_Timestamp | null);
  'version'?: (number | string | Long);
  'coalesced_fires'?: (number | string | Long);
  'coalesce_start_time'?: (_google_protobuf_Timestamp | null);
  'pause'?: (_ax_v1_TaskPause | null);
}

export interface Task__Output {
  'id': (string);
  'spec': (_ax_v1_TaskSpec__Output | null);
  'next_fire_time': (_google_protobuf_Timestamp__Output | null);
  'create_time': (_google_protobuf_Timestamp__Output | null);
  'update_time': (_google_protobuf_Timestamp__Output | null);
  'version': (string);
  'coalesced_fires': (string);
  'coalesce_start_time': (_google_protobuf_Timestamp__Output | null);
  'pause': (_ax_v1_TaskPause__Output | null);
}
