// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface AppLimit {
  'app'?: (string);
  'per_second'?: (number | string);
  'burst'?: (number);
  'tokens'?: (number | string);
  'updated_by'?: (string);
  'update_time'?: (_google_protobuf_Timestamp | null);
}

export interface AppLimit__Output {
  'app': (string);
  'per_second': (number);
  'burst': (number);
  'tokens': (number);
  'updated_by': (string);
  'update_time': (_google_protobuf_Timestamp__Output | null);
}
