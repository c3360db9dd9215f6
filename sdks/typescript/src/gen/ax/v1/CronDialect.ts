// Original file: ax/v1/admin.proto

export const CronDialect = {
  CRON_DIALECT_UNSPECIFIED: 'CRON_DIALECT_UNSPECIFIED',
  CRON_DIALECT_UNIX: 'CRON_DIALECT_UNIX',
  CRON_DIALECT_QUARTZ: 'CRON_DIALECT_QUARTZ',
} as const;

export type CronDialect =
  | 'CRON_DIALECT_UNSPECIFIED'
  | 0
  | 'CRON_DIALECT_UNIX'
  | 1
  | 'CRON_DIALECT_QUARTZ'
  | 2

export type CronDialect__Output = typeof CronDialect[keyof typeof CronDialect]
