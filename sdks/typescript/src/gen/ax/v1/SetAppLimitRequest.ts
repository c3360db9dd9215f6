// Original file: ax/v1/admin.proto

import type { AppLimit as _ax_v1_AppLimit, AppLimit__Output as _ax_v1_AppLimit__Output } from '../../ax/v1/AppLimit';

export interface SetAppLimitRequest {
  'limit'?: (_ax_v1_AppLimit | null);
}

export interface SetAppLimitRequest__Output {
  'limit': (_ax_v1_AppLimit__Output | null);
}
