// Original file: ax/v1/admin.proto

import type { Instance as _ax_v1_Instance, Instance__Output as _ax_v1_Instance__Output } from '../../ax/v1/Instance';
import type { RunEdge as _ax_v1_RunEdge, RunEdge__Output as _ax_v1_RunEdge__Output } from '../../ax/v1/RunEdge';
import type { Long } from '@grpc/proto-loader';

export interface GetRunResponse {
  'run_id'?: (number | string | Long);
  'instances'?: (_ax_v1_Instance)[];
  'edges'?: (_ax_v1_RunEdge)[];
}

export interface GetRunResponse__Output {
  'run_id': (string);
  'instances': (_ax_v1_Instance__Output)[];
  'edges': (_ax_v1_RunEdge__Output)[];
}
