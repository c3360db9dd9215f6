// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { InstanceStatus as _ax_v1_InstanceStatus, InstanceStatus__Output as _ax_v1_InstanceStatus__Output } from '../../ax/v1/InstanceStatus';

export interface ExplainedAttempt {
  'attempt'?: (number);
  'worker_id'?: (string);
  'dispatch_time'?: (_google_protobuf_Timestamp | null);
  'start_time'?: (_google_protobuf_Timestamp | null);
  'end_time'?: (_google_protobuf_Timestamp | null);
  'outcome'?: (_ax_v1_InstanceStatus);
  'reason'?: (string);
}

export interface ExplainedAttempt__Output {
  'attempt': (number);
  'worker_id': (string);
  'dispatch_time': (_google_protobuf_Timestamp__Output | null);
  'start_time': (_google_protobuf_Timestamp__Output | null);
  'end_time': (_google_protobuf_Timestamp__Output | null);
  'outcome': (_ax_v1_InstanceStatus__Output);
  'reason': (string);
}
