// The database clock as far as this worker can tell, and the local monotonic clock.
//
// All local instants in this SDK are milliseconds of `performance.now()` (monotonic: it does not
// jump when the wall clock is set). Database times are milliseconds since the Unix epoch.

import { performance } from "node:perf_hooks";

/** Where mono() reads the time: performance.now(), or the clock a test injects (useClock). */
let source: () => number = () => performance.now();

/** The monotonic clock, in milliseconds. */
export function mono(): number {
  return source();
}

/** Makes mono() read `clock` instead of performance.now(), for tests that inject the time; returns
 * what puts the previous clock back. Not part of the package's API (index.ts). */
export function useClock(clock: () => number): () => void {
  const before = source;
  source = clock;
  return () => {
    source = before;
  };
}

/** How long a sample stays the one estimates count from, even when later ones are looser: it is
 * carried forward on the monotonic clock, whose rate may drift from the database's. */
export const SAMPLE_REFRESH_MS = 60_000;

interface Sample {
  /** axd's reading of the database clock (ms since the epoch). */
  server: number;
  /** A local instant before axd took the reading: when the message it answers was SENT. */
  from: number;
  /** When the reading was received (local). */
  received: number;
}

/**
 * The database clock, estimated so that it is never behind: an assignment read late must look
 * late, and a lease must end early rather than late.
 *
 * axd reads its clock (Welcome.server_time, SchedulerHeartbeat.server_time) after the message it
 * answers has arrived: Hello for Welcome, heartbeat `renewed_seq` (Hello when 0) for a
 * SchedulerHeartbeat. So `server_time + (t - sent)`, counted on the monotonic clock from when this
 * worker *sent* that message, is at least the database time at `t` (less axd's own small lag,
 * which the fence margin covers), however long the answer then waited to be read. The estimate is
 * the smallest of these bounds; a sample older than SAMPLE_REFRESH_MS gives way to the next one.
 *
 * Counting from when the answer was *received* would be a lower bound instead: a Welcome read nine
 * seconds late (the process was stopped right after sending Hello) would make the clock nine
 * seconds slow, and an assignment axd has already taken back would look fresh.
 */
export class ServerClock {
  private sample: Sample | undefined;

  /** Records `serverMs`, read by axd after this process sent a message at local instant `sentAt`,
   * received here at `receivedAt`. */
  observe(serverMs: number, sentAt: number, receivedAt: number): void {
    const s = this.sample;
    if (s !== undefined) {
      const current = s.server + (sentAt - s.from);
      // Keep the current sample if it is tighter (or as tight) and not yet due for a refresh.
      if (receivedAt - s.received < SAMPLE_REFRESH_MS && serverMs >= current) return;
    }
    this.sample = { server: serverMs, from: sentAt, received: receivedAt };
  }

  /** The estimated database time (ms since the epoch) at local instant `t`; undefined before the
   * first reading. */
  at(t: number): number | undefined {
    const s = this.sample;
    return s === undefined ? undefined : s.server + (t - s.from);
  }

  /** The local instant by which the database clock will read `serverMs` at the latest. */
  instantOf(serverMs: number): number | undefined {
    const s = this.sample;
    return s === undefined ? undefined : s.from + (serverMs - s.server);
  }
}
