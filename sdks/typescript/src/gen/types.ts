import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';


type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ax: {
    v1: {
      InstanceAttempt: MessageTypeDefinition
      InstanceStatus: EnumTypeDefinition
      LogLevel: EnumTypeDefinition
      Outcome: EnumTypeDefinition
    }
  }
}

