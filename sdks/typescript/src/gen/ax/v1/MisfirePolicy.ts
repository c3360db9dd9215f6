// Original file: ax/v1/admin.proto

export const MisfirePolicy = {
  MISFIRE_POLICY_UNSPECIFIED: 'MISFIRE_POLICY_UNSPECIFIED',
  MISFIRE_POLICY_FIRE_ONCE: 'MISFIRE_POLICY_FIRE_ONCE',
  MISFIRE_POLICY_FIRE_ALL: 'MISFIRE_POLICY_FIRE_ALL',
  MISFIRE_POLICY_SKIP: 'MISFIRE_POLICY_SKIP',
} as const;

export type MisfirePolicy =
  | 'MISFIRE_POLICY_UNSPECIFIED'
  | 0
  | 'MISFIRE_POLICY_FIRE_ONCE'
  | 1
  | 'MISFIRE_POLICY_FIRE_ALL'
  | 2
  | 'MISFIRE_POLICY_SKIP'
  | 3

export type MisfirePolicy__Output = typeof MisfirePolicy[keyof typeof MisfirePolicy]
