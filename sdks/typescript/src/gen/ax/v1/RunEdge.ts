// Original file: ax/v1/admin.proto

import type { LinkKind as _ax_v1_LinkKind, LinkKind__Output as _ax_v1_LinkKind__Output } from '../../ax/v1/LinkKind';
import type { Long } from '@grpc/proto-loader';

export interface RunEdge {
  'from_instance_id'?: (number | string | Long);
  'to_instance_id'?: (number | string | Long);
  'kind'?: (_ax_v1_LinkKind);
}

export interface RunEdge__Output {
  'from_instance_id': (string);
  'to_instance_id': (string);
  'kind': (_ax_v1_LinkKind__Output);
}
