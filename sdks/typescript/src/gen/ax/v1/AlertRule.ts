// Original file: ax/v1/admin.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Long } from '@grpc/proto-loader';

export interface AlertRule {
  'name'?: (string);
  'app'?: (string);
  'task'?: (string);
  'events'?: (string)[];
  'url'?: (string);
  'no_worker_for'?: (_google_protobuf_Duration | null);
  'backlog_over'?: (number | string | Long);
  'created_by'?: (string);
  'create_time'?: (_google_protobuf_Timestamp | null);
  '_backlog_over'?: "backlog_over";
}

export interface AlertRule__Output {
  'name': (string);
  'app': (string);
  'task': (string);
  'events': (string)[];
  'url': (string);
  'no_worker_for': (_google_protobuf_Duration__Output | null);
  'backlog_over'?: (string);
  'created_by': (string);
  'create_time': (_google_protobuf_Timestamp__Output | null);
  '_backlog_over'?: "backlog_over";
}
