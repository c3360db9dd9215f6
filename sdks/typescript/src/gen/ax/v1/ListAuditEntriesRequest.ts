// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface ListAuditEntriesRequest {
  'actor'?: (string);
  'target'?: (string);
  'rpc'?: (string);
  'start_time'?: (_google_protobuf_Timestamp | null);
  'end_time'?: (_google_protobuf_Timestamp | null);
  'page_size'?: (number);
  'page_token'?: (string);
}

export interface ListAuditEntriesRequest__Output {
  'actor': (string);
  'target': (string);
  'rpc': (string);
  'start_time': (_google_protobuf_Timestamp__Output | null);
  'end_time': (_google_protobuf_Timestamp__Output | null);
  'page_size': (number);
  'page_token': (string);
}
