// How long an attempt is this worker's own (proto/ax/v1/worker.proto, "Leases and self-fencing").
//
// axd renews the leases of the attempts a worker accepted and says which of the worker's
// heartbeats each renewal answers; the lease then lasts `Welcome.lease_ttl` from when that
// heartbeat was SENT, on the monotonic clock. Before a renewal covers an attempt it is ours until
// its `Assign.accept_by`, a database time read through the ServerClock. A lease only ever grows.

import { ServerClock } from "./clock";

export class Lease {
  /**
   * @param end local instant (monotonic ms) when the lease may end at the earliest; undefined when
   *   axd sends no lease information (the attempt is never fenced).
   * @param margin Welcome.fence_margin in ms.
   */
  constructor(
    public end: number | undefined,
    public margin: number,
  ) {}

  /** Moves the end later; a renewal never shortens a lease. */
  extendTo(end: number): void {
    if (this.end !== undefined && end > this.end) this.end = end;
  }

  /** When the handler is told to stop: `margin` before the end. */
  fenceAt(): number | undefined {
    return this.end === undefined ? undefined : this.end - this.margin;
  }

  /** When a handler that ignored the stop is no longer counted as ours (reported FAILED at once,
   * whatever it returns later is discarded): half a margin before the end. */
  abandonAt(): number | undefined {
    return this.end === undefined ? undefined : this.end - this.margin / 2;
  }

  /** True once the fence time has passed at local instant `now`. */
  expired(now: number): boolean {
    const f = this.fenceAt();
    return f !== undefined && now >= f;
  }
}

/**
 * Why an assignment must not start at local instant `now` (proto: "Stale assignments"): its
 * accept-by time (database ms) is less than the fence margin away on the estimated database clock.
 * Undefined if it may start (or if there is no accept-by time or no clock reading yet).
 */
export function staleReason(
  clock: ServerClock,
  acceptBy: number | undefined,
  marginMs: number,
  now: number,
): string | undefined {
  const db = clock.at(now);
  if (acceptBy === undefined || db === undefined) return undefined;
  if (db + marginMs < acceptBy) return undefined;
  return (
    `stale assignment: read at ${new Date(db).toISOString()} (database time, estimated), less than ` +
    `the fence margin (${marginMs} ms) before its accept-by time ${new Date(acceptBy).toISOString()}`
  );
}
