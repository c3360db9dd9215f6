// Original file: ax/v1/worker.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Long } from '@grpc/proto-loader';

export interface SchedulerHeartbeat {
  'renewed_seq'?: (number | string | Long);
  'server_time'?: (_google_protobuf_Timestamp | null);
}

export interface SchedulerHeartbeat__Output {
  'renewed_seq': (string);
  'server_time': (_google_protobuf_Timestamp__Output | null);
}
