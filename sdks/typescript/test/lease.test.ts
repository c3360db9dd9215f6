import { test } from "node:test";
import * as assert from "node:assert/strict";
import { ServerClock } from "../src/clock";
import { Lease, staleReason } from "../src/lease";

test("a lease fences a margin before its end and is abandoned half a margin before", () => {
  const l = new Lease(10_000, 4000);
  assert.equal(l.fenceAt(), 6000);
  assert.equal(l.abandonAt(), 8000);
  assert.equal(l.expired(5999), false);
  assert.equal(l.expired(6000), true);
});

test("a lease only grows", () => {
  const l = new Lease(10_000, 4000);
  l.extendTo(5000);
  assert.equal(l.fenceAt(), 6000, "a renewal never shortens a lease");
  l.extendTo(20_000);
  assert.equal(l.fenceAt(), 16_000);
  assert.equal(l.expired(15_000), false);
});

test("a lease without an end is never fenced", () => {
  const l = new Lease(undefined, 1000);
  l.extendTo(5000);
  assert.equal(l.fenceAt(), undefined);
  assert.equal(l.expired(Number.MAX_SAFE_INTEGER), false);
});

test("an Assign whose accept_by is closer than the fence margin is stale", () => {
  const T0 = 1_800_000_000_000;
  const c = new ServerClock();
  c.observe(T0, 0, 10); // database time T0 at local 0
  const margin = 1000;
  // At local 100 the database reads T0+100 (at the latest).
  assert.equal(staleReason(c, T0 + 1101, margin, 100), undefined, "more than the margin left: fresh");
  assert.match(staleReason(c, T0 + 1100, margin, 100) ?? "", /stale assignment/, "exactly the margin left: stale");
  assert.match(staleReason(c, T0 - 1000, margin, 100) ?? "", /stale assignment/, "accept_by already passed");
  assert.equal(staleReason(c, undefined, margin, 100), undefined, "no accept_by: nothing to check");
  assert.equal(staleReason(new ServerClock(), T0, margin, 100), undefined, "no clock reading yet");
});

test("a Welcome read late makes an Assign read with it stale (the clock counts from the send)", () => {
  const T0 = 1_800_000_000_000;
  const c = new ServerClock();
  // Hello sent at local 0; axd read T0 and set accept_by = T0 + 3 s; we read both at local 9000.
  c.observe(T0, 0, 9000);
  assert.match(staleReason(c, T0 + 3000, 1000, 9000) ?? "", /stale assignment/);
});
