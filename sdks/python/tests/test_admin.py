"""trigger_and_wait (ax_worker.admin): it calls again with the instance's key until the instance
is final or the wait has passed, and reports whether the first call created the instance."""

import asyncio
import unittest
from typing import Any

import _path  # noqa: F401  (puts sdks/python on sys.path)
from ax_worker._proto import admin_pb2, types_pb2
from ax_worker.admin import trigger_and_wait


class FakeAdmin:
    """Answers TriggerTask from a script of (done, status); records each request."""

    def __init__(self, clock: "FakeClock", script: list, step: float) -> None:
        self.clock, self.script, self.step = clock, list(script), step
        self.requests: list[admin_pb2.TriggerTaskRequest] = []

    async def TriggerTask(self, request: admin_pb2.TriggerTaskRequest) -> admin_pb2.TriggerTaskResponse:
        copy = admin_pb2.TriggerTaskRequest()
        copy.CopyFrom(request)
        self.requests.append(copy)
        self.clock.now += self.step
        done, status = self.script.pop(0)
        instance = admin_pb2.Instance(id=7, idempotency_key="manual:abc", status=status)
        return admin_pb2.TriggerTaskResponse(instance=instance, created=len(self.requests) == 1, done=done)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class TriggerAndWait(unittest.TestCase):
    def test_waits_on_by_the_key_until_the_instance_is_final(self) -> None:
        clock = FakeClock()
        admin = FakeAdmin(clock, [(False, types_pb2.INSTANCE_STATUS_RUNNING), (False, types_pb2.INSTANCE_STATUS_RUNNING), (True, types_pb2.INSTANCE_STATUS_SUCCESS)], 29.0)
        r = run(trigger_and_wait(None, "resize", wait=120, params='{"a":1}', stub=admin, clock=clock))
        self.assertTrue(r.done)
        self.assertTrue(r.created, "the first call created it")
        self.assertEqual(r.instance.status, types_pb2.INSTANCE_STATUS_SUCCESS)
        self.assertEqual([q.idempotency_key for q in admin.requests], ["", "manual:abc", "manual:abc"])
        self.assertEqual([q.wait.seconds for q in admin.requests], [120, 91, 62])
        self.assertEqual(admin.requests[0].params, '{"a":1}')

    def test_stops_when_the_wait_has_passed(self) -> None:
        clock = FakeClock()
        admin = FakeAdmin(clock, [(False, types_pb2.INSTANCE_STATUS_PENDING), (False, types_pb2.INSTANCE_STATUS_PENDING)], 6.0)
        r = run(trigger_and_wait(None, "t", wait=10, stub=admin, clock=clock))
        self.assertFalse(r.done)
        self.assertEqual(len(admin.requests), 2)

    def test_refuses_a_wait_axd_would_refuse(self) -> None:
        for wait in (0, -1, 601):
            with self.assertRaises(ValueError):
                run(trigger_and_wait(None, "t", wait=wait, stub=object()))


if __name__ == "__main__":
    unittest.main()
