// Original file: ax/v1/admin.proto

import type { AppLimit as _ax_v1_AppLimit, AppLimit__Output as _ax_v1_AppLimit__Output } from '../../ax/v1/AppLimit';

export interface ListAppLimitsResponse {
  'limits'?: (_ax_v1_AppLimit)[];
}

export interface ListAppLimitsResponse__Output {
  'limits': (_ax_v1_AppLimit__Output)[];
}
