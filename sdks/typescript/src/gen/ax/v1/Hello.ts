// Original file: ax/v1/worker.proto

import type { InstanceAttempt as _ax_v1_InstanceAttempt, InstanceAttempt__Output as _ax_v1_InstanceAttempt__Output } from '../../ax/v1/InstanceAttempt';

export interface Hello {
  'app'?: (string);
  'worker_id'?: (string);
  'handlers'?: (string)[];
  'capacity'?: (number);
  'labels'?: ({[key: string]: string});
  'in_flight'?: (_ax_v1_InstanceAttempt)[];
  'client'?: (string);
  'initial_credits'?: (number);
  'start_after_supported'?: (boolean);
}

export interface Hello__Output {
  'app': (string);
  'worker_id': (string);
  'handlers': (string)[];
  'capacity': (number);
  'labels': ({[key: string]: string});
  'in_flight': (_ax_v1_InstanceAttempt__Output)[];
  'client': (string);
  'initial_credits': (number);
  'start_after_supported': (boolean);
}
