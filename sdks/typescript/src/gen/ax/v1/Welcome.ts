// Original file: ax/v1/worker.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { InstanceAttempt as _ax_v1_InstanceAttempt, InstanceAttempt__Output as _ax_v1_InstanceAttempt__Output } from '../../ax/v1/InstanceAttempt';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface Welcome {
  'session_id'?: (string);
  'scheduler_id'?: (string);
  'heartbeat_interval'?: (_google_protobuf_Duration | null);
  'adopted'?: (_ax_v1_InstanceAttempt)[];
  'released'?: (_ax_v1_InstanceAttempt)[];
  'lost_worker_grace'?: (_google_protobuf_Duration | null);
  'lease_ttl'?: (_google_protobuf_Duration | null);
  'fence_margin'?: (_google_protobuf_Duration | null);
  'ack_timeout'?: (_google_protobuf_Duration | null);
  'server_time'?: (_google_protobuf_Timestamp | null);
  'max_message_size'?: (number);
}

export interface Welcome__Output {
  'session_id': (string);
  'scheduler_id': (string);
  'heartbeat_interval': (_google_protobuf_Duration__Output | null);
  'adopted': (_ax_v1_InstanceAttempt__Output)[];
  'released': (_ax_v1_InstanceAttempt__Output)[];
  'lost_worker_grace': (_google_protobuf_Duration__Output | null);
  'lease_ttl': (_google_protobuf_Duration__Output | null);
  'fence_margin': (_google_protobuf_Duration__Output | null);
  'ack_timeout': (_google_protobuf_Duration__Output | null);
  'server_time': (_google_protobuf_Timestamp__Output | null);
  'max_message_size': (number);
}
