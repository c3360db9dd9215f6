// Original file: ax/v1/worker.proto

import type { Outcome as _ax_v1_Outcome, Outcome__Output as _ax_v1_Outcome__Output } from '../../ax/v1/Outcome';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Long } from '@grpc/proto-loader';

export interface Result {
  'instance_id'?: (number | string | Long);
  'attempt'?: (number);
  'outcome'?: (_ax_v1_Outcome);
  'message'?: (string);
  'output'?: (string);
  'retryable'?: (boolean);
  'finished_at'?: (_google_protobuf_Timestamp | null);
}

export interface Result__Output {
  'instance_id': (string);
  'attempt': (number);
  'outcome': (_ax_v1_Outcome__Output);
  'message': (string);
  'output': (string);
  'retryable': (boolean);
  'finished_at': (_google_protobuf_Timestamp__Output | null);
}
