import { test } from "node:test";
import * as assert from "node:assert/strict";
import { SAMPLE_REFRESH_MS, ServerClock } from "../src/clock";

const T0 = 1_800_000_000_000; // a database time, ms since the epoch

test("the server clock counts from when the answered message was SENT", () => {
  const c = new ServerClock();
  assert.equal(c.at(0), undefined, "no estimate before the first reading");
  const sent = 1000;
  // A Welcome read 9 s after its Hello went out (the process was paused): the database time is
  // taken to be at least 9 s past the reading, not just past it.
  c.observe(T0, sent, sent + 9000);
  assert.equal(c.at(sent + 9000), T0 + 9000);
});

test("the smallest estimate wins; a looser one is ignored until the sample is a minute old", () => {
  const c = new ServerClock();
  const sent = 1000;
  c.observe(T0, sent, sent + 9000);
  // A reading that answers a later message and came back quickly is tighter: it wins.
  const hb = sent + 10_000;
  c.observe(T0 + 2000, hb, hb + 5);
  assert.equal(c.at(hb), T0 + 2000);
  // A looser one (it answers an older message) is ignored...
  c.observe(T0 + 3000, sent + 1000, hb + 1000);
  assert.equal(c.at(hb), T0 + 2000);
  // ... until the sample has been carried forward for a minute.
  const later = hb + SAMPLE_REFRESH_MS + 1000;
  c.observe(T0 + 64_000, later - 1000, later);
  assert.equal(c.at(later), T0 + 65_000);
  // Instants before the sample's own are estimated too (a lease that began earlier).
  assert.equal(c.at(later - 4000), T0 + 61_000);
});

test("instantOf maps a database time back to the local clock", () => {
  const c = new ServerClock();
  c.observe(T0, 500, 600);
  assert.equal(c.instantOf(T0 + 7000), 7500);
  assert.equal(c.instantOf(T0 - 100), 400, "a time already past maps to an instant in the past");
  assert.equal(new ServerClock().instantOf(T0), undefined);
});
