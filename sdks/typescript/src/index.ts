// ax-worker: the TypeScript/Node worker SDK of ax. See README.md.
export { Worker } from "./worker";
export type { Handler, Logger, Pem, TlsOptions, WorkerOptions, WorkerStats } from "./worker";
export { Context } from "./context";
export type { LogLevel } from "./context";
export { AttemptStopped, HandlerError, WorkerError } from "./errors";
export type { StopKind } from "./errors";
export { truncate, MAX_OUTPUT, MAX_RESULT_MESSAGE, MAX_LOG_LINE, MAX_PROGRESS_MESSAGE, MAX_REJECT_REASON } from "./truncate";
export { ServerClock } from "./clock";
export { Lease, staleReason } from "./lease";
export { adminClient, triggerAndWait, MAX_WAIT_MS } from "./admin";
export type { TriggerSpec, TriggerTaskCaller } from "./admin";
