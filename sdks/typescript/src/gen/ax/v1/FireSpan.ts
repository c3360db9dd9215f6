// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface FireSpan {
  'first_time'?: (_google_protobuf_Timestamp | null);
  'last_time'?: (_google_protobuf_Timestamp | null);
  'count'?: (number);
}

export interface FireSpan__Output {
  'first_time': (_google_protobuf_Timestamp__Output | null);
  'last_time': (_google_protobuf_Timestamp__Output | null);
  'count': (number);
}
