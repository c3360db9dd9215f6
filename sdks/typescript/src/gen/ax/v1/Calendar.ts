// Original file: ax/v1/admin.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp';

export interface Calendar {
  'name'?: (string);
  'description'?: (string);
  'dates'?: (string)[];
  'created_by'?: (string);
  'create_time'?: (_google_protobuf_Timestamp | null);
  'updated_by'?: (string);
  'update_time'?: (_google_protobuf_Timestamp | null);
}

export interface Calendar__Output {
  'name': (string);
  'description': (string);
  'dates': (string)[];
  'created_by': (string);
  'create_time': (_google_protobuf_Timestamp__Output | null);
  'updated_by': (string);
  'update_time': (_google_protobuf_Timestamp__Output | null);
}
