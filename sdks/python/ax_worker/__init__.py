"""ax-worker: write ax workers in Python, with asyncio.

A worker keeps one stream open to an axd (moving through the endpoints it is given, with backoff),
says which handlers it serves and how many attempts it runs at once, and runs what it is assigned.
The SDK keeps the promises of the worker protocol (proto/ax/v1/worker.proto) for you: heartbeats,
credits that follow capacity, early assignments held until their start time, leases and
self-fencing, stale assignments rejected, results kept until axd acknowledges them and sent again
after a reconnect, running attempts re-announced after a reconnect, Drain, outputs cut to what axd
keeps, and a graceful shutdown.

    import asyncio
    from ax_worker import Worker, Context, HandlerError

    worker = Worker(endpoints=["http://127.0.0.1:7070"], app="billing", worker_id="billing-1", capacity=8)

    @worker.handler("echo")
    async def echo(ctx: Context) -> str:
        return ctx.params_raw

    asyncio.run(worker.run())
"""

__version__ = "0.1.0"

from ._context import Context, HandlerError, LogLevel  # noqa: E402
from ._lease import Lease, ServerClock  # noqa: E402
from ._text import MAX_OUTPUT, truncate  # noqa: E402
from ._tls import Tls  # noqa: E402
from ._worker import Handler, RefusedError, Worker, output_of  # noqa: E402

__all__ = [
    "Context",
    "Handler",
    "HandlerError",
    "LogLevel",
    "Lease",
    "MAX_OUTPUT",
    "RefusedError",
    "ServerClock",
    "Tls",
    "Worker",
    "__version__",
    "output_of",
    "truncate",
]
