// Original file: ax/v1/admin.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface IntervalSchedule {
  'interval'?: (_google_protobuf_Duration | null);
  'start_at'?: (_google_protobuf_Timestamp | null);
}

export interface IntervalSchedule__Output {
  'interval': (_google_protobuf_Duration__Output | null);
  'start_at': (_google_protobuf_Timestamp__Output | null);
}
