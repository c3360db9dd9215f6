// Original file: ax/v1/admin.proto

import type { LoopHealth as _ax_v1_LoopHealth, LoopHealth__Output as _ax_v1_LoopHealth__Output } from '../../ax/v1/LoopHealth';
import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

export interface SchedulerHealth {
  'scheduler_id'?: (string);
  'serving'?: (boolean);
  'loops'?: (_ax_v1_LoopHealth)[];
  'stall_after'?: (_google_protobuf_Duration | null);
  'clock_offset'?: (_google_protobuf_Duration | null);
}

export interface SchedulerHealth__Output {
  'scheduler_id': (string);
  'serving': (boolean);
  'loops': (_ax_v1_LoopHealth__Output)[];
  'stall_after': (_google_protobuf_Duration__Output | null);
  'clock_offset': (_google_protobuf_Duration__Output | null);
}
