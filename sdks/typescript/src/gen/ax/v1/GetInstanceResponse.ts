// Original file: ax/v1/admin.proto

import type { Instance as _ax_v1_Instance, Instance__Output as _ax_v1_Instance__Output } from '../../ax/v1/Instance';
import type { InstanceEvent as _ax_v1_InstanceEvent, InstanceEvent__Output as _ax_v1_InstanceEvent__Output } from '../../ax/v1/InstanceEvent';
import type { InstanceLink as _ax_v1_InstanceLink, InstanceLink__Output as _ax_v1_InstanceLink__Output } from '../../ax/v1/InstanceLink';

export interface GetInstanceResponse {
  'instance'?: (_ax_v1_Instance | null);
  'events'?: (_ax_v1_InstanceEvent)[];
  'children'?: (_ax_v1_Instance)[];
  'upstream'?: (_ax_v1_InstanceLink)[];
  'downstream'?: (_ax_v1_InstanceLink)[];
}

export interface GetInstanceResponse__Output {
  'instance': (_ax_v1_Instance__Output | null);
  'events': (_ax_v1_InstanceEvent__Output)[];
  'children': (_ax_v1_Instance__Output)[];
  'upstream': (_ax_v1_InstanceLink__Output)[];
  'downstream': (_ax_v1_InstanceLink__Output)[];
}
