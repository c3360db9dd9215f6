// Original file: ax/v1/types.proto

export const Outcome = {
  OUTCOME_UNSPECIFIED: 'OUTCOME_UNSPECIFIED',
  OUTCOME_SUCCESS: 'OUTCOME_SUCCESS',
  OUTCOME_FAILED: 'OUTCOME_FAILED',
} as const;

export type Outcome =
  | 'OUTCOME_UNSPECIFIED'
  | 0
  | 'OUTCOME_SUCCESS'
  | 1
  | 'OUTCOME_FAILED'
  | 2

export type Outcome__Output = typeof Outcome[keyof typeof Outcome]
