// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface TaskPause {
  'actor'?: (string);
  'note'?: (string);
  'pause_time'?: (_google_protobuf_Timestamp | null);
  'until'?: (_google_protobuf_Timestamp | null);
}

export interface TaskPause__Output {
  'actor': (string);
  'note': (string);
  'pause_time': (_google_protobuf_Timestamp__Output | null);
  'until': (_google_protobuf_Timestamp__Output | null);
}
