#!/usr/bin/env python3
"""An ax worker in plain Python: the worker protocol of proto/ax/v1/worker.proto, by hand.

This file is documentation as much as it is a program: it shows what a client of ax must do in any
language that has gRPC, with nothing but the stubs generated from our .proto (see generate.sh) and
the standard library. Read it next to the comment at the top of worker.proto.

How it is built
---------------
One thread (the main thread) owns all the worker's state and is the only one that writes to the
stream. Everything else talks to it through one inbox queue:

    reader thread (one per stream)  --("msg", n, SchedulerMessage) / ("end", n, error)-->  inbox
    handler threads (thread pool)   --("done", key, Result) / ("log"...) / ("progress"...)->  inbox
                                    --("started", key) when an early assignment's hold ends-->  inbox
    signal handler (SIGTERM/SIGINT) --("signal", signum)-------------------------------->  inbox

    main thread: takes one event at a time from the inbox, updates the state, and puts
    WorkerMessages on the outbound queue.Queue of the current stream; grpcio's own thread pulls
    them out of that queue through a request iterator (a generator) and sends them.

So no locks are needed: `running`, `unacked` and the session are touched by the main thread only.

State that must survive a broken stream lives in the Worker, not in the session:
- `running`: attempts whose handler is still running (each with a threading.Event for Cancel);
- `unacked`: Results sent (or not yet sent) whose ResultAck has not arrived.
Every new session lists both in Hello.in_flight, and grants `capacity - len(running) - len(unacked)`
credits with the Hello. An attempt is identified everywhere by its key (instance_id, attempt).

Credits, the one piece of arithmetic to get right: axd may send one Assign per credit. The worker
grants `capacity` credits in total at first and one more each time a slot frees up (after sending a
Result). It never grants for a slot that is still busy, so no more than `capacity` handlers ever run
at once, whatever axd does. Reject does not give its credit back (the .proto says so), so after
rejecting an Assign for an unknown handler we grant a new one. After a reconnect, attempts that axd
adopts keep their slot; a Result re-sent for an adopted attempt frees its slot (Credit 1), and so does
forgetting an unacknowledged Result that axd released. A released attempt that is still running
keeps its slot until its handler returns (Python cannot kill a thread; see Cancel).

Early assignments: the Hello sets start_after_supported, so axd may send an Assign up to its
--dispatch-ahead before the instance is due, with start_after set. The handler thread waits that
long (or until a Cancel), then the main thread sends Accepted and the handler runs: the run starts
on time instead of one claim-and-delivery late. A client that does not implement this leaves the
flag unset and gets each instance when it is due.

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
pb = None  # ax.v1.worker_pb2 (WorkerMessage, Hello, ...)
types_pb = None  # ax.v1.types_pb2 (InstanceAttempt, Outcome, LogLevel)
worker_grpc = None  # ax.v1.worker_pb2_grpc (WorkerServiceStub)

CLIENT = "ax-worker-python/0.1.0"
log = logging.getLogger("ax.worker")

# HTTP/2 keepalive as worker.proto recommends: ping every 20 s, give up after 10 s without an answer,
# also while no call is active. axd refuses pings more frequent than every 10 s. Heartbeats (below),
# not pings, decide whether axd considers the worker alive.
CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
]

# Reconnect backoff: the first retry waits about INITIAL_BACKOFF, each failed one twice as long up
# to MAX_BACKOFF, each pause randomized to 50-150% (jitter) so a fleet of workers does not reconnect
# in lockstep. A session that lived STABLE_SESSION or longer resets the backoff.
INITIAL_BACKOFF = 0.2
MAX_BACKOFF = 10.0
STABLE_SESSION = 10.0
# How long to wait for Welcome after sending Hello.
WELCOME_TIMEOUT = 10.0
# Default heartbeat interval if Welcome does not say (the .proto's default).
DEFAULT_HEARTBEAT = 2.0
# The main thread wakes at least this often (see Worker._next_event).
MAX_WAIT = 0.25
# After the shutdown deadline: handlers are asked to stop (cancel event); STRAGGLER_GRACE later the
# ones still running are reported FAILED (retryable) and abandoned; GIVE_UP_AFTER later the worker
# stops trying to deliver results and exits.
STRAGGLER_GRACE = 2.0
GIVE_UP_AFTER = 5.0

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
    # Set when axd sends Cancel (timeout, operator, or the attempt is no longer ours), or at the
    # shutdown deadline. Python threads cannot be stopped from outside: long handlers must check it.
    cancelled: threading.Event = field(default_factory=threading.Event)
    _inbox: Any = None

    def json(self) -> Any:
        return json.loads(self.params)

    def log(self, message: str, level: str = "INFO") -> None:
        """Sends a log line, kept with the instance (`axctl instance logs`). Best effort."""
        self._inbox.put(("log", (self.instance_id, self.attempt), level, message, time.time_ns()))

    def progress(self, percent: int, message: str = "") -> None:
        """Reports progress, shown by `axctl instance get`. Best effort."""
        self._inbox.put(("progress", (self.instance_id, self.attempt), percent, message))


HANDLERS: dict[str, Callable[[Context], Any]] = {}


def handler(name: str):
    def register(fn):
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


def run_handler(fn: Callable[[Context], Any], ctx: Context, hold: float = 0.0):
    """Runs a handler on a pool thread and turns its outcome into a Result.

    An early assignment (Assign.start_after) is held first; the main thread sends Accepted when the
    hold ends and the handler starts. A Cancel during the hold ends it without running."""
    r = pb.Result(instance_id=ctx.instance_id, attempt=ctx.attempt)
    if hold > 0:
        if ctx.cancelled.wait(hold):
            r.outcome = types_pb.OUTCOME_FAILED
            r.message = "canceled before its start time"
            r.retryable = True
            ctx._inbox.put(("done", (ctx.instance_id, ctx.attempt), r))
            return
        ctx._inbox.put(("started", (ctx.instance_id, ctx.attempt)))
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
    # Hand the result to the main thread; it owns the stream.
    ctx._inbox.put(("done", (ctx.instance_id, ctx.attempt), r))


# ---------------------------------------------------------------------------------------------------
# The protocol.


def seconds(d) -> float:
    """A google.protobuf.Duration as float seconds."""
    return d.seconds + d.nanos / 1e9


class Session:
    """One Connect stream. Ends for good when the stream breaks; the Worker then opens a new one."""

    def __init__(self, number: int, endpoint: str, inbox: "queue.SimpleQueue"):
        self.number = number
        self.endpoint = endpoint
        self.channel = grpc.insecure_channel(endpoint, options=CHANNEL_OPTIONS)
        # The outbound half of the stream. grpcio pulls messages from this generator on its own
        # thread and sends them in order; returning from the generator half-closes the stream.
        self.outbound: "queue.Queue" = queue.Queue()
        self.welcome = None  # set once Welcome arrived
        self.started = time.monotonic()
        self.heartbeat_every = DEFAULT_HEARTBEAT
        self.next_heartbeat = 0.0
        self._closed = False
        self._inbox = inbox
        self._call = None

    def _requests(self):
        while True:
            m = self.outbound.get()
            if m is None:  # our close(): end the request stream
                return
            yield m

    def open(self, hello) -> None:
        # Hello must be the first message: queue it before the call starts pulling.
        self.send(hello=hello)
        stub = worker_grpc.WorkerServiceStub(self.channel)
        # A bidirectional call returns at once; its result is an iterator of SchedulerMessages.
        self._call = stub.Connect(self._requests())
        # Iterating blocks, so a reader thread turns the responses into inbox events.
        threading.Thread(target=self._read, name=f"reader-{self.number}", daemon=True).start()

    def _read(self) -> None:
        try:
            for m in self._call:
                self._inbox.put(("msg", self.number, m))
            self._inbox.put(("end", self.number, None))
        except grpc.RpcError as e:  # the call object itself is the error: it has code() and details()
            self._inbox.put(("end", self.number, e))

    def send(self, **one_field) -> None:
        """Queues a WorkerMessage with exactly one field set, e.g. send(heartbeat=pb.Heartbeat())."""
        if not self._closed:
            self.outbound.put(pb.WorkerMessage(**one_field))

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


# How a session ended.
FINISHED, REFUSED, DRAINED, LOST = "finished", "refused", "drained", "lost"


class Worker:
    def __init__(self, endpoints, app, worker_id, capacity, labels, shutdown_deadline):
        self.endpoints = endpoints
        self.app = app
        self.worker_id = worker_id
        self.capacity = capacity
        self.labels = labels
        self.shutdown_deadline = shutdown_deadline
        # The inbox. SimpleQueue.put is reentrant, so the signal handler may use it safely even if
        # it interrupts the main thread inside a put or get (queue.Queue could deadlock there).
        self.inbox: "queue.SimpleQueue" = queue.SimpleQueue()
        # At most `capacity` handlers at once; the credit arithmetic guarantees the pool never queues.
        self.pool = ThreadPoolExecutor(max_workers=capacity, thread_name_prefix="handler")
        self.running: dict[tuple[int, int], Context] = {}
        self.unacked: dict[tuple[int, int], Any] = {}  # key -> pb.Result
        self.session: Optional[Session] = None
        self.sessions = 0
        self.shutdown_at: Optional[float] = None  # monotonic time of SIGTERM/SIGINT
        self.canceled_all = False
        self.abandoned = 0  # handlers left running at exit
        self.gave_up = False

    # --- lifecycle ----------------------------------------------------------------------------------

    def run(self) -> int:
        """Connects, serves, reconnects; returns the exit code after a graceful shutdown."""
        backoff = INITIAL_BACKOFF
        n = 0
        while True:
            endpoint = self.endpoints[n % len(self.endpoints)]
            n += 1
            end, lived = self._serve(endpoint)
            if end == FINISHED:
                return 1 if (self.abandoned or self.gave_up) else 0
            if end == REFUSED:
                return 2
            # Drained or lost: reconnect (to the next endpoint, if several were given) after a
            # randomized pause. In-flight attempts keep running meanwhile.
            if lived >= STABLE_SESSION:
                backoff = INITIAL_BACKOFF
            pause = backoff * random.uniform(0.5, 1.5)
            backoff = min(backoff * 2, MAX_BACKOFF)
            log.info("reconnecting in %.2fs", pause)
            if self._offline(pause):
                return 1 if (self.abandoned or self.gave_up) else 0

    def _offline(self, pause: float) -> bool:
        """Waits `pause` seconds without a stream; handlers keep finishing. True if shutdown is done."""
        until = time.monotonic() + pause
        while True:
            if self._shutdown_complete():
                return True
            left = until - time.monotonic()
            if left <= 0:
                return False
            ev = self._next_event(left)
            if ev is not None:
                self._handle_local(ev)

    def _next_event(self, timeout: float):
        # Never block longer than MAX_WAIT: CPython runs signal handlers in the main thread only, and
        # when the OS delivers the signal to another thread, the main thread notices it only once it
        # runs Python code again.
        try:
            return self.inbox.get(timeout=max(0.0, min(timeout, MAX_WAIT)))
        except queue.Empty:
            return None

    def _hello(self):
        """Hello for a new session: who we are, and what we still hold from earlier sessions."""
        held = list(self.running) + list(self.unacked)
        if self.shutdown_at is not None:
            credits = 0  # taking no new work
        else:
            credits = max(0, self.capacity - len(held))
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

    def _serve(self, endpoint: str):
        """Runs one session; returns (how it ended, seconds it lived after Welcome)."""
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
                if self._shutdown_complete():
                    if s.welcome is not None:
                        self._close_gracefully(s)
                    end = FINISHED
                    break
                # Heartbeat every interval, always (also while busy with other messages).
                if s.welcome is not None and now >= s.next_heartbeat:
                    s.send(heartbeat=pb.Heartbeat(running=len(self.running)))
                    s.next_heartbeat = max(s.next_heartbeat + s.heartbeat_every, now)
                wait = (s.next_heartbeat if s.welcome is not None else welcome_by) - now
                ev = self._next_event(wait)
                if ev is None:
                    continue
                kind = ev[0]
                if kind == "msg":
                    if ev[1] == s.number:  # events of older streams are stale
                        end = self._on_message(s, ev[2])
                elif kind == "end":
                    if ev[1] == s.number:
                        end = self._on_end(s, ev[2])
                else:
                    self._handle_local(ev)
        finally:
            lived = time.monotonic() - s.started if s.welcome is not None else 0.0
            self.session = None
            s.abort()
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

    def _on_end(self, s: Session, err) -> str:
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

    # --- messages from axd --------------------------------------------------------------------------

    def _on_message(self, s: Session, m) -> Optional[str]:
        kind = m.WhichOneof("msg")
        if s.welcome is None:
            if kind != "welcome":
                log.warning("expected Welcome first, got %s; ignoring it", kind)
                return None
            self._on_welcome(s, m.welcome)
        elif kind == "assign":
            self._on_assign(s, m.assign)
        elif kind == "cancel":
            c = m.cancel
            ctx = self.running.get((c.instance_id, c.attempt))
            if ctx is not None:
                log.info("cancel %d/%d: %s", c.instance_id, c.attempt, c.reason)
                ctx.cancelled.set()  # cooperative: the handler checks it; its Result will be ignored
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

    def _on_welcome(self, s: Session, w) -> None:
        s.welcome = w
        if w.HasField("heartbeat_interval") and seconds(w.heartbeat_interval) > 0:
            s.heartbeat_every = seconds(w.heartbeat_interval)
        s.next_heartbeat = time.monotonic() + s.heartbeat_every
        taking_work = self.shutdown_at is None
        log.info(
            "connected to %s: session %s on %s, heartbeat %.2fs, adopted %d, released %d",
            s.endpoint, w.session_id, w.scheduler_id, s.heartbeat_every,
            len(w.adopted), len(w.released),
        )
        for a in w.released:
            key = (a.instance_id, a.attempt)
            if key in self.running:
                # No longer ours: ask the handler to stop. Its slot stays busy until it returns; its
                # Result is then sent, acknowledged and ignored, and its credit granted as usual.
                self.running[key].cancelled.set()
            elif self.unacked.pop(key, None) is not None and taking_work:
                # axd does not want this Result any more; its slot (withheld from initial_credits)
                # is free again.
                s.send(credit=pb.Credit(grant=1))
        adopted = {(a.instance_id, a.attempt) for a in w.adopted}
        for key, result in list(self.unacked.items()):
            if key in adopted:
                # axd still waits for this Result: send it again (results are idempotent). It frees
                # the slot on axd's side, so grant its credit back.
                s.send(result=result)
                if taking_work:
                    s.send(credit=pb.Credit(grant=1))
        if not taking_work:
            # A shutdown started while we were disconnected or waiting for this Welcome: make sure
            # no credit granted with the Hello is left.
            s.send(credit=pb.Credit(grant=0, reset=True))

    def _on_assign(self, s: Session, a) -> None:
        key = (a.instance_id, a.attempt)
        if self.shutdown_at is not None:
            # An Assign may already have been on the wire when we reset our credits.
            s.send(reject=pb.Reject(instance_id=a.instance_id, attempt=a.attempt,
                                    reason="worker shutting down"))
            return
        if key in self.running or key in self.unacked:
            log.warning("duplicate Assign %d/%d ignored", *key)
            return
        fn = HANDLERS.get(a.handler)
        if fn is None:
            s.send(reject=pb.Reject(instance_id=a.instance_id, attempt=a.attempt,
                                    reason=f"handler {a.handler!r} is not registered on this worker"))
            s.send(credit=pb.Credit(grant=1))  # Reject does not return the credit it consumed
            return
        if len(self.running) >= self.capacity:
            # Cannot happen while credits are granted as above; refuse rather than queue.
            s.send(reject=pb.Reject(instance_id=a.instance_id, attempt=a.attempt,
                                    reason="worker at capacity"))
            return
        # Sent ahead of its time (we set Hello.start_after_supported): hold it that long from now.
        hold = seconds(a.start_after) if a.HasField("start_after") else 0.0
        if hold <= 0:
            # Accepted moves the instance DISPATCHED -> RUNNING (and starts its run timeout on axd).
            s.send(accepted=pb.Accepted(instance_id=a.instance_id, attempt=a.attempt))
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
        self.running[key] = ctx
        log.info("run %s %d/%d (task %s)", a.handler, a.instance_id, a.attempt, a.task_name)
        self.pool.submit(run_handler, fn, ctx, hold)

    # --- events from this process -------------------------------------------------------------------

    def _connected(self) -> Optional[Session]:
        s = self.session
        return s if s is not None and s.welcome is not None else None

    def _handle_local(self, ev) -> None:
        kind = ev[0]
        if kind == "done":
            self._on_done(ev[1], ev[2])
        elif kind == "started":
            # A held assignment's handler starts now: DISPATCHED -> RUNNING.
            s = self._connected()
            if s is not None and ev[1] in self.running:
                s.send(accepted=pb.Accepted(instance_id=ev[1][0], attempt=ev[1][1]))
        elif kind == "signal":
            self._on_signal(ev[1])
        elif kind == "log":
            _, key, level, message, at_ns = ev
            s = self._connected()
            if s is not None and key in self.running:
                at = Timestamp(seconds=at_ns // 1_000_000_000, nanos=at_ns % 1_000_000_000)
                s.send(log=pb.Log(instance_id=key[0], attempt=key[1], message=message[:4096], at=at,
                                  level=types_pb.LogLevel.Value(f"LOG_LEVEL_{level}")))
        elif kind == "progress":
            _, key, percent, message = ev
            s = self._connected()
            if s is not None and key in self.running:
                s.send(progress=pb.Progress(instance_id=key[0], attempt=key[1],
                                            percent=max(0, min(100, percent)), message=message))
        # "msg"/"end" of a stream that is gone: nothing to do.

    def _on_done(self, key, result) -> None:
        if self.running.pop(key, None) is None:
            return  # abandoned at the shutdown deadline and already reported
        log.info("done %d/%d: %s %s", key[0], key[1], types_pb.Outcome.Name(result.outcome),
                 result.message)
        # Keep it until ResultAck, whether or not it can be sent now.
        self.unacked[key] = result
        s = self._connected()
        if s is not None:
            s.send(result=result)
            if self.shutdown_at is None:
                s.send(credit=pb.Credit(grant=1))  # the slot is free again

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
            for ctx in self.running.values():
                ctx.cancelled.set()
        if elapsed >= self.shutdown_deadline + STRAGGLER_GRACE and self.running:
            # Report them FAILED (retryable) so axd can run them elsewhere, and leave the threads.
            for key in list(self.running):
                r = pb.Result(instance_id=key[0], attempt=key[1], outcome=types_pb.OUTCOME_FAILED,
                              message="worker shut down before the handler finished",
                              retryable=True)
                self.abandoned += 1
                self._on_done(key, r)
        if elapsed >= self.shutdown_deadline + STRAGGLER_GRACE + GIVE_UP_AFTER:
            log.error("giving up delivering %d results", len(self.unacked))
            self.gave_up = True
            return True
        return False


# ---------------------------------------------------------------------------------------------------


def parse_args(argv):
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


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    load_stubs(args.stubs)
    w = Worker(args.endpoints, args.app, args.worker_id, args.capacity, args.labels,
               args.shutdown_deadline)

    def on_signal(signum, _frame):
        w.inbox.put(("signal", signum))  # SimpleQueue: safe in a signal handler

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log.info("worker %s (app %s, capacity %d, handlers %s) starting", args.worker_id, args.app,
             args.capacity, ", ".join(sorted(HANDLERS)))
    code = w.run()
    log.info("stopped (exit code %d)", code)
    if w.abandoned:
        # Pool threads cannot be killed, and the interpreter would wait for them at exit.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    w.pool.shutdown(wait=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
