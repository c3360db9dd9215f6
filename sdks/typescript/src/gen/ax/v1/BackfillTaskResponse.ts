// Original file: ax/v1/admin.proto

import type { BackfilledFire as _ax_v1_BackfilledFire, BackfilledFire__Output as _ax_v1_BackfilledFire__Output } from '../../ax/v1/BackfilledFire';

export interface BackfillTaskResponse {
  'fires'?: (_ax_v1_BackfilledFire)[];
  'created'?: (number);
}

export interface BackfillTaskResponse__Output {
  'fires': (_ax_v1_BackfilledFire__Output)[];
  'created': (number);
}
