// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Long } from '@grpc/proto-loader';

export interface AlertDelivery {
  'id'?: (number | string | Long);
  'rule'?: (string);
  'app'?: (string);
  'task'?: (string);
  'event'?: (string);
  'status'?: (string);
  'attempts'?: (number);
  'next_attempt_time'?: (_google_protobuf_Timestamp | null);
  'last_error'?: (string);
  'create_time'?: (_google_protobuf_Timestamp | null);
  'finish_time'?: (_google_protobuf_Timestamp | null);
  'body'?: (string);
  'url'?: (string);
}

export interface AlertDelivery__Output {
  'id': (string);
  'rule': (string);
  'app': (string);
  'task': (string);
  'event': (string);
  'status': (string);
  'attempts': (number);
  'next_attempt_time': (_google_protobuf_Timestamp__Output | null);
  'last_error': (string);
  'create_time': (_google_protobuf_Timestamp__Output | null);
  'finish_time': (_google_protobuf_Timestamp__Output | null);
  'body': (string);
  'url': (string);
}
