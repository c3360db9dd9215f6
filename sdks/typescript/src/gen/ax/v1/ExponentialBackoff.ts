// Original file: ax/v1/admin.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

export interface ExponentialBackoff {
  'initial'?: (_google_protobuf_Duration | null);
  'multiplier'?: (number | string);
  'max'?: (_google_protobuf_Duration | null);
  'jitter'?: (number | string);
}

export interface ExponentialBackoff__Output {
  'initial': (_google_protobuf_Duration__Output | null);
  'multiplier': (number);
  'max': (_google_protobuf_Duration__Output | null);
  'jitter': (number);
}
