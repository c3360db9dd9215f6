// Original file: ax/v1/worker.proto

import type { Hello as _ax_v1_Hello, Hello__Output as _ax_v1_Hello__Output } from '../../ax/v1/Hello';
import type { Heartbeat as _ax_v1_Heartbeat, Heartbeat__Output as _ax_v1_Heartbeat__Output } from '../../ax/v1/Heartbeat';
import type { Credit as _ax_v1_Credit, Credit__Output as _ax_v1_Credit__Output } from '../../ax/v1/Credit';
import type { Accepted as _ax_v1_Accepted, Accepted__Output as _ax_v1_Accepted__Output } from '../../ax/v1/Accepted';
import type { Reject as _ax_v1_Reject, Reject__Output as _ax_v1_Reject__Output } from '../../ax/v1/Reject';
import type { Progress as _ax_v1_Progress, Progress__Output as _ax_v1_Progress__Output } from '../../ax/v1/Progress';
import type { Log as _ax_v1_Log, Log__Output as _ax_v1_Log__Output } from '../../ax/v1/Log';
import type { Result as _ax_v1_Result, Result__Output as _ax_v1_Result__Output } from '../../ax/v1/Result';

export interface WorkerMessage {
  'hello'?: (_ax_v1_Hello | null);
  'heartbeat'?: (_ax_v1_Heartbeat | null);
  'credit'?: (_ax_v1_Credit | null);
  'accepted'?: (_ax_v1_Accepted | null);
  'reject'?: (_ax_v1_Reject | null);
  'progress'?: (_ax_v1_Progress | null);
  'log'?: (_ax_v1_Log | null);
  'result'?: (_ax_v1_Result | null);
  'msg'?: "hello"|"heartbeat"|"credit"|"accepted"|"reject"|"progress"|"log"|"result";
}

export interface WorkerMessage__Output {
  'hello'?: (_ax_v1_Hello__Output | null);
  'heartbeat'?: (_ax_v1_Heartbeat__Output | null);
  'credit'?: (_ax_v1_Credit__Output | null);
  'accepted'?: (_ax_v1_Accepted__Output | null);
  'reject'?: (_ax_v1_Reject__Output | null);
  'progress'?: (_ax_v1_Progress__Output | null);
  'log'?: (_ax_v1_Log__Output | null);
  'result'?: (_ax_v1_Result__Output | null);
  'msg'?: "hello"|"heartbeat"|"credit"|"accepted"|"reject"|"progress"|"log"|"result";
}
