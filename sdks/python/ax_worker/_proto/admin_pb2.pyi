import datetime

from . import types_pb2 as _types_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CronDialect(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CRON_DIALECT_UNSPECIFIED: _ClassVar[CronDialect]
    CRON_DIALECT_UNIX: _ClassVar[CronDialect]
    CRON_DIALECT_QUARTZ: _ClassVar[CronDialect]

class MisfirePolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MISFIRE_POLICY_UNSPECIFIED: _ClassVar[MisfirePolicy]
    MISFIRE_POLICY_FIRE_ONCE: _ClassVar[MisfirePolicy]
    MISFIRE_POLICY_FIRE_ALL: _ClassVar[MisfirePolicy]
    MISFIRE_POLICY_SKIP: _ClassVar[MisfirePolicy]

class ConcurrencyPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONCURRENCY_POLICY_UNSPECIFIED: _ClassVar[ConcurrencyPolicy]
    CONCURRENCY_POLICY_ALLOW: _ClassVar[ConcurrencyPolicy]
    CONCURRENCY_POLICY_FORBID: _ClassVar[ConcurrencyPolicy]
    CONCURRENCY_POLICY_BUFFER_ONE: _ClassVar[ConcurrencyPolicy]
    CONCURRENCY_POLICY_BUFFER_ALL: _ClassVar[ConcurrencyPolicy]
    CONCURRENCY_POLICY_CANCEL_OTHER: _ClassVar[ConcurrencyPolicy]

class RoutingStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROUTING_STRATEGY_UNSPECIFIED: _ClassVar[RoutingStrategy]
    ROUTING_STRATEGY_LEAST_LOADED: _ClassVar[RoutingStrategy]
    ROUTING_STRATEGY_ROUND_ROBIN: _ClassVar[RoutingStrategy]
    ROUTING_STRATEGY_RANDOM: _ClassVar[RoutingStrategy]
    ROUTING_STRATEGY_BROADCAST: _ClassVar[RoutingStrategy]
    ROUTING_STRATEGY_HASH: _ClassVar[RoutingStrategy]

class RetryTarget(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RETRY_TARGET_UNSPECIFIED: _ClassVar[RetryTarget]
    RETRY_TARGET_OTHER: _ClassVar[RetryTarget]
    RETRY_TARGET_SAME: _ClassVar[RetryTarget]
    RETRY_TARGET_ANY: _ClassVar[RetryTarget]

class TaskChangeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_CHANGE_KIND_UNSPECIFIED: _ClassVar[TaskChangeKind]
    TASK_CHANGE_KIND_CREATE: _ClassVar[TaskChangeKind]
    TASK_CHANGE_KIND_UPDATE: _ClassVar[TaskChangeKind]
    TASK_CHANGE_KIND_DELETE: _ClassVar[TaskChangeKind]
    TASK_CHANGE_KIND_UNCHANGED: _ClassVar[TaskChangeKind]

class InstanceSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INSTANCE_SOURCE_UNSPECIFIED: _ClassVar[InstanceSource]
    INSTANCE_SOURCE_SCHEDULE: _ClassVar[InstanceSource]
    INSTANCE_SOURCE_CATCH_UP: _ClassVar[InstanceSource]
    INSTANCE_SOURCE_MANUAL: _ClassVar[InstanceSource]
    INSTANCE_SOURCE_BACKFILL: _ClassVar[InstanceSource]
    INSTANCE_SOURCE_CHAIN: _ClassVar[InstanceSource]
    INSTANCE_SOURCE_DAG: _ClassVar[InstanceSource]
    INSTANCE_SOURCE_INTAKE: _ClassVar[InstanceSource]

class LinkKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LINK_KIND_UNSPECIFIED: _ClassVar[LinkKind]
    LINK_KIND_ON_SUCCESS: _ClassVar[LinkKind]
    LINK_KIND_ON_FAILURE: _ClassVar[LinkKind]
    LINK_KIND_AFTER_ALL: _ClassVar[LinkKind]

class BulkAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BULK_ACTION_UNSPECIFIED: _ClassVar[BulkAction]
    BULK_ACTION_CANCEL: _ClassVar[BulkAction]
    BULK_ACTION_RETRY: _ClassVar[BulkAction]
    BULK_ACTION_DELETE: _ClassVar[BulkAction]

class ExplainFindingKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXPLAIN_FINDING_KIND_UNSPECIFIED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_DISABLED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_MANUAL: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_NO_MORE_FIRES: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_MISFIRE_SKIPPED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_MISFIRE_CAUGHT_UP: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_SKIPPED_OVERLAP: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_NO_WORKER: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_AT_CAPACITY: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_ATTEMPT_FAILED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_FAILED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_CANCELED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_SCHEDULE_BROKEN: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_RUNNING: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_WAITING: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_NO_INSTANCE: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_OK: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_SELECTOR_UNMATCHED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_COOLDOWN: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_MAX_RUNNING: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_RATE_LIMITED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_COALESCED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_PAUSED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_OUTSIDE_WINDOW: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_EXCLUDED_DATE: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_BUFFERED: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_CANCELED_BY_FIRE: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_CONCURRENCY_KEY: _ClassVar[ExplainFindingKind]
    EXPLAIN_FINDING_KIND_DEADLINE_MISSED: _ClassVar[ExplainFindingKind]
CRON_DIALECT_UNSPECIFIED: CronDialect
CRON_DIALECT_UNIX: CronDialect
CRON_DIALECT_QUARTZ: CronDialect
MISFIRE_POLICY_UNSPECIFIED: MisfirePolicy
MISFIRE_POLICY_FIRE_ONCE: MisfirePolicy
MISFIRE_POLICY_FIRE_ALL: MisfirePolicy
MISFIRE_POLICY_SKIP: MisfirePolicy
CONCURRENCY_POLICY_UNSPECIFIED: ConcurrencyPolicy
CONCURRENCY_POLICY_ALLOW: ConcurrencyPolicy
CONCURRENCY_POLICY_FORBID: ConcurrencyPolicy
CONCURRENCY_POLICY_BUFFER_ONE: ConcurrencyPolicy
CONCURRENCY_POLICY_BUFFER_ALL: ConcurrencyPolicy
CONCURRENCY_POLICY_CANCEL_OTHER: ConcurrencyPolicy
ROUTING_STRATEGY_UNSPECIFIED: RoutingStrategy
ROUTING_STRATEGY_LEAST_LOADED: RoutingStrategy
ROUTING_STRATEGY_ROUND_ROBIN: RoutingStrategy
ROUTING_STRATEGY_RANDOM: RoutingStrategy
ROUTING_STRATEGY_BROADCAST: RoutingStrategy
ROUTING_STRATEGY_HASH: RoutingStrategy
RETRY_TARGET_UNSPECIFIED: RetryTarget
RETRY_TARGET_OTHER: RetryTarget
RETRY_TARGET_SAME: RetryTarget
RETRY_TARGET_ANY: RetryTarget
TASK_CHANGE_KIND_UNSPECIFIED: TaskChangeKind
TASK_CHANGE_KIND_CREATE: TaskChangeKind
TASK_CHANGE_KIND_UPDATE: TaskChangeKind
TASK_CHANGE_KIND_DELETE: TaskChangeKind
TASK_CHANGE_KIND_UNCHANGED: TaskChangeKind
INSTANCE_SOURCE_UNSPECIFIED: InstanceSource
INSTANCE_SOURCE_SCHEDULE: InstanceSource
INSTANCE_SOURCE_CATCH_UP: InstanceSource
INSTANCE_SOURCE_MANUAL: InstanceSource
INSTANCE_SOURCE_BACKFILL: InstanceSource
INSTANCE_SOURCE_CHAIN: InstanceSource
INSTANCE_SOURCE_DAG: InstanceSource
INSTANCE_SOURCE_INTAKE: InstanceSource
LINK_KIND_UNSPECIFIED: LinkKind
LINK_KIND_ON_SUCCESS: LinkKind
LINK_KIND_ON_FAILURE: LinkKind
LINK_KIND_AFTER_ALL: LinkKind
BULK_ACTION_UNSPECIFIED: BulkAction
BULK_ACTION_CANCEL: BulkAction
BULK_ACTION_RETRY: BulkAction
BULK_ACTION_DELETE: BulkAction
EXPLAIN_FINDING_KIND_UNSPECIFIED: ExplainFindingKind
EXPLAIN_FINDING_KIND_DISABLED: ExplainFindingKind
EXPLAIN_FINDING_KIND_MANUAL: ExplainFindingKind
EXPLAIN_FINDING_KIND_NO_MORE_FIRES: ExplainFindingKind
EXPLAIN_FINDING_KIND_MISFIRE_SKIPPED: ExplainFindingKind
EXPLAIN_FINDING_KIND_MISFIRE_CAUGHT_UP: ExplainFindingKind
EXPLAIN_FINDING_KIND_SKIPPED_OVERLAP: ExplainFindingKind
EXPLAIN_FINDING_KIND_NO_WORKER: ExplainFindingKind
EXPLAIN_FINDING_KIND_AT_CAPACITY: ExplainFindingKind
EXPLAIN_FINDING_KIND_ATTEMPT_FAILED: ExplainFindingKind
EXPLAIN_FINDING_KIND_FAILED: ExplainFindingKind
EXPLAIN_FINDING_KIND_CANCELED: ExplainFindingKind
EXPLAIN_FINDING_KIND_SCHEDULE_BROKEN: ExplainFindingKind
EXPLAIN_FINDING_KIND_RUNNING: ExplainFindingKind
EXPLAIN_FINDING_KIND_WAITING: ExplainFindingKind
EXPLAIN_FINDING_KIND_NO_INSTANCE: ExplainFindingKind
EXPLAIN_FINDING_KIND_OK: ExplainFindingKind
EXPLAIN_FINDING_KIND_SELECTOR_UNMATCHED: ExplainFindingKind
EXPLAIN_FINDING_KIND_COOLDOWN: ExplainFindingKind
EXPLAIN_FINDING_KIND_MAX_RUNNING: ExplainFindingKind
EXPLAIN_FINDING_KIND_RATE_LIMITED: ExplainFindingKind
EXPLAIN_FINDING_KIND_COALESCED: ExplainFindingKind
EXPLAIN_FINDING_KIND_PAUSED: ExplainFindingKind
EXPLAIN_FINDING_KIND_OUTSIDE_WINDOW: ExplainFindingKind
EXPLAIN_FINDING_KIND_EXCLUDED_DATE: ExplainFindingKind
EXPLAIN_FINDING_KIND_BUFFERED: ExplainFindingKind
EXPLAIN_FINDING_KIND_CANCELED_BY_FIRE: ExplainFindingKind
EXPLAIN_FINDING_KIND_CONCURRENCY_KEY: ExplainFindingKind
EXPLAIN_FINDING_KIND_DEADLINE_MISSED: ExplainFindingKind

class CronSchedule(_message.Message):
    __slots__ = ("expression", "time_zone", "dialect")
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    DIALECT_FIELD_NUMBER: _ClassVar[int]
    expression: str
    time_zone: str
    dialect: CronDialect
    def __init__(self, expression: _Optional[str] = ..., time_zone: _Optional[str] = ..., dialect: _Optional[_Union[CronDialect, str]] = ...) -> None: ...

class IntervalSchedule(_message.Message):
    __slots__ = ("interval", "start_at")
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    START_AT_FIELD_NUMBER: _ClassVar[int]
    interval: _duration_pb2.Duration
    start_at: _timestamp_pb2.Timestamp
    def __init__(self, interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., start_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class OneTimeSchedule(_message.Message):
    __slots__ = ("at", "after")
    AT_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    at: _timestamp_pb2.Timestamp
    after: _duration_pb2.Duration
    def __init__(self, at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., after: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ManualSchedule(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Schedule(_message.Message):
    __slots__ = ("cron", "fixed_rate", "fixed_delay", "one_time", "manual")
    CRON_FIELD_NUMBER: _ClassVar[int]
    FIXED_RATE_FIELD_NUMBER: _ClassVar[int]
    FIXED_DELAY_FIELD_NUMBER: _ClassVar[int]
    ONE_TIME_FIELD_NUMBER: _ClassVar[int]
    MANUAL_FIELD_NUMBER: _ClassVar[int]
    cron: CronSchedule
    fixed_rate: IntervalSchedule
    fixed_delay: IntervalSchedule
    one_time: OneTimeSchedule
    manual: ManualSchedule
    def __init__(self, cron: _Optional[_Union[CronSchedule, _Mapping]] = ..., fixed_rate: _Optional[_Union[IntervalSchedule, _Mapping]] = ..., fixed_delay: _Optional[_Union[IntervalSchedule, _Mapping]] = ..., one_time: _Optional[_Union[OneTimeSchedule, _Mapping]] = ..., manual: _Optional[_Union[ManualSchedule, _Mapping]] = ...) -> None: ...

class Backoff(_message.Message):
    __slots__ = ("list", "exponential")
    LIST_FIELD_NUMBER: _ClassVar[int]
    EXPONENTIAL_FIELD_NUMBER: _ClassVar[int]
    list: ListBackoff
    exponential: ExponentialBackoff
    def __init__(self, list: _Optional[_Union[ListBackoff, _Mapping]] = ..., exponential: _Optional[_Union[ExponentialBackoff, _Mapping]] = ...) -> None: ...

class ListBackoff(_message.Message):
    __slots__ = ("delays",)
    DELAYS_FIELD_NUMBER: _ClassVar[int]
    delays: _containers.RepeatedCompositeFieldContainer[_duration_pb2.Duration]
    def __init__(self, delays: _Optional[_Iterable[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]]] = ...) -> None: ...

class ExponentialBackoff(_message.Message):
    __slots__ = ("initial", "multiplier", "max", "jitter")
    INITIAL_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    JITTER_FIELD_NUMBER: _ClassVar[int]
    initial: _duration_pb2.Duration
    multiplier: float
    max: _duration_pb2.Duration
    jitter: float
    def __init__(self, initial: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., multiplier: _Optional[float] = ..., max: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., jitter: _Optional[float] = ...) -> None: ...

class RetryPolicy(_message.Message):
    __slots__ = ("max_retries", "backoff")
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    BACKOFF_FIELD_NUMBER: _ClassVar[int]
    max_retries: int
    backoff: Backoff
    def __init__(self, max_retries: _Optional[int] = ..., backoff: _Optional[_Union[Backoff, _Mapping]] = ...) -> None: ...

class TaskSpec(_message.Message):
    __slots__ = ("name", "app", "handler", "description", "schedule", "params", "enabled", "misfire_policy", "misfire_threshold", "max_catch_up", "concurrency_policy", "routing", "timeout", "retry_policy", "labels", "selector", "retry_on", "shards", "hash_key", "priority", "max_running", "max_pending", "cooldown_after", "cooldown", "start_time", "end_time", "exclude_dates", "calendar", "jitter", "on_success", "on_failure", "after_all", "concurrency_key", "concurrency_limit", "unique_key", "unique_for", "must_finish_within", "on_event", "event_filter", "search_params", "extra_schedules")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    APP_FIELD_NUMBER: _ClassVar[int]
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    MISFIRE_POLICY_FIELD_NUMBER: _ClassVar[int]
    MISFIRE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    MAX_CATCH_UP_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_POLICY_FIELD_NUMBER: _ClassVar[int]
    ROUTING_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    RETRY_POLICY_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    RETRY_ON_FIELD_NUMBER: _ClassVar[int]
    SHARDS_FIELD_NUMBER: _ClassVar[int]
    HASH_KEY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    MAX_RUNNING_FIELD_NUMBER: _ClassVar[int]
    MAX_PENDING_FIELD_NUMBER: _ClassVar[int]
    COOLDOWN_AFTER_FIELD_NUMBER: _ClassVar[int]
    COOLDOWN_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_DATES_FIELD_NUMBER: _ClassVar[int]
    CALENDAR_FIELD_NUMBER: _ClassVar[int]
    JITTER_FIELD_NUMBER: _ClassVar[int]
    ON_SUCCESS_FIELD_NUMBER: _ClassVar[int]
    ON_FAILURE_FIELD_NUMBER: _ClassVar[int]
    AFTER_ALL_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_LIMIT_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_KEY_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_FOR_FIELD_NUMBER: _ClassVar[int]
    MUST_FINISH_WITHIN_FIELD_NUMBER: _ClassVar[int]
    ON_EVENT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FILTER_FIELD_NUMBER: _ClassVar[int]
    SEARCH_PARAMS_FIELD_NUMBER: _ClassVar[int]
    EXTRA_SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    name: str
    app: str
    handler: str
    description: str
    schedule: Schedule
    params: str
    enabled: bool
    misfire_policy: MisfirePolicy
    misfire_threshold: _duration_pb2.Duration
    max_catch_up: int
    concurrency_policy: ConcurrencyPolicy
    routing: RoutingStrategy
    timeout: _duration_pb2.Duration
    retry_policy: RetryPolicy
    labels: _containers.ScalarMap[str, str]
    selector: str
    retry_on: RetryTarget
    shards: int
    hash_key: str
    priority: int
    max_running: int
    max_pending: int
    cooldown_after: int
    cooldown: _duration_pb2.Duration
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    exclude_dates: _containers.RepeatedScalarFieldContainer[str]
    calendar: str
    jitter: _duration_pb2.Duration
    on_success: _containers.RepeatedScalarFieldContainer[str]
    on_failure: _containers.RepeatedScalarFieldContainer[str]
    after_all: _containers.RepeatedScalarFieldContainer[str]
    concurrency_key: str
    concurrency_limit: int
    unique_key: str
    unique_for: _duration_pb2.Duration
    must_finish_within: _duration_pb2.Duration
    on_event: str
    event_filter: str
    search_params: _containers.RepeatedScalarFieldContainer[str]
    extra_schedules: _containers.RepeatedCompositeFieldContainer[Schedule]
    def __init__(self, name: _Optional[str] = ..., app: _Optional[str] = ..., handler: _Optional[str] = ..., description: _Optional[str] = ..., schedule: _Optional[_Union[Schedule, _Mapping]] = ..., params: _Optional[str] = ..., enabled: _Optional[bool] = ..., misfire_policy: _Optional[_Union[MisfirePolicy, str]] = ..., misfire_threshold: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_catch_up: _Optional[int] = ..., concurrency_policy: _Optional[_Union[ConcurrencyPolicy, str]] = ..., routing: _Optional[_Union[RoutingStrategy, str]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., retry_policy: _Optional[_Union[RetryPolicy, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., selector: _Optional[str] = ..., retry_on: _Optional[_Union[RetryTarget, str]] = ..., shards: _Optional[int] = ..., hash_key: _Optional[str] = ..., priority: _Optional[int] = ..., max_running: _Optional[int] = ..., max_pending: _Optional[int] = ..., cooldown_after: _Optional[int] = ..., cooldown: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., exclude_dates: _Optional[_Iterable[str]] = ..., calendar: _Optional[str] = ..., jitter: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., on_success: _Optional[_Iterable[str]] = ..., on_failure: _Optional[_Iterable[str]] = ..., after_all: _Optional[_Iterable[str]] = ..., concurrency_key: _Optional[str] = ..., concurrency_limit: _Optional[int] = ..., unique_key: _Optional[str] = ..., unique_for: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., must_finish_within: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., on_event: _Optional[str] = ..., event_filter: _Optional[str] = ..., search_params: _Optional[_Iterable[str]] = ..., extra_schedules: _Optional[_Iterable[_Union[Schedule, _Mapping]]] = ...) -> None: ...

class TaskPause(_message.Message):
    __slots__ = ("actor", "note", "pause_time", "until")
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    PAUSE_TIME_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    actor: str
    note: str
    pause_time: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    def __init__(self, actor: _Optional[str] = ..., note: _Optional[str] = ..., pause_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ("id", "spec", "next_fire_time", "create_time", "update_time", "version", "coalesced_fires", "coalesce_start_time", "pause")
    ID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    COALESCED_FIRES_FIELD_NUMBER: _ClassVar[int]
    COALESCE_START_TIME_FIELD_NUMBER: _ClassVar[int]
    PAUSE_FIELD_NUMBER: _ClassVar[int]
    id: int
    spec: TaskSpec
    next_fire_time: _timestamp_pb2.Timestamp
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    version: int
    coalesced_fires: int
    coalesce_start_time: _timestamp_pb2.Timestamp
    pause: TaskPause
    def __init__(self, id: _Optional[int] = ..., spec: _Optional[_Union[TaskSpec, _Mapping]] = ..., next_fire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., version: _Optional[int] = ..., coalesced_fires: _Optional[int] = ..., coalesce_start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., pause: _Optional[_Union[TaskPause, _Mapping]] = ...) -> None: ...

class TaskEvent(_message.Message):
    __slots__ = ("time", "kind", "actor", "message", "fires")
    TIME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FIRES_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    kind: str
    actor: str
    message: str
    fires: FireSpan
    def __init__(self, time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., kind: _Optional[str] = ..., actor: _Optional[str] = ..., message: _Optional[str] = ..., fires: _Optional[_Union[FireSpan, _Mapping]] = ...) -> None: ...

class FireSpan(_message.Message):
    __slots__ = ("first_time", "last_time", "count")
    FIRST_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_TIME_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    first_time: _timestamp_pb2.Timestamp
    last_time: _timestamp_pb2.Timestamp
    count: int
    def __init__(self, first_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., count: _Optional[int] = ...) -> None: ...

class Fire(_message.Message):
    __slots__ = ("time", "local_time", "run_time")
    TIME_FIELD_NUMBER: _ClassVar[int]
    LOCAL_TIME_FIELD_NUMBER: _ClassVar[int]
    RUN_TIME_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    local_time: str
    run_time: _timestamp_pb2.Timestamp
    def __init__(self, time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., local_time: _Optional[str] = ..., run_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SchedulePreview(_message.Message):
    __slots__ = ("fires", "fires_per_day", "warnings", "description")
    FIRES_FIELD_NUMBER: _ClassVar[int]
    FIRES_PER_DAY_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    fires: _containers.RepeatedCompositeFieldContainer[Fire]
    fires_per_day: float
    warnings: _containers.RepeatedScalarFieldContainer[str]
    description: str
    def __init__(self, fires: _Optional[_Iterable[_Union[Fire, _Mapping]]] = ..., fires_per_day: _Optional[float] = ..., warnings: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ...) -> None: ...

class CreateTaskRequest(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: TaskSpec
    def __init__(self, task: _Optional[_Union[TaskSpec, _Mapping]] = ...) -> None: ...

class CreateTaskResponse(_message.Message):
    __slots__ = ("task", "preview")
    TASK_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    task: Task
    preview: SchedulePreview
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ..., preview: _Optional[_Union[SchedulePreview, _Mapping]] = ...) -> None: ...

class GetTaskRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetTaskResponse(_message.Message):
    __slots__ = ("task", "events")
    TASK_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    task: Task
    events: _containers.RepeatedCompositeFieldContainer[TaskEvent]
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ..., events: _Optional[_Iterable[_Union[TaskEvent, _Mapping]]] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("app", "page_size", "page_token")
    APP_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    app: str
    page_size: int
    page_token: str
    def __init__(self, app: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks", "next_page_token")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[Task]
    next_page_token: str
    def __init__(self, tasks: _Optional[_Iterable[_Union[Task, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateTaskRequest(_message.Message):
    __slots__ = ("name", "task", "update_mask")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    name: str
    task: TaskSpec
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, name: _Optional[str] = ..., task: _Optional[_Union[TaskSpec, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateTaskResponse(_message.Message):
    __slots__ = ("task", "preview")
    TASK_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    task: Task
    preview: SchedulePreview
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ..., preview: _Optional[_Union[SchedulePreview, _Mapping]] = ...) -> None: ...

class DeleteTaskRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteTaskResponse(_message.Message):
    __slots__ = ("canceled_instances",)
    CANCELED_INSTANCES_FIELD_NUMBER: _ClassVar[int]
    canceled_instances: int
    def __init__(self, canceled_instances: _Optional[int] = ...) -> None: ...

class TaskSet(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[TaskSpec]
    def __init__(self, tasks: _Optional[_Iterable[_Union[TaskSpec, _Mapping]]] = ...) -> None: ...

class ApplyTasksRequest(_message.Message):
    __slots__ = ("tasks", "prune", "apps", "dry_run", "change_note")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    PRUNE_FIELD_NUMBER: _ClassVar[int]
    APPS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    CHANGE_NOTE_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[TaskSpec]
    prune: bool
    apps: _containers.RepeatedScalarFieldContainer[str]
    dry_run: bool
    change_note: str
    def __init__(self, tasks: _Optional[_Iterable[_Union[TaskSpec, _Mapping]]] = ..., prune: _Optional[bool] = ..., apps: _Optional[_Iterable[str]] = ..., dry_run: _Optional[bool] = ..., change_note: _Optional[str] = ...) -> None: ...

class TaskChange(_message.Message):
    __slots__ = ("name", "app", "kind", "changed_fields", "next_fire_before", "next_fire_after", "edges_removed", "edges_added", "calendars")
    NAME_FIELD_NUMBER: _ClassVar[int]
    APP_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIRE_BEFORE_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIRE_AFTER_FIELD_NUMBER: _ClassVar[int]
    EDGES_REMOVED_FIELD_NUMBER: _ClassVar[int]
    EDGES_ADDED_FIELD_NUMBER: _ClassVar[int]
    CALENDARS_FIELD_NUMBER: _ClassVar[int]
    name: str
    app: str
    kind: TaskChangeKind
    changed_fields: _containers.RepeatedScalarFieldContainer[str]
    next_fire_before: _timestamp_pb2.Timestamp
    next_fire_after: _timestamp_pb2.Timestamp
    edges_removed: _containers.RepeatedScalarFieldContainer[str]
    edges_added: _containers.RepeatedScalarFieldContainer[str]
    calendars: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., app: _Optional[str] = ..., kind: _Optional[_Union[TaskChangeKind, str]] = ..., changed_fields: _Optional[_Iterable[str]] = ..., next_fire_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., next_fire_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., edges_removed: _Optional[_Iterable[str]] = ..., edges_added: _Optional[_Iterable[str]] = ..., calendars: _Optional[_Iterable[str]] = ...) -> None: ...

class ApplyTasksResponse(_message.Message):
    __slots__ = ("changes", "applied")
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[TaskChange]
    applied: bool
    def __init__(self, changes: _Optional[_Iterable[_Union[TaskChange, _Mapping]]] = ..., applied: _Optional[bool] = ...) -> None: ...

class EnableTaskRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class EnableTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: Task
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ...) -> None: ...

class DisableTaskRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DisableTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: Task
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ...) -> None: ...

class PublishEventRequest(_message.Message):
    __slots__ = ("app", "name", "payload", "id")
    APP_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    app: str
    name: str
    payload: str
    id: str
    def __init__(self, app: _Optional[str] = ..., name: _Optional[str] = ..., payload: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class PublishEventResponse(_message.Message):
    __slots__ = ("instances", "created", "id", "filtered_out")
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    FILTERED_OUT_FIELD_NUMBER: _ClassVar[int]
    instances: _containers.RepeatedCompositeFieldContainer[Instance]
    created: bool
    id: str
    filtered_out: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, instances: _Optional[_Iterable[_Union[Instance, _Mapping]]] = ..., created: _Optional[bool] = ..., id: _Optional[str] = ..., filtered_out: _Optional[_Iterable[str]] = ...) -> None: ...

class TriggerTaskRequest(_message.Message):
    __slots__ = ("name", "params", "idempotency_key", "run_at", "delay", "wait", "tags")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    RUN_AT_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    name: str
    params: str
    idempotency_key: str
    run_at: _timestamp_pb2.Timestamp
    delay: _duration_pb2.Duration
    wait: _duration_pb2.Duration
    tags: _containers.ScalarMap[str, str]
    def __init__(self, name: _Optional[str] = ..., params: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., run_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., tags: _Optional[_Mapping[str, str]] = ...) -> None: ...

class TriggerTaskResponse(_message.Message):
    __slots__ = ("instance", "created", "done")
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    created: bool
    done: bool
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ..., created: _Optional[bool] = ..., done: _Optional[bool] = ...) -> None: ...

class PreviewScheduleRequest(_message.Message):
    __slots__ = ("schedule", "count", "jitter", "task_name", "start_time", "end_time", "exclude_dates", "calendar", "extra_schedules")
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    JITTER_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_DATES_FIELD_NUMBER: _ClassVar[int]
    CALENDAR_FIELD_NUMBER: _ClassVar[int]
    EXTRA_SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    count: int
    jitter: _duration_pb2.Duration
    task_name: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    exclude_dates: _containers.RepeatedScalarFieldContainer[str]
    calendar: str
    extra_schedules: _containers.RepeatedCompositeFieldContainer[Schedule]
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ..., count: _Optional[int] = ..., jitter: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., task_name: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., exclude_dates: _Optional[_Iterable[str]] = ..., calendar: _Optional[str] = ..., extra_schedules: _Optional[_Iterable[_Union[Schedule, _Mapping]]] = ..., **kwargs) -> None: ...

class PreviewScheduleResponse(_message.Message):
    __slots__ = ("preview",)
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    preview: SchedulePreview
    def __init__(self, preview: _Optional[_Union[SchedulePreview, _Mapping]] = ...) -> None: ...

class Instance(_message.Message):
    __slots__ = ("id", "task_id", "task_name", "app", "handler", "params", "idempotency_key", "source", "trigger_time", "available_time", "status", "attempt", "max_retries", "failures", "worker_id", "session_id", "scheduler_id", "start_time", "finish_time", "deadline", "message", "output", "progress_percent", "progress_message", "create_time", "update_time", "lease_expire_time", "trace_id", "parent_id", "shard_index", "shard_total", "priority", "selector", "target_worker", "hash_key", "retry_on", "run_id", "chained_from", "concurrency_value", "tags")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    APP_FIELD_NUMBER: _ClassVar[int]
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_TIME_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_TIME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULER_ID_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    FINISH_TIME_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_PERCENT_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    SHARD_INDEX_FIELD_NUMBER: _ClassVar[int]
    SHARD_TOTAL_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    TARGET_WORKER_FIELD_NUMBER: _ClassVar[int]
    HASH_KEY_FIELD_NUMBER: _ClassVar[int]
    RETRY_ON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CHAINED_FROM_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_VALUE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    id: int
    task_id: int
    task_name: str
    app: str
    handler: str
    params: str
    idempotency_key: str
    source: InstanceSource
    trigger_time: _timestamp_pb2.Timestamp
    available_time: _timestamp_pb2.Timestamp
    status: _types_pb2.InstanceStatus
    attempt: int
    max_retries: int
    failures: int
    worker_id: str
    session_id: str
    scheduler_id: str
    start_time: _timestamp_pb2.Timestamp
    finish_time: _timestamp_pb2.Timestamp
    deadline: _timestamp_pb2.Timestamp
    message: str
    output: str
    progress_percent: int
    progress_message: str
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    lease_expire_time: _timestamp_pb2.Timestamp
    trace_id: str
    parent_id: int
    shard_index: int
    shard_total: int
    priority: int
    selector: str
    target_worker: str
    hash_key: str
    retry_on: RetryTarget
    run_id: int
    chained_from: int
    concurrency_value: str
    tags: _containers.ScalarMap[str, str]
    def __init__(self, id: _Optional[int] = ..., task_id: _Optional[int] = ..., task_name: _Optional[str] = ..., app: _Optional[str] = ..., handler: _Optional[str] = ..., params: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., source: _Optional[_Union[InstanceSource, str]] = ..., trigger_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., available_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[_Union[_types_pb2.InstanceStatus, str]] = ..., attempt: _Optional[int] = ..., max_retries: _Optional[int] = ..., failures: _Optional[int] = ..., worker_id: _Optional[str] = ..., session_id: _Optional[str] = ..., scheduler_id: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finish_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message: _Optional[str] = ..., output: _Optional[str] = ..., progress_percent: _Optional[int] = ..., progress_message: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., lease_expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., trace_id: _Optional[str] = ..., parent_id: _Optional[int] = ..., shard_index: _Optional[int] = ..., shard_total: _Optional[int] = ..., priority: _Optional[int] = ..., selector: _Optional[str] = ..., target_worker: _Optional[str] = ..., hash_key: _Optional[str] = ..., retry_on: _Optional[_Union[RetryTarget, str]] = ..., run_id: _Optional[int] = ..., chained_from: _Optional[int] = ..., concurrency_value: _Optional[str] = ..., tags: _Optional[_Mapping[str, str]] = ...) -> None: ...

class InstanceEvent(_message.Message):
    __slots__ = ("time", "from_status", "to_status", "attempt", "scheduler_id", "worker_id", "reason")
    TIME_FIELD_NUMBER: _ClassVar[int]
    FROM_STATUS_FIELD_NUMBER: _ClassVar[int]
    TO_STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    SCHEDULER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    from_status: _types_pb2.InstanceStatus
    to_status: _types_pb2.InstanceStatus
    attempt: int
    scheduler_id: str
    worker_id: str
    reason: str
    def __init__(self, time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., from_status: _Optional[_Union[_types_pb2.InstanceStatus, str]] = ..., to_status: _Optional[_Union[_types_pb2.InstanceStatus, str]] = ..., attempt: _Optional[int] = ..., scheduler_id: _Optional[str] = ..., worker_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ListInstancesRequest(_message.Message):
    __slots__ = ("task_name", "status", "page_size", "page_token", "start_time", "end_time", "tags", "params")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    task_name: str
    status: _types_pb2.InstanceStatus
    page_size: int
    page_token: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    tags: _containers.ScalarMap[str, str]
    params: _containers.ScalarMap[str, str]
    def __init__(self, task_name: _Optional[str] = ..., status: _Optional[_Union[_types_pb2.InstanceStatus, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., tags: _Optional[_Mapping[str, str]] = ..., params: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ListInstancesResponse(_message.Message):
    __slots__ = ("instances", "next_page_token")
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    instances: _containers.RepeatedCompositeFieldContainer[Instance]
    next_page_token: str
    def __init__(self, instances: _Optional[_Iterable[_Union[Instance, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetInstanceRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class GetInstanceResponse(_message.Message):
    __slots__ = ("instance", "events", "children", "upstream", "downstream")
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    UPSTREAM_FIELD_NUMBER: _ClassVar[int]
    DOWNSTREAM_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    events: _containers.RepeatedCompositeFieldContainer[InstanceEvent]
    children: _containers.RepeatedCompositeFieldContainer[Instance]
    upstream: _containers.RepeatedCompositeFieldContainer[InstanceLink]
    downstream: _containers.RepeatedCompositeFieldContainer[InstanceLink]
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ..., events: _Optional[_Iterable[_Union[InstanceEvent, _Mapping]]] = ..., children: _Optional[_Iterable[_Union[Instance, _Mapping]]] = ..., upstream: _Optional[_Iterable[_Union[InstanceLink, _Mapping]]] = ..., downstream: _Optional[_Iterable[_Union[InstanceLink, _Mapping]]] = ...) -> None: ...

class InstanceLink(_message.Message):
    __slots__ = ("instance", "kind")
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    kind: LinkKind
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ..., kind: _Optional[_Union[LinkKind, str]] = ...) -> None: ...

class CancelInstanceRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: int
    reason: str
    def __init__(self, id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelInstanceResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class RetryInstanceRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class RetryInstanceResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class InstanceSelector(_message.Message):
    __slots__ = ("task_name", "app", "status", "start_time", "end_time", "max_id", "ids", "tags", "params")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    APP_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    MAX_ID_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    task_name: str
    app: str
    status: _types_pb2.InstanceStatus
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    max_id: int
    ids: _containers.RepeatedScalarFieldContainer[int]
    tags: _containers.ScalarMap[str, str]
    params: _containers.ScalarMap[str, str]
    def __init__(self, task_name: _Optional[str] = ..., app: _Optional[str] = ..., status: _Optional[_Union[_types_pb2.InstanceStatus, str]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., max_id: _Optional[int] = ..., ids: _Optional[_Iterable[int]] = ..., tags: _Optional[_Mapping[str, str]] = ..., params: _Optional[_Mapping[str, str]] = ...) -> None: ...

class BulkInstancesRequest(_message.Message):
    __slots__ = ("action", "selector", "dry_run", "max_instances", "reason")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    MAX_INSTANCES_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    action: BulkAction
    selector: InstanceSelector
    dry_run: bool
    max_instances: int
    reason: str
    def __init__(self, action: _Optional[_Union[BulkAction, str]] = ..., selector: _Optional[_Union[InstanceSelector, _Mapping]] = ..., dry_run: _Optional[bool] = ..., max_instances: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class BulkInstancesResponse(_message.Message):
    __slots__ = ("matched", "changed", "skipped", "max_id", "sample_ids")
    MATCHED_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    MAX_ID_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_IDS_FIELD_NUMBER: _ClassVar[int]
    matched: int
    changed: int
    skipped: int
    max_id: int
    sample_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, matched: _Optional[int] = ..., changed: _Optional[int] = ..., skipped: _Optional[int] = ..., max_id: _Optional[int] = ..., sample_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class GetInstanceLogsRequest(_message.Message):
    __slots__ = ("id", "after_seq", "limit")
    ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    id: int
    after_seq: int
    limit: int
    def __init__(self, id: _Optional[int] = ..., after_seq: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class LogLine(_message.Message):
    __slots__ = ("seq", "attempt", "level", "time", "message")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    seq: int
    attempt: int
    level: _types_pb2.LogLevel
    time: _timestamp_pb2.Timestamp
    message: str
    def __init__(self, seq: _Optional[int] = ..., attempt: _Optional[int] = ..., level: _Optional[_Union[_types_pb2.LogLevel, str]] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message: _Optional[str] = ...) -> None: ...

class GetInstanceLogsResponse(_message.Message):
    __slots__ = ("lines", "dropped")
    LINES_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    lines: _containers.RepeatedCompositeFieldContainer[LogLine]
    dropped: int
    def __init__(self, lines: _Optional[_Iterable[_Union[LogLine, _Mapping]]] = ..., dropped: _Optional[int] = ...) -> None: ...

class WatchInstanceRequest(_message.Message):
    __slots__ = ("id", "logs")
    ID_FIELD_NUMBER: _ClassVar[int]
    LOGS_FIELD_NUMBER: _ClassVar[int]
    id: int
    logs: bool
    def __init__(self, id: _Optional[int] = ..., logs: _Optional[bool] = ...) -> None: ...

class WatchInstanceResponse(_message.Message):
    __slots__ = ("instance", "events", "lines", "done")
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    events: _containers.RepeatedCompositeFieldContainer[InstanceEvent]
    lines: _containers.RepeatedCompositeFieldContainer[LogLine]
    done: bool
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ..., events: _Optional[_Iterable[_Union[InstanceEvent, _Mapping]]] = ..., lines: _Optional[_Iterable[_Union[LogLine, _Mapping]]] = ..., done: _Optional[bool] = ...) -> None: ...

class ExplainTaskRequest(_message.Message):
    __slots__ = ("name", "at", "limit")
    NAME_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    name: str
    at: _timestamp_pb2.Timestamp
    limit: int
    def __init__(self, name: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class ExplainFinding(_message.Message):
    __slots__ = ("kind", "time", "message", "instance_id", "fires")
    KIND_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    FIRES_FIELD_NUMBER: _ClassVar[int]
    kind: ExplainFindingKind
    time: _timestamp_pb2.Timestamp
    message: str
    instance_id: int
    fires: FireSpan
    def __init__(self, kind: _Optional[_Union[ExplainFindingKind, str]] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message: _Optional[str] = ..., instance_id: _Optional[int] = ..., fires: _Optional[_Union[FireSpan, _Mapping]] = ...) -> None: ...

class ExplainedAttempt(_message.Message):
    __slots__ = ("attempt", "worker_id", "dispatch_time", "start_time", "end_time", "outcome", "reason")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    DISPATCH_TIME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    worker_id: str
    dispatch_time: _timestamp_pb2.Timestamp
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    outcome: _types_pb2.InstanceStatus
    reason: str
    def __init__(self, attempt: _Optional[int] = ..., worker_id: _Optional[str] = ..., dispatch_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., outcome: _Optional[_Union[_types_pb2.InstanceStatus, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class ExplainedFire(_message.Message):
    __slots__ = ("instance", "dispatch_delay", "waited_for", "attempts")
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    DISPATCH_DELAY_FIELD_NUMBER: _ClassVar[int]
    WAITED_FOR_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    dispatch_delay: _duration_pb2.Duration
    waited_for: str
    attempts: _containers.RepeatedCompositeFieldContainer[ExplainedAttempt]
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ..., dispatch_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., waited_for: _Optional[str] = ..., attempts: _Optional[_Iterable[_Union[ExplainedAttempt, _Mapping]]] = ...) -> None: ...

class ExplainWorkers(_message.Message):
    __slots__ = ("sessions", "serving", "capacity", "free_credits")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    SERVING_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    FREE_CREDITS_FIELD_NUMBER: _ClassVar[int]
    sessions: int
    serving: int
    capacity: int
    free_credits: int
    def __init__(self, sessions: _Optional[int] = ..., serving: _Optional[int] = ..., capacity: _Optional[int] = ..., free_credits: _Optional[int] = ...) -> None: ...

class ExplainTaskResponse(_message.Message):
    __slots__ = ("task", "at", "findings", "next_fires", "recent", "events", "workers")
    TASK_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIRES_FIELD_NUMBER: _ClassVar[int]
    RECENT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    task: Task
    at: _timestamp_pb2.Timestamp
    findings: _containers.RepeatedCompositeFieldContainer[ExplainFinding]
    next_fires: _containers.RepeatedCompositeFieldContainer[Fire]
    recent: _containers.RepeatedCompositeFieldContainer[ExplainedFire]
    events: _containers.RepeatedCompositeFieldContainer[TaskEvent]
    workers: ExplainWorkers
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., findings: _Optional[_Iterable[_Union[ExplainFinding, _Mapping]]] = ..., next_fires: _Optional[_Iterable[_Union[Fire, _Mapping]]] = ..., recent: _Optional[_Iterable[_Union[ExplainedFire, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[TaskEvent, _Mapping]]] = ..., workers: _Optional[_Union[ExplainWorkers, _Mapping]] = ...) -> None: ...

class ListWorkersRequest(_message.Message):
    __slots__ = ("app",)
    APP_FIELD_NUMBER: _ClassVar[int]
    app: str
    def __init__(self, app: _Optional[str] = ...) -> None: ...

class WorkerSession(_message.Message):
    __slots__ = ("session_id", "worker_id", "app", "handlers", "capacity", "credits", "in_flight", "labels", "scheduler_id", "client", "connect_time", "last_seen_time", "cooldowns")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    APP_FIELD_NUMBER: _ClassVar[int]
    HANDLERS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    CREDITS_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    SCHEDULER_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    CONNECT_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_SEEN_TIME_FIELD_NUMBER: _ClassVar[int]
    COOLDOWNS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    worker_id: str
    app: str
    handlers: _containers.RepeatedScalarFieldContainer[str]
    capacity: int
    credits: int
    in_flight: int
    labels: _containers.ScalarMap[str, str]
    scheduler_id: str
    client: str
    connect_time: _timestamp_pb2.Timestamp
    last_seen_time: _timestamp_pb2.Timestamp
    cooldowns: _containers.RepeatedCompositeFieldContainer[WorkerCooldown]
    def __init__(self, session_id: _Optional[str] = ..., worker_id: _Optional[str] = ..., app: _Optional[str] = ..., handlers: _Optional[_Iterable[str]] = ..., capacity: _Optional[int] = ..., credits: _Optional[int] = ..., in_flight: _Optional[int] = ..., labels: _Optional[_Mapping[str, str]] = ..., scheduler_id: _Optional[str] = ..., client: _Optional[str] = ..., connect_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_seen_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., cooldowns: _Optional[_Iterable[_Union[WorkerCooldown, _Mapping]]] = ...) -> None: ...

class WorkerCooldown(_message.Message):
    __slots__ = ("handler", "consecutive_failures", "until")
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    handler: str
    consecutive_failures: int
    until: _timestamp_pb2.Timestamp
    def __init__(self, handler: _Optional[str] = ..., consecutive_failures: _Optional[int] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListWorkersResponse(_message.Message):
    __slots__ = ("workers",)
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    workers: _containers.RepeatedCompositeFieldContainer[WorkerSession]
    def __init__(self, workers: _Optional[_Iterable[_Union[WorkerSession, _Mapping]]] = ...) -> None: ...

class ListSchedulersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SchedulerNode(_message.Message):
    __slots__ = ("scheduler_id", "host", "address", "version", "start_time", "heartbeat_time", "workers", "alive", "worker_ids")
    SCHEDULER_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_TIME_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    ALIVE_FIELD_NUMBER: _ClassVar[int]
    WORKER_IDS_FIELD_NUMBER: _ClassVar[int]
    scheduler_id: str
    host: str
    address: str
    version: str
    start_time: _timestamp_pb2.Timestamp
    heartbeat_time: _timestamp_pb2.Timestamp
    workers: int
    alive: bool
    worker_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, scheduler_id: _Optional[str] = ..., host: _Optional[str] = ..., address: _Optional[str] = ..., version: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., heartbeat_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., workers: _Optional[int] = ..., alive: _Optional[bool] = ..., worker_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ListSchedulersResponse(_message.Message):
    __slots__ = ("schedulers",)
    SCHEDULERS_FIELD_NUMBER: _ClassVar[int]
    schedulers: _containers.RepeatedCompositeFieldContainer[SchedulerNode]
    def __init__(self, schedulers: _Optional[_Iterable[_Union[SchedulerNode, _Mapping]]] = ...) -> None: ...

class GetClusterStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StatusCount(_message.Message):
    __slots__ = ("status", "count")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    status: _types_pb2.InstanceStatus
    count: int
    def __init__(self, status: _Optional[_Union[_types_pb2.InstanceStatus, str]] = ..., count: _Optional[int] = ...) -> None: ...

class GetClusterStatsResponse(_message.Message):
    __slots__ = ("tasks", "enabled_tasks", "instances", "workers", "schedulers", "answered_by")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    ENABLED_TASKS_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    SCHEDULERS_FIELD_NUMBER: _ClassVar[int]
    ANSWERED_BY_FIELD_NUMBER: _ClassVar[int]
    tasks: int
    enabled_tasks: int
    instances: _containers.RepeatedCompositeFieldContainer[StatusCount]
    workers: int
    schedulers: int
    answered_by: SchedulerHealth
    def __init__(self, tasks: _Optional[int] = ..., enabled_tasks: _Optional[int] = ..., instances: _Optional[_Iterable[_Union[StatusCount, _Mapping]]] = ..., workers: _Optional[int] = ..., schedulers: _Optional[int] = ..., answered_by: _Optional[_Union[SchedulerHealth, _Mapping]] = ...) -> None: ...

class SchedulerHealth(_message.Message):
    __slots__ = ("scheduler_id", "serving", "loops", "stall_after", "clock_offset")
    SCHEDULER_ID_FIELD_NUMBER: _ClassVar[int]
    SERVING_FIELD_NUMBER: _ClassVar[int]
    LOOPS_FIELD_NUMBER: _ClassVar[int]
    STALL_AFTER_FIELD_NUMBER: _ClassVar[int]
    CLOCK_OFFSET_FIELD_NUMBER: _ClassVar[int]
    scheduler_id: str
    serving: bool
    loops: _containers.RepeatedCompositeFieldContainer[LoopHealth]
    stall_after: _duration_pb2.Duration
    clock_offset: _duration_pb2.Duration
    def __init__(self, scheduler_id: _Optional[str] = ..., serving: _Optional[bool] = ..., loops: _Optional[_Iterable[_Union[LoopHealth, _Mapping]]] = ..., stall_after: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., clock_offset: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class LoopHealth(_message.Message):
    __slots__ = ("name", "since_last_round", "stalled")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SINCE_LAST_ROUND_FIELD_NUMBER: _ClassVar[int]
    STALLED_FIELD_NUMBER: _ClassVar[int]
    name: str
    since_last_round: _duration_pb2.Duration
    stalled: bool
    def __init__(self, name: _Optional[str] = ..., since_last_round: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., stalled: _Optional[bool] = ...) -> None: ...

class AuditEntry(_message.Message):
    __slots__ = ("id", "time", "actor", "rpc", "target", "app", "outcome", "detail", "before_json", "after_json")
    ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    RPC_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    APP_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    BEFORE_JSON_FIELD_NUMBER: _ClassVar[int]
    AFTER_JSON_FIELD_NUMBER: _ClassVar[int]
    id: int
    time: _timestamp_pb2.Timestamp
    actor: str
    rpc: str
    target: str
    app: str
    outcome: str
    detail: str
    before_json: str
    after_json: str
    def __init__(self, id: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., actor: _Optional[str] = ..., rpc: _Optional[str] = ..., target: _Optional[str] = ..., app: _Optional[str] = ..., outcome: _Optional[str] = ..., detail: _Optional[str] = ..., before_json: _Optional[str] = ..., after_json: _Optional[str] = ...) -> None: ...

class ListAuditEntriesRequest(_message.Message):
    __slots__ = ("actor", "target", "rpc", "start_time", "end_time", "page_size", "page_token")
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    RPC_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    actor: str
    target: str
    rpc: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    page_size: int
    page_token: str
    def __init__(self, actor: _Optional[str] = ..., target: _Optional[str] = ..., rpc: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAuditEntriesResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[AuditEntry]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[AuditEntry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class AlertRuleSpec(_message.Message):
    __slots__ = ("name", "app", "task", "events", "url", "secret", "no_worker_for", "backlog_over")
    NAME_FIELD_NUMBER: _ClassVar[int]
    APP_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    NO_WORKER_FOR_FIELD_NUMBER: _ClassVar[int]
    BACKLOG_OVER_FIELD_NUMBER: _ClassVar[int]
    name: str
    app: str
    task: str
    events: _containers.RepeatedScalarFieldContainer[str]
    url: str
    secret: str
    no_worker_for: _duration_pb2.Duration
    backlog_over: int
    def __init__(self, name: _Optional[str] = ..., app: _Optional[str] = ..., task: _Optional[str] = ..., events: _Optional[_Iterable[str]] = ..., url: _Optional[str] = ..., secret: _Optional[str] = ..., no_worker_for: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., backlog_over: _Optional[int] = ...) -> None: ...

class AlertRule(_message.Message):
    __slots__ = ("name", "app", "task", "events", "url", "no_worker_for", "backlog_over", "created_by", "create_time")
    NAME_FIELD_NUMBER: _ClassVar[int]
    APP_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    NO_WORKER_FOR_FIELD_NUMBER: _ClassVar[int]
    BACKLOG_OVER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    name: str
    app: str
    task: str
    events: _containers.RepeatedScalarFieldContainer[str]
    url: str
    no_worker_for: _duration_pb2.Duration
    backlog_over: int
    created_by: str
    create_time: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., app: _Optional[str] = ..., task: _Optional[str] = ..., events: _Optional[_Iterable[str]] = ..., url: _Optional[str] = ..., no_worker_for: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., backlog_over: _Optional[int] = ..., created_by: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateAlertRuleRequest(_message.Message):
    __slots__ = ("rule",)
    RULE_FIELD_NUMBER: _ClassVar[int]
    rule: AlertRuleSpec
    def __init__(self, rule: _Optional[_Union[AlertRuleSpec, _Mapping]] = ...) -> None: ...

class CreateAlertRuleResponse(_message.Message):
    __slots__ = ("rule",)
    RULE_FIELD_NUMBER: _ClassVar[int]
    rule: AlertRule
    def __init__(self, rule: _Optional[_Union[AlertRule, _Mapping]] = ...) -> None: ...

class ListAlertRulesRequest(_message.Message):
    __slots__ = ("app",)
    APP_FIELD_NUMBER: _ClassVar[int]
    app: str
    def __init__(self, app: _Optional[str] = ...) -> None: ...

class ListAlertRulesResponse(_message.Message):
    __slots__ = ("rules",)
    RULES_FIELD_NUMBER: _ClassVar[int]
    rules: _containers.RepeatedCompositeFieldContainer[AlertRule]
    def __init__(self, rules: _Optional[_Iterable[_Union[AlertRule, _Mapping]]] = ...) -> None: ...

class DeleteAlertRuleRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteAlertRuleResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TestAlertRuleRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class TestAlertRuleResponse(_message.Message):
    __slots__ = ("delivery_id",)
    DELIVERY_ID_FIELD_NUMBER: _ClassVar[int]
    delivery_id: int
    def __init__(self, delivery_id: _Optional[int] = ...) -> None: ...

class AlertDelivery(_message.Message):
    __slots__ = ("id", "rule", "app", "task", "event", "status", "attempts", "next_attempt_time", "last_error", "create_time", "finish_time", "body", "url")
    ID_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    APP_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    FINISH_TIME_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    id: int
    rule: str
    app: str
    task: str
    event: str
    status: str
    attempts: int
    next_attempt_time: _timestamp_pb2.Timestamp
    last_error: str
    create_time: _timestamp_pb2.Timestamp
    finish_time: _timestamp_pb2.Timestamp
    body: str
    url: str
    def __init__(self, id: _Optional[int] = ..., rule: _Optional[str] = ..., app: _Optional[str] = ..., task: _Optional[str] = ..., event: _Optional[str] = ..., status: _Optional[str] = ..., attempts: _Optional[int] = ..., next_attempt_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_error: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finish_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., body: _Optional[str] = ..., url: _Optional[str] = ...) -> None: ...

class ListAlertDeliveriesRequest(_message.Message):
    __slots__ = ("rule", "status", "page_size", "page_token")
    RULE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    rule: str
    status: str
    page_size: int
    page_token: str
    def __init__(self, rule: _Optional[str] = ..., status: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAlertDeliveriesResponse(_message.Message):
    __slots__ = ("deliveries", "next_page_token")
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    deliveries: _containers.RepeatedCompositeFieldContainer[AlertDelivery]
    next_page_token: str
    def __init__(self, deliveries: _Optional[_Iterable[_Union[AlertDelivery, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class AppLimit(_message.Message):
    __slots__ = ("app", "per_second", "burst", "tokens", "updated_by", "update_time")
    APP_FIELD_NUMBER: _ClassVar[int]
    PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    BURST_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_BY_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    app: str
    per_second: float
    burst: int
    tokens: float
    updated_by: str
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, app: _Optional[str] = ..., per_second: _Optional[float] = ..., burst: _Optional[int] = ..., tokens: _Optional[float] = ..., updated_by: _Optional[str] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SetAppLimitRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: AppLimit
    def __init__(self, limit: _Optional[_Union[AppLimit, _Mapping]] = ...) -> None: ...

class SetAppLimitResponse(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: AppLimit
    def __init__(self, limit: _Optional[_Union[AppLimit, _Mapping]] = ...) -> None: ...

class ListAppLimitsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListAppLimitsResponse(_message.Message):
    __slots__ = ("limits",)
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    limits: _containers.RepeatedCompositeFieldContainer[AppLimit]
    def __init__(self, limits: _Optional[_Iterable[_Union[AppLimit, _Mapping]]] = ...) -> None: ...

class DeleteAppLimitRequest(_message.Message):
    __slots__ = ("app",)
    APP_FIELD_NUMBER: _ClassVar[int]
    app: str
    def __init__(self, app: _Optional[str] = ...) -> None: ...

class DeleteAppLimitResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PauseTaskRequest(_message.Message):
    __slots__ = ("name", "note", "until")
    NAME_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    name: str
    note: str
    until: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., note: _Optional[str] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PauseTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: Task
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ...) -> None: ...

class ResumeTaskRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ResumeTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: Task
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ...) -> None: ...

class BackfillTaskRequest(_message.Message):
    __slots__ = ("name", "to", "dry_run")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    name: str
    to: _timestamp_pb2.Timestamp
    dry_run: bool
    def __init__(self, name: _Optional[str] = ..., to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., dry_run: _Optional[bool] = ..., **kwargs) -> None: ...

class BackfilledFire(_message.Message):
    __slots__ = ("time", "instance_id", "created")
    TIME_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    instance_id: int
    created: bool
    def __init__(self, time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., instance_id: _Optional[int] = ..., created: _Optional[bool] = ...) -> None: ...

class BackfillTaskResponse(_message.Message):
    __slots__ = ("fires", "created")
    FIRES_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    fires: _containers.RepeatedCompositeFieldContainer[BackfilledFire]
    created: int
    def __init__(self, fires: _Optional[_Iterable[_Union[BackfilledFire, _Mapping]]] = ..., created: _Optional[int] = ...) -> None: ...

class Calendar(_message.Message):
    __slots__ = ("name", "description", "dates", "created_by", "create_time", "updated_by", "update_time")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DATES_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATED_BY_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    dates: _containers.RepeatedScalarFieldContainer[str]
    created_by: str
    create_time: _timestamp_pb2.Timestamp
    updated_by: str
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., dates: _Optional[_Iterable[str]] = ..., created_by: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_by: _Optional[str] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateCalendarRequest(_message.Message):
    __slots__ = ("calendar",)
    CALENDAR_FIELD_NUMBER: _ClassVar[int]
    calendar: Calendar
    def __init__(self, calendar: _Optional[_Union[Calendar, _Mapping]] = ...) -> None: ...

class CreateCalendarResponse(_message.Message):
    __slots__ = ("calendar",)
    CALENDAR_FIELD_NUMBER: _ClassVar[int]
    calendar: Calendar
    def __init__(self, calendar: _Optional[_Union[Calendar, _Mapping]] = ...) -> None: ...

class UpdateCalendarRequest(_message.Message):
    __slots__ = ("calendar",)
    CALENDAR_FIELD_NUMBER: _ClassVar[int]
    calendar: Calendar
    def __init__(self, calendar: _Optional[_Union[Calendar, _Mapping]] = ...) -> None: ...

class UpdateCalendarResponse(_message.Message):
    __slots__ = ("calendar",)
    CALENDAR_FIELD_NUMBER: _ClassVar[int]
    calendar: Calendar
    def __init__(self, calendar: _Optional[_Union[Calendar, _Mapping]] = ...) -> None: ...

class GetCalendarRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetCalendarResponse(_message.Message):
    __slots__ = ("calendar", "tasks")
    CALENDAR_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    calendar: Calendar
    tasks: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, calendar: _Optional[_Union[Calendar, _Mapping]] = ..., tasks: _Optional[_Iterable[str]] = ...) -> None: ...

class ListCalendarsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListCalendarsResponse(_message.Message):
    __slots__ = ("calendars",)
    CALENDARS_FIELD_NUMBER: _ClassVar[int]
    calendars: _containers.RepeatedCompositeFieldContainer[Calendar]
    def __init__(self, calendars: _Optional[_Iterable[_Union[Calendar, _Mapping]]] = ...) -> None: ...

class DeleteCalendarRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteCalendarResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: int
    def __init__(self, run_id: _Optional[int] = ...) -> None: ...

class RunEdge(_message.Message):
    __slots__ = ("from_instance_id", "to_instance_id", "kind")
    FROM_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    TO_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    from_instance_id: int
    to_instance_id: int
    kind: LinkKind
    def __init__(self, from_instance_id: _Optional[int] = ..., to_instance_id: _Optional[int] = ..., kind: _Optional[_Union[LinkKind, str]] = ...) -> None: ...

class GetRunResponse(_message.Message):
    __slots__ = ("run_id", "instances", "edges")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    run_id: int
    instances: _containers.RepeatedCompositeFieldContainer[Instance]
    edges: _containers.RepeatedCompositeFieldContainer[RunEdge]
    def __init__(self, run_id: _Optional[int] = ..., instances: _Optional[_Iterable[_Union[Instance, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[RunEdge, _Mapping]]] = ...) -> None: ...
