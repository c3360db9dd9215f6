// Original file: ax/v1/admin.proto

import type { Schedule as _ax_v1_Schedule, Schedule__Output as _ax_v1_Schedule__Output } from '../../ax/v1/Schedule';
import type { MisfirePolicy as _ax_v1_MisfirePolicy, MisfirePolicy__Output as _ax_v1_MisfirePolicy__Output } from '../../ax/v1/MisfirePolicy';
import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../google/protobuf/Duration';
import type { ConcurrencyPolicy as _ax_v1_ConcurrencyPolicy, ConcurrencyPolicy__Output as _ax_v1_ConcurrencyPolicy__Output } from '../../ax/v1/ConcurrencyPolicy';
import type { RoutingStrategy as _ax_v1_RoutingStrategy, RoutingStrategy__Output as _ax_v1_RoutingStrategy__Output } from '../../ax/v1/RoutingStrategy';
import type { RetryPolicy as _ax_v1_RetryPolicy, RetryPolicy__Output as _ax_v1_RetryPolicy__Output } from '../../ax/v1/RetryPolicy';
import type { RetryTarget as _ax_v1_RetryTarget, RetryTarget__Output as _ax_v1_RetryTarget__Output } from '../../ax/v1/RetryTarget';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface TaskSpec {
  'name'?: (string);
  'app'?: (string);
  'handler'?: (string);
  'description'?: (string);
  'schedule'?: (_ax_v1_Schedule | null);
  'params'?: (string);
  'enabled'?: (boolean);
  'misfire_policy'?: (_ax_v1_MisfirePolicy);
  'misfire_threshold'?: (_google_protobuf_Duration | null);
  'max_catch_up'?: (number);
  'concurrency_policy'?: (_ax_v1_ConcurrencyPolicy);
  'routing'?: (_ax_v1_RoutingStrategy);
  'timeout'?: (_google_protobuf_Duration | null);
  'retry_policy'?: (_ax_v1_RetryPolicy | null);
  'labels'?: ({[key: string]: string});
  'selector'?: (string);
  'retry_on'?: (_ax_v1_RetryTarget);
  'shards'?: (number);
  'hash_key'?: (string);
  'priority'?: (number);
  'max_running'?: (number);
  'max_pending'?: (number);
  'cooldown_after'?: (number);
  'cooldown'?: (_google_protobuf_Duration | null);
  'start_time'?: (_google_protobuf_Timestamp | null);
  'end_time'?: (_google_protobuf_Timestamp | null);
  'exclude_dates'?: (string)[];
  'calendar'?: (string);
  'jitter'?: (_google_protobuf_Duration | null);
  'on_success'?: (string)[];
  'on_failure'?: (string)[];
  'after_all'?: (string)[];
  '_enabled'?: "enabled";
  '_max_running'?: "max_running";
  '_max_pending'?: "max_pending";
  '_cooldown_after'?: "cooldown_after";
}

export interface TaskSpec__Output {
  'name': (string);
  'app': (string);
  'handler': (string);
  'description': (string);
  'schedule': (_ax_v1_Schedule__Output | null);
  'params': (string);
  'enabled'?: (boolean);
  'misfire_policy': (_ax_v1_MisfirePolicy__Output);
  'misfire_threshold': (_google_protobuf_Duration__Output | null);
  'max_catch_up': (number);
  'concurrency_policy': (_ax_v1_ConcurrencyPolicy__Output);
  'routing': (_ax_v1_RoutingStrategy__Output);
  'timeout': (_google_protobuf_Duration__Output | null);
  'retry_policy': (_ax_v1_RetryPolicy__Output | null);
  'labels': ({[key: string]: string});
  'selector': (string);
  'retry_on': (_ax_v1_RetryTarget__Output);
  'shards': (number);
  'hash_key': (string);
  'priority': (number);
  'max_running'?: (number);
  'max_pending'?: (number);
  'cooldown_after'?: (number);
  'cooldown': (_google_protobuf_Duration__Output | null);
  'start_time': (_google_protobuf_Timestamp__Output | null);
  'end_time': (_google_protobuf_Timestamp__Output | null);
  'exclude_dates': (string)[];
  'calendar': (string);
  'jitter': (_google_protobuf_Duration__Output | null);
  'on_success': (string)[];
  'on_failure': (string)[];
  'after_all': (string)[];
  '_enabled'?: "enabled";
  '_max_running'?: "max_running";
  '_max_pending'?: "max_pending";
  '_cooldown_after'?: "cooldown_after";
}
