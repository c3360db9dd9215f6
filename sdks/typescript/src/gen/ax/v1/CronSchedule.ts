// Original file: ax/v1/admin.proto

import type { CronDialect as _ax_v1_CronDialect, CronDialect__Output as _ax_v1_CronDialect__Output } from '../../ax/v1/CronDialect';

export interface CronSchedule {
  'expression'?: (string);
  'time_zone'?: (string);
  'dialect'?: (_ax_v1_CronDialect);
}

export interface CronSchedule__Output {
  'expression': (string);
  'time_zone': (string);
  'dialect': (_ax_v1_CronDialect__Output);
}
