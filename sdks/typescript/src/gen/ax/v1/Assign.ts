// Original file: ax/v1/worker.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { Long } from '@grpc/proto-loader';

export interface Assign {
  'instance_id'?: (number | string | Long);
  'attempt'?: (number);
  'task_name'?: (string);
  'handler'?: (string);
  'params'?: (string);
  'trigger_time'?: (_google_protobuf_Timestamp | null);
  'timeout'?: (_google_protobuf_Duration | null);
  'idempotency_key'?: (string);
  'start_after'?: (_google_protobuf_Duration | null);
  'accept_by'?: (_google_protobuf_Timestamp | null);
  'traceparent'?: (string);
  'shard_index'?: (number);
  'shard_total'?: (number);
}

export interface Assign__Output {
  'instance_id': (string);
  'attempt': (number);
  'task_name': (string);
  'handler': (string);
  'params': (string);
  'trigger_time': (_google_protobuf_Timestamp__Output | null);
  'timeout': (_google_protobuf_Duration__Output | null);
  'idempotency_key': (string);
  'start_after': (_google_protobuf_Duration__Output | null);
  'accept_by': (_google_protobuf_Timestamp__Output | null);
  'traceparent': (string);
  'shard_index': (number);
  'shard_total': (number);
}
