// Original file: ax/v1/admin.proto

import type { Instance as _ax_v1_Instance, Instance__Output as _ax_v1_Instance__Output } from '../../ax/v1/Instance';

export interface PublishEventResponse {
  'instances'?: (_ax_v1_Instance)[];
  'created'?: (boolean);
  'id'?: (string);
  'filtered_out'?: (string)[];
}

export interface PublishEventResponse__Output {
  'instances': (_ax_v1_Instance__Output)[];
  'created': (boolean);
  'id': (string);
  'filtered_out': (string)[];
}
