// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface ExplainTaskRequest {
  'name'?: (string);
  'at'?: (_google_protobuf_Timestamp | null);
  'limit'?: (number);
}

export interface ExplainTaskRequest__Output {
  'name': (string);
  'at': (_google_protobuf_Timestamp__Output | null);
  'limit': (number);
}
