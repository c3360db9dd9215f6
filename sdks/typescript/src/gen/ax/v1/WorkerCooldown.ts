// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface WorkerCooldown {
  'handler'?: (string);
  'consecutive_failures'?: (number);
  'until'?: (_google_protobuf_Timestamp | null);
}

export interface WorkerCooldown__Output {
  'handler': (string);
  'consecutive_failures': (number);
  'until': (_google_protobuf_Timestamp__Output | null);
}
