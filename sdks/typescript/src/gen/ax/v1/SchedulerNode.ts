// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface SchedulerNode {
  'scheduler_id'?: (string);
  'host'?: (string);
  'address'?: (string);
  'version'?: (string);
  'start_time'?: (_google_protobuf_Timestamp | null);
  'heartbeat_time'?: (_google_protobuf_Timestamp | null);
  'workers'?: (number);
  'alive'?: (boolean);
  'worker_ids'?: (string)[];
}

export interface SchedulerNode__Output {
  'scheduler_id': (string);
  'host': (string);
  'address': (string);
  'version': (string);
  'start_time': (_google_protobuf_Timestamp__Output | null);
  'heartbeat_time': (_google_protobuf_Timestamp__Output | null);
  'workers': (number);
  'alive': (boolean);
  'worker_ids': (string)[];
}
