// Original file: ax/v1/admin.proto

import type { Calendar as _ax_v1_Calendar, Calendar__Output as _ax_v1_Calendar__Output } from '../../ax/v1/Calendar';

export interface UpdateCalendarRequest {
  'calendar'?: (_ax_v1_Calendar | null);
}

export interface UpdateCalendarRequest__Output {
  'calendar': (_ax_v1_Calendar__Output | null);
}
