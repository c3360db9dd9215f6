// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';
import type { Long } from '@grpc/proto-loader';

export interface BackfilledFire {
  'time'?: (_google_protobuf_Timestamp | null);
  'instance_id'?: (number | string | Long);
  'created'?: (boolean);
}

export interface BackfilledFire__Output {
  'time': (_google_protobuf_Timestamp__Output | null);
  'instance_id': (string);
  'created': (boolean);
}
