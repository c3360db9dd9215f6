import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AdminServiceClient as _ax_v1_AdminServiceClient, AdminServiceDefinition as _ax_v1_AdminServiceDefinition } from './ax/v1/AdminService';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ax: {
    v1: {
      AdminService: SubtypeConstructor<typeof grpc.Client, _ax_v1_AdminServiceClient> & { service: _ax_v1_AdminServiceDefinition }
      AlertDelivery: MessageTypeDefinition
      AlertRule: MessageTypeDefinition
      AlertRuleSpec: MessageTypeDefinition
      AppLimit: MessageTypeDefinition
      ApplyTasksRequest: MessageTypeDefinition
      ApplyTasksResponse: MessageTypeDefinition
      AuditEntry: MessageTypeDefinition
      BackfillTaskRequest: MessageTypeDefinition
      BackfillTaskResponse: MessageTypeDefinition
      BackfilledFire: MessageTypeDefinition
      Backoff: MessageTypeDefinition
      BulkAction: EnumTypeDefinition
      BulkInstancesRequest: MessageTypeDefinition
      BulkInstancesResponse: MessageTypeDefinition
      Calendar: MessageTypeDefinition
      CancelInstanceRequest: MessageTypeDefinition
      CancelInstanceResponse: MessageTypeDefinition
      ConcurrencyPolicy: EnumTypeDefinition
      CreateAlertRuleRequest: MessageTypeDefinition
      CreateAlertRuleResponse: MessageTypeDefinition
      CreateCalendarRequest: MessageTypeDefinition
      CreateCalendarResponse: MessageTypeDefinition
      CreateTaskRequest: MessageTypeDefinition
      CreateTaskResponse: MessageTypeDefinition
      CronDialect: EnumTypeDefinition
      CronSchedule: MessageTypeDefinition
      DeleteAlertRuleRequest: MessageTypeDefinition
      DeleteAlertRuleResponse: MessageTypeDefinition
      DeleteAppLimitRequest: MessageTypeDefinition
      DeleteAppLimitResponse: MessageTypeDefinition
      DeleteCalendarRequest: MessageTypeDefinition
      DeleteCalendarResponse: MessageTypeDefinition
      DeleteTaskRequest: MessageTypeDefinition
      DeleteTaskResponse: MessageTypeDefinition
      DisableTaskRequest: MessageTypeDefinition
      DisableTaskResponse: MessageTypeDefinition
      EnableTaskRequest: MessageTypeDefinition
      EnableTaskResponse: MessageTypeDefinition
      ExplainFinding: MessageTypeDefinition
      ExplainFindingKind: EnumTypeDefinition
      ExplainTaskRequest: MessageTypeDefinition
      ExplainTaskResponse: MessageTypeDefinition
      ExplainWorkers: MessageTypeDefinition
      ExplainedAttempt: MessageTypeDefinition
      ExplainedFire: MessageTypeDefinition
      ExponentialBackoff: MessageTypeDefinition
      Fire: MessageTypeDefinition
      FireSpan: MessageTypeDefinition
      GetCalendarRequest: MessageTypeDefinition
      GetCalendarResponse: MessageTypeDefinition
      GetClusterStatsRequest: MessageTypeDefinition
      GetClusterStatsResponse: MessageTypeDefinition
      GetInstanceLogsRequest: MessageTypeDefinition
      GetInstanceLogsResponse: MessageTypeDefinition
      GetInstanceRequest: MessageTypeDefinition
      GetInstanceResponse: MessageTypeDefinition
      GetRunRequest: MessageTypeDefinition
      GetRunResponse: MessageTypeDefinition
      GetTaskRequest: MessageTypeDefinition
      GetTaskResponse: MessageTypeDefinition
      Instance: MessageTypeDefinition
      InstanceAttempt: MessageTypeDefinition
      InstanceEvent: MessageTypeDefinition
      InstanceLink: MessageTypeDefinition
      InstanceSelector: MessageTypeDefinition
      InstanceSource: EnumTypeDefinition
      InstanceStatus: EnumTypeDefinition
      IntervalSchedule: MessageTypeDefinition
      LinkKind: EnumTypeDefinition
      ListAlertDeliveriesRequest: MessageTypeDefinition
      ListAlertDeliveriesResponse: MessageTypeDefinition
      ListAlertRulesRequest: MessageTypeDefinition
      ListAlertRulesResponse: MessageTypeDefinition
      ListAppLimitsRequest: MessageTypeDefinition
      ListAppLimitsResponse: MessageTypeDefinition
      ListAuditEntriesRequest: MessageTypeDefinition
      ListAuditEntriesResponse: MessageTypeDefinition
      ListBackoff: MessageTypeDefinition
      ListCalendarsRequest: MessageTypeDefinition
      ListCalendarsResponse: MessageTypeDefinition
      ListInstancesRequest: MessageTypeDefinition
      ListInstancesResponse: MessageTypeDefinition
      ListSchedulersRequest: MessageTypeDefinition
      ListSchedulersResponse: MessageTypeDefinition
      ListTasksRequest: MessageTypeDefinition
      ListTasksResponse: MessageTypeDefinition
      ListWorkersRequest: MessageTypeDefinition
      ListWorkersResponse: MessageTypeDefinition
      LogLevel: EnumTypeDefinition
      LogLine: MessageTypeDefinition
      LoopHealth: MessageTypeDefinition
      ManualSchedule: MessageTypeDefinition
      MisfirePolicy: EnumTypeDefinition
      OneTimeSchedule: MessageTypeDefinition
      Outcome: EnumTypeDefinition
      PauseTaskRequest: MessageTypeDefinition
      PauseTaskResponse: MessageTypeDefinition
      PreviewScheduleRequest: MessageTypeDefinition
      PreviewScheduleResponse: MessageTypeDefinition
      PublishEventRequest: MessageTypeDefinition
      PublishEventResponse: MessageTypeDefinition
      ResumeTaskRequest: MessageTypeDefinition
      ResumeTaskResponse: MessageTypeDefinition
      RetryInstanceRequest: MessageTypeDefinition
      RetryInstanceResponse: MessageTypeDefinition
      RetryPolicy: MessageTypeDefinition
      RetryTarget: EnumTypeDefinition
      RoutingStrategy: EnumTypeDefinition
      RunEdge: MessageTypeDefinition
      Schedule: MessageTypeDefinition
      SchedulePreview: MessageTypeDefinition
      SchedulerHealth: MessageTypeDefinition
      SchedulerNode: MessageTypeDefinition
      SetAppLimitRequest: MessageTypeDefinition
      SetAppLimitResponse: MessageTypeDefinition
      StatusCount: MessageTypeDefinition
      Task: MessageTypeDefinition
      TaskChange: MessageTypeDefinition
      TaskChangeKind: EnumTypeDefinition
      TaskEvent: MessageTypeDefinition
      TaskPause: MessageTypeDefinition
      TaskSet: MessageTypeDefinition
      TaskSpec: MessageTypeDefinition
      TestAlertRuleRequest: MessageTypeDefinition
      TestAlertRuleResponse: MessageTypeDefinition
      TriggerTaskRequest: MessageTypeDefinition
      TriggerTaskResponse: MessageTypeDefinition
      UpdateCalendarRequest: MessageTypeDefinition
      UpdateCalendarResponse: MessageTypeDefinition
      UpdateTaskRequest: MessageTypeDefinition
      UpdateTaskResponse: MessageTypeDefinition
      WatchInstanceRequest: MessageTypeDefinition
      WatchInstanceResponse: MessageTypeDefinition
      WorkerCooldown: MessageTypeDefinition
      WorkerSession: MessageTypeDefinition
    }
  }
  google: {
    protobuf: {
      Duration: MessageTypeDefinition
      FieldMask: MessageTypeDefinition
      Timestamp: MessageTypeDefinition
    }
  }
}

