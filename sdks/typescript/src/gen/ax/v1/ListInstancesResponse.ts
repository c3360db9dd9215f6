// Original file: ax/v1/admin.proto

import type { Instance as _ax_v1_Instance, Instance__Output as _ax_v1_Instance__Output } from '../../ax/v1/Instance';

export interface ListInstancesResponse {
  'instances'?: (_ax_v1_Instance)[];
  'next_page_token'?: (string);
}

export interface ListInstancesResponse__Output {
  'instances': (_ax_v1_Instance__Output)[];
  'next_page_token': (string);
}
