// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface TaskEvent {
  'time'?: (_google_protobuf_Timestamp | null);
  'kind'?: (string);
  'actor'?: (string);
  'message'?: (string);
}

export interface TaskEvent__Output {
  'time': (_google_protobuf_Timestamp__Output | null);
  'kind': (string);
  'actor': (string);
  'message': (string);
}
