// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { WorkerCooldown as _ax_v1_WorkerCooldown, WorkerCooldown__Output as _ax_v1_WorkerCooldown__Output } from '../../ax/v1/WorkerCooldown';

export interface WorkerSession {
  'session_id'?: (string);
  'worker_id'?: (string);
  'app'?: (string);
  'handlers'?: (string)[];
  'capacity'?: (number);
  'credits'?: (number);
  'in_flight'?: (number);
  'labels'?: ({[key: string]: string});
  'scheduler_id'?: (string);
  'client'?: (string);
  'connect_time'?: (_google_protobuf_Timestamp | null);
  'last_seen_time'?: (_google_protobuf_Timestamp | null);
  'cooldowns'?: (_ax_v1_WorkerCooldown)[];
}

export interface WorkerSession__Output {
  'session_id': (string);
  'worker_id': (string);
  'app': (string);
  'handlers': (string)[];
  'capacity': (number);
  'credits': (number);
  'in_flight': (number);
  'labels': ({[key: string]: string});
  'scheduler_id': (string);
  'client': (string);
  'connect_time': (_google_protobuf_Timestamp__Output | null);
  'last_seen_time': (_google_protobuf_Timestamp__Output | null);
  'cooldowns': (_ax_v1_WorkerCooldown__Output)[];
}
