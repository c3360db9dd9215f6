import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { WorkerServiceClient as _ax_v1_WorkerServiceClient, WorkerServiceDefinition as _ax_v1_WorkerServiceDefinition } from './ax/v1/WorkerService';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ax: {
    v1: {
      Accepted: MessageTypeDefinition
      Assign: MessageTypeDefinition
      Cancel: MessageTypeDefinition
      Credit: MessageTypeDefinition
      Drain: MessageTypeDefinition
      Heartbeat: MessageTypeDefinition
      Hello: MessageTypeDefinition
      InstanceAttempt: MessageTypeDefinition
      InstanceStatus: EnumTypeDefinition
      Log: MessageTypeDefinition
      LogLevel: EnumTypeDefinition
      Outcome: EnumTypeDefinition
      Progress: MessageTypeDefinition
      Reject: MessageTypeDefinition
      Result: MessageTypeDefinition
      ResultAck: MessageTypeDefinition
      SchedulerHeartbeat: MessageTypeDefinition
      SchedulerMessage: MessageTypeDefinition
      Welcome: MessageTypeDefinition
      WorkerMessage: MessageTypeDefinition
      WorkerService: SubtypeConstructor<typeof grpc.Client, _ax_v1_WorkerServiceClient> & { service: _ax_v1_WorkerServiceDefinition }
    }
  }
  google: {
    protobuf: {
      Duration: MessageTypeDefinition
      Timestamp: MessageTypeDefinition
    }
  }
}

