from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class InstanceStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INSTANCE_STATUS_UNSPECIFIED: _ClassVar[InstanceStatus]
    INSTANCE_STATUS_PENDING: _ClassVar[InstanceStatus]
    INSTANCE_STATUS_DISPATCHED: _ClassVar[InstanceStatus]
    INSTANCE_STATUS_RUNNING: _ClassVar[InstanceStatus]
    INSTANCE_STATUS_SUCCESS: _ClassVar[InstanceStatus]
    INSTANCE_STATUS_FAILED: _ClassVar[InstanceStatus]
    INSTANCE_STATUS_TIMEOUT: _ClassVar[InstanceStatus]
    INSTANCE_STATUS_CANCELED: _ClassVar[InstanceStatus]
    INSTANCE_STATUS_SKIPPED: _ClassVar[InstanceStatus]
    INSTANCE_STATUS_WAITING: _ClassVar[InstanceStatus]

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTCOME_UNSPECIFIED: _ClassVar[Outcome]
    OUTCOME_SUCCESS: _ClassVar[Outcome]
    OUTCOME_FAILED: _ClassVar[Outcome]

class LogLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LOG_LEVEL_UNSPECIFIED: _ClassVar[LogLevel]
    LOG_LEVEL_DEBUG: _ClassVar[LogLevel]
    LOG_LEVEL_INFO: _ClassVar[LogLevel]
    LOG_LEVEL_WARN: _ClassVar[LogLevel]
    LOG_LEVEL_ERROR: _ClassVar[LogLevel]
INSTANCE_STATUS_UNSPECIFIED: InstanceStatus
INSTANCE_STATUS_PENDING: InstanceStatus
INSTANCE_STATUS_DISPATCHED: InstanceStatus
INSTANCE_STATUS_RUNNING: InstanceStatus
INSTANCE_STATUS_SUCCESS: InstanceStatus
INSTANCE_STATUS_FAILED: InstanceStatus
INSTANCE_STATUS_TIMEOUT: InstanceStatus
INSTANCE_STATUS_CANCELED: InstanceStatus
INSTANCE_STATUS_SKIPPED: InstanceStatus
INSTANCE_STATUS_WAITING: InstanceStatus
OUTCOME_UNSPECIFIED: Outcome
OUTCOME_SUCCESS: Outcome
OUTCOME_FAILED: Outcome
LOG_LEVEL_UNSPECIFIED: LogLevel
LOG_LEVEL_DEBUG: LogLevel
LOG_LEVEL_INFO: LogLevel
LOG_LEVEL_WARN: LogLevel
LOG_LEVEL_ERROR: LogLevel

class InstanceAttempt(_message.Message):
    __slots__ = ("instance_id", "attempt")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    instance_id: int
    attempt: int
    def __init__(self, instance_id: _Optional[int] = ..., attempt: _Optional[int] = ...) -> None: ...
