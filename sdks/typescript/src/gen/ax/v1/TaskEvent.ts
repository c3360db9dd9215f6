// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { FireSpan as _ax_v1_FireSpan, FireSpan__Output as _ax_v1_FireSpan__Output } from '../../ax/v1/FireSpan';

export interface TaskEvent {
  'time'?: (_google_protobuf_Timestamp | null);
  'kind'?: (string);
  'actor'?: (string);
  'message'?: (string);
  'fires'?: (_ax_v1_FireSpan | null);
}

export interface TaskEvent__Output {
  'time': (_google_protobuf_Timestamp__Output | null);
  'kind': (string);
  'actor': (string);
  'message': (string);
  'fires': (_ax_v1_FireSpan__Output | null);
}
