// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Long } from '@grpc/proto-loader';

export interface AuditEntry {
  'id'?: (number | string | Long);
  'time'?: (_google_protobuf_Timestamp | null);
  'actor'?: (string);
  'rpc'?: (string);
  'target'?: (string);
  'app'?: (string);
  'outcome'?: (string);
  'detail'?: (string);
  'before_json'?: (string);
  'after_json'?: (string);
}

export interface AuditEntry__Output {
  'id': (string);
  'time': (_google_protobuf_Timestamp__Output | null);
  'actor': (string);
  'rpc': (string);
  'target': (string);
  'app': (string);
  'outcome': (string);
  'detail': (string);
  'before_json': (string);
  'after_json': (string);
}
