// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';

export interface TriggerTaskRequest {
  'name'?: (string);
  'params'?: (string);
  'idempotency_key'?: (string);
  'run_at'?: (_google_protobuf_Timestamp | null);
  'delay'?: (_google_protobuf_Duration | null);
  'wait'?: (_google_protobuf_Duration | null);
  'tags'?: ({[key: string]: string});
  '_params'?: "params";
  'when'?: "run_at"|"delay";
}

export interface TriggerTaskRequest__Output {
  'name': (string);
  'params'?: (string);
  'idempotency_key': (string);
  'run_at'?: (_google_protobuf_Timestamp__Output | null);
  'delay'?: (_google_protobuf_Duration__Output | null);
  'wait': (_google_protobuf_Duration__Output | null);
  'tags': ({[key: string]: string});
  '_params'?: "params";
  'when'?: "run_at"|"delay";
}
