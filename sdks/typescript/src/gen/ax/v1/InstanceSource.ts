// Original file: ax/v1/admin.proto

export const InstanceSource = {
  INSTANCE_SOURCE_UNSPECIFIED: 'INSTANCE_SOURCE_UNSPECIFIED',
  INSTANCE_SOURCE_SCHEDULE: 'INSTANCE_SOURCE_SCHEDULE',
  INSTANCE_SOURCE_CATCH_UP: 'INSTANCE_SOURCE_CATCH_UP',
  INSTANCE_SOURCE_MANUAL: 'INSTANCE_SOURCE_MANUAL',
} as const;

export type InstanceSource =
  | 'INSTANCE_SOURCE_UNSPECIFIED'
  | 0
  | 'INSTANCE_SOURCE_SCHEDULE'
  | 1
  | 'INSTANCE_SOURCE_CATCH_UP'
  | 2
  | 'INSTANCE_SOURCE_MANUAL'
  | 3

export type InstanceSource__Output = typeof InstanceSource[keyof typeof InstanceSource]
