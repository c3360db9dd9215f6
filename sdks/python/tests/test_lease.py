"""The lease and fence arithmetic (worker.proto, "Leases and self-fencing")."""

import unittest

import _path  # noqa: F401  (puts sdks/python on sys.path)
from ax_worker._lease import Lease


class LeaseTest(unittest.TestCase):
    def test_fences_a_margin_before_the_end_and_abandons_half_a_margin_before(self) -> None:
        lease = Lease(end=110.0, margin=4.0)
        self.assertEqual(lease.fence_at(), 106.0)
        self.assertEqual(lease.abandon_at(), 108.0)
        self.assertEqual(lease.remaining(now=100.0), 10.0)

    def test_a_renewal_never_shortens_a_lease(self) -> None:
        lease = Lease(end=110.0, margin=4.0)
        lease.extend_to(105.0)
        self.assertEqual(lease.fence_at(), 106.0, "a renewal never shortens a lease")
        lease.extend_to(120.0)
        self.assertEqual(lease.fence_at(), 116.0)
        self.assertEqual(lease.end, 120.0)

    def test_expired_once_the_fence_time_has_passed(self) -> None:
        now = [100.0]
        lease = Lease(end=110.0, margin=4.0, clock=lambda: now[0])
        self.assertFalse(lease.expired())
        now[0] = 105.999
        self.assertFalse(lease.expired())
        now[0] = 106.0
        self.assertTrue(lease.expired(), "at the fence time the handler must stop")
        lease.extend_to(130.0)
        self.assertFalse(lease.expired(), "a renewal moves the fence")
        self.assertTrue(lease.expired(now=126.0))

    def test_without_lease_information_nothing_is_fenced(self) -> None:
        lease = Lease(end=None, margin=2.0)
        self.assertIsNone(lease.fence_at())
        self.assertIsNone(lease.abandon_at())
        self.assertIsNone(lease.remaining())
        lease.extend_to(1e12)
        self.assertIsNone(lease.end, "an unbounded lease stays unbounded")
        self.assertFalse(lease.expired(now=1e15))

    def test_a_lease_that_already_ended_is_expired(self) -> None:
        self.assertTrue(Lease(end=50.0, margin=0.001).expired(now=50.0))


if __name__ == "__main__":
    unittest.main()
