// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface Fire {
  'time'?: (_google_protobuf_Timestamp | null);
  'local_time'?: (string);
  'run_time'?: (_google_protobuf_Timestamp | null);
}

export interface Fire__Output {
  'time': (_google_protobuf_Timestamp__Output | null);
  'local_time': (string);
  'run_time': (_google_protobuf_Timestamp__Output | null);
}
