"""Calls of axd's AdminService a program makes beside its workers (README "Trigger and wait").

    import grpc
    from ax_worker.admin import trigger_and_wait

    async with grpc.aio.insecure_channel("127.0.0.1:7070") as channel:
        done = await trigger_and_wait(channel, "resize", params='{"image":"a.png"}', wait=120)
        if done.done:
            print(done.instance.status, done.instance.output)

The instance is created before the wait begins: when the wait runs out (``done`` is False) it
still runs. axd answers a waiting call before its own call limit (``--request-timeout``, 30 s by
default); until ``wait`` has passed this calls again with the instance's idempotency key, which
waits on for the same instance and creates nothing."""

from __future__ import annotations

import time
from typing import Any, Optional

from google.protobuf import duration_pb2

from ._proto import admin_pb2, admin_pb2_grpc

# The longest wait axd takes (TriggerTaskRequest.wait).
MAX_WAIT = 600.0


async def trigger_and_wait(
    channel: Any,
    name: str,
    *,
    wait: float,
    params: Optional[str] = None,
    idempotency_key: str = "",
    stub: Any = None,
    clock: Any = time.monotonic,
) -> admin_pb2.TriggerTaskResponse:
    """Triggers task ``name`` and waits up to ``wait`` seconds (at most 600) for its instance to
    be final. Returns axd's TriggerTaskResponse: ``done`` says whether the instance is final,
    ``instance`` holds its status, output and message, ``created`` whether this call made it (False
    when ``idempotency_key`` had an instance already, which is then the one waited for).

    ``channel`` is a ``grpc.aio`` channel to axd (with the caller's credentials); ``stub`` and
    ``clock`` replace the generated stub and the monotonic clock in tests."""
    if not 0 < wait <= MAX_WAIT:
        raise ValueError(f"wait: {wait} s is not within (0, {MAX_WAIT:.0f}] seconds")
    admin = stub if stub is not None else admin_pb2_grpc.AdminServiceStub(channel)
    until = clock() + wait
    request = admin_pb2.TriggerTaskRequest(name=name, idempotency_key=idempotency_key)
    if params is not None:
        request.params = params
    created: Optional[bool] = None
    while True:
        left = max(until - clock(), 0.001)
        request.wait.CopyFrom(duration_pb2.Duration(seconds=int(left), nanos=int((left % 1) * 1e9)))
        response = await admin.TriggerTask(request)
        if created is None:
            created = response.created
        if response.done or clock() >= until:
            response.created = created
            return response
        # axd answered before its call limit: wait on for the same instance, by its key.
        request.idempotency_key = response.instance.idempotency_key
