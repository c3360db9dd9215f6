"""What a handler sees: the Context of the attempt it runs, and HandlerError to fail it."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Optional, Tuple, Union

from ._lease import Lease

__all__ = ["Context", "HandlerError", "LogLevel"]


class HandlerError(Exception):
    """Raise it from a handler to end the attempt FAILED with `message`.

    `retryable=True` lets the task's retry policy run the instance again; the default, False, says
    retrying cannot help (bad params, say). Any other exception a handler raises also fails the
    attempt, as retryable, with the exception's text.
    """

    def __init__(self, message: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable

    def __repr__(self) -> str:
        return f"HandlerError({self.message!r}, retryable={self.retryable})"


#: A log level: "debug", "info", "warn" (or "warning"), "error", in any case, or a `logging` level
#: number (logging.INFO, ...).
LogLevel = Union[str, int]

_LEVELS = {"debug": 1, "info": 2, "warn": 3, "warning": 3, "error": 4, "critical": 4}


def level_number(level: LogLevel) -> int:
    """The ax.v1.LogLevel value of `level` (see LogLevel); unknown names are INFO."""
    if isinstance(level, int) and not isinstance(level, bool):
        if level >= logging.ERROR:
            return 4
        if level >= logging.WARNING:
            return 3
        if level >= logging.INFO:
            return 2
        return 1
    return _LEVELS.get(str(level).lower(), 2)


@dataclass(frozen=True)
class _Outbox:
    """How a Context reaches the worker's driver, from the event loop or from a handler thread."""

    loop: asyncio.AbstractEventLoop
    post: Callable[[tuple[Any, ...]], None]

    def put(self, event: tuple[Any, ...]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self.post(event)
        else:
            # From a handler thread (or another loop): hand it over thread-safely. Best effort: a
            # loop that has closed (the worker stopped) drops it.
            try:
                self.loop.call_soon_threadsafe(self.post, event)
            except RuntimeError:
                pass


class Context:
    """The attempt a handler runs, and how the handler talks back.

    Attributes describe the Assign: `instance_id`, `attempt` (1 for the first run; together they
    name this execution), `task_name`, `handler`, `params_raw` (the params as the JSON text axd
    sent, "{}" if none), `idempotency_key` (the same for every attempt of the instance: use it to
    make side effects idempotent, execution is at-least-once), `trigger_time` (when the instance was
    due, a timezone-aware datetime, or None), `timeout` (the task's run timeout in seconds, or
    None; axd times the attempt out by its clock, and the worker stops the handler itself once the
    timeout and the fence margin have passed since it started) and `shard` (for a child of a
    sharded or broadcast fire, `(shard_index, shard_total)`: the 0-based part of the work this
    instance is and how many parts the fire has; None otherwise).

    Stopping. The attempt is asked to stop when axd sends Cancel (a timeout, an operator, the ack
    timeout, or the attempt is no longer this worker's), when its lease is about to run out (see
    `lease_expired`), when its timeout and the fence margin have passed since it started (even if
    no Cancel came), or at the shutdown deadline. Then `cancelled` turns True, `cancel_reason`
    says why and `cancellation` (an asyncio.Event) is set. An async handler may await
    ``ctx.cancellation.wait()`` or `ctx.sleep`; if it does not return soon, its task is cancelled
    (asyncio.CancelledError at its next await). A plain function, run on a thread, cannot be
    interrupted: it should poll `cancelled` or sleep with `ctx.wait(seconds)`.
    """

    def __init__(
        self,
        *,
        instance_id: int,
        attempt: int,
        task_name: str,
        handler: str,
        params_raw: str,
        idempotency_key: str,
        trigger_time: Optional[datetime],
        timeout: Optional[float],
        lease: Lease,
        outbox: _Outbox,
        shard: Optional[Tuple[int, int]] = None,
    ) -> None:
        self.instance_id = instance_id
        self.attempt = attempt
        self.task_name = task_name
        self.handler = handler
        self.params_raw = params_raw
        self.idempotency_key = idempotency_key
        self.trigger_time = trigger_time
        self.timeout = timeout
        self.shard = shard
        self._lease = lease
        self._outbox = outbox
        self._cancel_reason: Optional[str] = None
        # Two views of one flag: an asyncio.Event for async handlers (only touched on the loop)
        # and a threading.Event for handlers on threads. The driver sets both, on the loop.
        self._cancel_async = asyncio.Event()
        self._cancel_thread = threading.Event()

    def __repr__(self) -> str:
        return (f"Context(instance_id={self.instance_id}, attempt={self.attempt}, "
                f"handler={self.handler!r}, task_name={self.task_name!r})")

    # --- params -----------------------------------------------------------------------------------

    def params(self) -> Any:
        """The params parsed as JSON. Raises HandlerError (not retryable) if they are not JSON."""
        try:
            return json.loads(self.params_raw)
        except ValueError as e:
            raise HandlerError(f"params are not JSON: {e}", retryable=False) from None

    # --- stopping ---------------------------------------------------------------------------------

    @property
    def cancelled(self) -> bool:
        """True once the attempt has been asked to stop (see the class docstring)."""
        return self._cancel_thread.is_set()

    @property
    def cancel_reason(self) -> Optional[str]:
        """Why the attempt was asked to stop, or None."""
        return self._cancel_reason

    @property
    def cancellation(self) -> asyncio.Event:
        """An asyncio.Event set when the attempt is asked to stop (use on the worker's loop only)."""
        return self._cancel_async

    async def sleep(self, seconds: float) -> bool:
        """Sleeps `seconds`, or less if the attempt is asked to stop; returns True if it was.
        For async handlers."""
        if self._cancel_async.is_set():
            return True
        try:
            await asyncio.wait_for(self._cancel_async.wait(), timeout=max(0.0, seconds))
            return True
        except asyncio.TimeoutError:
            return False

    def wait(self, seconds: Optional[float] = None) -> bool:
        """Blocks up to `seconds` (None: for ever) until the attempt is asked to stop; returns True
        if it was. For handlers on threads (plain functions); never call it on the event loop."""
        return self._cancel_thread.wait(seconds)

    def raise_if_cancelled(self) -> None:
        """Raises HandlerError (retryable) if the attempt has been asked to stop."""
        if self.cancelled:
            raise HandlerError(f"stopped: {self._cancel_reason or 'canceled'}", retryable=True)

    def lease_expired(self) -> bool:
        """True once this attempt's lease is (about to be) over: axd may give the instance to
        another worker. Reads the clock itself, so it is right even in a process just resumed from
        a pause: check it right before a side effect that must not happen twice."""
        return self._lease.expired()

    def lease_remaining(self) -> Optional[float]:
        """Seconds left of this attempt's lease (None if axd sends no leases)."""
        return self._lease.remaining()

    def _cancel(self, reason: str) -> None:
        """Asks the handler to stop (the driver calls this on the loop). The first reason stays."""
        if self._cancel_reason is None:
            self._cancel_reason = reason
        self._cancel_thread.set()
        self._cancel_async.set()

    # --- talking back -----------------------------------------------------------------------------

    def log(self, message: str, level: LogLevel = "info") -> None:
        """Sends a log line, kept with the instance (`axctl instance logs`). Best effort: dropped
        while the worker is not connected, and once the attempt is no longer this worker's. Safe
        from the loop and from handler threads."""
        self._outbox.put(("log", (self.instance_id, self.attempt), level_number(level), str(message),
                          time.time_ns()))

    def progress(self, percent: int, message: str = "") -> None:
        """Reports progress (0-100), shown by `axctl instance get`. Best effort, like `log`."""
        self._outbox.put(("progress", (self.instance_id, self.attempt),
                          max(0, min(100, int(percent))), str(message)))
