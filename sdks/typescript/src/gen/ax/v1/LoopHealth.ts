// Original file: ax/v1/admin.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

export interface LoopHealth {
  'name'?: (string);
  'since_last_round'?: (_google_protobuf_Duration | null);
  'stalled'?: (boolean);
}

export interface LoopHealth__Output {
  'name': (string);
  'since_last_round': (_google_protobuf_Duration__Output | null);
  'stalled': (boolean);
}
