// Original file: ax/v1/admin.proto

import type { AlertRuleSpec as _ax_v1_AlertRuleSpec, AlertRuleSpec__Output as _ax_v1_AlertRuleSpec__Output } from '../../ax/v1/AlertRuleSpec';

export interface CreateAlertRuleRequest {
  'rule'?: (_ax_v1_AlertRuleSpec | null);
}

export interface CreateAlertRuleRequest__Output {
  'rule': (_ax_v1_AlertRuleSpec__Output | null);
}
