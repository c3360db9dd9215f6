// Original file: ax/v1/admin.proto

import type { CronSchedule as _ax_v1_CronSchedule, CronSchedule__Output as _ax_v1_CronSchedule__Output } from '../../ax/v1/CronSchedule';
import type { IntervalSchedule as _ax_v1_IntervalSchedule, IntervalSchedule__Output as _ax_v1_IntervalSchedule__Output } from '../../ax/v1/IntervalSchedule';
import type { OneTimeSchedule as _ax_v1_OneTimeSchedule, OneTimeSchedule__Output as _ax_v1_OneTimeSchedule__Output } from '../../ax/v1/OneTimeSchedule';
import type { ManualSchedule as _ax_v1_ManualSchedule, ManualSchedule__Output as _ax_v1_ManualSchedule__Output } from '../../ax/v1/ManualSchedule';

export interface Schedule {
  'cron'?: (_ax_v1_CronSchedule | null);
  'fixed_rate'?: (_ax_v1_IntervalSchedule | null);
  'fixed_delay'?: (_ax_v1_IntervalSchedule | null);
  'one_time'?: (_ax_v1_OneTimeSchedule | null);
  'manual'?: (_ax_v1_ManualSchedule | null);
  'kind'?: "cron"|"fixed_rate"|"fixed_delay"|"one_time"|"manual";
}

export interface Schedule__Output {
  'cron'?: (_ax_v1_CronSchedule__Output | null);
  'fixed_rate'?: (_ax_v1_IntervalSchedule__Output | null);
  'fixed_delay'?: (_ax_v1_IntervalSchedule__Output | null);
  'one_time'?: (_ax_v1_OneTimeSchedule__Output | null);
  'manual'?: (_ax_v1_ManualSchedule__Output | null);
  'kind'?: "cron"|"fixed_rate"|"fixed_delay"|"one_time"|"manual";
}
