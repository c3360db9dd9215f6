// Original file: ax/v1/admin.proto

import type { Schedule as _ax_v1_Schedule, Schedule__Output as _ax_v1_Schedule__Output } from '../../ax/v1/Schedule';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

export interface PreviewScheduleRequest {
  'schedule'?: (_ax_v1_Schedule | null);
  'from'?: (_google_protobuf_Timestamp | null);
  'count'?: (number);
  'jitter'?: (_google_protobuf_Duration | null);
  'task_name'?: (string);
  'start_time'?: (_google_protobuf_Timestamp | null);
  'end_time'?: (_google_protobuf_Timestamp | null);
  'exclude_dates'?: (string)[];
  'calendar'?: (string);
  'extra_schedules'?: (_ax_v1_Schedule)[];
}

export interface PreviewScheduleRequest__Output {
  'schedule': (_ax_v1_Schedule__Output | null);
  'from': (_google_protobuf_Timestamp__Output | null);
  'count': (number);
  'jitter': (_google_protobuf_Duration__Output | null);
  'task_name': (string);
  'start_time': (_google_protobuf_Timestamp__Output | null);
  'end_time': (_google_protobuf_Timestamp__Output | null);
  'exclude_dates': (string)[];
  'calendar': (string);
  'extra_schedules': (_ax_v1_Schedule__Output)[];
}
