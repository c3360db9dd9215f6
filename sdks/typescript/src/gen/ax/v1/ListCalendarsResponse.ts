// Original file: ax/v1/admin.proto

import type { Calendar as _ax_v1_Calendar, Calendar__Output as _ax_v1_Calendar__Output } from '../../ax/v1/Calendar';

export interface ListCalendarsResponse {
  'calendars'?: (_ax_v1_Calendar)[];
}

export interface ListCalendarsResponse__Output {
  'calendars': (_ax_v1_Calendar__Output)[];
}
