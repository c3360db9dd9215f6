// Original file: ax/v1/admin.proto

import type { InstanceStatus as _ax_v1_InstanceStatus, InstanceStatus__Output as _ax_v1_InstanceStatus__Output } from '../../ax/v1/InstanceStatus';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Long } from '@grpc/proto-loader';

export interface InstanceSelector {
  'task_name'?: (string);
  'app'?: (string);
  'status'?: (_ax_v1_InstanceStatus);
  'start_time'?: (_google_protobuf_Timestamp | null);
  'end_time'?: (_google_protobuf_Timestamp | null);
  'max_id'?: (number | string | Long);
  'ids'?: (number | string | Long)[];
  'tags'?: ({[key: string]: string});
  'params'?: ({[key: string]: string});
}

export interface InstanceSelector__Output {
  'task_name': (string);
  'app': (string);
  'status': (_ax_v1_InstanceStatus__Output);
  'start_time': (_google_protobuf_Timestamp__Output | null);
  'end_time': (_google_protobuf_Timestamp__Output | null);
  'max_id': (string);
  'ids': (string)[];
  'tags': ({[key: string]: string});
  'params': ({[key: string]: string});
}
