// Original file: ax/v1/worker.proto

import type { LogLevel as _ax_v1_LogLevel, LogLevel__Output as _ax_v1_LogLevel__Output } from '../../ax/v1/LogLevel';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Long } from '@grpc/proto-loader';

export interface Log {
  'instance_id'?: (number | string | Long);
  'attempt'?: (number);
  'level'?: (_ax_v1_LogLevel);
  'message'?: (string);
  'at'?: (_google_protobuf_Timestamp | null);
}

export interface Log__Output {
  'instance_id': (string);
  'attempt': (number);
  'level': (_ax_v1_LogLevel__Output);
  'message': (string);
  'at': (_google_protobuf_Timestamp__Output | null);
}
