// Original file: ax/v1/admin.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

export interface ListBackoff {
  'delays'?: (_google_protobuf_Duration)[];
}

export interface ListBackoff__Output {
  'delays': (_google_protobuf_Duration__Output)[];
}
