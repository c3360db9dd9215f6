// Original file: ax/v1/admin.proto

import type { InstanceStatus as _ax_v1_InstanceStatus, InstanceStatus__Output as _ax_v1_InstanceStatus__Output } from '../../ax/v1/InstanceStatus';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface ListInstancesRequest {
  'task_name'?: (string);
  'status'?: (_ax_v1_InstanceStatus);
  'page_size'?: (number);
  'page_token'?: (string);
  'start_time'?: (_google_protobuf_Timestamp | null);
  'end_time'?: (_google_protobuf_Timestamp | null);
  'tags'?: ({[key: string]: string});
  'params'?: ({[key: string]: string});
}

export interface ListInstancesRequest__Output {
  'task_name': (string);
  'status': (_ax_v1_InstanceStatus__Output);
  'page_size': (number);
  'page_token': (string);
  'start_time': (_google_protobuf_Timestamp__Output | null);
  'end_time': (_google_protobuf_Timestamp__Output | null);
  'tags': ({[key: string]: string});
  'params': ({[key: string]: string});
}
