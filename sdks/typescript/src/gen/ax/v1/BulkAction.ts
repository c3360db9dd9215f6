// Original file: ax/v1/admin.proto

export const BulkAction = {
  BULK_ACTION_UNSPECIFIED: 'BULK_ACTION_UNSPECIFIED',
  BULK_ACTION_CANCEL: 'BULK_ACTION_CANCEL',
  BULK_ACTION_RETRY: 'BULK_ACTION_RETRY',
  BULK_ACTION_DELETE: 'BULK_ACTION_DELETE',
} as const;

export type BulkAction =
  | 'BULK_ACTION_UNSPECIFIED'
  | 0
  | 'BULK_ACTION_CANCEL'
  | 1
  | 'BULK_ACTION_RETRY'
  | 2
  | 'BULK_ACTION_DELETE'
  | 3

export type BulkAction__Output = typeof BulkAction[keyof typeof BulkAction]
