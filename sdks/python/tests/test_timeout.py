"""An attempt's own deadline (worker.proto, Assign.timeout): the worker stops a handler once its
timeout and the fence margin have passed, counted from its start, whether or not axd's Cancel
comes; one that does not return STOP_GRACE later is reported FAILED (retryable) and abandoned.

The driver's timers take the monotonic time as an argument: the tests call them at chosen times."""

import asyncio
import time
import unittest
from typing import Any, Optional, cast

import _path  # noqa: F401  (puts sdks/python on sys.path)
from ax_worker import Context, HandlerError, Worker
from ax_worker._context import _Outbox
from ax_worker._proto import types_pb2, worker_pb2
from ax_worker._worker import STOP_GRACE, TIMED_OUT, _Attempt


class FakeSession:
    """What starting a handler reads and writes of a stream; what it sent is kept."""

    def __init__(self) -> None:
        self.welcome = worker_pb2.Welcome()
        self.heartbeat_seq = 0
        self.heartbeat_every = 1.0
        self.last_heartbeat_at = float("-inf")
        self.next_heartbeat = float("inf")
        self.sent: list[worker_pb2.WorkerMessage] = []

    def send(self, **one_field: Any) -> None:
        self.sent.append(worker_pb2.WorkerMessage(**one_field))

    def results(self) -> list[worker_pb2.Result]:
        return [m.result for m in self.sent if m.WhichOneof("msg") == "result"]


def assign(handler: str, timeout: Optional[float], start_after: float = 0.0) -> worker_pb2.Assign:
    m = worker_pb2.Assign(instance_id=7, attempt=1, task_name="t", handler=handler, params="{}")
    if timeout is not None:
        m.timeout.FromNanoseconds(round(timeout * 1e9))
    if start_after > 0:
        m.start_after.FromNanoseconds(round(start_after * 1e9))
    return m


class TimeoutTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.w = Worker("http://127.0.0.1:1", "app", "w", capacity=2)
        self.release = asyncio.Event()

        @self.w.handler("deaf")
        async def deaf(ctx: Context) -> str:
            # Ignores its cancellation: only the task's cancellation stops it.
            await self.release.wait()
            return "finished"

        @self.w.handler("polite")
        async def polite(ctx: Context) -> str:
            await ctx.cancellation.wait()
            raise HandlerError(f"stopped: {ctx.cancel_reason}", retryable=True)

        self.w._outbox = _Outbox(asyncio.get_running_loop(), self.w._post)
        self.w._fence_margin = 0.5
        self.s = FakeSession()
        # Connected: held assignments may start, Results go out.
        self.w._session = cast(Any, self.s)

    async def asyncTearDown(self) -> None:
        self.release.set()
        tasks = [a.task for a in [*self.w._running.values(), *self.w._orphans.values()]
                 if a.task is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def started(self, m: worker_pb2.Assign) -> tuple[_Attempt, float]:
        """Assigns `m` and returns its attempt, with the time its start was counted from (at most
        when it started)."""
        before = time.monotonic()
        self.w._on_assign(cast(Any, self.s), m)
        return self.w._running[(7, 1)], before

    async def settle(self) -> None:
        """Lets handler tasks run and hands the driver what they posted."""
        for _ in range(5):
            await asyncio.sleep(0)
        while self.w._inbox:
            self.w._handle_local(self.w._inbox.popleft())

    async def test_a_handler_that_ignores_the_stop_is_abandoned_after_its_timeout(self) -> None:
        a, before = self.started(assign("deaf", timeout=3.0))
        assert a.run_by is not None
        self.assertGreaterEqual(a.run_by, before + 3.0 + 0.5, "its timeout plus the fence margin")
        self.assertLessEqual(a.run_by, time.monotonic() + 3.0 + 0.5)
        self.w._run_timers(None, a.run_by - 0.001)
        await self.settle()
        self.assertFalse(a.ctx.cancelled, "not before its timeout and the fence margin")
        self.assertEqual(self.w._next_timer(None), a.run_by)
        self.w._run_timers(None, a.run_by)
        await self.settle()
        self.assertTrue(a.ctx.cancelled, "told to stop at its timeout")
        self.assertIn("timed out", a.ctx.cancel_reason or "")
        self.assertIn((7, 1), self.w._running, "it gets STOP_GRACE to return")
        self.assertEqual(self.s.results(), [])
        self.assertEqual(self.w._next_timer(None), a.run_by + STOP_GRACE)
        self.w._run_timers(None, a.run_by + STOP_GRACE)
        await self.settle()
        [r] = self.s.results()
        self.assertEqual((r.outcome, r.retryable), (types_pb2.OUTCOME_FAILED, True))
        self.assertEqual(r.message, TIMED_OUT)
        self.assertNotIn((7, 1), self.w._running)
        self.assertIn("timed out", r.message)
        self.assertIn((7, 1), self.w._unacked, "kept until its ResultAck")
        self.assertTrue(a.task is not None and a.task.done(), "its task was cancelled")
        self.assertNotIn((7, 1), self.w._orphans, "its slot is free once the task has ended")

    async def test_a_handler_that_stops_when_told_reports_its_own_result(self) -> None:
        a, _ = self.started(assign("polite", timeout=3.0))
        assert a.run_by is not None
        self.w._run_timers(None, a.run_by)
        await self.settle()
        [r] = self.s.results()
        self.assertEqual((r.outcome, r.retryable), (types_pb2.OUTCOME_FAILED, True))
        self.assertIn("timed out", r.message)
        self.w._run_timers(None, a.run_by + STOP_GRACE)
        await self.settle()
        self.assertEqual(len(self.s.results()), 1, "nothing left to abandon")

    async def test_the_deadline_counts_from_the_end_of_the_hold(self) -> None:
        a, before = self.started(assign("deaf", timeout=3.0, start_after=10.0))
        assert a.start_at is not None
        self.assertIsNone(a.run_by, "no deadline while held")
        start = a.start_at
        self.assertGreaterEqual(start, before + 10.0)
        self.w._run_timers(None, before + 3.0 + 0.5)
        self.assertTrue(a.held)
        self.assertFalse(a.ctx.cancelled, "the hold is not part of the run")
        self.w._run_timers(None, start)  # the hold is over: it starts
        self.assertEqual(a.run_by, start + 3.0 + 0.5)
        self.w._run_timers(None, start + 3.4)
        self.assertFalse(a.ctx.cancelled)
        self.w._run_timers(None, start + 3.5)
        self.assertTrue(a.ctx.cancelled)

    async def test_without_a_timeout_nothing_stops_the_handler(self) -> None:
        a, _ = self.started(assign("deaf", timeout=None))
        self.assertIsNone(a.run_by)
        self.w._run_timers(None, time.monotonic() + 1e6)
        await self.settle()
        self.assertFalse(a.ctx.cancelled)
        self.assertEqual(self.s.results(), [])


if __name__ == "__main__":
    unittest.main()
