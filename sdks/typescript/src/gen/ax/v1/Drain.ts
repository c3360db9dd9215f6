// Original file: ax/v1/worker.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

export interface Drain {
  'reason'?: (string);
  'deadline'?: (_google_protobuf_Duration | null);
}

export interface Drain__Output {
  'reason': (string);
  'deadline': (_google_protobuf_Duration__Output | null);
}
