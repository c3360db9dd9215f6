// Original file: ax/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface TestAlertRuleResponse {
  'delivery_id'?: (number | string | Long);
}

export interface TestAlertRuleResponse__Output {
  'delivery_id': (string);
}
