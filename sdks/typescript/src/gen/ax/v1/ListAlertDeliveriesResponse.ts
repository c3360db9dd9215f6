// Original file: ax/v1/admin.proto

import type { AlertDelivery as _ax_v1_AlertDelivery, AlertDelivery__Output as _ax_v1_AlertDelivery__Output } from '../../ax/v1/AlertDelivery';

export interface ListAlertDeliveriesResponse {
  'deliveries'?: (_ax_v1_AlertDelivery)[];
  'next_page_token'?: (string);
}

export interface ListAlertDeliveriesResponse__Output {
  'deliveries': (_ax_v1_AlertDelivery__Output)[];
  'next_page_token': (string);
}
