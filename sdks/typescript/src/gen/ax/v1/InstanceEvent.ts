// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { InstanceStatus as _ax_v1_InstanceStatus, InstanceStatus__Output as _ax_v1_InstanceStatus__Output } from '../../ax/v1/InstanceStatus';

export interface InstanceEvent {
  'time'?: (_google_protobuf_Timestamp | null);
  'from_status'?: (_ax_v1_InstanceStatus);
  'to_status'?: (_ax_v1_InstanceStatus);
  'attempt'?: (number);
  'scheduler_id'?: (string);
  'worker_id'?: (string);
  'reason'?: (string);
}

export interface InstanceEvent__Output {
  'time': (_google_protobuf_Timestamp__Output | null);
  'from_status': (_ax_v1_InstanceStatus__Output);
  'to_status': (_ax_v1_InstanceStatus__Output);
  'attempt': (number);
  'scheduler_id': (string);
  'worker_id': (string);
  'reason': (string);
}
