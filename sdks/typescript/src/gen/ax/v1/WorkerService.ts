// Original file: ax/v1/worker.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { SchedulerMessage as _ax_v1_SchedulerMessage, SchedulerMessage__Output as _ax_v1_SchedulerMessage__Output } from '../../ax/v1/SchedulerMessage';
import type { WorkerMessage as _ax_v1_WorkerMessage, WorkerMessage__Output as _ax_v1_WorkerMessage__Output } from '../../ax/v1/WorkerMessage';

export interface WorkerServiceClient extends grpc.Client {
  Connect(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_ax_v1_WorkerMessage, _ax_v1_SchedulerMessage__Output>;
  Connect(options?: grpc.CallOptions): grpc.ClientDuplexStream<_ax_v1_WorkerMessage, _ax_v1_SchedulerMessage__Output>;
  connect(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_ax_v1_WorkerMessage, _ax_v1_SchedulerMessage__Output>;
  connect(options?: grpc.CallOptions): grpc.ClientDuplexStream<_ax_v1_WorkerMessage, _ax_v1_SchedulerMessage__Output>;
  
}

export interface WorkerServiceHandlers extends grpc.UntypedServiceImplementation {
  Connect: grpc.handleBidiStreamingCall<_ax_v1_WorkerMessage__Output, _ax_v1_SchedulerMessage>;
  
}

export interface WorkerServiceDefinition extends grpc.ServiceDefinition {
  Connect: MethodDefinition<_ax_v1_WorkerMessage, _ax_v1_SchedulerMessage, _ax_v1_WorkerMessage__Output, _ax_v1_SchedulerMessage__Output>
}
