// Original file: ax/v1/admin.proto

import type { AlertRule as _ax_v1_AlertRule, AlertRule__Output as _ax_v1_AlertRule__Output } from '../../ax/v1/AlertRule';

export interface ListAlertRulesResponse {
  'rules'?: (_ax_v1_AlertRule)[];
}

export interface ListAlertRulesResponse__Output {
  'rules': (_ax_v1_AlertRule__Output)[];
}
