import { test } from "node:test";
import * as assert from "node:assert/strict";
import { triggerAndWait, type TriggerTaskCaller } from "../src/admin";
import type { TriggerTaskRequest } from "../src/gen/ax/v1/TriggerTaskRequest";
import type { TriggerTaskResponse__Output } from "../src/gen/ax/v1/TriggerTaskResponse";

/** Answers TriggerTask from a script of [done, status], moving the clock by `stepMs` per call. */
function fake(script: Array<[boolean, string]>, stepMs: number, clock: { now: number }) {
  const requests: TriggerTaskRequest[] = [];
  const client: TriggerTaskCaller = {
    TriggerTask(request, callback) {
      requests.push(request);
      clock.now += stepMs;
      const [done, status] = script.shift()!;
      const response = {
        instance: { id: "7", idempotency_key: "manual:abc", status },
        created: requests.length === 1,
        done,
      } as unknown as TriggerTaskResponse__Output;
      callback(null, response);
      return undefined;
    },
  };
  return { client, requests };
}

test("waits on by the instance's key until it is final", async () => {
  const clock = { now: 100_000 };
  const script: Array<[boolean, string]> = [[false, "INSTANCE_STATUS_RUNNING"], [false, "INSTANCE_STATUS_RUNNING"], [true, "INSTANCE_STATUS_SUCCESS"]];
  const { client, requests } = fake(script, 29_000, clock);
  const r = await triggerAndWait(client, { name: "resize", params: '{"a":1}' }, 120_000, () => clock.now);
  assert.equal(r.done, true);
  assert.equal(r.created, true, "the first call created it");
  assert.deepEqual(requests.map((q) => q.idempotency_key), ["", "manual:abc", "manual:abc"]);
  assert.deepEqual(requests.map((q) => q.wait?.seconds), ["120", "91", "62"]);
  assert.equal(requests[0].params, '{"a":1}');
});

test("stops when the wait has passed", async () => {
  const clock = { now: 0 };
  const { client, requests } = fake([[false, "INSTANCE_STATUS_PENDING"], [false, "INSTANCE_STATUS_PENDING"]], 6_000, clock);
  const r = await triggerAndWait(client, { name: "t" }, 10_000, () => clock.now);
  assert.equal(r.done, false);
  assert.equal(requests.length, 2);
});

test("refuses a wait axd would refuse", async () => {
  const { client } = fake([], 0, { now: 0 });
  for (const wait of [0, -1, 600_001]) {
    await assert.rejects(triggerAndWait(client, { name: "t" }, wait), RangeError);
  }
});
