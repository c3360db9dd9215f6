// Original file: ax/v1/admin.proto

import type { AlertRule as _ax_v1_AlertRule, AlertRule__Output as _ax_v1_AlertRule__Output } from '../../ax/v1/AlertRule';

export interface CreateAlertRuleResponse {
  'rule'?: (_ax_v1_AlertRule | null);
}

export interface CreateAlertRuleResponse__Output {
  'rule': (_ax_v1_AlertRule__Output | null);
}
