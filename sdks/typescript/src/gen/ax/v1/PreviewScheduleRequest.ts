// Original file: ax/v1/admin.proto

import type { Schedule as _ax_v1_Schedule, Schedule__Output as _ax_v1_Schedule__Output } from '../../ax/v1/Schedule';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface PreviewScheduleRequest {
  'schedule'?: (_ax_v1_Schedule | null);
  'from'?: (_google_protobuf_Timestamp | null);
  'count'?: (number);
}

export interface PreviewScheduleRequest__Output {
  'schedule': (_ax_v1_Schedule__Output | null);
  'from': (_google_protobuf_Timestamp__Output | null);
  'count': (number);
}
