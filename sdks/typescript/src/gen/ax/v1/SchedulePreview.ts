// Original file: ax/v1/admin.proto

import type { Fire as _ax_v1_Fire, Fire__Output as _ax_v1_Fire__Output } from '../../ax/v1/Fire';

export interface SchedulePreview {
  'fires'?: (_ax_v1_Fire)[];
  'fires_per_day'?: (number | string);
  'warnings'?: (string)[];
  'description'?: (string);
}

export interface SchedulePreview__Output {
  'fires': (_ax_v1_Fire__Output)[];
  'fires_per_day': (number);
  'warnings': (string)[];
  'description': (string);
}
