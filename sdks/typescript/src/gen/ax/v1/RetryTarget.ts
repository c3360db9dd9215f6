// Original file: ax/v1/admin.proto

export const RetryTarget = {
  RETRY_TARGET_UNSPECIFIED: 'RETRY_TARGET_UNSPECIFIED',
  RETRY_TARGET_OTHER: 'RETRY_TARGET_OTHER',
  RETRY_TARGET_SAME: 'RETRY_TARGET_SAME',
  RETRY_TARGET_ANY: 'RETRY_TARGET_ANY',
} as const;

export type RetryTarget =
  | 'RETRY_TARGET_UNSPECIFIED'
  | 0
  | 'RETRY_TARGET_OTHER'
  | 1
  | 'RETRY_TARGET_SAME'
  | 2
  | 'RETRY_TARGET_ANY'
  | 3

export type RetryTarget__Output = typeof RetryTarget[keyof typeof RetryTarget]
