#!/usr/bin/env python3
"""An ax worker in plain Python: the worker protocol of proto/ax/v1/worker.proto, by hand.

This file is documentation as much as it is a program: it shows what a client of ax must do in any
language that has gRPC, with nothing but the stubs generated from our .proto (see generate.sh) and
the standard library. Read it next to the comment at the top of worker.proto.

How it is built
---------------
One thread (the main thread) owns all the worker's state and is the only one that writes to the
stream. Everything else talks to it through one inbox queue:

    reader thread (one per stream)  --("msg", n, SchedulerMessage, t) / ("end", n, error)-->  inbox
    handler threads (thread pool)   --("done", key, Result) / ("log"...) / ("progress"...)->  inbox
    signal handler (SIGTERM/SIGINT) --("signal", signum)---------------------------------->  inbox

    main thread: takes one event at a time from the inbox, updates the state, runs the timers
    (heartbeats, early-assignment holds, leases), and puts WorkerMessages on the outbound
    queue.Queue of the current stream; grpcio's own thread pulls them out of that queue through a
    request iterator (a generator) and sends them.

So no locks are needed: `running`, `unacked`, `orphans` and the session are touched by the main
thread only. (Two floats are read across threads: a stream's `last_heard`, written by its reader
thread, and a lease's `end`, read by `Context.lease_expired()`. A float assignment is atomic in
CPython.)

State that must survive a broken stream lives in the Worker, not in the session:
- `running`: attempts this worker holds: held early assignments and running handlers, each with
  its lease (see below) and a threading.Event for Cancel;
- `unacked`: Results sent (or not yet sent) whose ResultAck has not arrived;
- `orphans`: handlers that are no longer ours (their lease ran out, or the shutdown deadline
  passed) but whose threads have not returned: Python cannot stop a thread. Their Result has been
  reported already; whatever they return later is discarded.
Every new session lists `running` and `unacked` in Hello.in_flight. An attempt is identified
everywhere by its key (instance_id, attempt).

Credits, the one piece of arithmetic to get right: axd may send one Assign per credit. The worker
grants `capacity` credits in total at first and one more each time a slot frees up (after sending a
Result). It never grants for a slot that is still busy, so no more than `capacity` handler threads
ever run at once, whatever axd does. A new stream starts with `capacity - |running, unacked and
orphans|` credits. Reject does not give its credit back (the .proto says so), so after rejecting an
Assign we grant a new one. After a reconnect, every unacknowledged Result is sent again and frees
its slot (Credit 1), unless an orphan thread still occupies it: an orphan's slot is granted back
when its thread returns.

Liveness, both ways. Heartbeats go out every Welcome.heartbeat_interval, numbered 1, 2, 3, ... on
each stream; the worker remembers when it sent each one (monotonic clock). axd sends a
SchedulerHeartbeat at least as often; if nothing at all arrives for 3 intervals, the worker drops
the stream and connects to the next endpoint (a paused axd or a partition may never reset the
connection).

Leases and self-fencing. Every attempt in `running` has a lease end on the monotonic clock. Until a
renewal covers it, that is its Assign.accept_by, converted through the estimate of the database
clock (`ServerClock`, which counts from when the message axd answered was sent, so that it is never
slow). SchedulerHeartbeat{renewed_seq: k} moves the end of every attempt whose
Accepted went out before heartbeat k to at least sent_time(k) + Welcome.lease_ttl; Welcome moves
the attempts it adopts to at least the time Hello went out + lease_ttl. When less than
Welcome.fence_margin is left, the handler is told to stop (`ctx.cancelled`, `ctx.lease_expired()`);
if it has not returned half a margin later, it is no longer counted as ours: it is reported FAILED
(retryable) and becomes an orphan. axd gives the instance to another worker only after the lease,
so two attempts of one instance never run as ours at the same time.

Stale assignments: an Assign whose accept_by is less than fence_margin away (estimated database
time) is rejected, not started: it was read late (e.g. the process was paused) and axd may already
have taken it back. The same check runs when an early assignment's hold ends.

Early assignments: the Hello sets start_after_supported, so axd may send an Assign up to its
--dispatch-ahead before the instance is due, with start_after set. The main thread holds it that
long (or until a Cancel), then sends Accepted and starts the handler: the run starts on time
instead of one claim-and-delivery late. A client that does not implement this leaves the flag
unset and gets each instance when it is due.

Usage: python3 worker.py --endpoint 127.0.0.1:7070 --app py --stubs ./gen   (see README.md)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import queue
import random
import signal
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

# Filled in by load_stubs() once --stubs is known: the generated modules ax/v1/*_pb2*.py.
pb: Any = None  # ax.v1.worker_pb2 (WorkerMessage, Hello, ...)
types_pb: Any = None  # ax.v1.types_pb2 (InstanceAttempt, Outcome, LogLevel)
worker_grpc: Any = None  # ax.v1.worker_pb2_grpc (WorkerServiceStub)

CLIENT = "ax-worker-python/0.2.0"
log = logging.getLogger("ax.worker")

# An attempt, everywhere: (instance_id, attempt).
Key = tuple[int, int]

# HTTP/2 keepalive as worker.proto recommends: ping every 20 s, give up after 10 s without an answer,
# also while no call is active. axd refuses pings more frequent than every 10 s. Heartbeats (below),
# not pings, decide whether axd and the worker consider each other alive.
CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
]

# Reconnecting. After a session that lived at least FLAPPING_SESSION past its Welcome, the worker
# connects to the next endpoint at once: the leases of its attempts are running, and it must
# re-announce them before they end. Failed connections try each endpoint once QUICK_RETRY apart,
# then back off: about INITIAL_BACKOFF, twice as long after each failed round up to MAX_BACKOFF,
# each pause randomized to 50-150% (jitter) so a fleet of workers does not reconnect in lockstep.
FLAPPING_SESSION = 1.0
QUICK_RETRY = 0.02
INITIAL_BACKOFF = 0.2
MAX_BACKOFF = 10.0
# How long to wait for Welcome after sending Hello.
WELCOME_TIMEOUT = 10.0
# Default heartbeat interval if Welcome does not say (the .proto's default).
DEFAULT_HEARTBEAT = 2.0
# A stream on which axd has said nothing for this many heartbeat intervals is dropped.
SILENT_INTERVALS = 3
# The main thread wakes at least this often (see Worker._next_event).
MAX_WAIT = 0.25
# Heartbeat send times kept per stream while axd's renewals do not catch up.
MAX_REMEMBERED_HEARTBEATS = 1024
# After the shutdown deadline: handlers are asked to stop (cancel event); STRAGGLER_GRACE later the
# ones still running are reported FAILED (retryable) and abandoned; GIVE_UP_AFTER later the worker
# stops trying to deliver results and exits.
STRAGGLER_GRACE = 2.0
GIVE_UP_AFTER = 5.0

# What axd keeps of each text field, in UTF-8 bytes (worker.proto). Longer text is cut here, the way
# axd would cut it, before it is sent: a message over Welcome.max_message_size (4 MiB) would end the
# stream with RESOURCE_EXHAUSTED, and a Result that can never arrive loses its attempt.
MAX_OUTPUT = 65536
MAX_RESULT_MESSAGE = 4096
MAX_LOG_LINE = 4096
MAX_PROGRESS_MESSAGE = 1024
MAX_REJECT_REASON = 1024


def truncate(s: str, max_bytes: int) -> str:
    """`s` cut to at most `max_bytes` UTF-8 bytes on a character boundary, marked as axd marks it."""
    data = s.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return s
    marker = f"…[truncated, {len(data)} bytes in all]"
    keep = max_bytes - len(marker.encode("utf-8"))
    return data[:max(keep, 0)].decode("utf-8", "ignore") + marker


# gRPC status codes after which reconnecting cannot help: the worker's Hello or identity is wrong.
REFUSED_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.FAILED_PRECONDITION,
}


def load_stubs(stubs_dir: str) -> None:
    """Imports the generated modules from `stubs_dir` (which contains ax/v1/*_pb2*.py)."""
    global pb, types_pb, worker_grpc
    sys.path.insert(0, os.path.abspath(stubs_dir))
    try:
        from ax.v1 import types_pb2, worker_pb2, worker_pb2_grpc
    except ImportError as e:
        raise SystemExit(
            f"worker.py: cannot import the ax.v1 stubs from {stubs_dir!r} ({e}).\n"
            f"Generate them first: examples/python-worker/generate.sh {stubs_dir}"
        ) from e
    pb, types_pb, worker_grpc = worker_pb2, types_pb2, worker_pb2_grpc


# ---------------------------------------------------------------------------------------------------
# Time: protobuf Durations and Timestamps, the database clock, leases.


def seconds(d: Any) -> float:
    """A google.protobuf.Duration as float seconds."""
    return d.seconds + d.nanos / 1e9


def duration_field(msg: Any, name: str) -> Optional[float]:
    """A Duration field of `msg` in seconds, or None if it is unset or zero."""
    if not msg.HasField(name):
        return None
    s = seconds(getattr(msg, name))
    return s if s > 0 else None


def nanos_of(t: Any) -> int:
    """A google.protobuf.Timestamp as integer nanoseconds since the epoch."""
    return t.seconds * 1_000_000_000 + t.nanos


def timestamp_now() -> Timestamp:
    t = Timestamp()
    t.FromNanoseconds(time.time_ns())
    return t


def show_time(ns: int) -> str:
    """Nanoseconds since the epoch as RFC 3339 UTC with milliseconds, for messages."""
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"


SAMPLE_REFRESH = 60.0  # seconds a clock sample is kept when later ones are looser (rate drift)


class ServerClock:
    """The database clock as far as this worker can tell, estimated never to be behind it.

    axd reads its clock (Welcome.server_time, SchedulerHeartbeat.server_time) after the message it
    answers has arrived: Hello for Welcome, heartbeat `renewed_seq` (Hello when 0) for a
    SchedulerHeartbeat. So `server_time + (now - sent_at)`, counted on the monotonic clock from when
    this worker *sent* that message, is at least the database time now (less axd's own small lag,
    which the fence margin covers), however late the answer was read. The estimate is the smallest
    of these bounds; a sample older than SAMPLE_REFRESH gives way to the next one.

    Counting from when the answer arrived would be a lower bound instead: a Welcome read late (the
    process was stopped right after sending Hello) would make the clock slow by as much, and an
    assignment axd has already taken back would look fresh.
    """

    def __init__(self) -> None:
        # (server time in ns, monotonic time the reading counts from, monotonic receipt)
        self._sample: Optional[tuple[int, float, float]] = None

    def observe(self, server_time_ns: int, sent_at: float, received_at: float) -> None:
        """Records a reading axd took after this worker sent a message at `sent_at`."""
        if self._sample is not None:
            server, since, received = self._sample
            current = server + round((sent_at - since) * 1e9)
            if received_at - received < SAMPLE_REFRESH and server_time_ns >= current:
                return
        self._sample = (server_time_ns, sent_at, received_at)

    def at(self, t: float) -> Optional[int]:
        """The estimated database time (ns since the epoch) at monotonic time `t`."""
        if self._sample is None:
            return None
        server, since, _ = self._sample
        return server + round((t - since) * 1e9)

    def monotonic_of(self, server_ns: int) -> Optional[float]:
        """The monotonic time by which the database clock will read `server_ns` (estimated)."""
        if self._sample is None:
            return None
        server, since, _ = self._sample
        return since + (server_ns - server) / 1e9


class Lease:
    """How long an attempt is this worker's own, on the monotonic clock.

    The main thread extends it (renewals never shorten it) and enforces it; the handler may read it
    through `Context.lease_expired()`. `end` None: axd sent no lease information (an axd without
    leases), so the attempt is never fenced.
    """

    def __init__(self, end: Optional[float], margin: float):
        self.end = end
        self.margin = margin

    def extend_to(self, end: float) -> None:
        if self.end is not None and end > self.end:
            self.end = end

    def fence_at(self) -> Optional[float]:
        """When the handler is told to stop: `margin` before the end."""
        return None if self.end is None else self.end - self.margin

    def abandon_at(self) -> Optional[float]:
        """When a handler that ignored the stop is no longer counted as ours: half a margin before
        the end."""
        return None if self.end is None else self.end - self.margin / 2

    def expired(self) -> bool:
        """True once the fence time has passed (by the clock, whether or not the main thread has
        acted on it yet, e.g. in a process just resumed from a pause)."""
        fence = self.fence_at()
        return fence is not None and time.monotonic() >= fence


# ---------------------------------------------------------------------------------------------------
# Handlers: what the worker runs. A handler is a plain function taking a Context. It returns the
# output (a str is sent as is, anything else as JSON, None as ""), or raises HandlerError to fail.
# Any other exception also fails the attempt, as retryable (like a panic in the Rust SDK).


class HandlerError(Exception):
    """A handler failure. `retryable=False` tells axd not to use the task's retry policy."""

    def __init__(self, message: str, retryable: bool = False):
        super().__init__(message)
        self.message = message
        self.retryable = retryable


@dataclass
class Context:
    """What a handler knows about the attempt it runs, and how it talks back."""

    instance_id: int
    attempt: int
    task_name: str
    handler: str
    params: str  # the JSON document, as sent ("{}" if none)
    idempotency_key: str  # same for every attempt of the instance: use it for idempotent effects
    trigger_time: Optional[datetime]
    timeout: Optional[float]  # seconds; informational, axd's clock decides
    # Set when axd sends Cancel (timeout, operator, ack timeout, or the attempt is no longer ours),
    # when the attempt's lease is about to run out, or at the shutdown deadline. Python threads
    # cannot be stopped from outside: long handlers must check it.
    cancelled: threading.Event = field(default_factory=threading.Event)
    _lease: Lease = field(default_factory=lambda: Lease(None, 0.0))
    _inbox: Any = None

    def json(self) -> Any:
        return json.loads(self.params)

    def lease_expired(self) -> bool:
        """True once this attempt's lease is (about to be) over: axd may give the instance to
        another worker. Reads the clock itself, so it is right even in a process that was just
        resumed from a pause: check it before a side effect that must not happen twice."""
        return self._lease.expired()

    def log(self, message: str, level: str = "INFO") -> None:
        """Sends a log line, kept with the instance (`axctl instance logs`). Best effort."""
        self._inbox.put(("log", (self.instance_id, self.attempt), level, message, time.time_ns()))

    def progress(self, percent: int, message: str = "") -> None:
        """Reports progress, shown by `axctl instance get`. Best effort."""
        self._inbox.put(("progress", (self.instance_id, self.attempt), percent, message))


HandlerFn = Callable[[Context], Any]
HANDLERS: dict[str, HandlerFn] = {}


def handler(name: str) -> Callable[[HandlerFn], HandlerFn]:
    def register(fn: HandlerFn) -> HandlerFn:
        HANDLERS[name] = fn
        return fn

    return register


@handler("py-echo")
def echo(ctx: Context) -> str:
    """Returns the params unchanged."""
    return ctx.params


@handler("py-sum")
def sum_numbers(ctx: Context) -> dict:
    """`{"numbers": [1, 2, 3]}` -> `{"sum": 6}`. Bad params fail for good: retrying cannot help."""
    try:
        params = ctx.json()
    except ValueError as e:
        raise HandlerError(f"py-sum: params are not JSON: {e}", retryable=False) from None
    numbers = params.get("numbers") if isinstance(params, dict) else None
    if not isinstance(numbers, list):
        shown = ctx.params if len(ctx.params) <= 200 else ctx.params[:200] + "..."
        raise HandlerError(
            f'py-sum: params must be {{"numbers": [...]}} with a list of numbers, got {shown}',
            retryable=False,
        )
    for i, n in enumerate(numbers):
        if isinstance(n, bool) or not isinstance(n, (int, float)):
            raise HandlerError(
                f"py-sum: numbers[{i}] is {json.dumps(n)}, not a number", retryable=False
            )
    ctx.log(f"summing {len(numbers)} numbers")
    return {"sum": sum(numbers)}


@handler("py-flaky")
def flaky(ctx: Context) -> dict:
    """Fails (retryable) on attempt 1 and succeeds afterwards: shows the task's retry policy."""
    if ctx.attempt == 1:
        raise HandlerError("py-flaky: failing attempt 1 on purpose", retryable=True)
    return {"attempt": ctx.attempt}


@handler("py-sleep")
def sleep(ctx: Context) -> dict:
    """`{"ms": 500, "attempts": [1], "ignore_cancel": false}`: sleeps `ms` milliseconds (only on the
    listed attempts, if given). Stops early, failing (retryable), when canceled; with
    `ignore_cancel` it sleeps on regardless, like a handler stuck in a call it cannot interrupt."""
    try:
        params = ctx.json()
    except ValueError as e:
        raise HandlerError(f"py-sleep: params are not JSON: {e}", retryable=False) from None
    if not isinstance(params, dict):
        raise HandlerError("py-sleep: params must be a JSON object", retryable=False)
    ms, attempts = params.get("ms", 0), params.get("attempts")
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms < 0:
        raise HandlerError(f"py-sleep: ms must be a number >= 0, got {json.dumps(ms)}")
    if attempts is not None and ctx.attempt not in attempts:
        return {"slept_ms": 0}
    if params.get("ignore_cancel"):
        time.sleep(ms / 1000)
    elif ctx.cancelled.wait(ms / 1000):
        raise HandlerError("py-sleep: canceled while sleeping", retryable=True)
    return {"slept_ms": ms}


class ExecLog:
    """`--exec-log FILE`: one JSON line at the start and one at the end of every handler run, written
    by the handler thread itself (the same format as the Rust demo-worker's, so tests read both):
    what really ran where and when, independent of what axd recorded."""

    def __init__(self, path: str, worker_id: str):
        self._file = open(path, "a", encoding="utf-8")
        self._worker = worker_id
        self._lock = threading.Lock()

    def write(self, ctx: Context, event: str, outcome: Optional[str] = None) -> None:
        def utc(t: datetime) -> str:
            return t.astimezone(timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"

        line: dict[str, Any] = {
            "event": event,
            "instance": ctx.instance_id,
            "attempt": ctx.attempt,
            "worker": self._worker,
            "handler": ctx.handler,
            "task": ctx.task_name,
            "trigger_time": utc(ctx.trigger_time or datetime.now(timezone.utc)),
            "at": utc(datetime.now(timezone.utc)),
            "outcome": outcome,
        }
        if event == "end" and ctx.lease_expired():
            # The lease ran out before the handler returned: it was told to stop.
            line["fenced"] = True
        with self._lock:
            self._file.write(json.dumps(line) + "\n")
            self._file.flush()


def run_handler(fn: HandlerFn, ctx: Context, exec_log: Optional[ExecLog]) -> None:
    """Runs a handler on a pool thread and turns its outcome into a Result for the main thread."""
    key = (ctx.instance_id, ctx.attempt)
    r = pb.Result(instance_id=ctx.instance_id, attempt=ctx.attempt)
    if exec_log is not None:
        exec_log.write(ctx, "start")
    try:
        out = fn(ctx)
        r.outcome = types_pb.OUTCOME_SUCCESS
        r.output = out if isinstance(out, str) else "" if out is None else json.dumps(out)
    except HandlerError as e:
        r.outcome = types_pb.OUTCOME_FAILED
        r.message = e.message
        r.retryable = e.retryable
    except Exception as e:  # noqa: BLE001 - any bug in a handler fails only its attempt
        log.exception("handler %s raised", ctx.handler)
        r.outcome = types_pb.OUTCOME_FAILED
        r.message = f"handler raised {type(e).__name__}: {e}"
        r.retryable = True
    if r.outcome == types_pb.OUTCOME_FAILED and ctx.lease_expired():
        # It was told to stop because its lease ran out; another worker may run it: say so.
        r.message = f"stopped: lease ran out with no renewal from axd ({r.message})"
        r.retryable = True
    r.finished_at.CopyFrom(timestamp_now())
    if exec_log is not None:
        exec_log.write(ctx, "end", types_pb.Outcome.Name(r.outcome).removeprefix("OUTCOME_"))
    # Hand the result to the main thread; it owns the stream.
    ctx._inbox.put(("done", key, r))


# ---------------------------------------------------------------------------------------------------
# The protocol.


class Session:
    """One Connect stream. Ends for good when the stream breaks; the Worker then opens a new one."""

    def __init__(self, number: int, endpoint: str, inbox: "queue.SimpleQueue[Any]"):
        self.number = number
        self.endpoint = endpoint
        self.channel = grpc.insecure_channel(endpoint, options=CHANNEL_OPTIONS)
        # The outbound half of the stream. grpcio pulls messages from this generator on its own
        # thread and sends them in order; returning from the generator half-closes the stream.
        self.outbound: "queue.Queue[Any]" = queue.Queue()
        self.welcome: Any = None  # set once Welcome arrived
        self.welcomed_at: Optional[float] = None
        self.started = time.monotonic()
        self.hello_at = self.started  # when Hello went out: leases of adopted attempts run from here
        # When anything last arrived from axd; written by the reader thread.
        self.last_heard = self.started
        self.heartbeat_every = DEFAULT_HEARTBEAT
        self.next_heartbeat = 0.0
        # Heartbeats sent on this stream: the last seq, and when each recent one went out.
        self.heartbeat_seq = 0
        self.heartbeat_sent: dict[int, float] = {}
        self._closed = False
        self._inbox = inbox
        self._call: Any = None

    def _requests(self) -> Any:
        while True:
            m = self.outbound.get()
            if m is None:  # our close(): end the request stream
                return
            yield m

    def open(self, hello: Any) -> None:
        # Hello must be the first message: queue it before the call starts pulling.
        self.hello_at = time.monotonic()
        self.send(hello=hello)
        stub = worker_grpc.WorkerServiceStub(self.channel)
        # A bidirectional call returns at once; its result is an iterator of SchedulerMessages.
        self._call = stub.Connect(self._requests())
        # Iterating blocks, so a reader thread turns the responses into inbox events.
        threading.Thread(target=self._read, name=f"reader-{self.number}", daemon=True).start()

    def _read(self) -> None:
        try:
            for m in self._call:
                # Stamp the arrival here, not when the main thread gets to it: liveness and the
                # database clock estimate are about when axd's message arrived.
                now = time.monotonic()
                self.last_heard = now
                self._inbox.put(("msg", self.number, m, now))
            self._inbox.put(("end", self.number, None))
        except grpc.RpcError as e:  # the call object itself is the error: it has code() and details()
            self._inbox.put(("end", self.number, e))

    def send(self, **one_field: Any) -> None:
        """Queues a WorkerMessage with exactly one field set, e.g. send(credit=pb.Credit(grant=1))."""
        if not self._closed:
            self.outbound.put(pb.WorkerMessage(**one_field))

    def heartbeat(self, running: int) -> None:
        """Sends the next numbered Heartbeat and remembers when it went out."""
        self.heartbeat_seq += 1
        # Queued now, on the wire a moment later: a lease counted from here ends early, never late.
        self.heartbeat_sent[self.heartbeat_seq] = time.monotonic()
        if len(self.heartbeat_sent) > MAX_REMEMBERED_HEARTBEATS:
            del self.heartbeat_sent[min(self.heartbeat_sent)]
        self.send(heartbeat=pb.Heartbeat(running=running, seq=self.heartbeat_seq))

    def heartbeat_sent_at(self, seq: int) -> Optional[float]:
        """When heartbeat `seq` went out (and forget older ones: renewals only move forward)."""
        for old in [s for s in self.heartbeat_sent if s < seq]:
            del self.heartbeat_sent[old]
        return self.heartbeat_sent.get(seq)

    def close(self) -> None:
        """Half-closes the stream (axd then ends the session cleanly) after what is queued."""
        if not self._closed:
            self._closed = True
            self.outbound.put(None)

    def abort(self) -> None:
        """Drops the stream and the connection."""
        self.close()
        if self._call is not None:
            self._call.cancel()
        self.channel.close()


@dataclass
class Attempt:
    """An attempt this worker holds: an early assignment waiting for its start, or a running handler."""

    ctx: Context
    fn: HandlerFn
    lease: Lease
    # Assign.accept_by, database time in ns (None if axd did not send one).
    accept_by: Optional[int]
    # Monotonic time a held (early) assignment starts; None once the handler started.
    start_at: Optional[float]
    # How many heartbeats had gone out on the current stream when its Accepted did: a renewal
    # answering a later heartbeat covers it. None: not accepted on this stream (held, or from an
    # earlier stream and not adopted by Welcome).
    accepted_after: Optional[int] = None
    # The handler was told to stop because its lease is about to run out.
    fenced: bool = False
    # axd said it is not ours to run any more (Cancel, or Welcome released it): it is being
    # stopped, and renewals no longer extend its lease (axd renews only attempts it still gives us).
    revoked: bool = False

    @property
    def held(self) -> bool:
        return self.start_at is not None


# How a session ended.
FINISHED, REFUSED, DRAINED, LOST = "finished", "refused", "drained", "lost"


class Worker:
    def __init__(self, endpoints: list[str], app: str, worker_id: str, capacity: int,
                 labels: dict[str, str], shutdown_deadline: float,
                 exec_log: Optional[ExecLog] = None):
        self.endpoints = endpoints
        self.app = app
        self.worker_id = worker_id
        self.capacity = capacity
        self.labels = labels
        self.shutdown_deadline = shutdown_deadline
        self.exec_log = exec_log
        # The inbox. SimpleQueue.put is reentrant, so the signal handler may use it safely even if
        # it interrupts the main thread inside a put or get (queue.Queue could deadlock there).
        self.inbox: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        # At most `capacity` handler threads at once (orphans included); the credit arithmetic
        # guarantees the pool never queues.
        self.pool = ThreadPoolExecutor(max_workers=capacity, thread_name_prefix="handler")
        self.running: dict[Key, Attempt] = {}
        self.unacked: dict[Key, Any] = {}  # key -> pb.Result
        self.orphans: dict[Key, Context] = {}  # no longer ours, thread still running
        self.session: Optional[Session] = None
        self.sessions = 0
        # From the latest Welcome: lease_ttl None means axd sends no leases (nothing is fenced).
        self.lease_ttl: Optional[float] = None
        self.fence_margin = 0.0
        self.clock = ServerClock()
        self.shutdown_at: Optional[float] = None  # monotonic time of SIGTERM/SIGINT
        self.canceled_all = False
        self.abandoned = 0  # handlers left running by the shutdown
        self.gave_up = False

    # --- lifecycle ----------------------------------------------------------------------------------

    def run(self) -> int:
        """Connects, serves, reconnects; returns the exit code after a graceful shutdown."""
        backoff = INITIAL_BACKOFF
        n = 0
        failed = 0  # connections that failed (or flapped) since the last good session
        while True:
            endpoint = self.endpoints[n % len(self.endpoints)]
            n += 1
            end, lived = self._serve(endpoint)
            if end == FINISHED:
                return 1 if (self.abandoned or self.gave_up) else 0
            if end == REFUSED:
                return 2
            # Drained or lost: reconnect to the next endpoint. Attempts keep running meanwhile,
            # and their leases keep counting down: re-announcing them soon is what keeps them.
            if lived is not None and (end == DRAINED or lived >= FLAPPING_SESSION):
                failed, backoff, pause = 0, INITIAL_BACKOFF, 0.0
            else:
                failed += 1
                if failed % len(self.endpoints) != 0:
                    pause = QUICK_RETRY  # try every endpoint once before backing off
                else:
                    pause = backoff * random.uniform(0.5, 1.5)
                    backoff = min(backoff * 2, MAX_BACKOFF)
            log.info("reconnecting in %.2fs", pause)
            if self._offline(pause):
                return 1 if (self.abandoned or self.gave_up) else 0

    def _offline(self, pause: float) -> bool:
        """Waits `pause` seconds without a stream; handlers keep finishing and leases keep being
        enforced. True if the shutdown is done."""
        until = time.monotonic() + pause
        while True:
            if self._shutdown_complete():
                return True
            now = time.monotonic()
            self._run_timers(None, now)
            if now >= until:
                return False
            ev = self._next_event(min(until, self._next_timer(None)) - now)
            if ev is not None:
                self._handle_local(ev)

    def _next_event(self, timeout: float) -> Any:
        # Never block longer than MAX_WAIT: CPython runs signal handlers in the main thread only, and
        # when the OS delivers the signal to another thread, the main thread notices it only once it
        # runs Python code again.
        try:
            return self.inbox.get(timeout=max(0.0, min(timeout, MAX_WAIT)))
        except queue.Empty:
            return None

    def _hello(self) -> Any:
        """Hello for a new session: who we are, and what we still hold from earlier sessions."""
        held = [*self.running, *self.unacked]  # disjoint: a Result is kept once its attempt ended
        if self.shutdown_at is not None:
            credits = 0  # taking no new work
        else:
            # A slot is busy while its attempt runs, while its Result waits for an ack, and while an
            # orphaned handler still occupies its thread.
            busy = set(held) | set(self.orphans)
            credits = max(0, self.capacity - len(busy))
        return pb.Hello(
            app=self.app,
            worker_id=self.worker_id,  # the same on every reconnect: that is how attempts are re-adopted
            handlers=sorted(HANDLERS),
            capacity=self.capacity,
            labels=self.labels,
            in_flight=[types_pb.InstanceAttempt(instance_id=i, attempt=a) for i, a in held],
            client=CLIENT,
            start_after_supported=True,  # we hold early assignments until Assign.start_after
            initial_credits=credits,
        )

    def _serve(self, endpoint: str) -> tuple[str, Optional[float]]:
        """Runs one session; returns (how it ended, seconds it lived after Welcome or None)."""
        self.sessions += 1
        s = Session(self.sessions, endpoint, self.inbox)
        self.session = s
        s.open(self._hello())
        welcome_by = time.monotonic() + WELCOME_TIMEOUT
        end = None
        try:
            while end is None:
                now = time.monotonic()
                if s.welcome is None and now >= welcome_by:
                    log.warning("no Welcome from %s within %.0fs", endpoint, WELCOME_TIMEOUT)
                    end = LOST
                    break
                if s.welcome is not None:
                    silent = now - s.last_heard
                    if silent >= SILENT_INTERVALS * s.heartbeat_every:
                        # A stalled axd or a partition that does not reset the connection says
                        # nothing at all; TCP and HTTP/2 keepalive would notice only after the
                        # leases have run out. Move on while they can still be renewed elsewhere.
                        log.warning("axd at %s has said nothing for %.2fs; moving to another endpoint",
                                    endpoint, silent)
                        end = LOST
                        break
                if self._shutdown_complete():
                    if s.welcome is not None:
                        self._close_gracefully(s)
                    end = FINISHED
                    break
                self._run_timers(s, now)
                ev = self._next_event(self._next_timer(s if s.welcome is not None else None,
                                                       welcome_by) - now)
                if ev is None:
                    continue
                kind = ev[0]
                if kind == "msg":
                    if ev[1] == s.number:  # events of older streams are stale
                        end = self._on_message(s, ev[2], ev[3])
                elif kind == "end":
                    if ev[1] == s.number:
                        end = self._on_end(s, ev[2])
                else:
                    self._handle_local(ev)
        finally:
            self.session = None
            s.abort()
        lived = time.monotonic() - s.welcomed_at if s.welcomed_at is not None else None
        return end, lived

    def _close_gracefully(self, s: Session) -> None:
        """Everything is delivered: half-close and give axd a moment to end the session."""
        log.info("all results delivered; closing the stream")
        s.close()
        until = time.monotonic() + 2.0
        while time.monotonic() < until:
            ev = self._next_event(until - time.monotonic())
            if ev is not None and ev[0] == "end" and ev[1] == s.number:
                return

    def _on_end(self, s: Session, err: Any) -> str:
        if err is None:
            log.warning("axd ended the stream")
            return LOST
        code, details = err.code(), err.details()
        if code in REFUSED_CODES:
            # E.g. INVALID_ARGUMENT "hello.capacity: must be 1..=10000, got 0": fix the config.
            log.error("axd refused this worker: %s: %s", code.name, details)
            return REFUSED
        log.warning("stream to %s ended: %s: %s", s.endpoint, code.name, details)
        return LOST

    # --- timers: heartbeats, holds, leases ----------------------------------------------------------

    def _next_timer(self, s: Optional[Session], other: float = float("inf")) -> float:
        """The next monotonic time something is due (at most `other`): a heartbeat, the silence
        limit, a hold's end, a fence or an abandonment."""
        due = [other]
        if s is not None:
            due += [s.next_heartbeat, s.last_heard + SILENT_INTERVALS * s.heartbeat_every]
        for a in self.running.values():
            if a.held and s is not None:  # a hold ends only on a stream: Accepted must go out
                due.append(a.start_at)
            fence, abandon = a.lease.fence_at(), a.lease.abandon_at()
            if fence is not None:
                due.append(abandon if a.fenced else fence)
        return min(due)

    def _run_timers(self, s: Optional[Session], now: float) -> None:
        """Does what is due. `s` is the current stream once Welcome arrived, else None."""
        if s is not None and s.welcome is not None and now >= s.next_heartbeat:
            # Heartbeat every interval, always (also while busy with other messages).
            s.heartbeat(running=len(self.running))
            s.next_heartbeat = max(s.next_heartbeat + s.heartbeat_every, now)
        connected = self._connected()
        for key, a in list(self.running.items()):
            fence, abandon = a.lease.fence_at(), a.lease.abandon_at()
            if a.held:
                if fence is not None and now >= fence:
                    # Its lease (its accept-by time, unless Welcome adopted it since) is about to
                    # end: axd takes it back and may give it to another worker. Never start it.
                    self._drop_held(key, "stale assignment: its accept-by time is less than the "
                                         f"fence margin ({self.fence_margin:.3f}s) away")
                elif a.start_at <= now and connected is not None:
                    # The hold is over: the same check as for a new Assign, then start it. (While
                    # disconnected it waits: Accepted must go out when the handler starts.)
                    why = self._stale(a.accept_by) if a.accepted_after is None else None
                    if why is not None:
                        self._drop_held(key, why)
                    else:
                        self._start(connected, key, a)
                continue
            if fence is not None and not a.fenced and now >= fence:
                a.fenced = True
                a.ctx.cancelled.set()
                log.warning("lease of %d/%d is about to run out with no renewal from axd: "
                            "stopping the handler", *key)
            if a.fenced and abandon is not None and now >= abandon:
                # The handler did not stop. It is no longer ours: another worker may be given the
                # instance once the lease ends. Report it now; discard whatever it returns later.
                self._abandon(key, "stopped: lease ran out with no renewal from axd "
                                   "(the handler did not stop in time; another worker may run it)")

    # --- messages from axd --------------------------------------------------------------------------

    def _on_message(self, s: Session, m: Any, received_at: float) -> Optional[str]:
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
            self._on_cancel(s, m.cancel)
        elif kind == "result_ack":
            a = m.result_ack
            self.unacked.pop((a.instance_id, a.attempt), None)  # durable (or ignored): forget it
            if not a.applied:
                log.info("result %d/%d not applied: %s", a.instance_id, a.attempt, a.note)
        elif kind == "drain":
            # This axd is going away. Handlers keep running; the next Hello re-announces them.
            log.info("axd is draining (%s); reconnecting", m.drain.reason)
            return DRAINED
        return None

    def _on_welcome(self, s: Session, w: Any, received_at: float) -> None:
        s.welcome = w
        s.welcomed_at = received_at
        s.heartbeat_every = duration_field(w, "heartbeat_interval") or DEFAULT_HEARTBEAT
        s.next_heartbeat = time.monotonic() + s.heartbeat_every
        self.lease_ttl = duration_field(w, "lease_ttl")
        self.fence_margin = duration_field(w, "fence_margin") or 0.0
        if w.HasField("server_time"):
            # axd read its clock after our Hello arrived.
            self.clock.observe(nanos_of(w.server_time), s.hello_at, received_at)
        taking_work = self.shutdown_at is None
        log.info(
            "connected to %s: session %s on %s, heartbeat %.2fs, lease %s, adopted %d, released %d",
            s.endpoint, w.session_id, w.scheduler_id, s.heartbeat_every,
            f"{self.lease_ttl:.2f}s" if self.lease_ttl else "none", len(w.adopted), len(w.released),
        )
        # Heartbeat numbers start again on this stream: no renewal here covers anything yet. Adopted
        # attempts are renewed as of sending Hello, and from the first renewal of this stream on.
        adopted = {(a.instance_id, a.attempt) for a in w.adopted}
        for key, a in self.running.items():
            a.lease.margin = self.fence_margin
            a.accepted_after = None
            if key in adopted:
                a.accepted_after = 0
                if self.lease_ttl is not None:
                    a.lease.extend_to(s.hello_at + self.lease_ttl)
        # Every Result not yet acknowledged goes out again: applied if axd adopted its attempt,
        # recorded on the instance's trail as a late result if it released it. Either way its slot
        # is free on axd's side now, so grant it back, unless an orphaned handler still occupies it.
        for key, result in list(self.unacked.items()):
            s.send(result=result)
            if taking_work and key not in self.orphans:
                s.send(credit=pb.Credit(grant=1))
        for r in w.released:
            key = (r.instance_id, r.attempt)
            a = self.running.get(key)
            if a is None:
                continue
            # No longer ours. A held one never starts; a running one is asked to stop: its Result
            # (a late one) is sent when it returns, and its slot granted back then, as usual.
            a.revoked = True
            if a.held:
                self._finish_unstarted(key, "released by axd before its start time")
            else:
                a.ctx.cancelled.set()
        if not taking_work:
            # A shutdown started while we were disconnected or waiting for this Welcome: make sure
            # no credit granted with the Hello is left.
            s.send(credit=pb.Credit(grant=0, reset=True))

    def _on_scheduler_heartbeat(self, s: Session, h: Any, received_at: float) -> None:
        k = h.renewed_seq
        sent = s.heartbeat_sent_at(k) if k > 0 else None
        if h.HasField("server_time"):
            # axd read its clock after heartbeat k arrived (after Hello, for 0).
            self.clock.observe(nanos_of(h.server_time), sent if sent is not None else s.hello_at, received_at)
        if self.lease_ttl is None or sent is None:
            return
        # A renewal covering every attempt whose Accepted went out before heartbeat k committed:
        # no axd gives them to anyone else before lease_ttl has passed since we sent heartbeat k.
        for a in self.running.values():
            if a.accepted_after is not None and a.accepted_after < k and not a.revoked:
                a.lease.extend_to(sent + self.lease_ttl)

    def _stale(self, accept_by: Optional[int]) -> Optional[str]:
        """Why an assignment must not start: its accept-by time is less than the fence margin away
        (estimated database time). None if it may start."""
        now = self.clock.at(time.monotonic())
        if accept_by is None or now is None:
            return None
        if now + round(self.fence_margin * 1e9) < accept_by:
            return None
        return (f"stale assignment: read at {show_time(now)} (database time, estimated), less than "
                f"the fence margin ({self.fence_margin:.3f}s) before its accept-by time "
                f"{show_time(accept_by)}")

    def _on_assign(self, s: Session, a: Any) -> None:
        key = (a.instance_id, a.attempt)
        if self.shutdown_at is not None:
            # An Assign may already have been on the wire when we reset our credits.
            s.send(reject=pb.Reject(instance_id=a.instance_id, attempt=a.attempt,
                                    reason="worker shutting down"))
            return
        if key in self.running or key in self.unacked or key in self.orphans:
            log.warning("duplicate Assign %d/%d ignored", *key)
            return
        fn = HANDLERS.get(a.handler)
        accept_by = nanos_of(a.accept_by) if a.HasField("accept_by") else None
        why = (f"handler {a.handler!r} is not registered on this worker" if fn is None
               else self._stale(accept_by))
        if why is not None:
            # Read too late (the process was paused, or the message waited in a buffer): axd has
            # taken it back by now, or is about to, and may have given it to another worker.
            log.warning("assignment %d/%d not started: %s", *key, why)
            s.send(reject=pb.Reject(instance_id=a.instance_id, attempt=a.attempt, reason=truncate(why, MAX_REJECT_REASON)))
            s.send(credit=pb.Credit(grant=1))  # Reject does not return the credit it consumed
            return
        if len(self.running) + len(self.orphans) >= self.capacity:
            # Cannot happen while credits are granted as above; refuse rather than queue.
            s.send(reject=pb.Reject(instance_id=a.instance_id, attempt=a.attempt,
                                    reason="worker at capacity"))
            return
        ctx = Context(
            instance_id=a.instance_id,
            attempt=a.attempt,
            task_name=a.task_name,
            handler=a.handler,
            params=a.params or "{}",
            idempotency_key=a.idempotency_key,
            trigger_time=a.trigger_time.ToDatetime(tzinfo=timezone.utc)
            if a.HasField("trigger_time") else None,
            timeout=seconds(a.timeout) if a.HasField("timeout") else None,
            _inbox=self.inbox,
        )
        # Until a renewal covers it, the attempt is ours until its accept-by time.
        lease_end = None
        if self.lease_ttl is not None and accept_by is not None:
            lease_end = self.clock.monotonic_of(accept_by)
        ctx._lease = Lease(lease_end, self.fence_margin)
        # Sent ahead of its time (we set Hello.start_after_supported): hold it that long from now.
        hold = duration_field(a, "start_after") or 0.0
        attempt = Attempt(ctx=ctx, fn=fn, lease=ctx._lease, accept_by=accept_by,
                          start_at=time.monotonic() + hold if hold > 0 else None)
        self.running[key] = attempt
        log.info("%s %s %d/%d (task %s)", "hold" if hold > 0 else "run", a.handler, *key, a.task_name)
        if hold <= 0:
            self._start(s, key, attempt)

    def _start(self, s: Session, key: Key, a: Attempt) -> None:
        """Starts a handler: Accepted (DISPATCHED -> RUNNING on axd, and its run timeout starts)."""
        if a.held:
            a.start_at = None
            log.info("run %s %d/%d (hold over)", a.ctx.handler, *key)
        s.send(accepted=pb.Accepted(instance_id=key[0], attempt=key[1]))
        a.accepted_after = s.heartbeat_seq
        self.pool.submit(run_handler, a.fn, a.ctx, self.exec_log)

    def _on_cancel(self, s: Session, c: Any) -> None:
        key = (c.instance_id, c.attempt)
        a = self.running.get(key)
        if a is None:
            return
        # Any reason (timeout, operator, ack timeout, not ours): stop it. After an ack timeout axd
        # has freed the slot on its side; we grant it back once we report the Result, as always.
        log.info("cancel %d/%d: %s", *key, c.reason)
        if a.held:
            self._finish_unstarted(key, f"canceled before its start time: {c.reason}")
        else:
            # Cooperative: the handler checks it. Its lease is not extended any more, so one that
            # ignores the Cancel is fenced and abandoned when the lease runs out.
            a.revoked = True
            a.ctx.cancelled.set()

    # --- ending attempts ----------------------------------------------------------------------------

    def _drop_held(self, key: Key, why: str) -> None:
        """A held assignment that must never start: Reject it (and grant its credit back) if we can
        talk to axd; if not, forget it (it is not re-announced, and axd takes it back)."""
        self.running.pop(key)
        log.warning("held assignment %d/%d not started: %s", *key, why)
        s = self._connected()
        if s is not None:
            s.send(reject=pb.Reject(instance_id=key[0], attempt=key[1], reason=truncate(why, MAX_REJECT_REASON)))
            if self.shutdown_at is None:
                s.send(credit=pb.Credit(grant=1))

    def _finish_unstarted(self, key: Key, why: str) -> None:
        """A held assignment ends without running: FAILED (retryable), and its slot is free."""
        self.running.pop(key)
        r = pb.Result(instance_id=key[0], attempt=key[1], outcome=types_pb.OUTCOME_FAILED,
                      message=why, retryable=True, finished_at=timestamp_now())
        self._report(key, r, slot_free=True)

    def _abandon(self, key: Key, why: str) -> None:
        """A handler that did not stop is no longer ours: report it FAILED (retryable) now and
        discard whatever it returns. Its thread keeps the slot until it returns."""
        a = self.running.pop(key)
        a.ctx.cancelled.set()
        self.orphans[key] = a.ctx
        r = pb.Result(instance_id=key[0], attempt=key[1], outcome=types_pb.OUTCOME_FAILED,
                      message=why, retryable=True, finished_at=timestamp_now())
        self._report(key, r, slot_free=False)

    def _report(self, key: Key, result: Any, slot_free: bool) -> None:
        """Sends a Result (kept until its ResultAck, whether or not it can be sent now) and, if its
        slot is free, grants it back. Text axd would cut is cut here, so the Result fits."""
        result.output = truncate(result.output, MAX_OUTPUT)
        result.message = truncate(result.message, MAX_RESULT_MESSAGE)
        log.info("done %d/%d: %s %s", *key, types_pb.Outcome.Name(result.outcome), result.message)
        self.unacked[key] = result
        s = self._connected()
        if s is not None:
            s.send(result=result)
            if slot_free and self.shutdown_at is None:
                s.send(credit=pb.Credit(grant=1))  # the slot is free again

    # --- events from this process -------------------------------------------------------------------

    def _connected(self) -> Optional[Session]:
        s = self.session
        return s if s is not None and s.welcome is not None else None

    def _ours(self, key: Key) -> bool:
        """Whether Log and Progress about `key` may go out: only for attempts still ours (not
        canceled, released by Welcome, or abandoned)."""
        a = self.running.get(key)
        return a is not None and not a.revoked

    def _handle_local(self, ev: Any) -> None:
        kind = ev[0]
        if kind == "done":
            self._on_done(ev[1], ev[2])
        elif kind == "signal":
            self._on_signal(ev[1])
        elif kind == "log":
            _, key, level, message, at_ns = ev
            s = self._connected()
            if s is not None and self._ours(key):
                at = Timestamp(seconds=at_ns // 1_000_000_000, nanos=at_ns % 1_000_000_000)
                s.send(log=pb.Log(instance_id=key[0], attempt=key[1], message=truncate(message, MAX_LOG_LINE), at=at,
                                  level=types_pb.LogLevel.Value(f"LOG_LEVEL_{level}")))
        elif kind == "progress":
            _, key, percent, message = ev
            s = self._connected()
            if s is not None and self._ours(key):
                s.send(progress=pb.Progress(instance_id=key[0], attempt=key[1],
                                            percent=max(0, min(100, percent)),
                                            message=truncate(message, MAX_PROGRESS_MESSAGE)))
        # "msg"/"end" of a stream that is gone: nothing to do.

    def _on_done(self, key: Key, result: Any) -> None:
        if self.running.pop(key, None) is not None:
            self._report(key, result, slot_free=True)
            return
        if self.orphans.pop(key, None) is not None:
            # Reported FAILED when it was abandoned; what it says now is not ours to report.
            log.warning("abandoned handler %d/%d returned (%s); its result is discarded", *key,
                        types_pb.Outcome.Name(result.outcome))
            s = self._connected()
            if s is not None and self.shutdown_at is None:
                # Its thread is free at last. (Its Result has gone out on this stream already: it
                # was sent when abandoned, or again after Welcome.)
                s.send(credit=pb.Credit(grant=1))

    def _on_signal(self, signum: int) -> None:
        if self.shutdown_at is not None:
            log.warning("second %s: exiting now", signal.Signals(signum).name)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
        log.info("%s: shutting down; %d running, %d results unacknowledged",
                 signal.Signals(signum).name, len(self.running), len(self.unacked))
        self.shutdown_at = time.monotonic()
        s = self._connected()
        if s is not None:
            # Stop new assignments: discard every credit granted so far.
            s.send(credit=pb.Credit(grant=0, reset=True))

    def _shutdown_complete(self) -> bool:
        """During a shutdown: True once everything is delivered, or the deadlines have passed."""
        if self.shutdown_at is None:
            return False
        if not self.running and not self.unacked:
            return True
        elapsed = time.monotonic() - self.shutdown_at
        if elapsed >= self.shutdown_deadline and not self.canceled_all:
            self.canceled_all = True
            log.warning("shutdown deadline passed: asking %d handlers to stop", len(self.running))
            for a in self.running.values():
                a.ctx.cancelled.set()
        if elapsed >= self.shutdown_deadline + STRAGGLER_GRACE and self.running:
            # Report them FAILED (retryable) so axd can run them elsewhere, and leave the threads.
            for key in list(self.running):
                if self.running[key].held:
                    self._finish_unstarted(key, "worker shut down before its start time")
                else:
                    self.abandoned += 1
                    self._abandon(key, "worker shut down before the handler finished")
        if elapsed >= self.shutdown_deadline + STRAGGLER_GRACE + GIVE_UP_AFTER:
            log.error("giving up delivering %d results", len(self.unacked))
            self.gave_up = True
            return True
        return False


# ---------------------------------------------------------------------------------------------------


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="ax worker in plain Python")
    p.add_argument("--endpoint", action="append",
                   help="axd host:port; repeat to fail over between several [default: 127.0.0.1:7070]")
    p.add_argument("--app", default="py", help="app name (Hello.app) [default: py]")
    p.add_argument("--worker-id", default=f"{socket.gethostname()}-{os.getpid()}",
                   help="stable worker id, kept across reconnects [default: HOST-PID]")
    p.add_argument("--capacity", type=int, default=4, help="handlers run at once, 1-10000 [default: 4]")
    p.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                   help="label shown by `axctl worker list` (repeatable)")
    p.add_argument("--stubs", default=os.path.join(here, "gen"),
                   help="directory holding the generated ax/v1/*_pb2*.py [default: ./gen]")
    p.add_argument("--shutdown-deadline", type=float, default=30.0,
                   help="seconds a graceful shutdown waits for running handlers [default: 30]")
    p.add_argument("--exec-log", metavar="FILE",
                   help="append a JSON line at the start and at the end of every handler run")
    p.add_argument("--log-level", default="INFO")
    args = p.parse_args(argv)
    if not 1 <= args.capacity <= 10_000:
        p.error("--capacity must be 1..10000")
    endpoints = []
    for e in args.endpoint or ["127.0.0.1:7070"]:
        # grpcio wants host:port; accept the http:// form other ax tools use.
        if e.startswith("https://"):
            p.error("--endpoint: this example speaks plaintext only (see README.md for TLS)")
        endpoints.append(e.removeprefix("http://").rstrip("/"))
    args.endpoints = endpoints
    labels = {"lang": "python"}
    for kv in args.label:
        k, sep, v = kv.partition("=")
        if not sep:
            p.error(f"--label {kv!r}: expected KEY=VALUE")
        labels[k] = v
    args.labels = labels
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    load_stubs(args.stubs)
    exec_log = ExecLog(args.exec_log, args.worker_id) if args.exec_log else None
    w = Worker(args.endpoints, args.app, args.worker_id, args.capacity, args.labels,
               args.shutdown_deadline, exec_log)

    def on_signal(signum: int, _frame: Any) -> None:
        w.inbox.put(("signal", signum))  # SimpleQueue: safe in a signal handler

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log.info("worker %s (app %s, capacity %d, handlers %s) starting", args.worker_id, args.app,
             args.capacity, ", ".join(sorted(HANDLERS)))
    code = w.run()
    log.info("stopped (exit code %d)", code)
    if w.orphans:
        # Pool threads cannot be killed, and the interpreter would wait for them at exit.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    w.pool.shutdown(wait=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
