// Original file: ax/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface BulkInstancesResponse {
  'matched'?: (number | string | Long);
  'changed'?: (number | string | Long);
  'skipped'?: (number | string | Long);
  'max_id'?: (number | string | Long);
  'sample_ids'?: (number | string | Long)[];
}

export interface BulkInstancesResponse__Output {
  'matched': (string);
  'changed': (string);
  'skipped': (string);
  'max_id': (string);
  'sample_ids': (string)[];
}
