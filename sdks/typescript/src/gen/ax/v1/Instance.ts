// Original file: ax/v1/admin.proto

import type { InstanceSource as _ax_v1_InstanceSource, InstanceSource__Output as _ax_v1_InstanceSource__Output } from '../../ax/v1/InstanceSource';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { InstanceStatus as _ax_v1_InstanceStatus, InstanceStatus__Output as _ax_v1_InstanceStatus__Output } from '../../ax/v1/InstanceStatus';
import type { RetryTarget as _ax_v1_RetryTarget, RetryTarget__Output as _ax_v1_RetryTarget__Output } from '../../ax/v1/RetryTarget';
import type { Long } from '@grpc/proto-loader';

export interface Instance {
  'id'?: (number | string | Long);
  'task_id'?: (number | string | Long);
  'task_name'?: (string);
  'app'?: (string);
  'handler'?: (string);
  'params'?: (string);
  'idempotency_key'?: (string);
  'source'?: (_ax_v1_InstanceSource);
  'trigger_time'?: (_google_protobuf_Timestamp | null);
  'available_time'?: (_google_protobuf_Timestamp | null);
  'status'?: (_ax_v1_InstanceStatus);
  'attempt'?: (number);
  'max_retries'?: (number);
  'failures'?: (number);
  'worker_id'?: (string);
  'session_id'?: (string);
  'scheduler_id'?: (string);
  'start_time'?: (_google_protobuf_Timestamp | null);
  'finish_time'?: (_google_protobuf_Timestamp | null);
  'deadline'?: (_google_protobuf_Timestamp | null);
  'message'?: (string);
  'output'?: (string);
  'progress_percent'?: (number);
  'progress_message'?: (string);
  'create_time'?: (_google_protobuf_Timestamp | null);
  'update_time'?: (_google_protobuf_Timestamp | null);
  'lease_expire_time'?: (_google_protobuf_Timestamp | null);
  'trace_id'?: (string);
  'parent_id'?: (number | string | Long);
  'shard_index'?: (number);
  'shard_total'?: (number);
  'priority'?: (number);
  'selector'?: (string);
  'target_worker'?: (string);
  'hash_key'?: (string);
  'retry_on'?: (_ax_v1_RetryTarget);
  'run_id'?: (number | string | Long);
  'chained_from'?: (number | string | Long);
}

export interface Instance__Output {
  'id': (string);
  'task_id': (string);
  'task_name': (string);
  'app': (string);
  'handler': (string);
  'params': (string);
  'idempotency_key': (string);
  'source': (_ax_v1_InstanceSource__Output);
  'trigger_time': (_google_protobuf_Timestamp__Output | null);
  'available_time': (_google_protobuf_Timestamp__Output | null);
  'status': (_ax_v1_InstanceStatus__Output);
  'attempt': (number);
  'max_retries': (number);
  'failures': (number);
  'worker_id': (string);
  'session_id': (string);
  'scheduler_id': (string);
  'start_time': (_google_protobuf_Timestamp__Output | null);
  'finish_time': (_google_protobuf_Timestamp__Output | null);
  'deadline': (_google_protobuf_Timestamp__Output | null);
  'message': (string);
  'output': (string);
  'progress_percent': (number);
  'progress_message': (string);
  'create_time': (_google_protobuf_Timestamp__Output | null);
  'update_time': (_google_protobuf_Timestamp__Output | null);
  'lease_expire_time': (_google_protobuf_Timestamp__Output | null);
  'trace_id': (string);
  'parent_id': (string);
  'shard_index': (number);
  'shard_total': (number);
  'priority': (number);
  'selector': (string);
  'target_worker': (string);
  'hash_key': (string);
  'retry_on': (_ax_v1_RetryTarget__Output);
  'run_id': (string);
  'chained_from': (string);
}
