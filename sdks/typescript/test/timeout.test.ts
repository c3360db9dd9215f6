// An attempt's own deadline (worker.proto, Assign.timeout): the worker stops a handler once its
// timeout and the fence margin have passed, counted from its start, whether or not axd's Cancel
// comes; one that does not return 200 ms later is reported FAILED (retryable) and abandoned.
//
// The time is injected (useClock), and the worker's lease and hold timers are fired by hand at
// chosen times (their real setTimeout cleared first).

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { useClock } from "../src/clock";
import { Context } from "../src/context";
import { AttemptStopped, HandlerError } from "../src/errors";
import { Worker } from "../src/worker";
import type { Assign__Output } from "../src/gen/ax/v1/Assign";
import type { Result } from "../src/gen/ax/v1/Result";
import type { WorkerMessage } from "../src/gen/ax/v1/WorkerMessage";

/** What a test reaches of a Worker's private state. */
interface Internals {
  session: unknown;
  fenceMarginMs: number;
  attempts: Map<string, Attempt>;
  orphans: Map<string, Attempt>;
  onAssign(s: unknown, m: Assign__Output): void;
  onLeaseTimer(a: Attempt): void;
  holdEnded(a: Attempt): void;
  cleanup(): void;
}

interface Attempt {
  ctx: Context;
  held: boolean;
  runBy: number | undefined;
  leaseTimer: NodeJS.Timeout | undefined;
  holdTimer: NodeJS.Timeout | undefined;
}

/** What starting a handler reads and writes of a stream; what it sent is kept. */
class FakeSession {
  welcome = {};
  ended = false;
  seq = 0;
  readonly sent: WorkerMessage[] = [];
  send(m: WorkerMessage): void {
    this.sent.push(m);
  }
  results(): Result[] {
    return this.sent.flatMap((m) => (m.result ? [m.result] : []));
  }
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function assign(handler: string, timeoutMs: number | undefined, startAfterMs = 0): Assign__Output {
  const dur = (ms: number) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 });
  return {
    instance_id: "7",
    attempt: 1,
    task_name: "t",
    handler,
    params: "{}",
    trigger_time: null,
    timeout: timeoutMs === undefined ? null : dur(timeoutMs),
    idempotency_key: "",
    start_after: startAfterMs > 0 ? dur(startAfterMs) : null,
    accept_by: null,
    traceparent: "",
    shard_index: 0,
    shard_total: 0,
  };
}

/** Lets handler promises settle. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A worker with handlers `deaf` (ignores its signal until `release`) and `polite` (fails as soon
 * as its signal aborts), a connected fake stream, a fence margin of 500 ms and the clock at `now`. */
function setup(t: { after(fn: () => void): void }) {
  const clock = { now: 1000 };
  t.after(useClock(() => clock.now));
  let release: (v: string) => void = () => {};
  const w = new Worker({ endpoints: ["http://127.0.0.1:1"], app: "app", workerId: "w", capacity: 2, logger: quiet });
  w.handler("deaf", () => new Promise<string>((resolve) => (release = resolve)));
  w.handler("polite", async (ctx) => {
    await ctx.sleep(60_000).catch((e: AttemptStopped) => {
      throw new HandlerError(`stopped (${e.kind}): ${e.message}`, { retryable: true });
    });
    return "finished";
  });
  const x = w as unknown as Internals;
  const s = new FakeSession();
  x.session = s;
  x.fenceMarginMs = 500;
  t.after(() => x.cleanup());
  /** Fires the attempt's lease timer at `ms`. */
  const at = (ms: number, a: Attempt) => {
    clock.now = ms;
    clearTimeout(a.leaseTimer);
    x.onLeaseTimer(a);
  };
  return { clock, w, x, s, at, release: (v: string) => release(v) };
}

test("a handler that ignores the stop is abandoned at its timeout plus the fence margin and 200 ms", async (t) => {
  const { x, s, at, release } = setup(t);
  x.onAssign(s, assign("deaf", 3000));
  const a = x.attempts.get("7/1")!;
  assert.equal(a.runBy, 1000 + 3000 + 500, "its start plus its timeout plus the fence margin");
  at(4499, a);
  assert.equal(a.ctx.signal.aborted, false, "not before its timeout and the fence margin");
  at(4500, a);
  assert.equal(a.ctx.signal.aborted, true, "told to stop at its timeout");
  const why = a.ctx.signal.reason as AttemptStopped;
  assert.equal(why.kind, "timeout");
  at(4699, a);
  assert.deepEqual(s.results(), [], "it gets 200 ms to return");
  at(4700, a);
  const [r, ...more] = s.results();
  assert.equal(more.length, 0);
  assert.equal(r!.outcome, "OUTCOME_FAILED");
  assert.equal(r!.retryable, true);
  assert.equal(r!.message, "timed out: the worker stopped the handler at the attempt's timeout");
  assert.equal(x.attempts.has("7/1"), false);
  assert.equal(x.orphans.has("7/1"), true, "its slot stays busy until it returns");
  const credits = () => s.sent.filter((m) => m.credit).length;
  const before = credits();
  release("late");
  await settle();
  assert.equal(x.orphans.has("7/1"), false);
  assert.equal(s.results().length, 1, "what it returned late is discarded");
  assert.equal(credits(), before + 1, "its slot is granted back once it returns");
});

test("a handler that stops when told reports its own result", async (t) => {
  const { x, s, at } = setup(t);
  x.onAssign(s, assign("polite", 3000));
  const a = x.attempts.get("7/1")!;
  at(4500, a);
  await settle();
  const [r, ...more] = s.results();
  assert.equal(more.length, 0);
  assert.equal(r!.outcome, "OUTCOME_FAILED");
  assert.equal(r!.retryable, true);
  assert.match(r!.message ?? "", /^stopped \(timeout\)/);
  assert.equal(x.attempts.has("7/1"), false);
  assert.equal(x.orphans.has("7/1"), false, "not abandoned");
});

test("the deadline counts from the end of the hold", (t) => {
  const { clock, x, s, at } = setup(t);
  x.onAssign(s, assign("deaf", 3000, 10_000));
  const a = x.attempts.get("7/1")!;
  assert.equal(a.held, true);
  assert.equal(a.runBy, undefined, "no deadline while held");
  at(4500, a);
  assert.equal(a.ctx.signal.aborted, false, "the hold is not part of the run");
  clock.now = 11_000;
  clearTimeout(a.holdTimer);
  x.holdEnded(a);
  assert.equal(a.held, false);
  assert.equal(a.runBy, 11_000 + 3000 + 500);
  at(14_499, a);
  assert.equal(a.ctx.signal.aborted, false);
  at(14_500, a);
  assert.equal(a.ctx.signal.aborted, true);
});

test("without a timeout nothing stops the handler", (t) => {
  const { x, s, at } = setup(t);
  x.onAssign(s, assign("deaf", undefined));
  const a = x.attempts.get("7/1")!;
  assert.equal(a.runBy, undefined);
  at(1e9, a);
  assert.equal(a.ctx.signal.aborted, false);
  assert.deepEqual(s.results(), []);
});
