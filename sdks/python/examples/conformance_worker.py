#!/usr/bin/env python3
"""The Python SDK's worker for the conformance kit: ``ax-conformance -- python3 <this file>``.

It takes its settings from the environment the kit sets: AX_ENDPOINT (comma-separated), AX_APP,
AX_WORKER_ID, AX_CAPACITY (with AX_TLS_CA, AX_TLS_CERT and AX_TLS_KEY, PEM file paths, and
AX_TLS_SERVER_NAME optionally, it connects with mTLS: tests/tests/suite/sdk_mtls.rs); and serves the
kit's handlers (params are JSON):

- ``echo``: succeeds with its params unchanged as the output.
- ``sleep`` ``{"ms": N}``: succeeds after N ms; canceled or fenced, it stops at once and fails.
  With ``"ignore_cancel": true`` it ignores its cancellation: only the SDK cancelling its task
  ends it early.
- ``fail`` ``{"message": "..."}``: fails with that message (not retryable).
- ``panic``: raises an uncaught exception; the worker reports FAILED and goes on serving.
- ``big-output`` ``{"bytes": N}``: succeeds with N bytes of ``x`` (the SDK cuts it to 65536).

Logs go to stderr (AX_LOG sets the level, default INFO). SIGTERM or SIGINT shut it down gracefully.
Compare worker-sdk/examples/conformance-worker.rs, the Rust SDK's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

try:
    from ax_worker import Context, HandlerError, Tls, Worker
except ImportError:  # run from the source tree without installing: sdks/python is the parent
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from ax_worker import Context, HandlerError, Tls, Worker


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"conformance_worker.py: {name} is not set (the conformance kit sets it)")
    return value


def number(ctx: Context, field: str) -> int:
    """params[field] as a non-negative integer, or a FAILED (not retryable) attempt."""
    params = ctx.params()
    value = params.get(field) if isinstance(params, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise HandlerError(f"params.{field} must be a number >= 0", retryable=False)
    return value


def build() -> Worker:
    tls = None
    if os.environ.get("AX_TLS_CA"):
        tls = Tls.from_files(ca=env("AX_TLS_CA"), cert=env("AX_TLS_CERT"), key=env("AX_TLS_KEY"),
                             server_name=os.environ.get("AX_TLS_SERVER_NAME") or None)
    worker = Worker(
        endpoints=env("AX_ENDPOINT").split(","),
        tls=tls,
        app=env("AX_APP"),
        worker_id=env("AX_WORKER_ID"),
        capacity=int(env("AX_CAPACITY")),
        reconnect_max=1.0,
        install_signal_handlers=True,
    )

    @worker.handler("echo")
    async def echo(ctx: Context) -> str:
        return ctx.params_raw

    @worker.handler("sleep")
    async def sleep(ctx: Context) -> str:
        ms = number(ctx, "ms")
        params = ctx.params()
        if isinstance(params, dict) and params.get("ignore_cancel") is True:
            await asyncio.sleep(ms / 1000)
            return ""
        if await ctx.sleep(ms / 1000):
            raise HandlerError(f"stopped while sleeping: {ctx.cancel_reason}", retryable=True)
        return ""

    @worker.handler("fail")
    async def fail(ctx: Context) -> str:
        params = ctx.params()
        message = params.get("message") if isinstance(params, dict) else None
        raise HandlerError(message if isinstance(message, str) else "failed on purpose", retryable=False)

    @worker.handler("panic")
    def panic(ctx: Context) -> str:
        # A plain function (run on a thread) with a bug: the SDK reports FAILED and goes on.
        raise RuntimeError("conformance: panicking on purpose")

    @worker.handler("big-output")
    async def big_output(ctx: Context) -> str:
        return "x" * number(ctx, "bytes")

    return worker


def main() -> None:
    logging.basicConfig(
        level=os.environ.get("AX_LOG", "INFO").upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    asyncio.run(build().run())


if __name__ == "__main__":
    main()
