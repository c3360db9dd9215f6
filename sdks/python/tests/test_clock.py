"""The database clock estimate (worker.proto, "The database clock") and the stale-assignment rule."""

import unittest

import _path  # noqa: F401  (puts sdks/python on sys.path)
from ax_worker._lease import SAMPLE_REFRESH, ServerClock, stale_reason

S = 1_000_000_000  # ns per second
T0 = 1_800_000_000 * S  # a database time, ns since the epoch


class ServerClockTest(unittest.TestCase):
    def test_unknown_before_the_first_reading(self) -> None:
        c = ServerClock()
        self.assertFalse(c.known)
        self.assertIsNone(c.at(100.0))
        self.assertIsNone(c.monotonic_of(T0))

    def test_counts_from_when_the_answered_message_was_sent_not_received(self) -> None:
        c = ServerClock()
        sent = 1000.0
        # A Welcome read 9 s after its Hello went out (the process was paused right after sending
        # Hello): the database is taken to be at least 9 s past the reading, not just past it.
        c.observe(T0, sent_at=sent, received_at=sent + 9)
        self.assertEqual(c.at(sent + 9), T0 + 9 * S)
        self.assertEqual(c.at(sent + 10.5), T0 + 10 * S + S // 2)

    def test_keeps_the_smallest_estimate(self) -> None:
        c = ServerClock()
        sent = 1000.0
        c.observe(T0, sent, sent + 9)
        # A reading that answers a later message and came back quickly is tighter: it wins.
        hb = sent + 10
        c.observe(T0 + 2 * S, hb, hb + 0.005)
        self.assertEqual(c.at(hb), T0 + 2 * S)
        # A looser one (it answers an older message) is ignored.
        c.observe(T0 + 3 * S, sent + 1, hb + 1)
        self.assertEqual(c.at(hb), T0 + 2 * S)

    def test_a_sample_gives_way_after_the_refresh_period(self) -> None:
        c = ServerClock()
        sent = 1000.0
        c.observe(T0, sent, sent)
        # Looser but a minute later: the old sample, carried forward on the monotonic clock whose
        # rate may drift, is replaced.
        later = sent + SAMPLE_REFRESH + 1
        c.observe(T0 + 64 * S, later - 1, later)
        self.assertEqual(c.at(later), T0 + 65 * S)
        # Just under the refresh period, a looser reading does not replace it.
        c2 = ServerClock()
        c2.observe(T0, sent, sent)
        almost = sent + SAMPLE_REFRESH - 1
        c2.observe(T0 + 100 * S, almost, almost)
        self.assertEqual(c2.at(almost), T0 + round((SAMPLE_REFRESH - 1) * S))

    def test_monotonic_of_converts_database_times_both_ways(self) -> None:
        c = ServerClock()
        c.observe(T0, 500.0, 500.0)
        self.assertEqual(c.monotonic_of(T0 + 5 * S), 505.0)
        self.assertEqual(c.monotonic_of(T0 - 4 * S), 496.0)  # in the past: an earlier instant
        when = c.monotonic_of(T0 + 7 * S)
        assert when is not None
        self.assertEqual(c.at(when), T0 + 7 * S)


class StaleAssignmentTest(unittest.TestCase):
    def setUp(self) -> None:
        self.clock = ServerClock()
        self.clock.observe(T0, sent_at=100.0, received_at=100.0)

    def test_an_assign_whose_accept_by_has_passed_is_stale(self) -> None:
        why = stale_reason(self.clock, T0 - 1 * S, margin=1.0, now=100.0)
        self.assertIsNotNone(why)
        self.assertIn("stale assignment", why or "")

    def test_an_assign_less_than_the_fence_margin_away_is_stale(self) -> None:
        self.assertIsNotNone(stale_reason(self.clock, T0 + S // 2, margin=1.0, now=100.0))
        self.assertIsNotNone(stale_reason(self.clock, T0 + 1 * S, margin=1.0, now=100.0))

    def test_a_fresh_assign_may_start(self) -> None:
        self.assertIsNone(stale_reason(self.clock, T0 + 3 * S, margin=1.0, now=100.0))

    def test_read_late_it_is_stale(self) -> None:
        # The same Assign read 2.5 s later (a pause): the clock has moved on, the Assign has not.
        self.assertIsNone(stale_reason(self.clock, T0 + 3 * S, margin=1.0, now=101.0))
        self.assertIsNotNone(stale_reason(self.clock, T0 + 3 * S, margin=1.0, now=102.5))

    def test_a_welcome_read_late_makes_an_old_assign_look_old(self) -> None:
        # Hello sent at 100, Welcome (server time T0) read at 109: an Assign read at 109 with
        # accept_by T0 + 3 s is stale, since the database is at T0 + 9 s at least.
        c = ServerClock()
        c.observe(T0, sent_at=100.0, received_at=109.0)
        self.assertIsNotNone(stale_reason(c, T0 + 3 * S, margin=1.0, now=109.0))

    def test_without_accept_by_or_clock_nothing_is_stale(self) -> None:
        self.assertIsNone(stale_reason(self.clock, None, margin=1.0, now=1e9))
        self.assertIsNone(stale_reason(ServerClock(), T0, margin=1.0, now=100.0))


if __name__ == "__main__":
    unittest.main()
