"""How long an attempt is this worker's own, and the database clock as far as the worker can tell.

Pure arithmetic on the monotonic clock (no I/O, no asyncio), so it can be tested on its own. See
proto/ax/v1/worker.proto, "Leases and self-fencing" and "The database clock"; the Rust SDK's
worker-sdk/src/lease.rs is the same logic.

Times called "monotonic" are seconds of `time.monotonic()` (floats); database times are integer
nanoseconds since the Unix epoch (what a protobuf Timestamp holds).
"""

from __future__ import annotations

import time
from typing import Callable, Optional

#: Seconds a clock sample stays the one estimates count from, even when later samples are looser:
#: it is carried forward on the monotonic clock, whose rate may drift from the database's.
SAMPLE_REFRESH = 60.0


class ServerClock:
    """The database clock as seen from here, estimated so that it is never behind.

    axd reads its clock (Welcome.server_time, SchedulerHeartbeat.server_time) *after* the message
    it answers arrived: Hello for Welcome; heartbeat `renewed_seq` (Hello when 0) for a
    SchedulerHeartbeat. So ``server_time + (t - sent_at)``, counted on the monotonic clock from
    when this worker SENT that message, is at least the database time at `t` (less axd's own small
    lag, which the fence margin covers), however late the answer was read. The estimate is the
    smallest such bound seen; a sample older than SAMPLE_REFRESH gives way to the next one.

    Counting from when the answer ARRIVED instead would be a lower bound: a Welcome read nine
    seconds late (the process was stopped right after sending Hello) would make the clock nine
    seconds slow, and an assignment axd has already taken back would look fresh.
    """

    def __init__(self) -> None:
        # (server time in ns, monotonic time the reading counts from, monotonic time it arrived)
        self._sample: Optional[tuple[int, float, float]] = None

    def observe(self, server_time_ns: int, sent_at: float, received_at: float) -> None:
        """Records a reading axd took after this worker sent a message at monotonic `sent_at`.

        It replaces the current sample if it gives a smaller (tighter) estimate, or if the current
        sample arrived SAMPLE_REFRESH or more before this one.
        """
        if self._sample is not None:
            server, since, received = self._sample
            current = server + round((sent_at - since) * 1e9)
            if received_at - received < SAMPLE_REFRESH and server_time_ns >= current:
                return
        self._sample = (server_time_ns, sent_at, received_at)

    @property
    def known(self) -> bool:
        """Whether any reading has been observed yet."""
        return self._sample is not None

    def at(self, t: float) -> Optional[int]:
        """The estimated database time (ns since the epoch) at monotonic time `t`; None before
        the first reading."""
        if self._sample is None:
            return None
        server, since, _ = self._sample
        return server + round((t - since) * 1e9)

    def monotonic_of(self, server_ns: int) -> Optional[float]:
        """The monotonic time by which the database clock will read `server_ns`, at the latest
        (estimated; in the past if it already does). None before the first reading."""
        if self._sample is None:
            return None
        server, since, _ = self._sample
        return since + (server_ns - server) / 1e9


class Lease:
    """The lease of one attempt, on the monotonic clock.

    `end` is when the attempt may stop being ours at the earliest; None means axd sent no lease
    information (an axd without leases), and the attempt is never fenced. Renewals only move the
    end later. The handler is told to stop (fenced) `margin` before the end, and a handler that has
    not returned by half the margin before the end is no longer counted as ours (abandoned: it is
    reported FAILED at once and whatever it returns later is discarded).
    """

    def __init__(self, end: Optional[float], margin: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.end = end
        self.margin = margin
        self._clock = clock

    def extend_to(self, end: float) -> None:
        """Moves the end to `end` if that is later (a renewal never shortens a lease)."""
        if self.end is not None and end > self.end:
            self.end = end

    def fence_at(self) -> Optional[float]:
        """When the handler must be told to stop: `margin` before the end."""
        return None if self.end is None else self.end - self.margin

    def abandon_at(self) -> Optional[float]:
        """When a handler that did not stop is no longer counted as ours: half the margin before
        the end."""
        return None if self.end is None else self.end - self.margin / 2

    def expired(self, now: Optional[float] = None) -> bool:
        """True once the fence time has passed, by the clock (whether or not the driver has acted
        on it yet, e.g. in a process just resumed from a pause)."""
        fence = self.fence_at()
        if fence is None:
            return False
        return (self._clock() if now is None else now) >= fence

    def remaining(self, now: Optional[float] = None) -> Optional[float]:
        """Seconds until the end (negative once past it); None for a lease that never ends."""
        if self.end is None:
            return None
        return self.end - (self._clock() if now is None else now)


def stale_reason(clock: ServerClock, accept_by_ns: Optional[int], margin: float,
                 now: float) -> Optional[str]:
    """Why an assignment must not start at monotonic time `now`, or None if it may.

    worker.proto, "Stale assignments": do not start an Assign whose accept_by is less than the
    fence margin away, on the estimated database clock. Such an Assign was read late (the process
    was paused, or the message waited in a buffer): axd has taken it back by now, or is about to,
    and may have given it to another worker. Without an accept_by or a clock reading there is
    nothing to judge by, and the assignment may start.
    """
    db_now = clock.at(now)
    if accept_by_ns is None or db_now is None:
        return None
    if db_now + round(margin * 1e9) < accept_by_ns:
        return None
    return (f"stale assignment: read at {_show(db_now)} (database time, estimated), less than the "
            f"fence margin ({margin:.3f}s) before its accept-by time {_show(accept_by_ns)}")


def _show(ns: int) -> str:
    """Nanoseconds since the epoch as RFC 3339 UTC with milliseconds."""
    secs, rest = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{rest // 1_000_000:03d}Z"
