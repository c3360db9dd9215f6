// Original file: ax/v1/admin.proto

import type { LogLevel as _ax_v1_LogLevel, LogLevel__Output as _ax_v1_LogLevel__Output } from '../../ax/v1/LogLevel';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Long } from '@grpc/proto-loader';

export interface LogLine {
  'seq'?: (number | string | Long);
  'attempt'?: (number);
  'level'?: (_ax_v1_LogLevel);
  'time'?: (_google_protobuf_Timestamp | null);
  'message'?: (string);
}

export interface LogLine__Output {
  'seq': (string);
  'attempt': (number);
  'level': (_ax_v1_LogLevel__Output);
  'time': (_google_protobuf_Timestamp__Output | null);
  'message': (string);
}
