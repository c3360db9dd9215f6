// Original file: ax/v1/admin.proto

import type { BulkAction as _ax_v1_BulkAction, BulkAction__Output as _ax_v1_BulkAction__Output } from '../../ax/v1/BulkAction';
import type { InstanceSelector as _ax_v1_InstanceSelector, InstanceSelector__Output as _ax_v1_InstanceSelector__Output } from '../../ax/v1/InstanceSelector';

export interface BulkInstancesRequest {
  'action'?: (_ax_v1_BulkAction);
  'selector'?: (_ax_v1_InstanceSelector | null);
  'dry_run'?: (boolean);
  'max_instances'?: (number);
  'reason'?: (string);
}

export interface BulkInstancesRequest__Output {
  'action': (_ax_v1_BulkAction__Output);
  'selector': (_ax_v1_InstanceSelector__Output | null);
  'dry_run': (boolean);
  'max_instances': (number);
  'reason': (string);
}
