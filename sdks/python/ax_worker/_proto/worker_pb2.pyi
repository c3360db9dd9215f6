import datetime

from . import types_pb2 as _types_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WorkerMessage(_message.Message):
    __slots__ = ("hello", "heartbeat", "credit", "accepted", "reject", "progress", "log", "result")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    CREDIT_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    REJECT_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    heartbeat: Heartbeat
    credit: Credit
    accepted: Accepted
    reject: Reject
    progress: Progress
    log: Log
    result: Result
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., credit: _Optional[_Union[Credit, _Mapping]] = ..., accepted: _Optional[_Union[Accepted, _Mapping]] = ..., reject: _Optional[_Union[Reject, _Mapping]] = ..., progress: _Optional[_Union[Progress, _Mapping]] = ..., log: _Optional[_Union[Log, _Mapping]] = ..., result: _Optional[_Union[Result, _Mapping]] = ...) -> None: ...

class SchedulerMessage(_message.Message):
    __slots__ = ("welcome", "assign", "cancel", "result_ack", "drain", "heartbeat")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    ASSIGN_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    RESULT_ACK_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    assign: Assign
    cancel: Cancel
    result_ack: ResultAck
    drain: Drain
    heartbeat: SchedulerHeartbeat
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., assign: _Optional[_Union[Assign, _Mapping]] = ..., cancel: _Optional[_Union[Cancel, _Mapping]] = ..., result_ack: _Optional[_Union[ResultAck, _Mapping]] = ..., drain: _Optional[_Union[Drain, _Mapping]] = ..., heartbeat: _Optional[_Union[SchedulerHeartbeat, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("app", "worker_id", "handlers", "capacity", "labels", "in_flight", "client", "initial_credits", "start_after_supported")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    APP_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    HANDLERS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    INITIAL_CREDITS_FIELD_NUMBER: _ClassVar[int]
    START_AFTER_SUPPORTED_FIELD_NUMBER: _ClassVar[int]
    app: str
    worker_id: str
    handlers: _containers.RepeatedScalarFieldContainer[str]
    capacity: int
    labels: _containers.ScalarMap[str, str]
    in_flight: _containers.RepeatedCompositeFieldContainer[_types_pb2.InstanceAttempt]
    client: str
    initial_credits: int
    start_after_supported: bool
    def __init__(self, app: _Optional[str] = ..., worker_id: _Optional[str] = ..., handlers: _Optional[_Iterable[str]] = ..., capacity: _Optional[int] = ..., labels: _Optional[_Mapping[str, str]] = ..., in_flight: _Optional[_Iterable[_Union[_types_pb2.InstanceAttempt, _Mapping]]] = ..., client: _Optional[str] = ..., initial_credits: _Optional[int] = ..., start_after_supported: _Optional[bool] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ("running", "seq")
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    running: int
    seq: int
    def __init__(self, running: _Optional[int] = ..., seq: _Optional[int] = ...) -> None: ...

class Credit(_message.Message):
    __slots__ = ("grant", "reset")
    GRANT_FIELD_NUMBER: _ClassVar[int]
    RESET_FIELD_NUMBER: _ClassVar[int]
    grant: int
    reset: bool
    def __init__(self, grant: _Optional[int] = ..., reset: _Optional[bool] = ...) -> None: ...

class Accepted(_message.Message):
    __slots__ = ("instance_id", "attempt")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    instance_id: int
    attempt: int
    def __init__(self, instance_id: _Optional[int] = ..., attempt: _Optional[int] = ...) -> None: ...

class Reject(_message.Message):
    __slots__ = ("instance_id", "attempt", "reason")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    instance_id: int
    attempt: int
    reason: str
    def __init__(self, instance_id: _Optional[int] = ..., attempt: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Progress(_message.Message):
    __slots__ = ("instance_id", "attempt", "percent", "message")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    PERCENT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    instance_id: int
    attempt: int
    percent: int
    message: str
    def __init__(self, instance_id: _Optional[int] = ..., attempt: _Optional[int] = ..., percent: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class Log(_message.Message):
    __slots__ = ("instance_id", "attempt", "level", "message", "at")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    instance_id: int
    attempt: int
    level: _types_pb2.LogLevel
    message: str
    at: _timestamp_pb2.Timestamp
    def __init__(self, instance_id: _Optional[int] = ..., attempt: _Optional[int] = ..., level: _Optional[_Union[_types_pb2.LogLevel, str]] = ..., message: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Result(_message.Message):
    __slots__ = ("instance_id", "attempt", "outcome", "message", "output", "retryable", "finished_at")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    instance_id: int
    attempt: int
    outcome: _types_pb2.Outcome
    message: str
    output: str
    retryable: bool
    finished_at: _timestamp_pb2.Timestamp
    def __init__(self, instance_id: _Optional[int] = ..., attempt: _Optional[int] = ..., outcome: _Optional[_Union[_types_pb2.Outcome, str]] = ..., message: _Optional[str] = ..., output: _Optional[str] = ..., retryable: _Optional[bool] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("session_id", "scheduler_id", "heartbeat_interval", "adopted", "released", "lost_worker_grace", "lease_ttl", "fence_margin", "ack_timeout", "server_time", "max_message_size")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULER_ID_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    ADOPTED_FIELD_NUMBER: _ClassVar[int]
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    LOST_WORKER_GRACE_FIELD_NUMBER: _ClassVar[int]
    LEASE_TTL_FIELD_NUMBER: _ClassVar[int]
    FENCE_MARGIN_FIELD_NUMBER: _ClassVar[int]
    ACK_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    SERVER_TIME_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    scheduler_id: str
    heartbeat_interval: _duration_pb2.Duration
    adopted: _containers.RepeatedCompositeFieldContainer[_types_pb2.InstanceAttempt]
    released: _containers.RepeatedCompositeFieldContainer[_types_pb2.InstanceAttempt]
    lost_worker_grace: _duration_pb2.Duration
    lease_ttl: _duration_pb2.Duration
    fence_margin: _duration_pb2.Duration
    ack_timeout: _duration_pb2.Duration
    server_time: _timestamp_pb2.Timestamp
    max_message_size: int
    def __init__(self, session_id: _Optional[str] = ..., scheduler_id: _Optional[str] = ..., heartbeat_interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., adopted: _Optional[_Iterable[_Union[_types_pb2.InstanceAttempt, _Mapping]]] = ..., released: _Optional[_Iterable[_Union[_types_pb2.InstanceAttempt, _Mapping]]] = ..., lost_worker_grace: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., lease_ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., fence_margin: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., ack_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., server_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., max_message_size: _Optional[int] = ...) -> None: ...

class SchedulerHeartbeat(_message.Message):
    __slots__ = ("renewed_seq", "server_time")
    RENEWED_SEQ_FIELD_NUMBER: _ClassVar[int]
    SERVER_TIME_FIELD_NUMBER: _ClassVar[int]
    renewed_seq: int
    server_time: _timestamp_pb2.Timestamp
    def __init__(self, renewed_seq: _Optional[int] = ..., server_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Assign(_message.Message):
    __slots__ = ("instance_id", "attempt", "task_name", "handler", "params", "trigger_time", "timeout", "idempotency_key", "start_after", "accept_by", "traceparent", "shard_index", "shard_total")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_TIME_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    START_AFTER_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_BY_FIELD_NUMBER: _ClassVar[int]
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    SHARD_INDEX_FIELD_NUMBER: _ClassVar[int]
    SHARD_TOTAL_FIELD_NUMBER: _ClassVar[int]
    instance_id: int
    attempt: int
    task_name: str
    handler: str
    params: str
    trigger_time: _timestamp_pb2.Timestamp
    timeout: _duration_pb2.Duration
    idempotency_key: str
    start_after: _duration_pb2.Duration
    accept_by: _timestamp_pb2.Timestamp
    traceparent: str
    shard_index: int
    shard_total: int
    def __init__(self, instance_id: _Optional[int] = ..., attempt: _Optional[int] = ..., task_name: _Optional[str] = ..., handler: _Optional[str] = ..., params: _Optional[str] = ..., trigger_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., idempotency_key: _Optional[str] = ..., start_after: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., accept_by: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., traceparent: _Optional[str] = ..., shard_index: _Optional[int] = ..., shard_total: _Optional[int] = ...) -> None: ...

class Cancel(_message.Message):
    __slots__ = ("instance_id", "attempt", "reason")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    instance_id: int
    attempt: int
    reason: str
    def __init__(self, instance_id: _Optional[int] = ..., attempt: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class ResultAck(_message.Message):
    __slots__ = ("instance_id", "attempt", "applied", "note")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    instance_id: int
    attempt: int
    applied: bool
    note: str
    def __init__(self, instance_id: _Optional[int] = ..., attempt: _Optional[int] = ..., applied: _Optional[bool] = ..., note: _Optional[str] = ...) -> None: ...

class Drain(_message.Message):
    __slots__ = ("reason", "deadline")
    REASON_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    reason: str
    deadline: _duration_pb2.Duration
    def __init__(self, reason: _Optional[str] = ..., deadline: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...
