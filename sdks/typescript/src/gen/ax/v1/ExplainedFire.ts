// Original file: ax/v1/admin.proto

import type { Instance as _ax_v1_Instance, Instance__Output as _ax_v1_Instance__Output } from '../../ax/v1/Instance';
import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { ExplainedAttempt as _ax_v1_ExplainedAttempt, ExplainedAttempt__Output as _ax_v1_ExplainedAttempt__Output } from '../../ax/v1/ExplainedAttempt';

export interface ExplainedFire {
  'instance'?: (_ax_v1_Instance | null);
  'dispatch_delay'?: (_google_protobuf_Duration | null);
  'waited_for'?: (string);
  'attempts'?: (_ax_v1_ExplainedAttempt)[];
}

export interface ExplainedFire__Output {
  'instance': (_ax_v1_Instance__Output | null);
  'dispatch_delay': (_google_protobuf_Duration__Output | null);
  'waited_for': (string);
  'attempts': (_ax_v1_ExplainedAttempt__Output)[];
}
