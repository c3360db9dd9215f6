#!/usr/bin/env python3
"""An ax worker in Python on the Python SDK (sdks/python, package ``ax-worker``).

It serves four handlers of the app ``py`` (see README.md) and shows what an application adds to
the SDK: its handlers, its command line, and here an execution log that tests read to see what
really ran where and when. The protocol itself — streams, heartbeats, credits, leases, holds,
re-announce, result replay — is the SDK's (sdks/python/ax_worker/_worker.py, which follows the
comment at the top of proto/ax/v1/worker.proto).

    python3 examples/python-worker/worker.py --app py --worker-id py-1

``tests/tests/suite/python_worker.rs`` runs it against a real axd: tasks, retries, an early assignment,
SIGTERM, leaving a silent axd, fencing when cut off from every axd, a stale assignment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Optional

try:
    from ax_worker import Context, HandlerError, RefusedError, Worker
except ImportError:  # run from the source tree without installing the SDK
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "sdks", "python"))
    from ax_worker import Context, HandlerError, RefusedError, Worker

log = logging.getLogger("py-worker")

Handler = Callable[[Context], Any]


class ExecLog:
    """`--exec-log FILE`: one JSON line at the start and one at the end of every handler run,
    written by the handler itself (the same format as the Rust demo-worker's, so tests read both):
    what really ran where and when, independent of what axd recorded."""

    def __init__(self, path: str, worker_id: str) -> None:
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


def logged(fn: Handler, exec_log: Optional[ExecLog]) -> Handler:
    """`fn` with its start and end (and its own outcome) in the execution log. A plain function:
    the SDK runs it on a thread of its own."""
    if exec_log is None:
        return fn

    def run(ctx: Context) -> Any:
        exec_log.write(ctx, "start")
        try:
            out = fn(ctx)
        except BaseException:
            exec_log.write(ctx, "end", "FAILED")
            raise
        exec_log.write(ctx, "end", "SUCCESS")
        return out

    return run


def echo(ctx: Context) -> str:
    """Returns the params unchanged."""
    return ctx.params_raw


def sum_numbers(ctx: Context) -> dict[str, Any]:
    """`{"numbers": [1, 2, 3]}` -> `{"sum": 6}`. Bad params fail for good: retrying cannot help."""
    try:
        params = json.loads(ctx.params_raw)
    except ValueError as e:
        raise HandlerError(f"py-sum: params are not JSON: {e}", retryable=False) from None
    numbers = params.get("numbers") if isinstance(params, dict) else None
    if not isinstance(numbers, list):
        raw = ctx.params_raw
        shown = raw if len(raw) <= 200 else raw[:200] + "..."
        raise HandlerError(
            f'py-sum: params must be {{"numbers": [...]}} with a list of numbers, got {shown}',
            retryable=False,
        )
    for i, n in enumerate(numbers):
        if isinstance(n, bool) or not isinstance(n, (int, float)):
            raise HandlerError(f"py-sum: numbers[{i}] is {json.dumps(n)}, not a number", retryable=False)
    ctx.log(f"summing {len(numbers)} numbers")
    return {"sum": sum(numbers)}


def flaky(ctx: Context) -> dict[str, Any]:
    """Fails (retryable) on attempt 1 and succeeds afterwards: shows the task's retry policy."""
    if ctx.attempt == 1:
        raise HandlerError("py-flaky: failing attempt 1 on purpose", retryable=True)
    return {"attempt": ctx.attempt}


def sleep(ctx: Context) -> dict[str, Any]:
    """`{"ms": 500, "attempts": [1], "ignore_cancel": false}`: sleeps `ms` milliseconds (only on the
    listed attempts, if given). Stops early, failing (retryable), when asked to stop (Cancel, or
    its lease running out); with `ignore_cancel` it sleeps on regardless, like a handler stuck in a
    call it cannot interrupt (the SDK then reports the attempt and discards what it returns)."""
    params = ctx.params()
    if not isinstance(params, dict):
        raise HandlerError("py-sleep: params must be a JSON object", retryable=False)
    ms, attempts = params.get("ms", 0), params.get("attempts")
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms < 0:
        raise HandlerError(f"py-sleep: ms must be a number >= 0, got {json.dumps(ms)}")
    if attempts is not None and ctx.attempt not in attempts:
        return {"slept_ms": 0}
    if params.get("ignore_cancel"):
        time.sleep(ms / 1000)
    elif ctx.wait(ms / 1000):
        raise HandlerError("py-sleep: canceled while sleeping", retryable=True)
    return {"slept_ms": ms}


HANDLERS: dict[str, Handler] = {"py-echo": echo, "py-sum": sum_numbers, "py-flaky": flaky, "py-sleep": sleep}


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="ax worker in Python, on the ax-worker SDK")
    p.add_argument("--endpoint", action="append",
                   help="axd endpoint (host:port, http://host:port or https://host:port); repeat to "
                        "fail over between several [default: 127.0.0.1:7070]")
    p.add_argument("--app", default="py", help="app name (Hello.app) [default: py]")
    p.add_argument("--worker-id", default=f"{socket.gethostname()}-{os.getpid()}",
                   help="stable worker id, kept across reconnects [default: HOST-PID]")
    p.add_argument("--capacity", type=int, default=4, help="handlers run at once, 1-10000 [default: 4]")
    p.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                   help="label shown by `axctl worker list` (repeatable)")
    p.add_argument("--shutdown-deadline", type=float, default=30.0,
                   help="seconds a graceful shutdown waits for running handlers [default: 30]")
    p.add_argument("--exec-log", metavar="FILE",
                   help="append a JSON line at the start and at the end of every handler run")
    p.add_argument("--log-level", default="INFO")
    args = p.parse_args(argv)
    if not 1 <= args.capacity <= 10_000:
        p.error("--capacity must be 1..10000")
    args.endpoints = [e if "://" in e else f"http://{e}" for e in args.endpoint or ["127.0.0.1:7070"]]
    labels = {"lang": "python"}
    for kv in args.label:
        k, sep, v = kv.partition("=")
        if not sep:
            p.error(f"--label {kv!r}: expected KEY=VALUE")
        labels[k] = v
    args.labels = labels
    return args


async def serve(args: argparse.Namespace) -> None:
    exec_log = ExecLog(args.exec_log, args.worker_id) if args.exec_log else None
    worker = Worker(args.endpoints, args.app, args.worker_id, args.capacity, labels=args.labels,
                    shutdown_deadline=args.shutdown_deadline)
    for name, fn in HANDLERS.items():
        worker.add_handler(name, logged(fn, exec_log))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        def on_signal(sig: signal.Signals = sig) -> None:
            log.info("%s: shutting down", sig.name)
            worker.stop()

        loop.add_signal_handler(sig, on_signal)
    await worker.run()


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    code = 0
    try:
        asyncio.run(serve(args))
    except RefusedError as e:
        log.error("%s", e)
        code = 1
    # A handler stuck in a call it cannot leave keeps its (daemon) thread; do not wait for it.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
