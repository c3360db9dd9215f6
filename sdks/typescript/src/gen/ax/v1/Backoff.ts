// Original file: ax/v1/admin.proto

import type { ListBackoff as _ax_v1_ListBackoff, ListBackoff__Output as _ax_v1_ListBackoff__Output } from '../../ax/v1/ListBackoff';
import type { ExponentialBackoff as _ax_v1_ExponentialBackoff, ExponentialBackoff__Output as _ax_v1_ExponentialBackoff__Output } from '../../ax/v1/ExponentialBackoff';

export interface Backoff {
  'list'?: (_ax_v1_ListBackoff | null);
  'exponential'?: (_ax_v1_ExponentialBackoff | null);
  'kind'?: "list"|"exponential";
}

export interface Backoff__Output {
  'list'?: (_ax_v1_ListBackoff__Output | null);
  'exponential'?: (_ax_v1_ExponentialBackoff__Output | null);
  'kind'?: "list"|"exponential";
}
