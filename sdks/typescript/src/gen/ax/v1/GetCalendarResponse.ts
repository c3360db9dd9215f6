// Original file: ax/v1/admin.proto

import type { Calendar as _ax_v1_Calendar, Calendar__Output as _ax_v1_Calendar__Output } from '../../ax/v1/Calendar';

export interface GetCalendarResponse {
  'calendar'?: (_ax_v1_Calendar | null);
  'tasks'?: (string)[];
}

export interface GetCalendarResponse__Output {
  'calendar': (_ax_v1_Calendar__Output | null);
  'tasks': (string)[];
}
