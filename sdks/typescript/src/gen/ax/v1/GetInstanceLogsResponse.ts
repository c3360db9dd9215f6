// Original file: ax/v1/admin.proto

import type { LogLine as _ax_v1_LogLine, LogLine__Output as _ax_v1_LogLine__Output } from '../../ax/v1/LogLine';
import type { Long } from '@grpc/proto-loader';

export interface GetInstanceLogsResponse {
  'lines'?: (_ax_v1_LogLine)[];
  'dropped'?: (number | string | Long);
}

export interface GetInstanceLogsResponse__Output {
  'lines': (_ax_v1_LogLine__Output)[];
  'dropped': (string);
}
