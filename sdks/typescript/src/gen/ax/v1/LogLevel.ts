// Original file: ax/v1/types.proto

export const LogLevel = {
  LOG_LEVEL_UNSPECIFIED: 'LOG_LEVEL_UNSPECIFIED',
  LOG_LEVEL_DEBUG: 'LOG_LEVEL_DEBUG',
  LOG_LEVEL_INFO: 'LOG_LEVEL_INFO',
  LOG_LEVEL_WARN: 'LOG_LEVEL_WARN',
  LOG_LEVEL_ERROR: 'LOG_LEVEL_ERROR',
} as const;

export type LogLevel =
  | 'LOG_LEVEL_UNSPECIFIED'
  | 0
  | 'LOG_LEVEL_DEBUG'
  | 1
  | 'LOG_LEVEL_INFO'
  | 2
  | 'LOG_LEVEL_WARN'
  | 3
  | 'LOG_LEVEL_ERROR'
  | 4

export type LogLevel__Output = typeof LogLevel[keyof typeof LogLevel]
