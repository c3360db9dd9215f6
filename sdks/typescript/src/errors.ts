/**
 * Thrown by a handler to report its attempt FAILED with `message`. `retryable` (default false)
 * tells axd whether the task's retry policy may run the instance again.
 */
export class HandlerError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { retryable?: boolean } = {}) {
    super(message);
    this.name = "HandlerError";
    this.retryable = options.retryable ?? false;
  }
}

/** Why a handler's `ctx.signal` was aborted; it is the signal's `reason`. */
export type StopKind = "canceled" | "fenced" | "timeout" | "released" | "shutdown";

/** The `reason` of an aborted `ctx.signal`. */
export class AttemptStopped extends Error {
  readonly kind: StopKind;
  constructor(kind: StopKind, message: string) {
    super(message);
    this.name = "AttemptStopped";
    this.kind = kind;
  }
}

/** `worker.run()` rejects with this when axd refuses the worker for good (an invalid Hello, a
 * certificate that may not serve the app, ...): reconnecting with the same settings cannot help. */
export class WorkerError extends Error {
  /** The gRPC status code axd ended the stream with (see @grpc/grpc-js `status`). */
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "WorkerError";
    this.code = code;
  }
}
