// Original file: ax/v1/admin.proto

import type { ExplainFindingKind as _ax_v1_ExplainFindingKind, ExplainFindingKind__Output as _ax_v1_ExplainFindingKind__Output } from '../../ax/v1/ExplainFindingKind';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { FireSpan as _ax_v1_FireSpan, FireSpan__Output as _ax_v1_FireSpan__Output } from '../../ax/v1/FireSpan';
import type { Long } from '@grpc/proto-loader';

export interface ExplainFinding {
  'kind'?: (_ax_v1_ExplainFindingKind);
  'time'?: (_google_protobuf_Timestamp | null);
  'message'?: (string);
  'instance_id'?: (number | string | Long);
  'fires'?: (_ax_v1_FireSpan | null);
}

export interface ExplainFinding__Output {
  'kind': (_ax_v1_ExplainFindingKind__Output);
  'time': (_google_protobuf_Timestamp__Output | null);
  'message': (string);
  'instance_id': (string);
  'fires': (_ax_v1_FireSpan__Output | null);
}
