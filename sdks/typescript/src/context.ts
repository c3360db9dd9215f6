import { HandlerError } from "./errors";
import { mono } from "./clock";
import type { Lease } from "./lease";

/** Log levels of `ctx.log`, mapped to ax.v1.LogLevel. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** What a Context reports to its worker (internal). */
export interface ContextSink {
  progress(percent: number, message: string): void;
  log(level: LogLevel, message: string, at: Date): void;
}

export interface ContextInit {
  instanceId: string;
  attempt: number;
  taskName: string;
  handler: string;
  paramsRaw: string;
  idempotencyKey: string;
  triggerTime: Date | undefined;
  timeoutMs: number | undefined;
  shard?: { index: number; total: number };
  signal: AbortSignal;
  lease: Lease;
  sink: ContextSink;
}

/**
 * What a handler gets: the attempt it runs, its parameters, a way to report progress and log
 * lines, and `signal`, aborted when the attempt must stop (Cancel from axd, its lease about to run
 * out, its own timeout passed, released by axd after a reconnect, or the worker's shutdown
 * deadline). Its `reason` is an `AttemptStopped` saying which.
 */
export class Context {
  /** Instance id, as a decimal string (int64: it may exceed Number.MAX_SAFE_INTEGER). */
  readonly instanceId: string;
  /** Attempt number, 1 for the first run. (instanceId, attempt) identifies this execution. */
  readonly attempt: number;
  readonly taskName: string;
  readonly handler: string;
  /** The parameters, as the JSON text axd sent ("{}" if none). */
  readonly paramsRaw: string;
  /** Stable key of the instance, the same for every attempt: use it to make side effects idempotent. */
  readonly idempotencyKey: string;
  /** When the instance was due. */
  readonly triggerTime: Date | undefined;
  /** The task's run timeout in ms. axd sends Cancel when it passes; the worker also stops the
   * handler itself once it and the fence margin have passed since the handler started. */
  readonly timeoutMs: number | undefined;
  /**
   * For a child of a sharded or broadcast fire: the 0-based part of the work this instance is
   * (`index`) and how many parts the fire has (`total`); undefined otherwise.
   */
  readonly shard: { index: number; total: number } | undefined;
  /** Aborted when the attempt must stop; see the class comment. */
  readonly signal: AbortSignal;
  private readonly lease: Lease;
  private readonly sink: ContextSink;

  constructor(init: ContextInit) {
    this.instanceId = init.instanceId;
    this.attempt = init.attempt;
    this.taskName = init.taskName;
    this.handler = init.handler;
    this.paramsRaw = init.paramsRaw;
    this.idempotencyKey = init.idempotencyKey;
    this.triggerTime = init.triggerTime;
    this.timeoutMs = init.timeoutMs;
    this.shard = init.shard;
    this.signal = init.signal;
    this.lease = init.lease;
    this.sink = init.sink;
  }

  /** The parameters parsed as JSON; a HandlerError (not retryable) if they are not JSON. */
  params<T = unknown>(): T {
    try {
      return JSON.parse(this.paramsRaw === "" ? "{}" : this.paramsRaw) as T;
    } catch (e) {
      throw new HandlerError(`params are not JSON: ${(e as Error).message}`, { retryable: false });
    }
  }

  /** True once the attempt's lease is about to run out (checked against the clock, so it is true
   * even before the worker has acted on it). A handler doing long synchronous work should check it. */
  get leaseExpired(): boolean {
    return this.lease.expired(mono());
  }

  /** Throws `signal.reason` if the attempt must stop. */
  throwIfStopped(): void {
    this.signal.throwIfAborted();
  }

  /** Resolves after `ms`, or rejects with `signal.reason` as soon as the attempt must stop. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.signal.aborted) return reject(this.signal.reason);
      const onAbort = () => {
        clearTimeout(t);
        reject(this.signal.reason);
      };
      const t = setTimeout(() => {
        this.signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      this.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Reports progress (0-100; shown by `axctl instance get`). Best effort. */
  progress(percent: number, message = ""): void {
    this.sink.progress(percent, message);
  }

  /** A log line stored with the instance (`axctl instance logs`). Best effort. */
  log(message: string, level: LogLevel = "info"): void {
    this.sink.log(level, message, new Date());
  }
}
