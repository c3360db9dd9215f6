// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface PauseTaskRequest {
  'name'?: (string);
  'note'?: (string);
  'until'?: (_google_protobuf_Timestamp | null);
}

export interface PauseTaskRequest__Output {
  'name': (string);
  'note': (string);
  'until': (_google_protobuf_Timestamp__Output | null);
}
