"""The worker: one asyncio task (the driver) that owns all state and speaks the protocol.

Read this next to the comment at the top of proto/ax/v1/worker.proto; the Rust SDK
(worker-sdk/src/driver.rs) and the TypeScript SDK (sdks/typescript/src/worker.ts) implement the
same rules.

How it is built
---------------
`Worker.run()` is the driver. It is the only code that changes the worker's state or writes to a
stream; everything else posts events to its inbox (`_post`, a deque plus an asyncio.Event):

    reader task (one per stream)   ("msg", stream, SchedulerMessage, arrived) / ("end", stream, error)
    handler tasks                  ("done", key, Result)
    Context.log / .progress        ("log", ...) / ("progress", ...)   (from threads: call_soon_threadsafe)
    Worker.stop / signals          ("stop",)

The driver takes one event at a time, runs the timers that are due (heartbeats, early-assignment
holds, lease fences, attempt timeouts, task cancellation), and puts WorkerMessages on the current
stream's outbound queue, which grpc.aio drains through an async generator (the request iterator):
so messages go out in the order the driver produced them, and returning from the generator
half-closes the stream.

State that must survive a broken stream lives in the Worker, not in the session: `_running`
(attempts this worker holds: held early assignments and running handlers, each with its lease),
`_unacked` (Results whose ResultAck has not arrived) and `_orphans` (handlers that are no longer
ours, already reported FAILED, whose thread or task has not ended yet). Every new stream lists
`_running` and `_unacked` in Hello.in_flight. An attempt is named everywhere by its key
(instance_id, attempt).

Credits, the arithmetic to get right: axd may send one Assign per credit. The worker grants
`capacity` at first and one more whenever a slot frees up (after a Result, or after a Reject of an
Assign it did not start: Reject does not return the credit it consumed). It never grants for a busy
slot, so at most `capacity` handlers run at once whatever axd does. A new stream starts with
`capacity - |running, unacked, orphans|` credits.
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import functools
import inspect
import json
import logging
import os
import random
import signal
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import timezone
from typing import Any, Callable, Deque, Iterable, Mapping, Optional, Union

import grpc
import grpc.aio
from google.protobuf.timestamp_pb2 import Timestamp

from . import __version__
from ._context import Context, HandlerError, _Outbox
from ._lease import Lease, ServerClock, stale_reason
from ._proto import types_pb2, worker_pb2, worker_pb2_grpc
from ._text import (MAX_LOG_LINE, MAX_OUTPUT, MAX_PROGRESS_MESSAGE, MAX_REJECT_REASON,
                    MAX_RESULT_MESSAGE, truncate)
from ._tls import Endpoint, Tls, parse_endpoint

__all__ = ["Worker", "RefusedError", "Handler"]

log = logging.getLogger("ax_worker")

CLIENT = f"ax-worker-python/{__version__}"

#: An attempt, everywhere: (instance_id, attempt).
Key = tuple[int, int]

#: A handler: an async function or a plain function taking a Context. It returns the output (a
#: str as is, bytes decoded as UTF-8, None as "", anything else as JSON) or raises.
Handler = Callable[[Context], Any]

# HTTP/2 keepalive as worker.proto recommends (ping every 20 s, give up after 10 s, also while idle).
# Heartbeats, not pings, decide whether axd and the worker consider each other alive.
CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    # Assign.params may be large; axd's own messages stay far below this.
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
]

# After a session that lived FLAPPING_SESSION past its Welcome (or was drained), the next endpoint
# is tried at once: the leases of running attempts are counting down and must be re-announced
# before they end. Failed connections try each endpoint once QUICK_RETRY apart, then back off from
# INITIAL_BACKOFF, doubling up to `reconnect_max`, each pause randomized to 50-150 % (jitter).
FLAPPING_SESSION = 1.0
QUICK_RETRY = 0.02
INITIAL_BACKOFF = 0.1
#: How long to wait for Welcome after sending Hello before trying another endpoint.
WELCOME_TIMEOUT = 10.0
#: The heartbeat interval if Welcome does not say (the .proto's default).
DEFAULT_HEARTBEAT = 2.0
#: A stream on which axd said nothing for this many heartbeat intervals is dropped.
SILENT_INTERVALS = 3
#: Once silence is noticed, how long (at most) to let the reader task hand over what may already
#: have arrived (e.g. after this process was paused) before leaving the stream.
SILENCE_CONFIRM = 0.2
#: The driver wakes at least this often.
MAX_WAIT = 0.25
#: Heartbeat send times remembered per stream while renewals do not catch up.
MAX_REMEMBERED_HEARTBEATS = 1024
#: A handler told to stop at its attempt's timeout (Assign.timeout plus the fence margin, counted
#: from its start) that has not returned this long after is abandoned: reported FAILED (retryable)
#: at once, whatever it returns later discarded. The Rust SDK's STOP_GRACE, the TypeScript SDK's
#: STOP_GRACE_MS.
STOP_GRACE = 0.2
#: The Result of an attempt the worker stopped at its timeout (the Rust and TypeScript SDKs' too).
TIMED_OUT = "timed out: the worker stopped the handler at the attempt's timeout"
#: After the shutdown deadline handlers are told to stop; STRAGGLER_GRACE later the ones still
#: running are reported FAILED (retryable) and abandoned; GIVE_UP_AFTER later the worker stops
#: trying to deliver results.
STRAGGLER_GRACE = 2.0
GIVE_UP_AFTER = 5.0

# gRPC status codes after which reconnecting cannot help: the Hello or the identity is wrong.
REFUSED_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.FAILED_PRECONDITION,
}


class RefusedError(Exception):
    """axd refused this worker for a reason reconnecting cannot fix (an invalid Hello, a
    certificate that may not serve the app). Raised by `Worker.run`."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"axd refused this worker: {code.name}: {details}")
        self.code = code
        self.details = details


# ---------------------------------------------------------------------------------------------------
# Small helpers


def _seconds(d: Any) -> float:
    """A google.protobuf.Duration in seconds."""
    return float(d.seconds) + float(d.nanos) / 1e9


def _duration_field(msg: Any, name: str) -> Optional[float]:
    """A Duration field of `msg` in seconds; None if unset or zero."""
    if not msg.HasField(name):
        return None
    s = _seconds(getattr(msg, name))
    return s if s > 0 else None


def _nanos(t: Any) -> int:
    """A google.protobuf.Timestamp as nanoseconds since the epoch."""
    return int(t.seconds) * 1_000_000_000 + int(t.nanos)


def _now_timestamp() -> Timestamp:
    t = Timestamp()
    t.FromNanoseconds(time.time_ns())
    return t


def _default_worker_id() -> str:
    host = socket.gethostname() or "worker"
    host = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "-" for c in host)
    return f"{host}-{os.getpid()}"


def output_of(value: Any) -> str:
    """A handler's return value as Result.output: str as is, bytes as UTF-8 (invalid bytes
    replaced), None as "", anything else as JSON. Raises HandlerError (not retryable) for a value
    JSON cannot encode."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as e:
        raise HandlerError(f"the handler's return value is not JSON-serializable: {e}",
                           retryable=False) from None


class _End(enum.Enum):
    """How a session ended."""

    FINISHED = "finished"  # graceful shutdown complete (or given up)
    REFUSED = "refused"  # axd refused us for good
    DRAINED = "drained"  # axd asked us to move
    LOST = "lost"  # the stream broke, axd went silent, or no Welcome came


@dataclass
class _Attempt:
    """An attempt this worker holds: an early assignment waiting for its start, or a handler."""

    ctx: Context
    fn: Handler
    is_async: bool
    lease: Lease
    # Assign.accept_by in database ns, or None.
    accept_by: Optional[int]
    # Monotonic time a held (early) assignment starts; None once started (or if never held).
    start_at: Optional[float]
    # How many heartbeats had gone out on the current stream when its Accepted did: a renewal
    # answering a later heartbeat covers it. None: not accepted on this stream (held, or from an
    # earlier stream and not (yet) adopted by Welcome).
    accepted_after: Optional[int] = None
    # Told to stop because its lease is about to run out.
    fenced: bool = False
    # axd said it is not ours to run any more (Cancel, or Welcome released it): renewals no
    # longer extend its lease, so a handler that ignores the stop is abandoned when it runs out.
    revoked: bool = False
    # The asyncio task running the handler (for a plain function: the task awaiting its thread).
    task: Optional["asyncio.Task[None]"] = None
    # Monotonic time at which an async handler asked to stop gets its task cancelled.
    kill_at: Optional[float] = None
    # Assign.timeout in seconds (None if unset): the attempt's own deadline, see `run_by`.
    timeout: Optional[float] = None
    # Monotonic time by which the handler must have ended: its start plus `timeout` plus the fence
    # margin (axd, counting from when Accepted arrived, times it out first and normally sends Cancel
    # before). None while held or without a timeout.
    run_by: Optional[float] = None
    # Told to stop because `run_by` passed: abandoned if it has not returned STOP_GRACE later.
    timed_out: bool = False

    @property
    def held(self) -> bool:
        return self.start_at is not None


class _Session:
    """One Connect stream. It ends for good when the stream breaks; the driver opens a new one."""

    def __init__(self, number: int, endpoint: Endpoint, tls: Optional[Tls],
                 post: Callable[[tuple[Any, ...]], None]) -> None:
        self.number = number
        self.endpoint = endpoint
        options = list(CHANNEL_OPTIONS)
        if endpoint.secure:
            root, key, chain = tls.load() if tls is not None else (None, None, None)
            creds = grpc.ssl_channel_credentials(root_certificates=root, private_key=key,
                                                 certificate_chain=chain)
            if tls is not None and tls.server_name:
                options.append(("grpc.ssl_target_name_override", tls.server_name))
            self.channel = grpc.aio.secure_channel(endpoint.target, creds, options=options)
        else:
            self.channel = grpc.aio.insecure_channel(endpoint.target, options=options)
        # The outbound half of the stream: the driver queues, the request iterator drains.
        self._outbound: "asyncio.Queue[Optional[worker_pb2.WorkerMessage]]" = asyncio.Queue()
        self._post = post
        self._closed = False
        self._call: Any = None
        self._reader: Optional["asyncio.Task[None]"] = None
        self.welcome: Optional[worker_pb2.Welcome] = None
        self.welcomed_at: Optional[float] = None
        now = time.monotonic()
        # When Hello went out: adopted attempts are renewed as of then, and it is the reading
        # point of Welcome.server_time (and of SchedulerHeartbeat.server_time with renewed_seq 0).
        self.hello_at = now
        # When anything last arrived from axd (stamped by the reader task).
        self.last_heard = now
        self.silent_since: Optional[float] = None
        self.heartbeat_every = DEFAULT_HEARTBEAT
        self.next_heartbeat = float("inf")
        self.heartbeat_seq = 0
        self.last_heartbeat_at = float("-inf")
        self._heartbeat_sent: dict[int, float] = {}

    async def _requests(self) -> Any:
        while True:
            m = await self._outbound.get()
            if m is None:  # close(): end the request stream (half-close)
                return
            yield m

    def open(self, hello: worker_pb2.Hello) -> None:
        """Starts the call with Hello as its first message."""
        self.hello_at = time.monotonic()
        self.send(hello=hello)
        stub = worker_pb2_grpc.WorkerServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self._call = stub.Connect(self._requests())
        self._reader = asyncio.create_task(self._read(), name=f"ax-worker-reader-{self.number}")

    async def _read(self) -> None:
        try:
            while True:
                m = await self._call.read()
                if m is grpc.aio.EOF:
                    self._post(("end", self.number, None))
                    return
                # Stamped here, when it arrived, not when the driver gets to it: liveness is about
                # axd's messages arriving.
                now = time.monotonic()
                self.last_heard = now
                self._post(("msg", self.number, m, now))
        except grpc.aio.AioRpcError as e:
            self._post(("end", self.number, e))
        except asyncio.CancelledError:
            # Our abort() cancelled the call.
            self._post(("end", self.number, None))
        except Exception as e:  # noqa: BLE001 - any failure of the call ends this stream only
            log.debug("stream %d: reader failed: %r", self.number, e)
            self._post(("end", self.number, None))

    def send(self, **one_field: Any) -> None:
        """Queues a WorkerMessage with one field set, e.g. send(credit=Credit(grant=1))."""
        if not self._closed:
            self._outbound.put_nowait(worker_pb2.WorkerMessage(**one_field))

    def heartbeat(self, running: int, now: float) -> None:
        """Sends the next numbered Heartbeat and remembers when it went out."""
        self.heartbeat_seq += 1
        # Queued now, on the wire a moment later: a lease counted from here ends early, never late.
        self._heartbeat_sent[self.heartbeat_seq] = now
        self.last_heartbeat_at = now
        if len(self._heartbeat_sent) > MAX_REMEMBERED_HEARTBEATS:
            del self._heartbeat_sent[min(self._heartbeat_sent)]
        self.send(heartbeat=worker_pb2.Heartbeat(running=running, seq=self.heartbeat_seq))

    def heartbeat_sent_at(self, seq: int) -> Optional[float]:
        """When heartbeat `seq` went out (forgetting older ones: renewals only move forward)."""
        for old in [k for k in self._heartbeat_sent if k < seq]:
            del self._heartbeat_sent[old]
        return self._heartbeat_sent.get(seq)

    def close(self) -> None:
        """Half-closes the stream after what is queued (axd then ends the session cleanly)."""
        if not self._closed:
            self._closed = True
            self._outbound.put_nowait(None)

    async def abort(self) -> None:
        """Drops the stream and the connection."""
        self.close()
        if self._call is not None:
            self._call.cancel()
        try:
            await self.channel.close(grace=None)
        except Exception as e:  # noqa: BLE001
            log.debug("stream %d: closing the channel: %r", self.number, e)
        if self._reader is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._reader), 1.0)
            except (asyncio.TimeoutError, asyncio.CancelledError, Exception):  # noqa: BLE001
                self._reader.cancel()


class Worker:
    """An ax worker: serves the handlers registered on it until stopped.

    >>> worker = Worker(endpoints=["http://127.0.0.1:7070"], app="billing", capacity=8)
    >>> @worker.handler("echo")
    ... async def echo(ctx: Context) -> str:
    ...     return ctx.params_raw
    >>> asyncio.run(worker.run())  # doctest: +SKIP

    Arguments:

    - `endpoints`: axd endpoints, `http://host:port` (plaintext) or `https://host:port` (TLS, see
      `tls`); a str is one endpoint, or several separated by commas. The worker connects to one at
      a time and moves to the next when its axd drains, breaks the stream or goes silent.
    - `app`: the app this worker serves (Hello.app; with mTLS, the app of its certificate).
    - `worker_id`: a stable id for this process, kept across reconnects (Hello.worker_id); it lets
      a reconnecting worker keep its running attempts. Default `<host>-<pid>`.
    - `capacity`: attempts run at once, 1-10000.
    - `labels`: shown by `axctl worker list`.
    - `tls`: a `Tls` for `https://` endpoints (mTLS with a client certificate).
    - `reconnect_max`: the longest pause, in seconds, between reconnect attempts (default 5).
    - `shutdown_deadline`: how long a graceful shutdown waits for running handlers before asking
      them to stop (default 30 s).
    - `cancel_grace`: after axd cancels an attempt (or at the shutdown deadline) an async handler
      that has not returned within this many seconds gets its task cancelled (default 1 s).
    - `install_signal_handlers`: make SIGTERM and SIGINT call `stop()` while `run()` runs (a second
      signal skips the wait for running handlers).
    """

    def __init__(
        self,
        endpoints: Union[str, Iterable[str]],
        app: str,
        worker_id: Optional[str] = None,
        capacity: int = 1,
        *,
        labels: Optional[Mapping[str, str]] = None,
        tls: Optional[Tls] = None,
        reconnect_max: float = 5.0,
        shutdown_deadline: float = 30.0,
        cancel_grace: float = 1.0,
        install_signal_handlers: bool = False,
    ) -> None:
        urls = [e for e in (endpoints.split(",") if isinstance(endpoints, str) else endpoints)]
        urls = [u.strip() for u in urls if u and u.strip()]
        if not urls:
            raise ValueError("at least one endpoint is required")
        self._endpoints = [parse_endpoint(u, tls) for u in urls]
        if not app:
            raise ValueError("app is required")
        if isinstance(capacity, bool) or not isinstance(capacity, int) or not 1 <= capacity <= 10_000:
            raise ValueError(f"capacity must be 1-10000, got {capacity!r}")
        if reconnect_max <= 0:
            raise ValueError("reconnect_max must be > 0")
        if tls is not None:
            tls.load()  # fail now, not at the first connect, if a file is missing
        self.app = app
        self.worker_id = worker_id or _default_worker_id()
        self.capacity = capacity
        self.labels = dict(labels or {})
        self.tls = tls
        self.reconnect_max = float(reconnect_max)
        self.shutdown_deadline = float(shutdown_deadline)
        self.cancel_grace = float(cancel_grace)
        self.install_signal_handlers = install_signal_handlers
        self._handlers: dict[str, Handler] = {}
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._stop_requested = 0  # stop() calls before run() got to them
        self._reset_state()

    def _reset_state(self) -> None:
        self._inbox: Deque[tuple[Any, ...]] = deque()
        self._wake: Optional[asyncio.Event] = None
        self._running: dict[Key, _Attempt] = {}
        self._unacked: dict[Key, worker_pb2.Result] = {}
        self._orphans: dict[Key, _Attempt] = {}
        self._session: Optional[_Session] = None
        self._sessions = 0
        # From the latest Welcome; lease_ttl None: axd sends no leases (nothing is fenced).
        self._lease_ttl: Optional[float] = None
        self._fence_margin = 0.0
        self._clock = ServerClock()
        self._shutdown_at: Optional[float] = None
        self._canceled_all = False
        self._gave_up = False
        self._abandoned = 0

    # --- registration -------------------------------------------------------------------------------

    def handler(self, name: str) -> Callable[[Handler], Handler]:
        """Decorator: registers the decorated function as the handler `name`.

        An `async def` handler runs on the worker's event loop; a plain function runs on a thread of
        its own (it must not touch the event loop). Either takes a Context and returns the output
        or raises (HandlerError for a chosen failure)."""

        def register(fn: Handler) -> Handler:
            self.add_handler(name, fn)
            return fn

        return register

    def add_handler(self, name: str, fn: Handler) -> None:
        """Registers `fn` as the handler `name` (see `handler`)."""
        if not name:
            raise ValueError("a handler needs a name")
        if not callable(fn):
            raise TypeError(f"handler {name!r} is not callable")
        if name in self._handlers:
            raise ValueError(f"handler {name!r} is registered twice")
        if self._loop is not None:
            raise RuntimeError("register handlers before run()")
        self._handlers[name] = fn

    @property
    def handlers(self) -> list[str]:
        """The names of the registered handlers."""
        return sorted(self._handlers)

    # --- lifecycle ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Starts a graceful shutdown: no new work (Credit reset), held early assignments are handed
        back, running handlers may finish up to `shutdown_deadline`, every result is delivered, then
        the stream closes and `run()` returns. A second call skips the wait for running handlers.
        Safe to call from any thread or a signal handler, before or during `run()`."""
        loop = self._loop
        if loop is None:
            self._stop_requested += 1
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._post(("stop",))
        else:
            try:
                loop.call_soon_threadsafe(self._post, ("stop",))
            except RuntimeError:  # the loop is closed: run() is over
                pass

    async def run(self) -> None:
        """Connects, serves, reconnects; returns after a graceful shutdown (see `stop`).

        Raises RefusedError if axd refuses the worker (reconnecting cannot help), ValueError if no
        handler is registered, RuntimeError if the worker is already running."""
        if self._loop is not None:
            raise RuntimeError("this worker is already running")
        if not self._handlers:
            raise ValueError("register at least one handler before run()")
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._reset_state()
        self._wake = asyncio.Event()
        self._outbox = _Outbox(loop, self._post)
        for _ in range(self._stop_requested):
            self._post(("stop",))
        self._stop_requested = 0
        installed = self._install_signals(loop) if self.install_signal_handlers else []
        log.info("worker %s (app %s, capacity %d, handlers %s) starting", self.worker_id, self.app,
                 self.capacity, ", ".join(self.handlers))
        try:
            await self._connect_loop()
        finally:
            for signum in installed:
                try:
                    loop.remove_signal_handler(signum)
                except (NotImplementedError, RuntimeError, ValueError):
                    signal.signal(signum, signal.SIG_DFL)
            await self._cleanup()
            self._loop = None

    def _install_signals(self, loop: asyncio.AbstractEventLoop) -> list[int]:
        installed: list[int] = []
        for signum in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(signum, self.stop)
            except (NotImplementedError, RuntimeError, ValueError):
                # Not on this platform or not in the main thread: fall back to signal.signal.
                try:
                    signal.signal(signum, lambda *_: self.stop())
                except ValueError:
                    continue
            installed.append(signum)
        return installed

    async def _cleanup(self) -> None:
        """After the last session: orphaned async tasks are cancelled; handler threads that never
        returned are daemon threads and do not keep the process alive."""
        tasks = [a.task for a in [*self._running.values(), *self._orphans.values()]
                 if a.task is not None and not a.task.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)
        if self._abandoned or self._gave_up:
            log.warning("stopped: %d handlers abandoned, %d results undelivered", self._abandoned,
                        len(self._unacked))
        else:
            log.info("stopped")

    async def _connect_loop(self) -> None:
        backoff = INITIAL_BACKOFF
        n = 0
        failed = 0  # connections that failed (or flapped) since the last good session
        while True:
            endpoint = self._endpoints[n % len(self._endpoints)]
            n += 1
            end, lived, refused = await self._serve(endpoint)
            if end is _End.FINISHED:
                return
            if end is _End.REFUSED:
                assert refused is not None
                raise refused
            # Drained or lost: on to the next endpoint. Attempts keep running meanwhile and their
            # leases keep counting down: re-announcing them soon is what keeps them.
            if end is _End.DRAINED or (lived is not None and lived >= FLAPPING_SESSION):
                failed, backoff, pause = 0, INITIAL_BACKOFF, 0.0
            else:
                failed += 1
                if failed % len(self._endpoints) != 0:
                    pause = QUICK_RETRY  # try every endpoint once before backing off
                else:
                    pause = backoff * random.uniform(0.5, 1.5)
                    backoff = min(backoff * 2, self.reconnect_max)
            if pause > 0:
                log.info("reconnecting in %.2fs", pause)
            if await self._offline(pause):
                return

    async def _offline(self, pause: float) -> bool:
        """Waits `pause` seconds without a stream: handlers keep finishing and leases keep being
        enforced. True if the shutdown is complete."""
        until = time.monotonic() + pause
        while True:
            if self._shutdown_complete():
                return True
            now = time.monotonic()
            self._run_timers(None, now)
            if now >= until:
                return False
            ev = await self._next_event(min(until, self._next_timer(None)) - now)
            if ev is not None:
                self._handle_local(ev)

    def _post(self, ev: tuple[Any, ...]) -> None:
        """Puts an event in the inbox (on the loop only; threads go through call_soon_threadsafe)."""
        self._inbox.append(ev)
        if self._wake is not None:
            self._wake.set()

    async def _next_event(self, timeout: float) -> Optional[tuple[Any, ...]]:
        if self._inbox:
            return self._inbox.popleft()
        assert self._wake is not None
        self._wake.clear()
        timeout = min(max(timeout, 0.0), MAX_WAIT)
        if timeout > 0:
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except asyncio.TimeoutError:
                pass
        else:
            await asyncio.sleep(0)  # let the reader and handler tasks run
        return self._inbox.popleft() if self._inbox else None

    def _hello(self) -> worker_pb2.Hello:
        """Hello for a new stream: who we are and what we still hold from earlier streams."""
        held = [*self._running, *self._unacked]  # disjoint: a Result is kept once its attempt ended
        if self._shutdown_at is not None:
            credits = 0  # taking no new work
        else:
            # A slot is busy while its attempt runs, while its Result waits for its ack, and while
            # an orphaned handler still occupies it.
            busy = set(held) | set(self._orphans)
            credits = max(0, self.capacity - len(busy))
        return worker_pb2.Hello(
            app=self.app,
            worker_id=self.worker_id,  # the same on every reconnect: that is how attempts are kept
            handlers=self.handlers,
            capacity=self.capacity,
            labels=self.labels,
            in_flight=[types_pb2.InstanceAttempt(instance_id=i, attempt=a) for i, a in held],
            client=CLIENT,
            start_after_supported=True,  # we hold early assignments until Assign.start_after
            initial_credits=credits,
        )

    async def _serve(self, endpoint: Endpoint) -> tuple[_End, Optional[float], Optional[RefusedError]]:
        """Runs one session: (how it ended, seconds it lived after Welcome or None, the refusal)."""
        self._sessions += 1
        try:
            s = _Session(self._sessions, endpoint, self.tls, self._post)
        except Exception as e:  # noqa: BLE001 - e.g. unreadable TLS files
            log.error("cannot connect to %s: %s", endpoint.url, e)
            return _End.LOST, None, None
        self._session = s
        s.open(self._hello())
        welcome_by = time.monotonic() + WELCOME_TIMEOUT
        end: Optional[_End] = None
        refused: Optional[RefusedError] = None
        try:
            while end is None:
                now = time.monotonic()
                if s.welcome is None and now >= welcome_by:
                    log.warning("no Welcome from %s within %.0fs", endpoint.url, WELCOME_TIMEOUT)
                    end = _End.LOST
                    break
                if s.welcome is not None and self._silent(s, now):
                    # A stalled axd, or a partition that does not reset the connection, says
                    # nothing at all; TCP and HTTP/2 keepalive would notice only after the leases
                    # ran out. Move on while they can still be renewed elsewhere.
                    log.warning("axd at %s has said nothing for %.2fs; moving to another endpoint",
                                endpoint.url, now - s.last_heard)
                    end = _End.LOST
                    break
                if self._shutdown_complete():
                    if s.welcome is not None:
                        await self._close_gracefully(s)
                    end = _End.FINISHED
                    break
                self._run_timers(s, now)
                ev = await self._next_event(
                    self._next_timer(s if s.welcome is not None else None, welcome_by) - now)
                if ev is None:
                    continue
                kind = ev[0]
                if kind == "msg":
                    if ev[1] == s.number:  # events of older streams are stale
                        end = self._on_message(s, ev[2], ev[3])
                elif kind == "end":
                    if ev[1] == s.number:
                        end, refused = self._on_end(s, ev[2])
                else:
                    self._handle_local(ev)
        finally:
            self._session = None
            await s.abort()
        lived = time.monotonic() - s.welcomed_at if s.welcomed_at is not None else None
        return end, lived, refused

    def _silent(self, s: _Session, now: float) -> bool:
        """Whether axd has said nothing for SILENT_INTERVALS heartbeat intervals. Once it looks so,
        the reader task gets up to SILENCE_CONFIRM to hand over what may already have arrived (a
        process resumed from a pause, a loop busy for a moment) before the stream is given up."""
        if now - s.last_heard < SILENT_INTERVALS * s.heartbeat_every:
            s.silent_since = None
            return False
        if s.silent_since is None:
            s.silent_since = now
        return now - s.silent_since >= SILENCE_CONFIRM

    async def _close_gracefully(self, s: _Session) -> None:
        """Everything is delivered: half-close, and give axd a moment to end the session."""
        log.info("all results delivered; closing the stream")
        s.close()
        until = time.monotonic() + 2.0
        while time.monotonic() < until:
            ev = await self._next_event(until - time.monotonic())
            if ev is None:
                continue
            if ev[0] == "end" and ev[1] == s.number:
                return
            if ev[0] not in ("msg", "end"):
                self._handle_local(ev)

    def _on_end(self, s: _Session, err: Any) -> tuple[_End, Optional[RefusedError]]:
        if err is None:
            log.warning("axd at %s ended the stream", s.endpoint.url)
            return _End.LOST, None
        code, details = err.code(), err.details()
        if code in REFUSED_CODES:
            # E.g. INVALID_ARGUMENT "hello.capacity: must be 1..=10000, got 0": fix the config.
            log.error("axd refused this worker: %s: %s", code.name, details)
            return _End.REFUSED, RefusedError(code, details or "")
        log.warning("stream to %s ended: %s: %s", s.endpoint.url, code.name, details)
        return _End.LOST, None

    def _connected(self) -> Optional[_Session]:
        s = self._session
        return s if s is not None and s.welcome is not None else None

    # --- timers: heartbeats, holds, leases, task cancellation --------------------------------------

    def _next_timer(self, s: Optional[_Session], other: float = float("inf")) -> float:
        """The next monotonic time something is due (at most `other`)."""
        due = [other]
        if s is not None:
            due.append(s.next_heartbeat)
            if s.silent_since is None:
                due.append(s.last_heard + SILENT_INTERVALS * s.heartbeat_every)
            else:
                due.append(s.silent_since + SILENCE_CONFIRM)
        for a in self._running.values():
            if a.held and a.start_at is not None and s is not None:
                due.append(a.start_at)  # a hold ends only on a stream: Accepted must go out
            fence, abandon = a.lease.fence_at(), a.lease.abandon_at()
            if fence is not None and abandon is not None:
                due.append(abandon if a.fenced else fence)
            if a.kill_at is not None:
                due.append(a.kill_at)
            if a.run_by is not None:
                due.append(a.run_by + STOP_GRACE if a.timed_out else a.run_by)
        return min(due)

    def _run_timers(self, s: Optional[_Session], now: float) -> None:
        """Does what is due. `s` is the current stream (Welcome may not have come yet), or None."""
        if s is not None and s.welcome is not None and now >= s.next_heartbeat:
            # Heartbeat every interval, always (also while busy with other messages).
            s.heartbeat(running=len(self._running), now=now)
            s.next_heartbeat += s.heartbeat_every
            if s.next_heartbeat <= now:
                s.next_heartbeat = now + s.heartbeat_every
        connected = self._connected()
        for key, a in list(self._running.items()):
            fence, abandon = a.lease.fence_at(), a.lease.abandon_at()
            if a.held:
                if fence is not None and now >= fence:
                    # Its lease (its accept-by time, unless Welcome adopted it since) is about to
                    # end: axd takes it back and may give it to another worker. Never start it.
                    self._drop_held(key, "stale assignment: its accept-by time came less than the "
                                         f"fence margin ({self._fence_margin:.3f}s) away during its hold")
                elif a.start_at is not None and a.start_at <= now and connected is not None:
                    # The hold is over: the same check as for a new Assign, then start it. (While
                    # disconnected it waits: Accepted must go out when the handler starts.)
                    why = (stale_reason(self._clock, a.accept_by, self._fence_margin, now)
                           if a.accepted_after is None else None)
                    if why is not None:
                        self._drop_held(key, why)
                    else:
                        self._start(connected, key, a, now)
                continue
            if fence is not None and not a.fenced and now >= fence:
                a.fenced = True
                a.ctx._cancel("its lease is about to run out with no renewal from axd")
                if a.is_async:
                    a.kill_at = min(a.kill_at or float("inf"), abandon or now)
                log.warning("lease of %d/%d is about to run out with no renewal from axd: "
                            "stopping the handler", *key)
            if a.fenced and abandon is not None and now >= abandon:
                # The handler did not stop. It is no longer ours: another worker may get the
                # instance once the lease ends. Report it now and discard whatever it returns.
                self._abandon(key, "stopped: lease ran out with no renewal from axd (the handler "
                                   "did not stop in time; another worker may run it)")
                continue
            if a.run_by is not None and not a.timed_out and now >= a.run_by:
                # Its timeout and the fence margin have passed: axd has timed it out, whether or
                # not its Cancel came. Stop the handler, as for a fence.
                a.timed_out = True
                a.ctx._cancel("timed out: the attempt's timeout has passed")
                log.warning("timeout of %d/%d has passed: stopping the handler", *key)
            if a.timed_out and a.run_by is not None and now >= a.run_by + STOP_GRACE:
                # It did not stop: report it now (the retry waits for this Result, or for the lease
                # to end) and discard whatever it returns.
                self._abandon(key, TIMED_OUT)
                continue
            if a.kill_at is not None and now >= a.kill_at:
                a.kill_at = None
                if a.task is not None and not a.task.done():
                    log.info("handler %d/%d did not stop when asked: cancelling its task", *key)
                    a.task.cancel()

    # --- messages from axd --------------------------------------------------------------------------

    def _on_message(self, s: _Session, m: worker_pb2.SchedulerMessage,
                    received_at: float) -> Optional[_End]:
        kind = m.WhichOneof("msg")
        if s.welcome is None:
            if kind != "welcome":
                log.warning("expected Welcome first, got %s; ignoring it", kind)
                return None
            self._on_welcome(s, m.welcome, received_at)
        elif kind == "heartbeat":
            self._on_scheduler_heartbeat(s, m.heartbeat, received_at)
        elif kind == "assign":
            self._on_assign(s, m.assign)
        elif kind == "cancel":
            self._on_cancel(m.cancel)
        elif kind == "result_ack":
            a = m.result_ack
            self._unacked.pop((a.instance_id, a.attempt), None)  # durable (or ignored): forget it
            if not a.applied:
                log.info("result %d/%d not applied: %s", a.instance_id, a.attempt, a.note)
        elif kind == "drain":
            # This axd is going away. Handlers keep running; the next Hello re-announces them.
            log.info("axd is draining (%s); moving to another endpoint", m.drain.reason)
            return _End.DRAINED
        return None

    def _on_welcome(self, s: _Session, w: worker_pb2.Welcome, received_at: float) -> None:
        s.welcome = w
        s.welcomed_at = received_at
        s.heartbeat_every = _duration_field(w, "heartbeat_interval") or DEFAULT_HEARTBEAT
        # Heartbeats are numbered from 1 on each stream, the first one an interval after Welcome.
        s.next_heartbeat = time.monotonic() + s.heartbeat_every
        self._lease_ttl = _duration_field(w, "lease_ttl")
        self._fence_margin = _duration_field(w, "fence_margin") or 0.0
        if w.HasField("server_time"):
            # axd read its clock after our Hello arrived: count from when Hello was sent.
            self._clock.observe(_nanos(w.server_time), s.hello_at, received_at)
        taking_work = self._shutdown_at is None
        log.info("connected to %s: session %s on %s, heartbeat %.2fs, lease %s, adopted %d, released %d",
                 s.endpoint.url, w.session_id, w.scheduler_id, s.heartbeat_every,
                 f"{self._lease_ttl:.2f}s" if self._lease_ttl else "none", len(w.adopted),
                 len(w.released))
        # No renewal on this stream covers anything yet. Adopted attempts are renewed as of
        # sending Hello, and by every renewal of this stream from now on.
        adopted = {(x.instance_id, x.attempt) for x in w.adopted}
        for key, a in self._running.items():
            a.lease.margin = self._fence_margin
            a.accepted_after = None
            if key in adopted and not a.revoked:
                a.accepted_after = 0
                if self._lease_ttl is not None:
                    a.lease.extend_to(s.hello_at + self._lease_ttl)
        # Every Result not yet acknowledged goes out again: applied if axd adopted its attempt,
        # recorded on the instance's trail as a late result if it released it. Either way its slot
        # is free on axd's side now, so grant it back, unless an orphaned handler still holds it.
        for key, result in list(self._unacked.items()):
            s.send(result=result)
            if taking_work and key not in self._orphans:
                s.send(credit=worker_pb2.Credit(grant=1))
        for r in w.released:
            key = (r.instance_id, r.attempt)
            found = self._running.get(key)
            if found is None:
                continue
            a = found
            # No longer ours. A held one never starts; a running one is asked to stop: its Result
            # (a late one) goes out when it ends, and its slot is granted back then, as usual.
            a.revoked = True
            if a.held:
                self._finish_unstarted(key, "released by axd before its start time")
            else:
                self._ask_to_stop(a, "released by axd after a reconnect (no longer this worker's)",
                                  time.monotonic())
        if not taking_work:
            # A shutdown began while we were disconnected: take back any credit Hello granted.
            s.send(credit=worker_pb2.Credit(grant=0, reset=True))

    def _on_scheduler_heartbeat(self, s: _Session, h: worker_pb2.SchedulerHeartbeat,
                                received_at: float) -> None:
        k = h.renewed_seq
        sent = s.heartbeat_sent_at(k) if k > 0 else None
        if h.HasField("server_time"):
            # axd read its clock after heartbeat k arrived (after Hello, for k = 0).
            self._clock.observe(_nanos(h.server_time), sent if sent is not None else s.hello_at,
                                received_at)
        if self._lease_ttl is None or sent is None:
            return
        # A renewal covering every attempt whose Accepted went out before heartbeat k committed: no
        # axd gives them to anyone else before lease_ttl has passed since we SENT heartbeat k.
        for a in self._running.values():
            if a.accepted_after is not None and a.accepted_after < k and not a.revoked:
                a.lease.extend_to(sent + self._lease_ttl)

    def _on_assign(self, s: _Session, m: worker_pb2.Assign) -> None:
        key = (m.instance_id, m.attempt)
        now = time.monotonic()
        if self._shutdown_at is not None:
            # An Assign may have been on the wire when we reset our credits.
            self._reject(s, key, "worker shutting down", credit=False)
            return
        if key in self._running or key in self._unacked or key in self._orphans:
            log.warning("duplicate Assign %d/%d ignored", *key)
            return
        fn = self._handlers.get(m.handler)
        accept_by = _nanos(m.accept_by) if m.HasField("accept_by") else None
        why = (f"handler {m.handler!r} is not registered on this worker" if fn is None
               else stale_reason(self._clock, accept_by, self._fence_margin, now))
        if why is not None or fn is None:
            # Stale: read too late (the process was paused, or the message waited in a buffer);
            # axd has taken it back by now, or is about to, and may have given it to another worker.
            log.warning("assignment %d/%d not started: %s", *key, why)
            self._reject(s, key, why or "not started", credit=True)
            return
        if len(self._running) + len(self._orphans) >= self.capacity:
            # Cannot happen while credits are granted as above; refuse rather than queue.
            self._reject(s, key, "worker at capacity", credit=False)
            return
        # Until a renewal covers it, the attempt is ours until its accept-by time.
        lease_end = None
        if self._lease_ttl is not None and accept_by is not None:
            lease_end = self._clock.monotonic_of(accept_by)
        lease = Lease(lease_end, self._fence_margin)
        ctx = Context(
            instance_id=m.instance_id,
            attempt=m.attempt,
            task_name=m.task_name,
            handler=m.handler,
            params_raw=m.params or "{}",
            idempotency_key=m.idempotency_key,
            trigger_time=m.trigger_time.ToDatetime(tzinfo=timezone.utc)
            if m.HasField("trigger_time") else None,
            timeout=_seconds(m.timeout) if m.HasField("timeout") else None,
            lease=lease,
            outbox=self._outbox,
            shard=(m.shard_index, m.shard_total) if m.shard_total > 0 else None,
        )
        # Sent ahead of its time (we set Hello.start_after_supported): hold it that long from now.
        hold = _duration_field(m, "start_after") or 0.0
        a = _Attempt(ctx=ctx, fn=fn, is_async=_is_async(fn), lease=lease, accept_by=accept_by,
                     start_at=now + hold if hold > 0 else None,
                     timeout=_duration_field(m, "timeout"))
        self._running[key] = a
        log.info("%s %s %d/%d (task %s)", f"hold {hold:.3f}s" if hold > 0 else "run", m.handler,
                 *key, m.task_name)
        if hold <= 0:
            self._start(s, key, a, now)

    def _reject(self, s: _Session, key: Key, why: str, credit: bool) -> None:
        s.send(reject=worker_pb2.Reject(instance_id=key[0], attempt=key[1],
                                        reason=truncate(why, MAX_REJECT_REASON)))
        if credit and self._shutdown_at is None:
            s.send(credit=worker_pb2.Credit(grant=1))  # Reject does not return the credit it used

    def _start(self, s: _Session, key: Key, a: _Attempt, now: float) -> None:
        """Starts a handler: Accepted (DISPATCHED -> RUNNING on axd; its run timeout starts)."""
        if a.held:
            a.start_at = None
            log.info("run %s %d/%d (hold over)", a.ctx.handler, *key)
        s.send(accepted=worker_pb2.Accepted(instance_id=key[0], attempt=key[1]))
        a.accepted_after = s.heartbeat_seq
        # The attempt's own deadline, enforced as its lease is (worker.proto, Assign.timeout): a
        # timeout then does not depend on axd's Cancel arriving.
        if a.timeout is not None:
            a.run_by = now + a.timeout + self._fence_margin
        # Bring the next heartbeat forward (at most 4 per interval): the first renewal that covers
        # this attempt answers a heartbeat sent after its Accepted, and until then the attempt is
        # ours only until its accept-by time (the ack timeout). Heartbeats more often than the
        # interval are allowed; less often never.
        s.next_heartbeat = min(s.next_heartbeat, max(now, s.last_heartbeat_at + s.heartbeat_every / 4))
        a.task = asyncio.create_task(self._execute(key, a), name=f"ax-handler-{key[0]}/{key[1]}")

    def _on_cancel(self, c: worker_pb2.Cancel) -> None:
        key = (c.instance_id, c.attempt)
        a = self._running.get(key)
        if a is None:
            return
        # Any reason (timeout, operator, ack timeout, not ours): stop it. After an ack timeout axd
        # has freed the slot on its side; we grant it back once we report the Result, as always.
        log.info("cancel %d/%d: %s", *key, c.reason)
        a.revoked = True  # renewals no longer cover it
        if a.held:
            self._finish_unstarted(key, f"canceled before its start time: {c.reason}")
        else:
            self._ask_to_stop(a, f"canceled by axd: {c.reason}", time.monotonic())

    def _ask_to_stop(self, a: _Attempt, why: str, now: float) -> None:
        """Tells a running handler to stop; an async one that has not returned `cancel_grace` later
        gets its task cancelled. A thread cannot be stopped: its lease (no longer renewed once
        revoked) fences it."""
        a.ctx._cancel(why)
        if a.is_async:
            a.kill_at = min(a.kill_at or float("inf"), now + self.cancel_grace)

    # --- running handlers ---------------------------------------------------------------------------

    async def _execute(self, key: Key, a: _Attempt) -> None:
        """Runs a handler and posts its Result as a "done" event."""
        ctx = a.ctx
        r = worker_pb2.Result(instance_id=key[0], attempt=key[1])
        try:
            if a.is_async:
                value = await a.fn(ctx)
            else:
                value = await _in_thread(a.fn, ctx)
            r.outcome = types_pb2.OUTCOME_SUCCESS
            r.output = output_of(value)
        except HandlerError as e:
            r.outcome = types_pb2.OUTCOME_FAILED
            r.message = e.message
            r.retryable = e.retryable
        except asyncio.CancelledError:
            # We cancelled the task (it did not stop when asked): report it stopped.
            r.outcome = types_pb2.OUTCOME_FAILED
            r.message = f"stopped: {ctx.cancel_reason or 'the worker shut down'}"
            r.retryable = True
        except Exception as e:  # noqa: BLE001 - a bug in a handler fails only its attempt
            log.exception("handler %s (%d/%d) raised", ctx.handler, *key)
            r.outcome = types_pb2.OUTCOME_FAILED
            r.message = f"handler raised {type(e).__name__}: {e}"
            r.retryable = True
        if r.outcome == types_pb2.OUTCOME_FAILED and ctx.lease_expired() and "lease" not in r.message:
            # Stopped because its lease ran out: another worker may run it, so say so.
            r.message = f"stopped: lease ran out with no renewal from axd ({r.message})"
            r.retryable = True
        r.finished_at.CopyFrom(_now_timestamp())
        self._post(("done", key, r))

    # --- ending attempts ----------------------------------------------------------------------------

    def _drop_held(self, key: Key, why: str) -> None:
        """A held assignment that must never start: Reject it (and grant its slot back) if we can
        talk to axd; if not, forget it (it is not re-announced, and axd takes it back)."""
        self._running.pop(key)
        log.warning("held assignment %d/%d not started: %s", *key, why)
        s = self._connected()
        if s is not None:
            self._reject(s, key, why, credit=True)

    def _finish_unstarted(self, key: Key, why: str) -> None:
        """A held assignment ends without running: FAILED (retryable), and its slot is free."""
        self._running.pop(key)
        r = worker_pb2.Result(instance_id=key[0], attempt=key[1], outcome=types_pb2.OUTCOME_FAILED,
                              message=why, retryable=True, finished_at=_now_timestamp())
        self._report(key, r, slot_free=True)

    def _abandon(self, key: Key, why: str) -> None:
        """A handler that did not stop is no longer ours: report it FAILED (retryable) now and
        discard whatever it returns; its slot stays busy until it really ends."""
        a = self._running.pop(key)
        a.ctx._cancel(why)
        if a.task is not None and a.is_async:
            a.task.cancel()
        self._orphans[key] = a
        r = worker_pb2.Result(instance_id=key[0], attempt=key[1], outcome=types_pb2.OUTCOME_FAILED,
                              message=why, retryable=True, finished_at=_now_timestamp())
        self._report(key, r, slot_free=False)

    def _report(self, key: Key, result: worker_pb2.Result, slot_free: bool) -> None:
        """Sends a Result (kept until its ResultAck, sent or not) and, if its slot is free, grants
        it back. Text axd would cut is cut here, so the message fits."""
        result.output = truncate(result.output, MAX_OUTPUT)
        result.message = truncate(result.message, MAX_RESULT_MESSAGE)
        log.info("done %d/%d: %s %s", *key, types_pb2.Outcome.Name(result.outcome), result.message)
        self._unacked[key] = result
        s = self._connected()
        if s is not None:
            s.send(result=result)
            if slot_free and self._shutdown_at is None:
                s.send(credit=worker_pb2.Credit(grant=1))  # the slot is free again

    # --- events from this process -------------------------------------------------------------------

    def _ours(self, key: Key) -> bool:
        """Whether Log and Progress about `key` may go out: only while the attempt is still ours."""
        a = self._running.get(key)
        return a is not None and not a.revoked and not a.held

    def _handle_local(self, ev: tuple[Any, ...]) -> None:
        kind = ev[0]
        if kind == "done":
            self._on_done(ev[1], ev[2])
        elif kind == "stop":
            self._on_stop()
        elif kind == "log":
            _, key, level, message, at_ns = ev
            s = self._connected()
            if s is not None and self._ours(key):
                at = Timestamp(seconds=at_ns // 1_000_000_000, nanos=at_ns % 1_000_000_000)
                s.send(log=worker_pb2.Log(instance_id=key[0], attempt=key[1], level=level,
                                          message=truncate(message, MAX_LOG_LINE), at=at))
        elif kind == "progress":
            _, key, percent, message = ev
            s = self._connected()
            if s is not None and self._ours(key):
                s.send(progress=worker_pb2.Progress(instance_id=key[0], attempt=key[1], percent=percent,
                                                    message=truncate(message, MAX_PROGRESS_MESSAGE)))
        # "msg"/"end" of a stream that is gone: nothing to do.

    def _on_done(self, key: Key, result: worker_pb2.Result) -> None:
        if self._running.pop(key, None) is not None:
            self._report(key, result, slot_free=True)
            return
        if self._orphans.pop(key, None) is not None:
            # Reported FAILED when it was abandoned; what it says now is not ours to report.
            log.warning("abandoned handler %d/%d ended (%s); its result is discarded", *key,
                        types_pb2.Outcome.Name(result.outcome))
            s = self._connected()
            if s is not None and self._shutdown_at is None:
                # Its slot is free at last. (Its Result went out on this stream already: when it
                # was abandoned, or again after Welcome.)
                s.send(credit=worker_pb2.Credit(grant=1))

    def _on_stop(self) -> None:
        now = time.monotonic()
        if self._shutdown_at is not None:
            # Second request: do not wait for running handlers any more.
            log.warning("stop requested again: abandoning running handlers")
            self._shutdown_at = min(self._shutdown_at, now - self.shutdown_deadline - STRAGGLER_GRACE)
            return
        log.info("shutting down: %d running, %d results unacknowledged", len(self._running),
                 len(self._unacked))
        self._shutdown_at = now
        s = self._connected()
        if s is not None:
            # Stop new assignments: discard every credit granted so far.
            s.send(credit=worker_pb2.Credit(grant=0, reset=True))
        # Held early assignments have not started: hand them back (Reject puts the instance back
        # in the queue at once, without using its retry budget).
        for key, a in list(self._running.items()):
            if a.held:
                self._running.pop(key)
                if s is not None:
                    self._reject(s, key, "worker shutting down before its start time", credit=False)

    def _shutdown_complete(self) -> bool:
        """During a shutdown: True once everything is delivered, or the deadlines have passed."""
        if self._shutdown_at is None:
            return False
        if not self._running and not self._unacked:
            return True
        now = time.monotonic()
        elapsed = now - self._shutdown_at
        if elapsed >= self.shutdown_deadline and not self._canceled_all:
            self._canceled_all = True
            log.warning("shutdown deadline passed: asking %d handlers to stop", len(self._running))
            for a in self._running.values():
                if not a.held:
                    self._ask_to_stop(a, "the worker is shutting down", now)
        if elapsed >= self.shutdown_deadline + STRAGGLER_GRACE and self._running:
            # Report them FAILED (retryable) so axd can run them elsewhere, and leave them.
            for key in list(self._running):
                if self._running[key].held:
                    self._finish_unstarted(key, "worker shut down before its start time")
                else:
                    self._abandoned += 1
                    self._abandon(key, "worker shut down before the handler finished")
        if elapsed >= self.shutdown_deadline + STRAGGLER_GRACE + GIVE_UP_AFTER:
            log.error("giving up delivering %d results", len(self._unacked))
            self._gave_up = True
            return True
        return False


def _is_async(fn: Handler) -> bool:
    """Whether `fn` is an async function (also through functools.partial or a callable object)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)
    return call is not None and inspect.iscoroutinefunction(call)


async def _in_thread(fn: Handler, ctx: Context) -> Any:
    """Runs a plain-function handler on a daemon thread of its own and awaits its return.

    Not a ThreadPoolExecutor: a handler that ignores its stop keeps running (Python cannot stop a
    thread), and pool threads would keep the process from exiting. Credits already bound how many
    run at once. If the handler returns a coroutine (a sync function wrapping an async one), it is
    awaited on the loop.
    """
    loop = asyncio.get_running_loop()
    fut: "asyncio.Future[Any]" = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if fut.done():
            return
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def target() -> None:
        try:
            value = context.run(fn, ctx)
            ok = True
        except Exception as e:  # noqa: BLE001 - handed to the loop
            value, ok = e, False
        except BaseException as e:  # noqa: BLE001 - SystemExit, KeyboardInterrupt in a handler
            value, ok = RuntimeError(f"{type(e).__name__}: {e}"), False
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:  # the loop closed meanwhile: the worker is gone
            pass

    threading.Thread(target=target, name=f"ax-handler-{ctx.instance_id}/{ctx.attempt}",
                     daemon=True).start()
    value = await fut
    if inspect.isawaitable(value):
        value = await value
    return value
