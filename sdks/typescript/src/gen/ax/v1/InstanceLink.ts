// Original file: ax/v1/admin.proto

import type { Instance as _ax_v1_Instance, Instance__Output as _ax_v1_Instance__Output } from '../../ax/v1/Instance';
import type { LinkKind as _ax_v1_LinkKind, LinkKind__Output as _ax_v1_LinkKind__Output } from '../../ax/v1/LinkKind';

export interface InstanceLink {
  'instance'?: (_ax_v1_Instance | null);
  'kind'?: (_ax_v1_LinkKind);
}

export interface InstanceLink__Output {
  'instance': (_ax_v1_Instance__Output | null);
  'kind': (_ax_v1_LinkKind__Output);
}
