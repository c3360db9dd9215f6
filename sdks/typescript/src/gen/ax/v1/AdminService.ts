// Original file: ax/v1/admin.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ApplyTasksRequest as _ax_v1_ApplyTasksRequest, ApplyTasksRequest__Output as _ax_v1_ApplyTasksRequest__Output } from '../../ax/v1/ApplyTasksRequest';
import type { ApplyTasksResponse as _ax_v1_ApplyTasksResponse, ApplyTasksResponse__Output as _ax_v1_ApplyTasksResponse__Output } from '../../ax/v1/ApplyTasksResponse';
import type { BackfillTaskRequest as _ax_v1_BackfillTaskRequest, BackfillTaskRequest__Output as _ax_v1_BackfillTaskRequest__Output } from '../../ax/v1/BackfillTaskRequest';
import type { BackfillTaskResponse as _ax_v1_BackfillTaskResponse, BackfillTaskResponse__Output as _ax_v1_BackfillTaskResponse__Output } from '../../ax/v1/BackfillTaskResponse';
import type { BulkInstancesRequest as _ax_v1_BulkInstancesRequest, BulkInstancesRequest__Output as _ax_v1_BulkInstancesRequest__Output } from '../../ax/v1/BulkInstancesRequest';
import type { BulkInstancesResponse as _ax_v1_BulkInstancesResponse, BulkInstancesResponse__Output as _ax_v1_BulkInstancesResponse__Output } from '../../ax/v1/BulkInstancesResponse';
import type { CancelInstanceRequest as _ax_v1_CancelInstanceRequest, CancelInstanceRequest__Output as _ax_v1_CancelInstanceRequest__Output } from '../../ax/v1/CancelInstanceRequest';
import type { CancelInstanceResponse as _ax_v1_CancelInstanceResponse, CancelInstanceResponse__Output as _ax_v1_CancelInstanceResponse__Output } from '../../ax/v1/CancelInstanceResponse';
import type { CreateAlertRuleRequest as _ax_v1_CreateAlertRuleRequest, CreateAlertRuleRequest__Output as _ax_v1_CreateAlertRuleRequest__Output } from '../../ax/v1/CreateAlertRuleRequest';
import type { CreateAlertRuleResponse as _ax_v1_CreateAlertRuleResponse, CreateAlertRuleResponse__Output as _ax_v1_CreateAlertRuleResponse__Output } from '../../ax/v1/CreateAlertRuleResponse';
import type { CreateCalendarRequest as _ax_v1_CreateCalendarRequest, CreateCalendarRequest__Output as _ax_v1_CreateCalendarRequest__Output } from '../../ax/v1/CreateCalendarRequest';
import type { CreateCalendarResponse as _ax_v1_CreateCalendarResponse, CreateCalendarResponse__Output as _ax_v1_CreateCalendarResponse__Output } from '../../ax/v1/CreateCalendarResponse';
import type { CreateTaskRequest as _ax_v1_CreateTaskRequest, CreateTaskRequest__Output as _ax_v1_CreateTaskRequest__Output } from '../../ax/v1/CreateTaskRequest';
import type { CreateTaskResponse as _ax_v1_CreateTaskResponse, CreateTaskResponse__Output as _ax_v1_CreateTaskResponse__Output } from '../../ax/v1/CreateTaskResponse';
import type { DeleteAlertRuleRequest as _ax_v1_DeleteAlertRuleRequest, DeleteAlertRuleRequest__Output as _ax_v1_DeleteAlertRuleRequest__Output } from '../../ax/v1/DeleteAlertRuleRequest';
import type { DeleteAlertRuleResponse as _ax_v1_DeleteAlertRuleResponse, DeleteAlertRuleResponse__Output as _ax_v1_DeleteAlertRuleResponse__Output } from '../../ax/v1/DeleteAlertRuleResponse';
import type { DeleteAppLimitRequest as _ax_v1_DeleteAppLimitRequest, DeleteAppLimitRequest__Output as _ax_v1_DeleteAppLimitRequest__Output } from '../../ax/v1/DeleteAppLimitRequest';
import type { DeleteAppLimitResponse as _ax_v1_DeleteAppLimitResponse, DeleteAppLimitResponse__Output as _ax_v1_DeleteAppLimitResponse__Output } from '../../ax/v1/DeleteAppLimitResponse';
import type { DeleteCalendarRequest as _ax_v1_DeleteCalendarRequest, DeleteCalendarRequest__Output as _ax_v1_DeleteCalendarRequest__Output } from '../../ax/v1/DeleteCalendarRequest';
import type { DeleteCalendarResponse as _ax_v1_DeleteCalendarResponse, DeleteCalendarResponse__Output as _ax_v1_DeleteCalendarResponse__Output } from '../../ax/v1/DeleteCalendarResponse';
import type { DeleteTaskRequest as _ax_v1_DeleteTaskRequest, DeleteTaskRequest__Output as _ax_v1_DeleteTaskRequest__Output } from '../../ax/v1/DeleteTaskRequest';
import type { DeleteTaskResponse as _ax_v1_DeleteTaskResponse, DeleteTaskResponse__Output as _ax_v1_DeleteTaskResponse__Output } from '../../ax/v1/DeleteTaskResponse';
import type { DisableTaskRequest as _ax_v1_DisableTaskRequest, DisableTaskRequest__Output as _ax_v1_DisableTaskRequest__Output } from '../../ax/v1/DisableTaskRequest';
import type { DisableTaskResponse as _ax_v1_DisableTaskResponse, DisableTaskResponse__Output as _ax_v1_DisableTaskResponse__Output } from '../../ax/v1/DisableTaskResponse';
import type { EnableTaskRequest as _ax_v1_EnableTaskRequest, EnableTaskRequest__Output as _ax_v1_EnableTaskRequest__Output } from '../../ax/v1/EnableTaskRequest';
import type { EnableTaskResponse as _ax_v1_EnableTaskResponse, EnableTaskResponse__Output as _ax_v1_EnableTaskResponse__Output } from '../../ax/v1/EnableTaskResponse';
import type { ExplainTaskRequest as _ax_v1_ExplainTaskRequest, ExplainTaskRequest__Output as _ax_v1_ExplainTaskRequest__Output } from '../../ax/v1/ExplainTaskRequest';
import type { ExplainTaskResponse as _ax_v1_ExplainTaskResponse, ExplainTaskResponse__Output as _ax_v1_ExplainTaskResponse__Output } from '../../ax/v1/ExplainTaskResponse';
import type { GetCalendarRequest as _ax_v1_GetCalendarRequest, GetCalendarRequest__Output as _ax_v1_GetCalendarRequest__Output } from '../../ax/v1/GetCalendarRequest';
import type { GetCalendarResponse as _ax_v1_GetCalendarResponse, GetCalendarResponse__Output as _ax_v1_GetCalendarResponse__Output } from '../../ax/v1/GetCalendarResponse';
import type { GetClusterStatsRequest as _ax_v1_GetClusterStatsRequest, GetClusterStatsRequest__Output as _ax_v1_GetClusterStatsRequest__Output } from '../../ax/v1/GetClusterStatsRequest';
import type { GetClusterStatsResponse as _ax_v1_GetClusterStatsResponse, GetClusterStatsResponse__Output as _ax_v1_GetClusterStatsResponse__Output } from '../../ax/v1/GetClusterStatsResponse';
import type { GetInstanceLogsRequest as _ax_v1_GetInstanceLogsRequest, GetInstanceLogsRequest__Output as _ax_v1_GetInstanceLogsRequest__Output } from '../../ax/v1/GetInstanceLogsRequest';
import type { GetInstanceLogsResponse as _ax_v1_GetInstanceLogsResponse, GetInstanceLogsResponse__Output as _ax_v1_GetInstanceLogsResponse__Output } from '../../ax/v1/GetInstanceLogsResponse';
import type { GetInstanceRequest as _ax_v1_GetInstanceRequest, GetInstanceRequest__Output as _ax_v1_GetInstanceRequest__Output } from '../../ax/v1/GetInstanceRequest';
import type { GetInstanceResponse as _ax_v1_GetInstanceResponse, GetInstanceResponse__Output as _ax_v1_GetInstanceResponse__Output } from '../../ax/v1/GetInstanceResponse';
import type { GetRunRequest as _ax_v1_GetRunRequest, GetRunRequest__Output as _ax_v1_GetRunRequest__Output } from '../../ax/v1/GetRunRequest';
import type { GetRunResponse as _ax_v1_GetRunResponse, GetRunResponse__Output as _ax_v1_GetRunResponse__Output } from '../../ax/v1/GetRunResponse';
import type { GetTaskRequest as _ax_v1_GetTaskRequest, GetTaskRequest__Output as _ax_v1_GetTaskRequest__Output } from '../../ax/v1/GetTaskRequest';
import type { GetTaskResponse as _ax_v1_GetTaskResponse, GetTaskResponse__Output as _ax_v1_GetTaskResponse__Output } from '../../ax/v1/GetTaskResponse';
import type { ListAlertDeliveriesRequest as _ax_v1_ListAlertDeliveriesRequest, ListAlertDeliveriesRequest__Output as _ax_v1_ListAlertDeliveriesRequest__Output } from '../../ax/v1/ListAlertDeliveriesRequest';
import type { ListAlertDeliveriesResponse as _ax_v1_ListAlertDeliveriesResponse, ListAlertDeliveriesResponse__Output as _ax_v1_ListAlertDeliveriesResponse__Output } from '../../ax/v1/ListAlertDeliveriesResponse';
import type { ListAlertRulesRequest as _ax_v1_ListAlertRulesRequest, ListAlertRulesRequest__Output as _ax_v1_ListAlertRulesRequest__Output } from '../../ax/v1/ListAlertRulesRequest';
import type { ListAlertRulesResponse as _ax_v1_ListAlertRulesResponse, ListAlertRulesResponse__Output as _ax_v1_ListAlertRulesResponse__Output } from '../../ax/v1/ListAlertRulesResponse';
import type { ListAppLimitsRequest as _ax_v1_ListAppLimitsRequest, ListAppLimitsRequest__Output as _ax_v1_ListAppLimitsRequest__Output } from '../../ax/v1/ListAppLimitsRequest';
import type { ListAppLimitsResponse as _ax_v1_ListAppLimitsResponse, ListAppLimitsResponse__Output as _ax_v1_ListAppLimitsResponse__Output } from '../../ax/v1/ListAppLimitsResponse';
import type { ListAuditEntriesRequest as _ax_v1_ListAuditEntriesRequest, ListAuditEntriesRequest__Output as _ax_v1_ListAuditEntriesRequest__Output } from '../../ax/v1/ListAuditEntriesRequest';
import type { ListAuditEntriesResponse as _ax_v1_ListAuditEntriesResponse, ListAuditEntriesResponse__Output as _ax_v1_ListAuditEntriesResponse__Output } from '../../ax/v1/ListAuditEntriesResponse';
import type { ListCalendarsRequest as _ax_v1_ListCalendarsRequest, ListCalendarsRequest__Output as _ax_v1_ListCalendarsRequest__Output } from '../../ax/v1/ListCalendarsRequest';
import type { ListCalendarsResponse as _ax_v1_ListCalendarsResponse, ListCalendarsResponse__Output as _ax_v1_ListCalendarsResponse__Output } from '../../ax/v1/ListCalendarsResponse';
import type { ListInstancesRequest as _ax_v1_ListInstancesRequest, ListInstancesRequest__Output as _ax_v1_ListInstancesRequest__Output } from '../../ax/v1/ListInstancesRequest';
import type { ListInstancesResponse as _ax_v1_ListInstancesResponse, ListInstancesResponse__Output as _ax_v1_ListInstancesResponse__Output } from '../../ax/v1/ListInstancesResponse';
import type { ListSchedulersRequest as _ax_v1_ListSchedulersRequest, ListSchedulersRequest__Output as _ax_v1_ListSchedulersRequest__Output } from '../../ax/v1/ListSchedulersRequest';
import type { ListSchedulersResponse as _ax_v1_ListSchedulersResponse, ListSchedulersResponse__Output as _ax_v1_ListSchedulersResponse__Output } from '../../ax/v1/ListSchedulersResponse';
import type { ListTasksRequest as _ax_v1_ListTasksRequest, ListTasksRequest__Output as _ax_v1_ListTasksRequest__Output } from '../../ax/v1/ListTasksRequest';
import type { ListTasksResponse as _ax_v1_ListTasksResponse, ListTasksResponse__Output as _ax_v1_ListTasksResponse__Output } from '../../ax/v1/ListTasksResponse';
import type { ListWorkersRequest as _ax_v1_ListWorkersRequest, ListWorkersRequest__Output as _ax_v1_ListWorkersRequest__Output } from '../../ax/v1/ListWorkersRequest';
import type { ListWorkersResponse as _ax_v1_ListWorkersResponse, ListWorkersResponse__Output as _ax_v1_ListWorkersResponse__Output } from '../../ax/v1/ListWorkersResponse';
import type { PauseTaskRequest as _ax_v1_PauseTaskRequest, PauseTaskRequest__Output as _ax_v1_PauseTaskRequest__Output } from '../../ax/v1/PauseTaskRequest';
import type { PauseTaskResponse as _ax_v1_PauseTaskResponse, PauseTaskResponse__Output as _ax_v1_PauseTaskResponse__Output } from '../../ax/v1/PauseTaskResponse';
import type { PreviewScheduleRequest as _ax_v1_PreviewScheduleRequest, PreviewScheduleRequest__Output as _ax_v1_PreviewScheduleRequest__Output } from '../../ax/v1/PreviewScheduleRequest';
import type { PreviewScheduleResponse as _ax_v1_PreviewScheduleResponse, PreviewScheduleResponse__Output as _ax_v1_PreviewScheduleResponse__Output } from '../../ax/v1/PreviewScheduleResponse';
import type { PublishEventRequest as _ax_v1_PublishEventRequest, PublishEventRequest__Output as _ax_v1_PublishEventRequest__Output } from '../../ax/v1/PublishEventRequest';
import type { PublishEventResponse as _ax_v1_PublishEventResponse, PublishEventResponse__Output as _ax_v1_PublishEventResponse__Output } from '../../ax/v1/PublishEventResponse';
import type { ResumeTaskRequest as _ax_v1_ResumeTaskRequest, ResumeTaskRequest__Output as _ax_v1_ResumeTaskRequest__Output } from '../../ax/v1/ResumeTaskRequest';
import type { ResumeTaskResponse as _ax_v1_ResumeTaskResponse, ResumeTaskResponse__Output as _ax_v1_ResumeTaskResponse__Output } from '../../ax/v1/ResumeTaskResponse';
import type { RetryInstanceRequest as _ax_v1_RetryInstanceRequest, RetryInstanceRequest__Output as _ax_v1_RetryInstanceRequest__Output } from '../../ax/v1/RetryInstanceRequest';
import type { RetryInstanceResponse as _ax_v1_RetryInstanceResponse, RetryInstanceResponse__Output as _ax_v1_RetryInstanceResponse__Output } from '../../ax/v1/RetryInstanceResponse';
import type { SetAppLimitRequest as _ax_v1_SetAppLimitRequest, SetAppLimitRequest__Output as _ax_v1_SetAppLimitRequest__Output } from '../../ax/v1/SetAppLimitRequest';
import type { SetAppLimitResponse as _ax_v1_SetAppLimitResponse, SetAppLimitResponse__Output as _ax_v1_SetAppLimitResponse__Output } from '../../ax/v1/SetAppLimitResponse';
import type { TestAlertRuleRequest as _ax_v1_TestAlertRuleRequest, TestAlertRuleRequest__Output as _ax_v1_TestAlertRuleRequest__Output } from '../../ax/v1/TestAlertRuleRequest';
import type { TestAlertRuleResponse as _ax_v1_TestAlertRuleResponse, TestAlertRuleResponse__Output as _ax_v1_TestAlertRuleResponse__Output } from '../../ax/v1/TestAlertRuleResponse';
import type { TriggerTaskRequest as _ax_v1_TriggerTaskRequest, TriggerTaskRequest__Output as _ax_v1_TriggerTaskRequest__Output } from '../../ax/v1/TriggerTaskRequest';
import type { TriggerTaskResponse as _ax_v1_TriggerTaskResponse, TriggerTaskResponse__Output as _ax_v1_TriggerTaskResponse__Output } from '../../ax/v1/TriggerTaskResponse';
import type { UpdateCalendarRequest as _ax_v1_UpdateCalendarRequest, UpdateCalendarRequest__Output as _ax_v1_UpdateCalendarRequest__Output } from '../../ax/v1/UpdateCalendarRequest';
import type { UpdateCalendarResponse as _ax_v1_UpdateCalendarResponse, UpdateCalendarResponse__Output as _ax_v1_UpdateCalendarResponse__Output } from '../../ax/v1/UpdateCalendarResponse';
import type { UpdateTaskRequest as _ax_v1_UpdateTaskRequest, UpdateTaskRequest__Output as _ax_v1_UpdateTaskRequest__Output } from '../../ax/v1/UpdateTaskRequest';
import type { UpdateTaskResponse as _ax_v1_UpdateTaskResponse, UpdateTaskResponse__Output as _ax_v1_UpdateTaskResponse__Output } from '../../ax/v1/UpdateTaskResponse';
import type { WatchInstanceRequest as _ax_v1_WatchInstanceRequest, WatchInstanceRequest__Output as _ax_v1_WatchInstanceRequest__Output } from '../../ax/v1/WatchInstanceRequest';
import type { WatchInstanceResponse as _ax_v1_WatchInstanceResponse, WatchInstanceResponse__Output as _ax_v1_WatchInstanceResponse__Output } from '../../ax/v1/WatchInstanceResponse';

export interface AdminServiceClient extends grpc.Client {
  ApplyTasks(argument: _ax_v1_ApplyTasksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ApplyTasksResponse__Output>): grpc.ClientUnaryCall;
  ApplyTasks(argument: _ax_v1_ApplyTasksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ApplyTasksResponse__Output>): grpc.ClientUnaryCall;
  ApplyTasks(argument: _ax_v1_ApplyTasksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ApplyTasksResponse__Output>): grpc.ClientUnaryCall;
  ApplyTasks(argument: _ax_v1_ApplyTasksRequest, callback: grpc.requestCallback<_ax_v1_ApplyTasksResponse__Output>): grpc.ClientUnaryCall;
  applyTasks(argument: _ax_v1_ApplyTasksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ApplyTasksResponse__Output>): grpc.ClientUnaryCall;
  applyTasks(argument: _ax_v1_ApplyTasksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ApplyTasksResponse__Output>): grpc.ClientUnaryCall;
  applyTasks(argument: _ax_v1_ApplyTasksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ApplyTasksResponse__Output>): grpc.ClientUnaryCall;
  applyTasks(argument: _ax_v1_ApplyTasksRequest, callback: grpc.requestCallback<_ax_v1_ApplyTasksResponse__Output>): grpc.ClientUnaryCall;
  
  BackfillTask(argument: _ax_v1_BackfillTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_BackfillTaskResponse__Output>): grpc.ClientUnaryCall;
  BackfillTask(argument: _ax_v1_BackfillTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_BackfillTaskResponse__Output>): grpc.ClientUnaryCall;
  BackfillTask(argument: _ax_v1_BackfillTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_BackfillTaskResponse__Output>): grpc.ClientUnaryCall;
  BackfillTask(argument: _ax_v1_BackfillTaskRequest, callback: grpc.requestCallback<_ax_v1_BackfillTaskResponse__Output>): grpc.ClientUnaryCall;
  backfillTask(argument: _ax_v1_BackfillTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_BackfillTaskResponse__Output>): grpc.ClientUnaryCall;
  backfillTask(argument: _ax_v1_BackfillTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_BackfillTaskResponse__Output>): grpc.ClientUnaryCall;
  backfillTask(argument: _ax_v1_BackfillTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_BackfillTaskResponse__Output>): grpc.ClientUnaryCall;
  backfillTask(argument: _ax_v1_BackfillTaskRequest, callback: grpc.requestCallback<_ax_v1_BackfillTaskResponse__Output>): grpc.ClientUnaryCall;
  
  BulkInstances(argument: _ax_v1_BulkInstancesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_BulkInstancesResponse__Output>): grpc.ClientUnaryCall;
  BulkInstances(argument: _ax_v1_BulkInstancesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_BulkInstancesResponse__Output>): grpc.ClientUnaryCall;
  BulkInstances(argument: _ax_v1_BulkInstancesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_BulkInstancesResponse__Output>): grpc.ClientUnaryCall;
  BulkInstances(argument: _ax_v1_BulkInstancesRequest, callback: grpc.requestCallback<_ax_v1_BulkInstancesResponse__Output>): grpc.ClientUnaryCall;
  bulkInstances(argument: _ax_v1_BulkInstancesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_BulkInstancesResponse__Output>): grpc.ClientUnaryCall;
  bulkInstances(argument: _ax_v1_BulkInstancesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_BulkInstancesResponse__Output>): grpc.ClientUnaryCall;
  bulkInstances(argument: _ax_v1_BulkInstancesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_BulkInstancesResponse__Output>): grpc.ClientUnaryCall;
  bulkInstances(argument: _ax_v1_BulkInstancesRequest, callback: grpc.requestCallback<_ax_v1_BulkInstancesResponse__Output>): grpc.ClientUnaryCall;
  
  CancelInstance(argument: _ax_v1_CancelInstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CancelInstanceResponse__Output>): grpc.ClientUnaryCall;
  CancelInstance(argument: _ax_v1_CancelInstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_CancelInstanceResponse__Output>): grpc.ClientUnaryCall;
  CancelInstance(argument: _ax_v1_CancelInstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CancelInstanceResponse__Output>): grpc.ClientUnaryCall;
  CancelInstance(argument: _ax_v1_CancelInstanceRequest, callback: grpc.requestCallback<_ax_v1_CancelInstanceResponse__Output>): grpc.ClientUnaryCall;
  cancelInstance(argument: _ax_v1_CancelInstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CancelInstanceResponse__Output>): grpc.ClientUnaryCall;
  cancelInstance(argument: _ax_v1_CancelInstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_CancelInstanceResponse__Output>): grpc.ClientUnaryCall;
  cancelInstance(argument: _ax_v1_CancelInstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CancelInstanceResponse__Output>): grpc.ClientUnaryCall;
  cancelInstance(argument: _ax_v1_CancelInstanceRequest, callback: grpc.requestCallback<_ax_v1_CancelInstanceResponse__Output>): grpc.ClientUnaryCall;
  
  CreateAlertRule(argument: _ax_v1_CreateAlertRuleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  CreateAlertRule(argument: _ax_v1_CreateAlertRuleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_CreateAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  CreateAlertRule(argument: _ax_v1_CreateAlertRuleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  CreateAlertRule(argument: _ax_v1_CreateAlertRuleRequest, callback: grpc.requestCallback<_ax_v1_CreateAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  createAlertRule(argument: _ax_v1_CreateAlertRuleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  createAlertRule(argument: _ax_v1_CreateAlertRuleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_CreateAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  createAlertRule(argument: _ax_v1_CreateAlertRuleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  createAlertRule(argument: _ax_v1_CreateAlertRuleRequest, callback: grpc.requestCallback<_ax_v1_CreateAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  
  CreateCalendar(argument: _ax_v1_CreateCalendarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateCalendarResponse__Output>): grpc.ClientUnaryCall;
  CreateCalendar(argument: _ax_v1_CreateCalendarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_CreateCalendarResponse__Output>): grpc.ClientUnaryCall;
  CreateCalendar(argument: _ax_v1_CreateCalendarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateCalendarResponse__Output>): grpc.ClientUnaryCall;
  CreateCalendar(argument: _ax_v1_CreateCalendarRequest, callback: grpc.requestCallback<_ax_v1_CreateCalendarResponse__Output>): grpc.ClientUnaryCall;
  createCalendar(argument: _ax_v1_CreateCalendarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateCalendarResponse__Output>): grpc.ClientUnaryCall;
  createCalendar(argument: _ax_v1_CreateCalendarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_CreateCalendarResponse__Output>): grpc.ClientUnaryCall;
  createCalendar(argument: _ax_v1_CreateCalendarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateCalendarResponse__Output>): grpc.ClientUnaryCall;
  createCalendar(argument: _ax_v1_CreateCalendarRequest, callback: grpc.requestCallback<_ax_v1_CreateCalendarResponse__Output>): grpc.ClientUnaryCall;
  
  CreateTask(argument: _ax_v1_CreateTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateTaskResponse__Output>): grpc.ClientUnaryCall;
  CreateTask(argument: _ax_v1_CreateTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_CreateTaskResponse__Output>): grpc.ClientUnaryCall;
  CreateTask(argument: _ax_v1_CreateTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateTaskResponse__Output>): grpc.ClientUnaryCall;
  CreateTask(argument: _ax_v1_CreateTaskRequest, callback: grpc.requestCallback<_ax_v1_CreateTaskResponse__Output>): grpc.ClientUnaryCall;
  createTask(argument: _ax_v1_CreateTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateTaskResponse__Output>): grpc.ClientUnaryCall;
  createTask(argument: _ax_v1_CreateTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_CreateTaskResponse__Output>): grpc.ClientUnaryCall;
  createTask(argument: _ax_v1_CreateTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_CreateTaskResponse__Output>): grpc.ClientUnaryCall;
  createTask(argument: _ax_v1_CreateTaskRequest, callback: grpc.requestCallback<_ax_v1_CreateTaskResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteAlertRule(argument: _ax_v1_DeleteAlertRuleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  DeleteAlertRule(argument: _ax_v1_DeleteAlertRuleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DeleteAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  DeleteAlertRule(argument: _ax_v1_DeleteAlertRuleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  DeleteAlertRule(argument: _ax_v1_DeleteAlertRuleRequest, callback: grpc.requestCallback<_ax_v1_DeleteAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  deleteAlertRule(argument: _ax_v1_DeleteAlertRuleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  deleteAlertRule(argument: _ax_v1_DeleteAlertRuleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DeleteAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  deleteAlertRule(argument: _ax_v1_DeleteAlertRuleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  deleteAlertRule(argument: _ax_v1_DeleteAlertRuleRequest, callback: grpc.requestCallback<_ax_v1_DeleteAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteAppLimit(argument: _ax_v1_DeleteAppLimitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteAppLimitResponse__Output>): grpc.ClientUnaryCall;
  DeleteAppLimit(argument: _ax_v1_DeleteAppLimitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DeleteAppLimitResponse__Output>): grpc.ClientUnaryCall;
  DeleteAppLimit(argument: _ax_v1_DeleteAppLimitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteAppLimitResponse__Output>): grpc.ClientUnaryCall;
  DeleteAppLimit(argument: _ax_v1_DeleteAppLimitRequest, callback: grpc.requestCallback<_ax_v1_DeleteAppLimitResponse__Output>): grpc.ClientUnaryCall;
  deleteAppLimit(argument: _ax_v1_DeleteAppLimitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteAppLimitResponse__Output>): grpc.ClientUnaryCall;
  deleteAppLimit(argument: _ax_v1_DeleteAppLimitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DeleteAppLimitResponse__Output>): grpc.ClientUnaryCall;
  deleteAppLimit(argument: _ax_v1_DeleteAppLimitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteAppLimitResponse__Output>): grpc.ClientUnaryCall;
  deleteAppLimit(argument: _ax_v1_DeleteAppLimitRequest, callback: grpc.requestCallback<_ax_v1_DeleteAppLimitResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteCalendar(argument: _ax_v1_DeleteCalendarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteCalendarResponse__Output>): grpc.ClientUnaryCall;
  DeleteCalendar(argument: _ax_v1_DeleteCalendarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DeleteCalendarResponse__Output>): grpc.ClientUnaryCall;
  DeleteCalendar(argument: _ax_v1_DeleteCalendarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteCalendarResponse__Output>): grpc.ClientUnaryCall;
  DeleteCalendar(argument: _ax_v1_DeleteCalendarRequest, callback: grpc.requestCallback<_ax_v1_DeleteCalendarResponse__Output>): grpc.ClientUnaryCall;
  deleteCalendar(argument: _ax_v1_DeleteCalendarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteCalendarResponse__Output>): grpc.ClientUnaryCall;
  deleteCalendar(argument: _ax_v1_DeleteCalendarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DeleteCalendarResponse__Output>): grpc.ClientUnaryCall;
  deleteCalendar(argument: _ax_v1_DeleteCalendarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteCalendarResponse__Output>): grpc.ClientUnaryCall;
  deleteCalendar(argument: _ax_v1_DeleteCalendarRequest, callback: grpc.requestCallback<_ax_v1_DeleteCalendarResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteTask(argument: _ax_v1_DeleteTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteTaskResponse__Output>): grpc.ClientUnaryCall;
  DeleteTask(argument: _ax_v1_DeleteTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DeleteTaskResponse__Output>): grpc.ClientUnaryCall;
  DeleteTask(argument: _ax_v1_DeleteTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteTaskResponse__Output>): grpc.ClientUnaryCall;
  DeleteTask(argument: _ax_v1_DeleteTaskRequest, callback: grpc.requestCallback<_ax_v1_DeleteTaskResponse__Output>): grpc.ClientUnaryCall;
  deleteTask(argument: _ax_v1_DeleteTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteTaskResponse__Output>): grpc.ClientUnaryCall;
  deleteTask(argument: _ax_v1_DeleteTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DeleteTaskResponse__Output>): grpc.ClientUnaryCall;
  deleteTask(argument: _ax_v1_DeleteTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DeleteTaskResponse__Output>): grpc.ClientUnaryCall;
  deleteTask(argument: _ax_v1_DeleteTaskRequest, callback: grpc.requestCallback<_ax_v1_DeleteTaskResponse__Output>): grpc.ClientUnaryCall;
  
  DisableTask(argument: _ax_v1_DisableTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DisableTaskResponse__Output>): grpc.ClientUnaryCall;
  DisableTask(argument: _ax_v1_DisableTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DisableTaskResponse__Output>): grpc.ClientUnaryCall;
  DisableTask(argument: _ax_v1_DisableTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DisableTaskResponse__Output>): grpc.ClientUnaryCall;
  DisableTask(argument: _ax_v1_DisableTaskRequest, callback: grpc.requestCallback<_ax_v1_DisableTaskResponse__Output>): grpc.ClientUnaryCall;
  disableTask(argument: _ax_v1_DisableTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DisableTaskResponse__Output>): grpc.ClientUnaryCall;
  disableTask(argument: _ax_v1_DisableTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_DisableTaskResponse__Output>): grpc.ClientUnaryCall;
  disableTask(argument: _ax_v1_DisableTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_DisableTaskResponse__Output>): grpc.ClientUnaryCall;
  disableTask(argument: _ax_v1_DisableTaskRequest, callback: grpc.requestCallback<_ax_v1_DisableTaskResponse__Output>): grpc.ClientUnaryCall;
  
  EnableTask(argument: _ax_v1_EnableTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_EnableTaskResponse__Output>): grpc.ClientUnaryCall;
  EnableTask(argument: _ax_v1_EnableTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_EnableTaskResponse__Output>): grpc.ClientUnaryCall;
  EnableTask(argument: _ax_v1_EnableTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_EnableTaskResponse__Output>): grpc.ClientUnaryCall;
  EnableTask(argument: _ax_v1_EnableTaskRequest, callback: grpc.requestCallback<_ax_v1_EnableTaskResponse__Output>): grpc.ClientUnaryCall;
  enableTask(argument: _ax_v1_EnableTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_EnableTaskResponse__Output>): grpc.ClientUnaryCall;
  enableTask(argument: _ax_v1_EnableTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_EnableTaskResponse__Output>): grpc.ClientUnaryCall;
  enableTask(argument: _ax_v1_EnableTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_EnableTaskResponse__Output>): grpc.ClientUnaryCall;
  enableTask(argument: _ax_v1_EnableTaskRequest, callback: grpc.requestCallback<_ax_v1_EnableTaskResponse__Output>): grpc.ClientUnaryCall;
  
  ExplainTask(argument: _ax_v1_ExplainTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ExplainTaskResponse__Output>): grpc.ClientUnaryCall;
  ExplainTask(argument: _ax_v1_ExplainTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ExplainTaskResponse__Output>): grpc.ClientUnaryCall;
  ExplainTask(argument: _ax_v1_ExplainTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ExplainTaskResponse__Output>): grpc.ClientUnaryCall;
  ExplainTask(argument: _ax_v1_ExplainTaskRequest, callback: grpc.requestCallback<_ax_v1_ExplainTaskResponse__Output>): grpc.ClientUnaryCall;
  explainTask(argument: _ax_v1_ExplainTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ExplainTaskResponse__Output>): grpc.ClientUnaryCall;
  explainTask(argument: _ax_v1_ExplainTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ExplainTaskResponse__Output>): grpc.ClientUnaryCall;
  explainTask(argument: _ax_v1_ExplainTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ExplainTaskResponse__Output>): grpc.ClientUnaryCall;
  explainTask(argument: _ax_v1_ExplainTaskRequest, callback: grpc.requestCallback<_ax_v1_ExplainTaskResponse__Output>): grpc.ClientUnaryCall;
  
  GetCalendar(argument: _ax_v1_GetCalendarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetCalendarResponse__Output>): grpc.ClientUnaryCall;
  GetCalendar(argument: _ax_v1_GetCalendarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetCalendarResponse__Output>): grpc.ClientUnaryCall;
  GetCalendar(argument: _ax_v1_GetCalendarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetCalendarResponse__Output>): grpc.ClientUnaryCall;
  GetCalendar(argument: _ax_v1_GetCalendarRequest, callback: grpc.requestCallback<_ax_v1_GetCalendarResponse__Output>): grpc.ClientUnaryCall;
  getCalendar(argument: _ax_v1_GetCalendarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetCalendarResponse__Output>): grpc.ClientUnaryCall;
  getCalendar(argument: _ax_v1_GetCalendarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetCalendarResponse__Output>): grpc.ClientUnaryCall;
  getCalendar(argument: _ax_v1_GetCalendarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetCalendarResponse__Output>): grpc.ClientUnaryCall;
  getCalendar(argument: _ax_v1_GetCalendarRequest, callback: grpc.requestCallback<_ax_v1_GetCalendarResponse__Output>): grpc.ClientUnaryCall;
  
  GetClusterStats(argument: _ax_v1_GetClusterStatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetClusterStatsResponse__Output>): grpc.ClientUnaryCall;
  GetClusterStats(argument: _ax_v1_GetClusterStatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetClusterStatsResponse__Output>): grpc.ClientUnaryCall;
  GetClusterStats(argument: _ax_v1_GetClusterStatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetClusterStatsResponse__Output>): grpc.ClientUnaryCall;
  GetClusterStats(argument: _ax_v1_GetClusterStatsRequest, callback: grpc.requestCallback<_ax_v1_GetClusterStatsResponse__Output>): grpc.ClientUnaryCall;
  getClusterStats(argument: _ax_v1_GetClusterStatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetClusterStatsResponse__Output>): grpc.ClientUnaryCall;
  getClusterStats(argument: _ax_v1_GetClusterStatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetClusterStatsResponse__Output>): grpc.ClientUnaryCall;
  getClusterStats(argument: _ax_v1_GetClusterStatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetClusterStatsResponse__Output>): grpc.ClientUnaryCall;
  getClusterStats(argument: _ax_v1_GetClusterStatsRequest, callback: grpc.requestCallback<_ax_v1_GetClusterStatsResponse__Output>): grpc.ClientUnaryCall;
  
  GetInstance(argument: _ax_v1_GetInstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetInstanceResponse__Output>): grpc.ClientUnaryCall;
  GetInstance(argument: _ax_v1_GetInstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetInstanceResponse__Output>): grpc.ClientUnaryCall;
  GetInstance(argument: _ax_v1_GetInstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetInstanceResponse__Output>): grpc.ClientUnaryCall;
  GetInstance(argument: _ax_v1_GetInstanceRequest, callback: grpc.requestCallback<_ax_v1_GetInstanceResponse__Output>): grpc.ClientUnaryCall;
  getInstance(argument: _ax_v1_GetInstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetInstanceResponse__Output>): grpc.ClientUnaryCall;
  getInstance(argument: _ax_v1_GetInstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetInstanceResponse__Output>): grpc.ClientUnaryCall;
  getInstance(argument: _ax_v1_GetInstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetInstanceResponse__Output>): grpc.ClientUnaryCall;
  getInstance(argument: _ax_v1_GetInstanceRequest, callback: grpc.requestCallback<_ax_v1_GetInstanceResponse__Output>): grpc.ClientUnaryCall;
  
  GetInstanceLogs(argument: _ax_v1_GetInstanceLogsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetInstanceLogsResponse__Output>): grpc.ClientUnaryCall;
  GetInstanceLogs(argument: _ax_v1_GetInstanceLogsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetInstanceLogsResponse__Output>): grpc.ClientUnaryCall;
  GetInstanceLogs(argument: _ax_v1_GetInstanceLogsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetInstanceLogsResponse__Output>): grpc.ClientUnaryCall;
  GetInstanceLogs(argument: _ax_v1_GetInstanceLogsRequest, callback: grpc.requestCallback<_ax_v1_GetInstanceLogsResponse__Output>): grpc.ClientUnaryCall;
  getInstanceLogs(argument: _ax_v1_GetInstanceLogsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetInstanceLogsResponse__Output>): grpc.ClientUnaryCall;
  getInstanceLogs(argument: _ax_v1_GetInstanceLogsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetInstanceLogsResponse__Output>): grpc.ClientUnaryCall;
  getInstanceLogs(argument: _ax_v1_GetInstanceLogsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetInstanceLogsResponse__Output>): grpc.ClientUnaryCall;
  getInstanceLogs(argument: _ax_v1_GetInstanceLogsRequest, callback: grpc.requestCallback<_ax_v1_GetInstanceLogsResponse__Output>): grpc.ClientUnaryCall;
  
  GetRun(argument: _ax_v1_GetRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  GetRun(argument: _ax_v1_GetRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  GetRun(argument: _ax_v1_GetRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  GetRun(argument: _ax_v1_GetRunRequest, callback: grpc.requestCallback<_ax_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  getRun(argument: _ax_v1_GetRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  getRun(argument: _ax_v1_GetRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  getRun(argument: _ax_v1_GetRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  getRun(argument: _ax_v1_GetRunRequest, callback: grpc.requestCallback<_ax_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  
  GetTask(argument: _ax_v1_GetTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetTaskResponse__Output>): grpc.ClientUnaryCall;
  GetTask(argument: _ax_v1_GetTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetTaskResponse__Output>): grpc.ClientUnaryCall;
  GetTask(argument: _ax_v1_GetTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetTaskResponse__Output>): grpc.ClientUnaryCall;
  GetTask(argument: _ax_v1_GetTaskRequest, callback: grpc.requestCallback<_ax_v1_GetTaskResponse__Output>): grpc.ClientUnaryCall;
  getTask(argument: _ax_v1_GetTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetTaskResponse__Output>): grpc.ClientUnaryCall;
  getTask(argument: _ax_v1_GetTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_GetTaskResponse__Output>): grpc.ClientUnaryCall;
  getTask(argument: _ax_v1_GetTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_GetTaskResponse__Output>): grpc.ClientUnaryCall;
  getTask(argument: _ax_v1_GetTaskRequest, callback: grpc.requestCallback<_ax_v1_GetTaskResponse__Output>): grpc.ClientUnaryCall;
  
  ListAlertDeliveries(argument: _ax_v1_ListAlertDeliveriesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAlertDeliveriesResponse__Output>): grpc.ClientUnaryCall;
  ListAlertDeliveries(argument: _ax_v1_ListAlertDeliveriesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListAlertDeliveriesResponse__Output>): grpc.ClientUnaryCall;
  ListAlertDeliveries(argument: _ax_v1_ListAlertDeliveriesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAlertDeliveriesResponse__Output>): grpc.ClientUnaryCall;
  ListAlertDeliveries(argument: _ax_v1_ListAlertDeliveriesRequest, callback: grpc.requestCallback<_ax_v1_ListAlertDeliveriesResponse__Output>): grpc.ClientUnaryCall;
  listAlertDeliveries(argument: _ax_v1_ListAlertDeliveriesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAlertDeliveriesResponse__Output>): grpc.ClientUnaryCall;
  listAlertDeliveries(argument: _ax_v1_ListAlertDeliveriesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListAlertDeliveriesResponse__Output>): grpc.ClientUnaryCall;
  listAlertDeliveries(argument: _ax_v1_ListAlertDeliveriesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAlertDeliveriesResponse__Output>): grpc.ClientUnaryCall;
  listAlertDeliveries(argument: _ax_v1_ListAlertDeliveriesRequest, callback: grpc.requestCallback<_ax_v1_ListAlertDeliveriesResponse__Output>): grpc.ClientUnaryCall;
  
  ListAlertRules(argument: _ax_v1_ListAlertRulesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAlertRulesResponse__Output>): grpc.ClientUnaryCall;
  ListAlertRules(argument: _ax_v1_ListAlertRulesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListAlertRulesResponse__Output>): grpc.ClientUnaryCall;
  ListAlertRules(argument: _ax_v1_ListAlertRulesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAlertRulesResponse__Output>): grpc.ClientUnaryCall;
  ListAlertRules(argument: _ax_v1_ListAlertRulesRequest, callback: grpc.requestCallback<_ax_v1_ListAlertRulesResponse__Output>): grpc.ClientUnaryCall;
  listAlertRules(argument: _ax_v1_ListAlertRulesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAlertRulesResponse__Output>): grpc.ClientUnaryCall;
  listAlertRules(argument: _ax_v1_ListAlertRulesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListAlertRulesResponse__Output>): grpc.ClientUnaryCall;
  listAlertRules(argument: _ax_v1_ListAlertRulesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAlertRulesResponse__Output>): grpc.ClientUnaryCall;
  listAlertRules(argument: _ax_v1_ListAlertRulesRequest, callback: grpc.requestCallback<_ax_v1_ListAlertRulesResponse__Output>): grpc.ClientUnaryCall;
  
  ListAppLimits(argument: _ax_v1_ListAppLimitsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAppLimitsResponse__Output>): grpc.ClientUnaryCall;
  ListAppLimits(argument: _ax_v1_ListAppLimitsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListAppLimitsResponse__Output>): grpc.ClientUnaryCall;
  ListAppLimits(argument: _ax_v1_ListAppLimitsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAppLimitsResponse__Output>): grpc.ClientUnaryCall;
  ListAppLimits(argument: _ax_v1_ListAppLimitsRequest, callback: grpc.requestCallback<_ax_v1_ListAppLimitsResponse__Output>): grpc.ClientUnaryCall;
  listAppLimits(argument: _ax_v1_ListAppLimitsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAppLimitsResponse__Output>): grpc.ClientUnaryCall;
  listAppLimits(argument: _ax_v1_ListAppLimitsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListAppLimitsResponse__Output>): grpc.ClientUnaryCall;
  listAppLimits(argument: _ax_v1_ListAppLimitsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAppLimitsResponse__Output>): grpc.ClientUnaryCall;
  listAppLimits(argument: _ax_v1_ListAppLimitsRequest, callback: grpc.requestCallback<_ax_v1_ListAppLimitsResponse__Output>): grpc.ClientUnaryCall;
  
  ListAuditEntries(argument: _ax_v1_ListAuditEntriesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAuditEntriesResponse__Output>): grpc.ClientUnaryCall;
  ListAuditEntries(argument: _ax_v1_ListAuditEntriesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListAuditEntriesResponse__Output>): grpc.ClientUnaryCall;
  ListAuditEntries(argument: _ax_v1_ListAuditEntriesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAuditEntriesResponse__Output>): grpc.ClientUnaryCall;
  ListAuditEntries(argument: _ax_v1_ListAuditEntriesRequest, callback: grpc.requestCallback<_ax_v1_ListAuditEntriesResponse__Output>): grpc.ClientUnaryCall;
  listAuditEntries(argument: _ax_v1_ListAuditEntriesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAuditEntriesResponse__Output>): grpc.ClientUnaryCall;
  listAuditEntries(argument: _ax_v1_ListAuditEntriesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListAuditEntriesResponse__Output>): grpc.ClientUnaryCall;
  listAuditEntries(argument: _ax_v1_ListAuditEntriesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListAuditEntriesResponse__Output>): grpc.ClientUnaryCall;
  listAuditEntries(argument: _ax_v1_ListAuditEntriesRequest, callback: grpc.requestCallback<_ax_v1_ListAuditEntriesResponse__Output>): grpc.ClientUnaryCall;
  
  ListCalendars(argument: _ax_v1_ListCalendarsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListCalendarsResponse__Output>): grpc.ClientUnaryCall;
  ListCalendars(argument: _ax_v1_ListCalendarsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListCalendarsResponse__Output>): grpc.ClientUnaryCall;
  ListCalendars(argument: _ax_v1_ListCalendarsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListCalendarsResponse__Output>): grpc.ClientUnaryCall;
  ListCalendars(argument: _ax_v1_ListCalendarsRequest, callback: grpc.requestCallback<_ax_v1_ListCalendarsResponse__Output>): grpc.ClientUnaryCall;
  listCalendars(argument: _ax_v1_ListCalendarsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListCalendarsResponse__Output>): grpc.ClientUnaryCall;
  listCalendars(argument: _ax_v1_ListCalendarsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListCalendarsResponse__Output>): grpc.ClientUnaryCall;
  listCalendars(argument: _ax_v1_ListCalendarsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListCalendarsResponse__Output>): grpc.ClientUnaryCall;
  listCalendars(argument: _ax_v1_ListCalendarsRequest, callback: grpc.requestCallback<_ax_v1_ListCalendarsResponse__Output>): grpc.ClientUnaryCall;
  
  ListInstances(argument: _ax_v1_ListInstancesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListInstancesResponse__Output>): grpc.ClientUnaryCall;
  ListInstances(argument: _ax_v1_ListInstancesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListInstancesResponse__Output>): grpc.ClientUnaryCall;
  ListInstances(argument: _ax_v1_ListInstancesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListInstancesResponse__Output>): grpc.ClientUnaryCall;
  ListInstances(argument: _ax_v1_ListInstancesRequest, callback: grpc.requestCallback<_ax_v1_ListInstancesResponse__Output>): grpc.ClientUnaryCall;
  listInstances(argument: _ax_v1_ListInstancesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListInstancesResponse__Output>): grpc.ClientUnaryCall;
  listInstances(argument: _ax_v1_ListInstancesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListInstancesResponse__Output>): grpc.ClientUnaryCall;
  listInstances(argument: _ax_v1_ListInstancesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListInstancesResponse__Output>): grpc.ClientUnaryCall;
  listInstances(argument: _ax_v1_ListInstancesRequest, callback: grpc.requestCallback<_ax_v1_ListInstancesResponse__Output>): grpc.ClientUnaryCall;
  
  ListSchedulers(argument: _ax_v1_ListSchedulersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListSchedulersResponse__Output>): grpc.ClientUnaryCall;
  ListSchedulers(argument: _ax_v1_ListSchedulersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListSchedulersResponse__Output>): grpc.ClientUnaryCall;
  ListSchedulers(argument: _ax_v1_ListSchedulersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListSchedulersResponse__Output>): grpc.ClientUnaryCall;
  ListSchedulers(argument: _ax_v1_ListSchedulersRequest, callback: grpc.requestCallback<_ax_v1_ListSchedulersResponse__Output>): grpc.ClientUnaryCall;
  listSchedulers(argument: _ax_v1_ListSchedulersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListSchedulersResponse__Output>): grpc.ClientUnaryCall;
  listSchedulers(argument: _ax_v1_ListSchedulersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListSchedulersResponse__Output>): grpc.ClientUnaryCall;
  listSchedulers(argument: _ax_v1_ListSchedulersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListSchedulersResponse__Output>): grpc.ClientUnaryCall;
  listSchedulers(argument: _ax_v1_ListSchedulersRequest, callback: grpc.requestCallback<_ax_v1_ListSchedulersResponse__Output>): grpc.ClientUnaryCall;
  
  ListTasks(argument: _ax_v1_ListTasksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListTasksResponse__Output>): grpc.ClientUnaryCall;
  ListTasks(argument: _ax_v1_ListTasksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListTasksResponse__Output>): grpc.ClientUnaryCall;
  ListTasks(argument: _ax_v1_ListTasksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListTasksResponse__Output>): grpc.ClientUnaryCall;
  ListTasks(argument: _ax_v1_ListTasksRequest, callback: grpc.requestCallback<_ax_v1_ListTasksResponse__Output>): grpc.ClientUnaryCall;
  listTasks(argument: _ax_v1_ListTasksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListTasksResponse__Output>): grpc.ClientUnaryCall;
  listTasks(argument: _ax_v1_ListTasksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListTasksResponse__Output>): grpc.ClientUnaryCall;
  listTasks(argument: _ax_v1_ListTasksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListTasksResponse__Output>): grpc.ClientUnaryCall;
  listTasks(argument: _ax_v1_ListTasksRequest, callback: grpc.requestCallback<_ax_v1_ListTasksResponse__Output>): grpc.ClientUnaryCall;
  
  ListWorkers(argument: _ax_v1_ListWorkersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListWorkersResponse__Output>): grpc.ClientUnaryCall;
  ListWorkers(argument: _ax_v1_ListWorkersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListWorkersResponse__Output>): grpc.ClientUnaryCall;
  ListWorkers(argument: _ax_v1_ListWorkersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListWorkersResponse__Output>): grpc.ClientUnaryCall;
  ListWorkers(argument: _ax_v1_ListWorkersRequest, callback: grpc.requestCallback<_ax_v1_ListWorkersResponse__Output>): grpc.ClientUnaryCall;
  listWorkers(argument: _ax_v1_ListWorkersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListWorkersResponse__Output>): grpc.ClientUnaryCall;
  listWorkers(argument: _ax_v1_ListWorkersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ListWorkersResponse__Output>): grpc.ClientUnaryCall;
  listWorkers(argument: _ax_v1_ListWorkersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ListWorkersResponse__Output>): grpc.ClientUnaryCall;
  listWorkers(argument: _ax_v1_ListWorkersRequest, callback: grpc.requestCallback<_ax_v1_ListWorkersResponse__Output>): grpc.ClientUnaryCall;
  
  PauseTask(argument: _ax_v1_PauseTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PauseTaskResponse__Output>): grpc.ClientUnaryCall;
  PauseTask(argument: _ax_v1_PauseTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_PauseTaskResponse__Output>): grpc.ClientUnaryCall;
  PauseTask(argument: _ax_v1_PauseTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PauseTaskResponse__Output>): grpc.ClientUnaryCall;
  PauseTask(argument: _ax_v1_PauseTaskRequest, callback: grpc.requestCallback<_ax_v1_PauseTaskResponse__Output>): grpc.ClientUnaryCall;
  pauseTask(argument: _ax_v1_PauseTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PauseTaskResponse__Output>): grpc.ClientUnaryCall;
  pauseTask(argument: _ax_v1_PauseTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_PauseTaskResponse__Output>): grpc.ClientUnaryCall;
  pauseTask(argument: _ax_v1_PauseTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PauseTaskResponse__Output>): grpc.ClientUnaryCall;
  pauseTask(argument: _ax_v1_PauseTaskRequest, callback: grpc.requestCallback<_ax_v1_PauseTaskResponse__Output>): grpc.ClientUnaryCall;
  
  PreviewSchedule(argument: _ax_v1_PreviewScheduleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PreviewScheduleResponse__Output>): grpc.ClientUnaryCall;
  PreviewSchedule(argument: _ax_v1_PreviewScheduleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_PreviewScheduleResponse__Output>): grpc.ClientUnaryCall;
  PreviewSchedule(argument: _ax_v1_PreviewScheduleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PreviewScheduleResponse__Output>): grpc.ClientUnaryCall;
  PreviewSchedule(argument: _ax_v1_PreviewScheduleRequest, callback: grpc.requestCallback<_ax_v1_PreviewScheduleResponse__Output>): grpc.ClientUnaryCall;
  previewSchedule(argument: _ax_v1_PreviewScheduleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PreviewScheduleResponse__Output>): grpc.ClientUnaryCall;
  previewSchedule(argument: _ax_v1_PreviewScheduleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_PreviewScheduleResponse__Output>): grpc.ClientUnaryCall;
  previewSchedule(argument: _ax_v1_PreviewScheduleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PreviewScheduleResponse__Output>): grpc.ClientUnaryCall;
  previewSchedule(argument: _ax_v1_PreviewScheduleRequest, callback: grpc.requestCallback<_ax_v1_PreviewScheduleResponse__Output>): grpc.ClientUnaryCall;
  
  PublishEvent(argument: _ax_v1_PublishEventRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PublishEventResponse__Output>): grpc.ClientUnaryCall;
  PublishEvent(argument: _ax_v1_PublishEventRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_PublishEventResponse__Output>): grpc.ClientUnaryCall;
  PublishEvent(argument: _ax_v1_PublishEventRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PublishEventResponse__Output>): grpc.ClientUnaryCall;
  PublishEvent(argument: _ax_v1_PublishEventRequest, callback: grpc.requestCallback<_ax_v1_PublishEventResponse__Output>): grpc.ClientUnaryCall;
  publishEvent(argument: _ax_v1_PublishEventRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PublishEventResponse__Output>): grpc.ClientUnaryCall;
  publishEvent(argument: _ax_v1_PublishEventRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_PublishEventResponse__Output>): grpc.ClientUnaryCall;
  publishEvent(argument: _ax_v1_PublishEventRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_PublishEventResponse__Output>): grpc.ClientUnaryCall;
  publishEvent(argument: _ax_v1_PublishEventRequest, callback: grpc.requestCallback<_ax_v1_PublishEventResponse__Output>): grpc.ClientUnaryCall;
  
  ResumeTask(argument: _ax_v1_ResumeTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ResumeTaskResponse__Output>): grpc.ClientUnaryCall;
  ResumeTask(argument: _ax_v1_ResumeTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ResumeTaskResponse__Output>): grpc.ClientUnaryCall;
  ResumeTask(argument: _ax_v1_ResumeTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ResumeTaskResponse__Output>): grpc.ClientUnaryCall;
  ResumeTask(argument: _ax_v1_ResumeTaskRequest, callback: grpc.requestCallback<_ax_v1_ResumeTaskResponse__Output>): grpc.ClientUnaryCall;
  resumeTask(argument: _ax_v1_ResumeTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ResumeTaskResponse__Output>): grpc.ClientUnaryCall;
  resumeTask(argument: _ax_v1_ResumeTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_ResumeTaskResponse__Output>): grpc.ClientUnaryCall;
  resumeTask(argument: _ax_v1_ResumeTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_ResumeTaskResponse__Output>): grpc.ClientUnaryCall;
  resumeTask(argument: _ax_v1_ResumeTaskRequest, callback: grpc.requestCallback<_ax_v1_ResumeTaskResponse__Output>): grpc.ClientUnaryCall;
  
  RetryInstance(argument: _ax_v1_RetryInstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_RetryInstanceResponse__Output>): grpc.ClientUnaryCall;
  RetryInstance(argument: _ax_v1_RetryInstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_RetryInstanceResponse__Output>): grpc.ClientUnaryCall;
  RetryInstance(argument: _ax_v1_RetryInstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_RetryInstanceResponse__Output>): grpc.ClientUnaryCall;
  RetryInstance(argument: _ax_v1_RetryInstanceRequest, callback: grpc.requestCallback<_ax_v1_RetryInstanceResponse__Output>): grpc.ClientUnaryCall;
  retryInstance(argument: _ax_v1_RetryInstanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_RetryInstanceResponse__Output>): grpc.ClientUnaryCall;
  retryInstance(argument: _ax_v1_RetryInstanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_RetryInstanceResponse__Output>): grpc.ClientUnaryCall;
  retryInstance(argument: _ax_v1_RetryInstanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_RetryInstanceResponse__Output>): grpc.ClientUnaryCall;
  retryInstance(argument: _ax_v1_RetryInstanceRequest, callback: grpc.requestCallback<_ax_v1_RetryInstanceResponse__Output>): grpc.ClientUnaryCall;
  
  SetAppLimit(argument: _ax_v1_SetAppLimitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_SetAppLimitResponse__Output>): grpc.ClientUnaryCall;
  SetAppLimit(argument: _ax_v1_SetAppLimitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_SetAppLimitResponse__Output>): grpc.ClientUnaryCall;
  SetAppLimit(argument: _ax_v1_SetAppLimitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_SetAppLimitResponse__Output>): grpc.ClientUnaryCall;
  SetAppLimit(argument: _ax_v1_SetAppLimitRequest, callback: grpc.requestCallback<_ax_v1_SetAppLimitResponse__Output>): grpc.ClientUnaryCall;
  setAppLimit(argument: _ax_v1_SetAppLimitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_SetAppLimitResponse__Output>): grpc.ClientUnaryCall;
  setAppLimit(argument: _ax_v1_SetAppLimitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_SetAppLimitResponse__Output>): grpc.ClientUnaryCall;
  setAppLimit(argument: _ax_v1_SetAppLimitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_SetAppLimitResponse__Output>): grpc.ClientUnaryCall;
  setAppLimit(argument: _ax_v1_SetAppLimitRequest, callback: grpc.requestCallback<_ax_v1_SetAppLimitResponse__Output>): grpc.ClientUnaryCall;
  
  TestAlertRule(argument: _ax_v1_TestAlertRuleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_TestAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  TestAlertRule(argument: _ax_v1_TestAlertRuleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_TestAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  TestAlertRule(argument: _ax_v1_TestAlertRuleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_TestAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  TestAlertRule(argument: _ax_v1_TestAlertRuleRequest, callback: grpc.requestCallback<_ax_v1_TestAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  testAlertRule(argument: _ax_v1_TestAlertRuleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_TestAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  testAlertRule(argument: _ax_v1_TestAlertRuleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_TestAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  testAlertRule(argument: _ax_v1_TestAlertRuleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_TestAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  testAlertRule(argument: _ax_v1_TestAlertRuleRequest, callback: grpc.requestCallback<_ax_v1_TestAlertRuleResponse__Output>): grpc.ClientUnaryCall;
  
  TriggerTask(argument: _ax_v1_TriggerTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_TriggerTaskResponse__Output>): grpc.ClientUnaryCall;
  TriggerTask(argument: _ax_v1_TriggerTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_TriggerTaskResponse__Output>): grpc.ClientUnaryCall;
  TriggerTask(argument: _ax_v1_TriggerTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_TriggerTaskResponse__Output>): grpc.ClientUnaryCall;
  TriggerTask(argument: _ax_v1_TriggerTaskRequest, callback: grpc.requestCallback<_ax_v1_TriggerTaskResponse__Output>): grpc.ClientUnaryCall;
  triggerTask(argument: _ax_v1_TriggerTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_TriggerTaskResponse__Output>): grpc.ClientUnaryCall;
  triggerTask(argument: _ax_v1_TriggerTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_TriggerTaskResponse__Output>): grpc.ClientUnaryCall;
  triggerTask(argument: _ax_v1_TriggerTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_TriggerTaskResponse__Output>): grpc.ClientUnaryCall;
  triggerTask(argument: _ax_v1_TriggerTaskRequest, callback: grpc.requestCallback<_ax_v1_TriggerTaskResponse__Output>): grpc.ClientUnaryCall;
  
  UpdateCalendar(argument: _ax_v1_UpdateCalendarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_UpdateCalendarResponse__Output>): grpc.ClientUnaryCall;
  UpdateCalendar(argument: _ax_v1_UpdateCalendarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_UpdateCalendarResponse__Output>): grpc.ClientUnaryCall;
  UpdateCalendar(argument: _ax_v1_UpdateCalendarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_UpdateCalendarResponse__Output>): grpc.ClientUnaryCall;
  UpdateCalendar(argument: _ax_v1_UpdateCalendarRequest, callback: grpc.requestCallback<_ax_v1_UpdateCalendarResponse__Output>): grpc.ClientUnaryCall;
  updateCalendar(argument: _ax_v1_UpdateCalendarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_UpdateCalendarResponse__Output>): grpc.ClientUnaryCall;
  updateCalendar(argument: _ax_v1_UpdateCalendarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_UpdateCalendarResponse__Output>): grpc.ClientUnaryCall;
  updateCalendar(argument: _ax_v1_UpdateCalendarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_UpdateCalendarResponse__Output>): grpc.ClientUnaryCall;
  updateCalendar(argument: _ax_v1_UpdateCalendarRequest, callback: grpc.requestCallback<_ax_v1_UpdateCalendarResponse__Output>): grpc.ClientUnaryCall;
  
  UpdateTask(argument: _ax_v1_UpdateTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_UpdateTaskResponse__Output>): grpc.ClientUnaryCall;
  UpdateTask(argument: _ax_v1_UpdateTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_UpdateTaskResponse__Output>): grpc.ClientUnaryCall;
  UpdateTask(argument: _ax_v1_UpdateTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_UpdateTaskResponse__Output>): grpc.ClientUnaryCall;
  UpdateTask(argument: _ax_v1_UpdateTaskRequest, callback: grpc.requestCallback<_ax_v1_UpdateTaskResponse__Output>): grpc.ClientUnaryCall;
  updateTask(argument: _ax_v1_UpdateTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_UpdateTaskResponse__Output>): grpc.ClientUnaryCall;
  updateTask(argument: _ax_v1_UpdateTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ax_v1_UpdateTaskResponse__Output>): grpc.ClientUnaryCall;
  updateTask(argument: _ax_v1_UpdateTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ax_v1_UpdateTaskResponse__Output>): grpc.ClientUnaryCall;
  updateTask(argument: _ax_v1_UpdateTaskRequest, callback: grpc.requestCallback<_ax_v1_UpdateTaskResponse__Output>): grpc.ClientUnaryCall;
  
  WatchInstance(argument: _ax_v1_WatchInstanceRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_ax_v1_WatchInstanceResponse__Output>;
  WatchInstance(argument: _ax_v1_WatchInstanceRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_ax_v1_WatchInstanceResponse__Output>;
  watchInstance(argument: _ax_v1_WatchInstanceRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_ax_v1_WatchInstanceResponse__Output>;
  watchInstance(argument: _ax_v1_WatchInstanceRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_ax_v1_WatchInstanceResponse__Output>;
  
}

export interface AdminServiceHandlers extends grpc.UntypedServiceImplementation {
  ApplyTasks: grpc.handleUnaryCall<_ax_v1_ApplyTasksRequest__Output, _ax_v1_ApplyTasksResponse>;
  
  BackfillTask: grpc.handleUnaryCall<_ax_v1_BackfillTaskRequest__Output, _ax_v1_BackfillTaskResponse>;
  
  BulkInstances: grpc.handleUnaryCall<_ax_v1_BulkInstancesRequest__Output, _ax_v1_BulkInstancesResponse>;
  
  CancelInstance: grpc.handleUnaryCall<_ax_v1_CancelInstanceRequest__Output, _ax_v1_CancelInstanceResponse>;
  
  CreateAlertRule: grpc.handleUnaryCall<_ax_v1_CreateAlertRuleRequest__Output, _ax_v1_CreateAlertRuleResponse>;
  
  CreateCalendar: grpc.handleUnaryCall<_ax_v1_CreateCalendarRequest__Output, _ax_v1_CreateCalendarResponse>;
  
  CreateTask: grpc.handleUnaryCall<_ax_v1_CreateTaskRequest__Output, _ax_v1_CreateTaskResponse>;
  
  DeleteAlertRule: grpc.handleUnaryCall<_ax_v1_DeleteAlertRuleRequest__Output, _ax_v1_DeleteAlertRuleResponse>;
  
  DeleteAppLimit: grpc.handleUnaryCall<_ax_v1_DeleteAppLimitRequest__Output, _ax_v1_DeleteAppLimitResponse>;
  
  DeleteCalendar: grpc.handleUnaryCall<_ax_v1_DeleteCalendarRequest__Output, _ax_v1_DeleteCalendarResponse>;
  
  DeleteTask: grpc.handleUnaryCall<_ax_v1_DeleteTaskRequest__Output, _ax_v1_DeleteTaskResponse>;
  
  DisableTask: grpc.handleUnaryCall<_ax_v1_DisableTaskRequest__Output, _ax_v1_DisableTaskResponse>;
  
  EnableTask: grpc.handleUnaryCall<_ax_v1_EnableTaskRequest__Output, _ax_v1_EnableTaskResponse>;
  
  ExplainTask: grpc.handleUnaryCall<_ax_v1_ExplainTaskRequest__Output, _ax_v1_ExplainTaskResponse>;
  
  GetCalendar: grpc.handleUnaryCall<_ax_v1_GetCalendarRequest__Output, _ax_v1_GetCalendarResponse>;
  
  GetClusterStats: grpc.handleUnaryCall<_ax_v1_GetClusterStatsRequest__Output, _ax_v1_GetClusterStatsResponse>;
  
  GetInstance: grpc.handleUnaryCall<_ax_v1_GetInstanceRequest__Output, _ax_v1_GetInstanceResponse>;
  
  GetInstanceLogs: grpc.handleUnaryCall<_ax_v1_GetInstanceLogsRequest__Output, _ax_v1_GetInstanceLogsResponse>;
  
  GetRun: grpc.handleUnaryCall<_ax_v1_GetRunRequest__Output, _ax_v1_GetRunResponse>;
  
  GetTask: grpc.handleUnaryCall<_ax_v1_GetTaskRequest__Output, _ax_v1_GetTaskResponse>;
  
  ListAlertDeliveries: grpc.handleUnaryCall<_ax_v1_ListAlertDeliveriesRequest__Output, _ax_v1_ListAlertDeliveriesResponse>;
  
  ListAlertRules: grpc.handleUnaryCall<_ax_v1_ListAlertRulesRequest__Output, _ax_v1_ListAlertRulesResponse>;
  
  ListAppLimits: grpc.handleUnaryCall<_ax_v1_ListAppLimitsRequest__Output, _ax_v1_ListAppLimitsResponse>;
  
  ListAuditEntries: grpc.handleUnaryCall<_ax_v1_ListAuditEntriesRequest__Output, _ax_v1_ListAuditEntriesResponse>;
  
  ListCalendars: grpc.handleUnaryCall<_ax_v1_ListCalendarsRequest__Output, _ax_v1_ListCalendarsResponse>;
  
  ListInstances: grpc.handleUnaryCall<_ax_v1_ListInstancesRequest__Output, _ax_v1_ListInstancesResponse>;
  
  ListSchedulers: grpc.handleUnaryCall<_ax_v1_ListSchedulersRequest__Output, _ax_v1_ListSchedulersResponse>;
  
  ListTasks: grpc.handleUnaryCall<_ax_v1_ListTasksRequest__Output, _ax_v1_ListTasksResponse>;
  
  ListWorkers: grpc.handleUnaryCall<_ax_v1_ListWorkersRequest__Output, _ax_v1_ListWorkersResponse>;
  
  PauseTask: grpc.handleUnaryCall<_ax_v1_PauseTaskRequest__Output, _ax_v1_PauseTaskResponse>;
  
  PreviewSchedule: grpc.handleUnaryCall<_ax_v1_PreviewScheduleRequest__Output, _ax_v1_PreviewScheduleResponse>;
  
  PublishEvent: grpc.handleUnaryCall<_ax_v1_PublishEventRequest__Output, _ax_v1_PublishEventResponse>;
  
  ResumeTask: grpc.handleUnaryCall<_ax_v1_ResumeTaskRequest__Output, _ax_v1_ResumeTaskResponse>;
  
  RetryInstance: grpc.handleUnaryCall<_ax_v1_RetryInstanceRequest__Output, _ax_v1_RetryInstanceResponse>;
  
  SetAppLimit: grpc.handleUnaryCall<_ax_v1_SetAppLimitRequest__Output, _ax_v1_SetAppLimitResponse>;
  
  TestAlertRule: grpc.handleUnaryCall<_ax_v1_TestAlertRuleRequest__Output, _ax_v1_TestAlertRuleResponse>;
  
  TriggerTask: grpc.handleUnaryCall<_ax_v1_TriggerTaskRequest__Output, _ax_v1_TriggerTaskResponse>;
  
  UpdateCalendar: grpc.handleUnaryCall<_ax_v1_UpdateCalendarRequest__Output, _ax_v1_UpdateCalendarResponse>;
  
  UpdateTask: grpc.handleUnaryCall<_ax_v1_UpdateTaskRequest__Output, _ax_v1_UpdateTaskResponse>;
  
  WatchInstance: grpc.handleServerStreamingCall<_ax_v1_WatchInstanceRequest__Output, _ax_v1_WatchInstanceResponse>;
  
}

export interface AdminServiceDefinition extends grpc.ServiceDefinition {
  ApplyTasks: MethodDefinition<_ax_v1_ApplyTasksRequest, _ax_v1_ApplyTasksResponse, _ax_v1_ApplyTasksRequest__Output, _ax_v1_ApplyTasksResponse__Output>
  BackfillTask: MethodDefinition<_ax_v1_BackfillTaskRequest, _ax_v1_BackfillTaskResponse, _ax_v1_BackfillTaskRequest__Output, _ax_v1_BackfillTaskResponse__Output>
  BulkInstances: MethodDefinition<_ax_v1_BulkInstancesRequest, _ax_v1_BulkInstancesResponse, _ax_v1_BulkInstancesRequest__Output, _ax_v1_BulkInstancesResponse__Output>
  CancelInstance: MethodDefinition<_ax_v1_CancelInstanceRequest, _ax_v1_CancelInstanceResponse, _ax_v1_CancelInstanceRequest__Output, _ax_v1_CancelInstanceResponse__Output>
  CreateAlertRule: MethodDefinition<_ax_v1_CreateAlertRuleRequest, _ax_v1_CreateAlertRuleResponse, _ax_v1_CreateAlertRuleRequest__Output, _ax_v1_CreateAlertRuleResponse__Output>
  CreateCalendar: MethodDefinition<_ax_v1_CreateCalendarRequest, _ax_v1_CreateCalendarResponse, _ax_v1_CreateCalendarRequest__Output, _ax_v1_CreateCalendarResponse__Output>
  CreateTask: MethodDefinition<_ax_v1_CreateTaskRequest, _ax_v1_CreateTaskResponse, _ax_v1_CreateTaskRequest__Output, _ax_v1_CreateTaskResponse__Output>
  DeleteAlertRule: MethodDefinition<_ax_v1_DeleteAlertRuleRequest, _ax_v1_DeleteAlertRuleResponse, _ax_v1_DeleteAlertRuleRequest__Output, _ax_v1_DeleteAlertRuleResponse__Output>
  DeleteAppLimit: MethodDefinition<_ax_v1_DeleteAppLimitRequest, _ax_v1_DeleteAppLimitResponse, _ax_v1_DeleteAppLimitRequest__Output, _ax_v1_DeleteAppLimitResponse__Output>
  DeleteCalendar: MethodDefinition<_ax_v1_DeleteCalendarRequest, _ax_v1_DeleteCalendarResponse, _ax_v1_DeleteCalendarRequest__Output, _ax_v1_DeleteCalendarResponse__Output>
  DeleteTask: MethodDefinition<_ax_v1_DeleteTaskRequest, _ax_v1_DeleteTaskResponse, _ax_v1_DeleteTaskRequest__Output, _ax_v1_DeleteTaskResponse__Output>
  DisableTask: MethodDefinition<_ax_v1_DisableTaskRequest, _ax_v1_DisableTaskResponse, _ax_v1_DisableTaskRequest__Output, _ax_v1_DisableTaskResponse__Output>
  EnableTask: MethodDefinition<_ax_v1_EnableTaskRequest, _ax_v1_EnableTaskResponse, _ax_v1_EnableTaskRequest__Output, _ax_v1_EnableTaskResponse__Output>
  ExplainTask: MethodDefinition<_ax_v1_ExplainTaskRequest, _ax_v1_ExplainTaskResponse, _ax_v1_ExplainTaskRequest__Output, _ax_v1_ExplainTaskResponse__Output>
  GetCalendar: MethodDefinition<_ax_v1_GetCalendarRequest, _ax_v1_GetCalendarResponse, _ax_v1_GetCalendarRequest__Output, _ax_v1_GetCalendarResponse__Output>
  GetClusterStats: MethodDefinition<_ax_v1_GetClusterStatsRequest, _ax_v1_GetClusterStatsResponse, _ax_v1_GetClusterStatsRequest__Output, _ax_v1_GetClusterStatsResponse__Output>
  GetInstance: MethodDefinition<_ax_v1_GetInstanceRequest, _ax_v1_GetInstanceResponse, _ax_v1_GetInstanceRequest__Output, _ax_v1_GetInstanceResponse__Output>
  GetInstanceLogs: MethodDefinition<_ax_v1_GetInstanceLogsRequest, _ax_v1_GetInstanceLogsResponse, _ax_v1_GetInstanceLogsRequest__Output, _ax_v1_GetInstanceLogsResponse__Output>
  GetRun: MethodDefinition<_ax_v1_GetRunRequest, _ax_v1_GetRunResponse, _ax_v1_GetRunRequest__Output, _ax_v1_GetRunResponse__Output>
  GetTask: MethodDefinition<_ax_v1_GetTaskRequest, _ax_v1_GetTaskResponse, _ax_v1_GetTaskRequest__Output, _ax_v1_GetTaskResponse__Output>
  ListAlertDeliveries: MethodDefinition<_ax_v1_ListAlertDeliveriesRequest, _ax_v1_ListAlertDeliveriesResponse, _ax_v1_ListAlertDeliveriesRequest__Output, _ax_v1_ListAlertDeliveriesResponse__Output>
  ListAlertRules: MethodDefinition<_ax_v1_ListAlertRulesRequest, _ax_v1_ListAlertRulesResponse, _ax_v1_ListAlertRulesRequest__Output, _ax_v1_ListAlertRulesResponse__Output>
  ListAppLimits: MethodDefinition<_ax_v1_ListAppLimitsRequest, _ax_v1_ListAppLimitsResponse, _ax_v1_ListAppLimitsRequest__Output, _ax_v1_ListAppLimitsResponse__Output>
  ListAuditEntries: MethodDefinition<_ax_v1_ListAuditEntriesRequest, _ax_v1_ListAuditEntriesResponse, _ax_v1_ListAuditEntriesRequest__Output, _ax_v1_ListAuditEntriesResponse__Output>
  ListCalendars: MethodDefinition<_ax_v1_ListCalendarsRequest, _ax_v1_ListCalendarsResponse, _ax_v1_ListCalendarsRequest__Output, _ax_v1_ListCalendarsResponse__Output>
  ListInstances: MethodDefinition<_ax_v1_ListInstancesRequest, _ax_v1_ListInstancesResponse, _ax_v1_ListInstancesRequest__Output, _ax_v1_ListInstancesResponse__Output>
  ListSchedulers: MethodDefinition<_ax_v1_ListSchedulersRequest, _ax_v1_ListSchedulersResponse, _ax_v1_ListSchedulersRequest__Output, _ax_v1_ListSchedulersResponse__Output>
  ListTasks: MethodDefinition<_ax_v1_ListTasksRequest, _ax_v1_ListTasksResponse, _ax_v1_ListTasksRequest__Output, _ax_v1_ListTasksResponse__Output>
  ListWorkers: MethodDefinition<_ax_v1_ListWorkersRequest, _ax_v1_ListWorkersResponse, _ax_v1_ListWorkersRequest__Output, _ax_v1_ListWorkersResponse__Output>
  PauseTask: MethodDefinition<_ax_v1_PauseTaskRequest, _ax_v1_PauseTaskResponse, _ax_v1_PauseTaskRequest__Output, _ax_v1_PauseTaskResponse__Output>
  PreviewSchedule: MethodDefinition<_ax_v1_PreviewScheduleRequest, _ax_v1_PreviewScheduleResponse, _ax_v1_PreviewScheduleRequest__Output, _ax_v1_PreviewScheduleResponse__Output>
  PublishEvent: MethodDefinition<_ax_v1_PublishEventRequest, _ax_v1_PublishEventResponse, _ax_v1_PublishEventRequest__Output, _ax_v1_PublishEventResponse__Output>
  ResumeTask: MethodDefinition<_ax_v1_ResumeTaskRequest, _ax_v1_ResumeTaskResponse, _ax_v1_ResumeTaskRequest__Output, _ax_v1_ResumeTaskResponse__Output>
  RetryInstance: MethodDefinition<_ax_v1_RetryInstanceRequest, _ax_v1_RetryInstanceResponse, _ax_v1_RetryInstanceRequest__Output, _ax_v1_RetryInstanceResponse__Output>
  SetAppLimit: MethodDefinition<_ax_v1_SetAppLimitRequest, _ax_v1_SetAppLimitResponse, _ax_v1_SetAppLimitRequest__Output, _ax_v1_SetAppLimitResponse__Output>
  TestAlertRule: MethodDefinition<_ax_v1_TestAlertRuleRequest, _ax_v1_TestAlertRuleResponse, _ax_v1_TestAlertRuleRequest__Output, _ax_v1_TestAlertRuleResponse__Output>
  TriggerTask: MethodDefinition<_ax_v1_TriggerTaskRequest, _ax_v1_TriggerTaskResponse, _ax_v1_TriggerTaskRequest__Output, _ax_v1_TriggerTaskResponse__Output>
  UpdateCalendar: MethodDefinition<_ax_v1_UpdateCalendarRequest, _ax_v1_UpdateCalendarResponse, _ax_v1_UpdateCalendarRequest__Output, _ax_v1_UpdateCalendarResponse__Output>
  UpdateTask: MethodDefinition<_ax_v1_UpdateTaskRequest, _ax_v1_UpdateTaskResponse, _ax_v1_UpdateTaskRequest__Output, _ax_v1_UpdateTaskResponse__Output>
  WatchInstance: MethodDefinition<_ax_v1_WatchInstanceRequest, _ax_v1_WatchInstanceResponse, _ax_v1_WatchInstanceRequest__Output, _ax_v1_WatchInstanceResponse__Output>
}
