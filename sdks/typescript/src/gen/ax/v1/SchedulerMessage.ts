// Original file: ax/v1/worker.proto

import type { Welcome as _ax_v1_Welcome, Welcome__Output as _ax_v1_Welcome__Output } from '../../ax/v1/Welcome';
import type { Assign as _ax_v1_Assign, Assign__Output as _ax_v1_Assign__Output } from '../../ax/v1/Assign';
import type { Cancel as _ax_v1_Cancel, Cancel__Output as _ax_v1_Cancel__Output } from '../../ax/v1/Cancel';
import type { ResultAck as _ax_v1_ResultAck, ResultAck__Output as _ax_v1_ResultAck__Output } from '../../ax/v1/ResultAck';
import type { Drain as _ax_v1_Drain, Drain__Output as _ax_v1_Drain__Output } from '../../ax/v1/Drain';
import type { SchedulerHeartbeat as _ax_v1_SchedulerHeartbeat, SchedulerHeartbeat__Output as _ax_v1_SchedulerHeartbeat__Output } from '../../ax/v1/SchedulerHeartbeat';

export interface SchedulerMessage {
  'welcome'?: (_ax_v1_Welcome | null);
  'assign'?: (_ax_v1_Assign | null);
  'cancel'?: (_ax_v1_Cancel | null);
  'result_ack'?: (_ax_v1_ResultAck | null);
  'drain'?: (_ax_v1_Drain | null);
  'heartbeat'?: (_ax_v1_SchedulerHeartbeat | null);
  'msg'?: "welcome"|"assign"|"cancel"|"result_ack"|"drain"|"heartbeat";
}

export interface SchedulerMessage__Output {
  'welcome'?: (_ax_v1_Welcome__Output | null);
  'assign'?: (_ax_v1_Assign__Output | null);
  'cancel'?: (_ax_v1_Cancel__Output | null);
  'result_ack'?: (_ax_v1_ResultAck__Output | null);
  'drain'?: (_ax_v1_Drain__Output | null);
  'heartbeat'?: (_ax_v1_SchedulerHeartbeat__Output | null);
  'msg'?: "welcome"|"assign"|"cancel"|"result_ack"|"drain"|"heartbeat";
}
