// Original file: ax/v1/admin.proto

import type { Instance as _ax_v1_Instance, Instance__Output as _ax_v1_Instance__Output } from '../../ax/v1/Instance';
import type { InstanceEvent as _ax_v1_InstanceEvent, InstanceEvent__Output as _ax_v1_InstanceEvent__Output } from '../../ax/v1/InstanceEvent';
import type { LogLine as _ax_v1_LogLine, LogLine__Output as _ax_v1_LogLine__Output } from '../../ax/v1/LogLine';

export interface WatchInstanceResponse {
  'instance'?: (_ax_v1_Instance | null);
  'events'?: (_ax_v1_InstanceEvent)[];
  'lines'?: (_ax_v1_LogLine)[];
  'done'?: (boolean);
}

export interface WatchInstanceResponse__Output {
  'instance': (_ax_v1_Instance__Output | null);
  'events': (_ax_v1_InstanceEvent__Output)[];
  'lines': (_ax_v1_LogLine__Output)[];
  'done': (boolean);
}
