"""Which attempts a lease renewal extends (worker.proto, "Leases and self-fencing"): those whose
Accepted went out before the heartbeat it answers, not revoked ones, and never shorter."""

import unittest
from typing import Any, Optional

import _path  # noqa: F401  (puts sdks/python on sys.path)
from ax_worker import Worker
from ax_worker._lease import Lease
from ax_worker._proto import worker_pb2
from ax_worker._worker import _Attempt


class FakeSession:
    """What _on_scheduler_heartbeat reads of a stream: when Hello and each heartbeat went out."""

    def __init__(self, hello_at: float, sent: dict[int, float]) -> None:
        self.hello_at = hello_at
        self.sent = sent

    def heartbeat_sent_at(self, seq: int) -> Optional[float]:
        return self.sent.get(seq)


def attempt(end: float, accepted_after: Optional[int], revoked: bool = False) -> _Attempt:
    ctx: Any = None  # not read by the renewal logic
    return _Attempt(ctx=ctx, fn=lambda c: None, is_async=False, lease=Lease(end, 1.0),
                    accept_by=None, start_at=None, accepted_after=accepted_after, revoked=revoked)


class RenewalTest(unittest.TestCase):
    def setUp(self) -> None:
        self.w = Worker("http://127.0.0.1:1", "app", "w", capacity=8)
        self.w._lease_ttl = 8.0
        self.w._fence_margin = 1.0
        # Heartbeats 1..4 went out at 101..104 (monotonic seconds).
        self.s: Any = FakeSession(hello_at=100.0, sent={1: 101.0, 2: 102.0, 3: 103.0, 4: 104.0})

    def renew(self, k: int) -> None:
        self.w._on_scheduler_heartbeat(self.s, worker_pb2.SchedulerHeartbeat(renewed_seq=k), 105.0)

    def test_a_renewal_covers_attempts_accepted_before_the_heartbeat_it_answers(self) -> None:
        before = attempt(end=103.0, accepted_after=1)  # Accepted after heartbeat 1, before 2
        after = attempt(end=103.0, accepted_after=3)  # Accepted after heartbeat 3
        self.w._running = {(1, 1): before, (2, 1): after}
        self.renew(3)
        self.assertEqual(before.lease.end, 103.0 + 8.0, "lease_ttl from when heartbeat 3 was SENT")
        self.assertEqual(after.lease.end, 103.0, "heartbeat 3 went out before its Accepted")

    def test_adopted_attempts_are_covered_from_the_first_renewal(self) -> None:
        adopted = attempt(end=100.0 + 8.0, accepted_after=0)
        self.w._running = {(1, 1): adopted}
        self.renew(1)
        self.assertEqual(adopted.lease.end, 101.0 + 8.0)

    def test_a_canceled_attempt_is_not_renewed(self) -> None:
        revoked = attempt(end=103.0, accepted_after=0, revoked=True)
        held = attempt(end=103.0, accepted_after=None)  # not accepted on this stream
        self.w._running = {(1, 1): revoked, (2, 1): held}
        self.renew(4)
        self.assertEqual(revoked.lease.end, 103.0)
        self.assertEqual(held.lease.end, 103.0)

    def test_no_renewal_yet_or_an_unknown_heartbeat_extends_nothing(self) -> None:
        a = attempt(end=103.0, accepted_after=0)
        self.w._running = {(1, 1): a}
        self.renew(0)
        self.renew(99)
        self.assertEqual(a.lease.end, 103.0)

    def test_an_older_renewal_never_shortens_a_lease(self) -> None:
        a = attempt(end=103.0, accepted_after=0)
        self.w._running = {(1, 1): a}
        self.renew(4)
        self.renew(2)
        self.assertEqual(a.lease.end, 104.0 + 8.0)


if __name__ == "__main__":
    unittest.main()
