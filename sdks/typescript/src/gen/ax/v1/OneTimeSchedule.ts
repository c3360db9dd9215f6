// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

export interface OneTimeSchedule {
  'at'?: (_google_protobuf_Timestamp | null);
  'after'?: (_google_protobuf_Duration | null);
  'when'?: "at"|"after";
}

export interface OneTimeSchedule__Output {
  'at'?: (_google_protobuf_Timestamp__Output | null);
  'after'?: (_google_protobuf_Duration__Output | null);
  'when'?: "at"|"after";
}
