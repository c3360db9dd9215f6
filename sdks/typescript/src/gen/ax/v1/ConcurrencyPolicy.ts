// Original file: ax/v1/admin.proto

export const ConcurrencyPolicy = {
  CONCURRENCY_POLICY_UNSPECIFIED: 'CONCURRENCY_POLICY_UNSPECIFIED',
  CONCURRENCY_POLICY_ALLOW: 'CONCURRENCY_POLICY_ALLOW',
  CONCURRENCY_POLICY_FORBID: 'CONCURRENCY_POLICY_FORBID',
} as const;

export type ConcurrencyPolicy =
  | 'CONCURRENCY_POLICY_UNSPECIFIED'
  | 0
  | 'CONCURRENCY_POLICY_ALLOW'
  | 1
  | 'CONCURRENCY_POLICY_FORBID'
  | 2

export type ConcurrencyPolicy__Output = typeof ConcurrencyPolicy[keyof typeof ConcurrencyPolicy]
