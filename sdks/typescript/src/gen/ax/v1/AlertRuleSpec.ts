// Original file: ax/v1/admin.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { Long } from '@grpc/proto-loader';

export interface AlertRuleSpec {
  'name'?: (string);
  'app'?: (string);
  'task'?: (string);
  'events'?: (string)[];
  'url'?: (string);
  'secret'?: (string);
  'no_worker_for'?: (_google_protobuf_Duration | null);
  'backlog_over'?: (number | string | Long);
  '_backlog_over'?: "backlog_over";
}

export interface AlertRuleSpec__Output {
  'name': (string);
  'app': (string);
  'task': (string);
  'events': (string)[];
  'url': (string);
  'secret': (string);
  'no_worker_for': (_google_protobuf_Duration__Output | null);
  'backlog_over'?: (string);
  '_backlog_over'?: "backlog_over";
}
