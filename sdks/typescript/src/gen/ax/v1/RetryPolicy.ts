// Original file: ax/v1/admin.proto

import type { Backoff as _ax_v1_Backoff, Backoff__Output as _ax_v1_Backoff__Output } from '../../ax/v1/Backoff';

export interface RetryPolicy {
  'max_retries'?: (number);
  'backoff'?: (_ax_v1_Backoff | null);
}

export interface RetryPolicy__Output {
  'max_retries': (number);
  'backoff': (_ax_v1_Backoff__Output | null);
}
