// The worker: one long-lived `WorkerService.Connect` stream at a time, and the state that must
// survive a lost stream (running attempts, results not yet acknowledged, abandoned handlers).
//
// Everything runs on Node's single event loop, so there is no locking: gRPC messages, handler
// completions and timers are callbacks that act on the state directly. The protocol is the file
// comment of proto/ax/v1/worker.proto; the comments here point at the rule each step follows.
//
// Credits: a slot is busy while its attempt is held or runs, while its Result waits for a
// ResultAck, and while an abandoned handler still runs. One Credit goes out for each slot that
// becomes free; a new Hello grants capacity minus the busy slots.

import * as fs from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { mono, ServerClock } from "./clock";
import { Context, type LogLevel } from "./context";
import { AttemptStopped, HandlerError, WorkerError, type StopKind } from "./errors";
import { Lease, staleReason } from "./lease";
import { axProto } from "./proto";
import {
  MAX_LOG_LINE,
  MAX_OUTPUT,
  MAX_PROGRESS_MESSAGE,
  MAX_REJECT_REASON,
  MAX_RESULT_MESSAGE,
  truncate,
} from "./truncate";
import type { Assign__Output } from "./gen/ax/v1/Assign";
import type { Cancel__Output } from "./gen/ax/v1/Cancel";
import type { Duration__Output } from "./gen/google/protobuf/Duration";
import type { Result } from "./gen/ax/v1/Result";
import type { SchedulerHeartbeat__Output } from "./gen/ax/v1/SchedulerHeartbeat";
import type { SchedulerMessage__Output } from "./gen/ax/v1/SchedulerMessage";
import type { Timestamp, Timestamp__Output } from "./gen/google/protobuf/Timestamp";
import type { Welcome__Output } from "./gen/ax/v1/Welcome";
import type { WorkerMessage } from "./gen/ax/v1/WorkerMessage";

/** A handler: gets the attempt's Context, returns its output or throws to fail it.
 * A string is sent as is, a Buffer/Uint8Array as UTF-8 text, undefined/null as "", anything else
 * as JSON. Throw `HandlerError` to choose the message and whether it is retryable; any other
 * thrown value fails the attempt (retryable) with its message, and the worker goes on serving. */
export type Handler = (ctx: Context) => unknown;

/** A PEM value: its contents, or the path of a file holding it. */
export type Pem = string | Buffer;

export interface TlsOptions {
  /** CA certificate(s) to verify axd with; the system roots if unset. */
  ca?: Pem;
  /** Client certificate (mTLS); its identity must be spiffe://<trust domain>/worker/<app>. */
  cert?: Pem;
  /** The client certificate's private key. */
  key?: Pem;
  /** Name to verify axd's certificate against, instead of the endpoint's host. */
  serverName?: string;
}

/** Where the SDK's own log lines go. */
export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export interface WorkerOptions {
  /** axd endpoints, tried in turn: "http://host:port", or "https://host:port" with TLS. */
  endpoints: string[];
  /** Application the worker belongs to (Hello.app). */
  app: string;
  /** Stable id of this worker process, kept across reconnects (Hello.worker_id). */
  workerId: string;
  /** The most attempts run at once (Hello.capacity), 1-10000. Default 1. */
  capacity?: number;
  /** Labels shown by `axctl worker list`. */
  labels?: Record<string, string>;
  /** TLS (and mTLS with cert and key). Required for https:// endpoints with a private CA. */
  tls?: TlsOptions;
  /** Longest pause between reconnect attempts, in ms. Default 10000. */
  reconnectMaxMs?: number;
  /** How long a graceful shutdown waits for running handlers before aborting them, in ms.
   * Default 30000. */
  shutdownDeadlineMs?: number;
  /** How long to wait for Welcome after Hello before trying another endpoint, in ms. Default 10000. */
  welcomeTimeoutMs?: number;
  /** Stop gracefully on SIGTERM and SIGINT (a second signal exits at once). Default false. */
  installSignalHandlers?: boolean;
  /** Where the SDK logs; default: lines on stderr, debug lines only if AX_LOG=debug. */
  logger?: Logger;
}

/** Counters of a worker, for tests and metrics. */
export interface WorkerStats {
  connections: number;
  assigned: number;
  rejected: number;
  stale: number;
  fenced: number;
  abandoned: number;
  silentAxd: number;
  acked: number;
}

// --- timings --------------------------------------------------------------------------------------

const DEFAULT_HEARTBEAT_MS = 2000;
/** axd, and the worker, give up on a peer silent for this many heartbeat intervals. */
const SILENT_INTERVALS = 3;
/** After the silence limit, how long to let messages that already arrived be read (a process that
 * was starved of CPU) before leaving. Small against the slack the protocol leaves. */
const SILENCE_CONFIRM_MS = 100;
/** The least time a fenced handler gets to return by itself before it is abandoned, even when the
 * whole margin has already passed (the process was paused); and the time a handler told to stop at
 * its timeout gets (the Rust SDK's STOP_GRACE, the Python SDK's too). */
const STOP_GRACE_MS = 200;
/** The Result of an attempt the worker stopped at its timeout (the Rust and Python SDKs' too). */
const TIMED_OUT = "timed out: the worker stopped the handler at the attempt's timeout";
/** After the shutdown deadline's abort, how long handlers get before they are abandoned. */
const STRAGGLER_GRACE_MS = 2000;
/** After that, how long the worker keeps trying to deliver results before giving up. */
const GIVE_UP_AFTER_MS = 5000;
/** How long a graceful close waits for axd to end the stream. */
const CLOSE_WAIT_MS = 2000;
const INITIAL_BACKOFF_MS = 100;
/** Pause between endpoints when trying each once before backing off. */
const QUICK_RETRY_MS = 20;
/** A session that lived at least this long resets the backoff. */
const FLAPPING_SESSION_MS = 1000;
/** Heartbeat send times remembered per stream (renewals answer recent heartbeats). */
const MAX_REMEMBERED_HEARTBEATS = 1024;

const CLIENT = `ax-worker-ts/0.1.0 node/${process.versions.node}`;

// gRPC status codes after which reconnecting cannot help: the worker's Hello or identity is wrong.
const REFUSED_CODES = new Set<number>([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.PERMISSION_DENIED,
  grpc.status.UNAUTHENTICATED,
  grpc.status.FAILED_PRECONDITION,
]);

// --- conversions ----------------------------------------------------------------------------------

/** A Duration in ms; undefined if unset or zero. */
export function durationMs(d: Duration__Output | null | undefined): number | undefined {
  if (d === null || d === undefined) return undefined;
  const ms = Number(d.seconds) * 1000 + d.nanos / 1e6;
  return ms > 0 ? ms : undefined;
}

/** A Timestamp in ms since the epoch; undefined if unset. */
export function timestampMs(t: Timestamp__Output | null | undefined): number | undefined {
  if (t === null || t === undefined) return undefined;
  return Number(t.seconds) * 1000 + t.nanos / 1e6;
}

function timestampOf(d: Date): Timestamp {
  const ms = d.getTime();
  const seconds = Math.floor(ms / 1000);
  return { seconds: String(seconds), nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/** A handler's return value as Result.output text. */
export function outputText(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (Buffer.isBuffer(v)) return v.toString("utf8");
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("utf8");
  const json = JSON.stringify(v);
  return json === undefined ? String(v) : json;
}

function readPem(p: Pem | undefined): Buffer | undefined {
  if (p === undefined) return undefined;
  if (Buffer.isBuffer(p)) return p;
  // A string is PEM text if it looks like it, else a file path.
  return p.includes("-----BEGIN") ? Buffer.from(p) : fs.readFileSync(p);
}

function stderrLogger(): Logger {
  const debug = (process.env.AX_LOG ?? "").toLowerCase() === "debug";
  const line = (level: string, msg: string) => process.stderr.write(`${new Date().toISOString()} ${level} ax-worker: ${msg}\n`);
  return {
    debug: (m) => debug && line("DEBUG", m),
    info: (m) => line("INFO", m),
    warn: (m) => line("WARN", m),
    error: (m) => line("ERROR", m),
  };
}

const LOG_LEVELS: Record<LogLevel, "LOG_LEVEL_DEBUG" | "LOG_LEVEL_INFO" | "LOG_LEVEL_WARN" | "LOG_LEVEL_ERROR"> = {
  debug: "LOG_LEVEL_DEBUG",
  info: "LOG_LEVEL_INFO",
  warn: "LOG_LEVEL_WARN",
  error: "LOG_LEVEL_ERROR",
};

// --- state ------------------------------------------------------------------------------------------

/** "instance/attempt": the key of an attempt in every map. */
type Key = string;
const keyOf = (instanceId: string, attempt: number): Key => `${instanceId}/${attempt}`;

/** An attempt this worker holds: an early assignment waiting for its start, or a running handler. */
interface Attempt {
  key: Key;
  instanceId: string;
  attempt: number;
  fn: Handler;
  ctx: Context;
  stop: AbortController;
  lease: Lease;
  /** Assign.accept_by, database ms (undefined if axd sent none). */
  acceptBy: number | undefined;
  /** Waiting for its start_after (early assignment); false once the handler started. */
  held: boolean;
  /** The hold has ended, but the handler could not start yet (no stream: Accepted must go out). */
  holdOver: boolean;
  holdTimer: NodeJS.Timeout | undefined;
  leaseTimer: NodeJS.Timeout | undefined;
  /** Heartbeats sent on the current stream when its Accepted went out: a renewal answering a later
   * heartbeat covers it. Undefined: not accepted on this stream (held, or from an earlier stream
   * and not adopted by Welcome). */
  acceptedAfter: number | undefined;
  /** The handler was told to stop because its lease is about to run out (local instant). */
  fencedAt: number | undefined;
  /** When the handler must have ended (local instant): its start plus Assign.timeout plus the fence
   * margin. Undefined while held, or without a timeout. */
  runBy: number | undefined;
  /** The handler was told to stop because runBy passed (local instant). */
  timedOutAt: number | undefined;
  /** axd said it is not ours any more (Cancel, or Welcome released it): renewals no longer extend
   * its lease, and its progress and log lines are not sent. */
  revoked: boolean;
}

type End = "finished" | "refused" | "drained" | "lost";

/** One Connect stream. */
class Session {
  readonly client: grpc.Client;
  call: grpc.ClientDuplexStream<WorkerMessage, SchedulerMessage__Output> | undefined;
  welcome: Welcome__Output | undefined;
  welcomedAt: number | undefined;
  /** When Hello went out: leases of adopted attempts, and the clock reading in Welcome, count
   * from here. */
  helloAt = 0;
  /** When anything last arrived from axd. */
  lastHeard = 0;
  heartbeatMs = DEFAULT_HEARTBEAT_MS;
  nextHeartbeat = 0;
  /** Heartbeats sent on this stream, and when each recent one went out. */
  seq = 0;
  readonly sentAt = new Map<number, number>();
  heartbeatTimer: NodeJS.Timeout | undefined;
  silenceTimer: NodeJS.Timeout | undefined;
  welcomeTimer: NodeJS.Timeout | undefined;
  /** Our side is closed (half-closed or cancelled): nothing more is written. */
  closed = false;
  ended = false;
  resolve: (how: End) => void = () => {};
  refusal: WorkerError | undefined;

  constructor(
    readonly number: number,
    readonly endpoint: string,
    client: grpc.Client,
  ) {
    this.client = client;
  }

  send(m: WorkerMessage): void {
    if (!this.closed && this.call !== undefined) this.call.write(m);
  }

  /** When heartbeat `seq` went out (and forget older ones: renewals only move forward). */
  heartbeatSentAt(seq: number): number | undefined {
    for (const k of this.sentAt.keys()) {
      if (k < seq) this.sentAt.delete(k);
      else break; // inserted in increasing order
    }
    return this.sentAt.get(seq);
  }
}

// --- the worker -------------------------------------------------------------------------------------

export class Worker {
  private readonly endpoints: string[];
  private readonly app: string;
  private readonly workerId: string;
  private readonly capacity: number;
  private readonly labels: Record<string, string>;
  private readonly tls: TlsOptions | undefined;
  private readonly reconnectMaxMs: number;
  private readonly shutdownDeadlineMs: number;
  private readonly welcomeTimeoutMs: number;
  private readonly installSignals: boolean;
  private readonly log: Logger;
  private readonly handlers = new Map<string, Handler>();

  /** Held and running attempts that are ours. */
  private readonly attempts = new Map<Key, Attempt>();
  /** Results kept until their ResultAck. */
  private readonly unacked = new Map<Key, Result>();
  /** Abandoned handlers (reported FAILED, no longer ours) that have not returned: their slots stay busy. */
  private readonly orphans = new Map<Key, Attempt>();
  private session: Session | undefined;
  private sessions = 0;
  private readonly clock = new ServerClock();
  /** From the latest Welcome: undefined means axd sends no leases (nothing is fenced). */
  private leaseTtlMs: number | undefined;
  private fenceMarginMs = 0;

  private running = false;
  private shutdownAt: number | undefined;
  private shutdownTimer: NodeJS.Timeout | undefined;
  private canceledAll = false;
  private abandonedAll = false;
  private gaveUp = false;
  /** Wakes the reconnect pause when the shutdown completes. */
  private wakeOffline: (() => void) | undefined;
  private signalHandler: ((sig: NodeJS.Signals) => void) | undefined;

  readonly stats: WorkerStats = {
    connections: 0,
    assigned: 0,
    rejected: 0,
    stale: 0,
    fenced: 0,
    abandoned: 0,
    silentAxd: 0,
    acked: 0,
  };

  constructor(options: WorkerOptions) {
    if (!Array.isArray(options.endpoints) || options.endpoints.length === 0) {
      throw new Error("ax-worker: at least one endpoint is required");
    }
    this.endpoints = options.endpoints.map((e) => e.trim()).filter((e) => e !== "");
    if (this.endpoints.length === 0) throw new Error("ax-worker: at least one endpoint is required");
    this.app = options.app;
    this.workerId = options.workerId;
    this.capacity = options.capacity ?? 1;
    if (!Number.isInteger(this.capacity) || this.capacity < 1 || this.capacity > 10000) {
      throw new Error(`ax-worker: capacity must be 1..=10000, got ${options.capacity}`);
    }
    this.labels = options.labels ?? {};
    this.tls = options.tls;
    this.reconnectMaxMs = options.reconnectMaxMs ?? 10_000;
    this.shutdownDeadlineMs = options.shutdownDeadlineMs ?? 30_000;
    this.welcomeTimeoutMs = options.welcomeTimeoutMs ?? 10_000;
    this.installSignals = options.installSignalHandlers ?? false;
    this.log = options.logger ?? stderrLogger();
    for (const e of this.endpoints) this.target(e); // fail early on a bad endpoint
  }

  /** Registers `fn` for handler `name` (Hello.handlers). Returns the worker, for chaining. */
  handler(name: string, fn: Handler): this {
    if (this.running) throw new Error("ax-worker: register handlers before run()");
    if (this.handlers.has(name)) throw new Error(`ax-worker: handler ${JSON.stringify(name)} registered twice`);
    this.handlers.set(name, fn);
    return this;
  }

  /**
   * Connects and serves until a graceful shutdown (`stop()`, or SIGTERM/SIGINT with
   * installSignalHandlers) completes. Rejects with WorkerError if axd refuses the worker for good.
   */
  async run(): Promise<void> {
    if (this.running) throw new Error("ax-worker: run() called twice");
    if (this.handlers.size === 0) throw new Error("ax-worker: no handlers registered");
    this.running = true;
    if (this.installSignals) {
      this.signalHandler = (sig) => {
        if (this.shutdownAt !== undefined) {
          this.log.warn(`second ${sig}: exiting now`);
          process.exit(1);
        }
        this.log.info(`${sig}: shutting down`);
        this.stop();
      };
      process.on("SIGTERM", this.signalHandler);
      process.on("SIGINT", this.signalHandler);
    }
    try {
      await this.loop();
    } finally {
      this.cleanup();
    }
  }

  /**
   * Begins a graceful shutdown: no new work (Credit{reset}), held assignments are handed back
   * (Reject), running handlers finish and their results are delivered. After `shutdownDeadlineMs`
   * the handlers' signals are aborted; 2 s later the stragglers are reported FAILED (retryable) and
   * left behind; 5 s after that the worker stops trying to deliver results. `run()` then resolves.
   */
  stop(): void {
    if (this.shutdownAt !== undefined) return;
    this.shutdownAt = mono();
    this.log.info(`shutting down: ${this.attempts.size} attempts, ${this.unacked.size} results unacknowledged`);
    const s = this.connected();
    // Stop new assignments: discard every credit granted so far.
    s?.send({ credit: { grant: 0, reset: true } });
    // Held assignments never start now: hand them back without using a retry.
    for (const a of [...this.attempts.values()]) {
      if (a.held) this.dropHeld(a, "worker shutting down", false);
    }
    this.armShutdown();
    this.checkShutdown();
  }

  // --- connection loop ------------------------------------------------------------------------------

  private async loop(): Promise<void> {
    let backoff = INITIAL_BACKOFF_MS;
    let n = 0;
    let failed = 0; // connections that failed (or flapped) since the last good session
    for (;;) {
      const endpoint = this.endpoints[n % this.endpoints.length]!;
      n++;
      const { how, lived, refusal } = await this.serve(endpoint);
      if (how === "finished") return;
      if (how === "refused") {
        for (const a of this.attempts.values()) a.stop.abort(new AttemptStopped("shutdown", "axd refused this worker"));
        throw refusal ?? new WorkerError(grpc.status.UNKNOWN, "axd refused this worker");
      }
      // Drained or lost: reconnect. Attempts keep running meanwhile, and their leases keep
      // counting down: re-announcing them soon is what keeps them.
      let pause: number;
      if (how === "drained" || (lived !== undefined && lived >= FLAPPING_SESSION_MS)) {
        failed = 0;
        backoff = INITIAL_BACKOFF_MS;
        pause = 0;
      } else {
        failed++;
        if (failed % this.endpoints.length !== 0) {
          pause = QUICK_RETRY_MS; // try every endpoint once before backing off
        } else {
          pause = backoff * (0.8 + 0.4 * Math.random());
          backoff = Math.min(backoff * 2, this.reconnectMaxMs);
        }
      }
      this.log.debug(`reconnecting in ${Math.round(pause)} ms`);
      if (await this.offline(pause)) return;
    }
  }

  /** Waits `pause` ms without a stream (handlers keep finishing, leases keep being enforced by
   * their timers). True if the shutdown completed meanwhile. */
  private offline(pause: number): Promise<boolean> {
    if (this.shutdownComplete()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wakeOffline = undefined;
        resolve(false);
      }, pause);
      this.wakeOffline = () => {
        clearTimeout(t);
        this.wakeOffline = undefined;
        resolve(true);
      };
    });
  }

  /** "host:port" and whether TLS is used, from an endpoint URL. */
  private target(endpoint: string): { address: string; secure: boolean } {
    const m = /^(https?):\/\/([^/]+)\/?$/.exec(endpoint);
    if (m !== null) {
      const secure = m[1] === "https";
      if (!secure && this.tls !== undefined && (this.tls.cert !== undefined || this.tls.ca !== undefined)) {
        throw new Error(`ax-worker: endpoint ${endpoint} is http:// but TLS options are set (use https://)`);
      }
      return { address: m[2]!, secure };
    }
    if (endpoint.includes("://")) throw new Error(`ax-worker: endpoint ${JSON.stringify(endpoint)}: use http:// or https://`);
    return { address: endpoint, secure: this.tls !== undefined };
  }

  private newClient(endpoint: string): grpc.Client {
    const { address, secure } = this.target(endpoint);
    const options: grpc.ChannelOptions = {
      // worker.proto: clients should ping every 20 s or more; axd accepts pings without calls.
      "grpc.keepalive_time_ms": 20_000,
      "grpc.keepalive_timeout_ms": 10_000,
      "grpc.keepalive_permit_without_calls": 1,
      // Results are cut to fit, but a Welcome listing many adopted attempts may be large.
      "grpc.max_receive_message_length": 64 * 1024 * 1024,
      // One channel per session: do not share a subchannel with a stream being torn down.
      "grpc.use_local_subchannel_pool": 1,
    };
    let creds: grpc.ChannelCredentials;
    if (secure) {
      const t = this.tls ?? {};
      const cert = readPem(t.cert);
      const key = readPem(t.key);
      if ((cert === undefined) !== (key === undefined)) throw new Error("ax-worker: tls.cert and tls.key go together");
      creds = grpc.credentials.createSsl(readPem(t.ca) ?? null, key ?? null, cert ?? null);
      if (t.serverName !== undefined) {
        options["grpc.ssl_target_name_override"] = t.serverName;
        options["grpc.default_authority"] = t.serverName;
      }
    } else {
      creds = grpc.credentials.createInsecure();
    }
    const { WorkerService } = axProto().ax.v1;
    return new WorkerService(address, creds, options);
  }

  /** Runs one session until it ends. */
  private serve(endpoint: string): Promise<{ how: End; lived: number | undefined; refusal?: WorkerError }> {
    return new Promise((resolveServe) => {
      this.sessions++;
      let client: grpc.Client;
      try {
        client = this.newClient(endpoint);
      } catch (e) {
        resolveServe({ how: "refused", lived: undefined, refusal: new WorkerError(grpc.status.INVALID_ARGUMENT, String(e)) });
        return;
      }
      const s = new Session(this.sessions, endpoint, client);
      this.session = s;
      s.resolve = (how) => {
        const lived = s.welcomedAt !== undefined ? mono() - s.welcomedAt : undefined;
        resolveServe({ how, lived, refusal: s.refusal });
      };
      const hello = this.hello();
      const call = (client as unknown as { Connect(): grpc.ClientDuplexStream<WorkerMessage, SchedulerMessage__Output> }).Connect();
      s.call = call;
      // Hello first; the stream carries it once the call starts.
      s.helloAt = mono();
      s.lastHeard = s.helloAt;
      s.send({ hello });
      this.log.debug(`connecting to ${endpoint} (stream ${s.number}), ${hello.in_flight!.length} in flight`);
      call.on("data", (m: SchedulerMessage__Output) => this.onData(s, m));
      call.on("error", (err: grpc.ServiceError) => this.onStreamError(s, err));
      call.on("end", () => {
        // The status (and an 'error' for a non-OK one) may be emitted after 'end': decide on the
        // next turn of the loop, so that a refusal is seen as one.
        setImmediate(() => {
          if (!s.ended) {
            this.log.warn(`axd at ${endpoint} ended the stream`);
            this.endSession(s, "lost");
          }
        });
      });
      // worker.proto: if Welcome does not come within 10 s of sending Hello, try another endpoint.
      s.welcomeTimer = setTimeout(() => {
        if (s.welcome === undefined) {
          this.log.warn(`no Welcome from ${endpoint} within ${this.welcomeTimeoutMs} ms; trying another endpoint`);
          this.endSession(s, "lost");
        }
      }, this.welcomeTimeoutMs);
    });
  }

  /** Hello for a new session: who we are, and what we still hold from earlier sessions. */
  private hello(): NonNullable<WorkerMessage["hello"]> {
    const held = [...this.attempts.keys(), ...this.unacked.keys()];
    let credits = 0;
    if (this.shutdownAt === undefined) {
      const busy = new Set<Key>([...held, ...this.orphans.keys()]);
      credits = Math.max(0, this.capacity - busy.size);
    }
    const inFlight = [...new Set(held)].map((k) => {
      const [instance_id, attempt] = k.split("/");
      return { instance_id: instance_id!, attempt: Number(attempt) };
    });
    return {
      app: this.app,
      worker_id: this.workerId, // the same on every reconnect: that is how attempts are re-adopted
      handlers: [...this.handlers.keys()].sort(),
      capacity: this.capacity,
      labels: this.labels,
      in_flight: inFlight,
      client: CLIENT,
      initial_credits: credits,
      start_after_supported: true, // early assignments are held until Assign.start_after
    };
  }

  private connected(): Session | undefined {
    const s = this.session;
    return s !== undefined && s.welcome !== undefined && !s.ended ? s : undefined;
  }

  private onStreamError(s: Session, err: grpc.ServiceError): void {
    if (s.ended) return;
    if (REFUSED_CODES.has(err.code)) {
      // E.g. INVALID_ARGUMENT "hello.capacity: must be 1..=10000, got 0": fix the configuration.
      this.log.error(`axd refused this worker: ${grpc.status[err.code]}: ${err.details}`);
      s.refusal = new WorkerError(err.code, `axd refused this worker: ${grpc.status[err.code]}: ${err.details}`);
      this.endSession(s, "refused");
      return;
    }
    const level = err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.CANCELLED ? "info" : "warn";
    this.log[level](`stream to ${s.endpoint} ended: ${grpc.status[err.code] ?? err.code}: ${err.details}`);
    this.endSession(s, "lost");
  }

  /** Ends session `s`: timers stop, and the stream is dropped (or, for "finished" and "drained",
   * half-closed first so axd sees a clean end). */
  private endSession(s: Session, how: End): void {
    if (s.ended) return;
    s.ended = true;
    clearTimeout(s.heartbeatTimer);
    clearTimeout(s.silenceTimer);
    clearTimeout(s.welcomeTimer);
    if (this.session === s) this.session = undefined;
    const call = s.call;
    if (how === "finished" || how === "drained") {
      // Half-close; axd then ends the session. Drop the connection if it does not within a moment.
      s.closed = true;
      call?.end();
      const t = setTimeout(() => {
        call?.cancel();
        s.client.close();
      }, CLOSE_WAIT_MS);
      const done = () => {
        clearTimeout(t);
        s.client.close();
      };
      call?.on("status", done);
      call?.on("error", done);
      if (how === "finished") {
        // run() resolves once axd has ended the stream, or after the wait.
        let resolved = false;
        const finish = () => {
          if (!resolved) {
            resolved = true;
            clearTimeout(t2);
            s.resolve(how);
          }
        };
        const t2 = setTimeout(finish, CLOSE_WAIT_MS);
        call?.on("status", finish);
        call?.on("error", finish);
        if (call === undefined) finish();
        return;
      }
    } else {
      s.closed = true;
      call?.cancel();
      s.client.close();
    }
    s.resolve(how);
  }

  // --- messages from axd ------------------------------------------------------------------------------

  private onData(s: Session, m: SchedulerMessage__Output): void {
    const now = mono();
    if (s.ended) {
      // A stream we left: only a ResultAck still means something (the result is durable).
      if (m.msg === "result_ack" && m.result_ack) this.onResultAck(m.result_ack.instance_id, m.result_ack.attempt, m.result_ack.applied, m.result_ack.note);
      return;
    }
    s.lastHeard = now;
    if (s.welcome === undefined) {
      if (m.msg !== "welcome" || !m.welcome) {
        this.log.warn(`expected Welcome first, got ${m.msg}; ignoring it`);
        return;
      }
      this.onWelcome(s, m.welcome, now);
      return;
    }
    switch (m.msg) {
      case "heartbeat":
        if (m.heartbeat) this.onSchedulerHeartbeat(s, m.heartbeat, now);
        break;
      case "assign":
        if (m.assign) this.onAssign(s, m.assign);
        break;
      case "cancel":
        if (m.cancel) this.onCancel(m.cancel);
        break;
      case "result_ack":
        if (m.result_ack) this.onResultAck(m.result_ack.instance_id, m.result_ack.attempt, m.result_ack.applied, m.result_ack.note);
        break;
      case "drain":
        // This axd is going away. Handlers keep running; the next Hello re-announces them.
        this.log.info(`axd is draining (${m.drain?.reason ?? ""}); moving to another endpoint`);
        this.endSession(s, "drained");
        break;
      default:
        break;
    }
  }

  private onWelcome(s: Session, w: Welcome__Output, receivedAt: number): void {
    clearTimeout(s.welcomeTimer);
    s.welcome = w;
    s.welcomedAt = receivedAt;
    this.stats.connections++;
    s.heartbeatMs = durationMs(w.heartbeat_interval) ?? DEFAULT_HEARTBEAT_MS;
    this.leaseTtlMs = durationMs(w.lease_ttl);
    this.fenceMarginMs = durationMs(w.fence_margin) ?? 0;
    const serverTime = timestampMs(w.server_time);
    // axd read its clock after our Hello arrived: count from when Hello was sent.
    if (serverTime !== undefined) this.clock.observe(serverTime, s.helloAt, receivedAt);
    this.log.info(
      `connected to ${s.endpoint}: session ${w.session_id} on ${w.scheduler_id}, heartbeat ${s.heartbeatMs} ms, ` +
        `lease ${this.leaseTtlMs ?? "none"} ms, adopted ${w.adopted.length}, released ${w.released.length}`,
    );
    const taking = this.shutdownAt === undefined;
    // Heartbeat numbers start again on this stream: no renewal here covers anything yet. Adopted
    // attempts are renewed as of sending Hello, and from the first renewal of this stream on.
    const adopted = new Set(w.adopted.map((a) => keyOf(a.instance_id, a.attempt)));
    for (const a of this.attempts.values()) {
      a.lease.margin = this.fenceMarginMs;
      a.acceptedAfter = undefined;
      if (adopted.has(a.key) && !a.revoked) {
        a.acceptedAfter = 0;
        if (this.leaseTtlMs !== undefined) a.lease.extendTo(s.helloAt + this.leaseTtlMs);
      }
      this.armLease(a);
    }
    // Every Result not yet acknowledged goes out again: applied if axd adopted its attempt, recorded
    // on the instance's trail as a late result if it released it. Either way its slot is free on
    // axd's side now, so grant it back, unless an abandoned handler still occupies it.
    for (const [key, r] of this.unacked) {
      s.send({ result: r });
      if (taking && !this.orphans.has(key)) s.send({ credit: { grant: 1 } });
    }
    for (const r of w.released) {
      const a = this.attempts.get(keyOf(r.instance_id, r.attempt));
      if (a === undefined) continue;
      // No longer ours. A held one never starts; a running one is asked to stop: its Result (a late
      // one) is sent when it returns, and its slot granted back then, as usual.
      a.revoked = true;
      if (a.held) this.finishUnstarted(a, "released by axd before its start time");
      else a.stop.abort(new AttemptStopped("released", "axd released this attempt after a reconnect"));
    }
    if (!taking) {
      // A shutdown started while we were disconnected or waiting: no credit granted with Hello may be left.
      s.send({ credit: { grant: 0, reset: true } });
    }
    this.armHeartbeat(s, receivedAt + s.heartbeatMs);
    this.armSilence(s);
    // Holds that ended while there was no stream start now.
    for (const a of [...this.attempts.values()]) if (a.held && a.holdOver) this.holdEnded(a);
    this.checkShutdown();
  }

  /** Heartbeat every interval, numbered 1, 2, 3, ... on each stream, always. */
  private armHeartbeat(s: Session, at: number): void {
    s.nextHeartbeat = at;
    s.heartbeatTimer = setTimeout(() => {
      if (s.ended) return;
      s.seq++;
      // Queued now, on the wire a moment later: a lease counted from here ends early, never late.
      s.sentAt.set(s.seq, mono());
      if (s.sentAt.size > MAX_REMEMBERED_HEARTBEATS) s.sentAt.delete(s.sentAt.keys().next().value!);
      s.send({ heartbeat: { running: this.attempts.size, seq: s.seq } });
      this.armHeartbeat(s, Math.max(s.nextHeartbeat + s.heartbeatMs, mono()));
    }, Math.max(0, at - mono()));
  }

  /** worker.proto: if you hear nothing at all from axd for 3 intervals, drop the stream and
   * reconnect elsewhere (do not wait for TCP or HTTP/2 keepalive: they take longer than a lease). */
  private armSilence(s: Session): void {
    const limit = SILENT_INTERVALS * s.heartbeatMs;
    s.silenceTimer = setTimeout(() => {
      if (s.ended) return;
      if (mono() - s.lastHeard < limit) return this.armSilence(s);
      // Let messages that already arrived be read first (a process starved of CPU runs its timers
      // before its I/O): they show axd is alive.
      s.silenceTimer = setTimeout(() => {
        if (s.ended) return;
        if (mono() - s.lastHeard < limit) return this.armSilence(s);
        this.stats.silentAxd++;
        this.log.warn(
          `axd at ${s.endpoint} has said nothing for ${Math.round(mono() - s.lastHeard)} ms; moving to another endpoint`,
        );
        this.endSession(s, "lost");
      }, SILENCE_CONFIRM_MS);
    }, Math.max(0, s.lastHeard + limit - mono()));
  }

  private onSchedulerHeartbeat(s: Session, h: SchedulerHeartbeat__Output, receivedAt: number): void {
    const k = Number(h.renewed_seq);
    const sent = k > 0 ? s.heartbeatSentAt(k) : undefined;
    const serverTime = timestampMs(h.server_time);
    // axd read its clock after heartbeat k arrived (after Hello, for 0).
    if (serverTime !== undefined) this.clock.observe(serverTime, sent ?? s.helloAt, receivedAt);
    if (this.leaseTtlMs === undefined || sent === undefined) return;
    // A renewal covering every attempt whose Accepted went out before heartbeat k committed: no axd
    // gives them to anyone else before lease_ttl has passed since we SENT heartbeat k.
    for (const a of this.attempts.values()) {
      if (a.acceptedAfter !== undefined && a.acceptedAfter < k && !a.revoked) a.lease.extendTo(sent + this.leaseTtlMs);
    }
    // Lease timers notice the longer leases when they fire (leases only grow).
  }

  private onAssign(s: Session, m: Assign__Output): void {
    const key = keyOf(m.instance_id, m.attempt);
    const reject = (reason: string, credit: boolean) => {
      this.stats.rejected++;
      s.send({ reject: { instance_id: m.instance_id, attempt: m.attempt, reason: truncate(reason, MAX_REJECT_REASON) } });
      // Reject does not return the credit the Assign consumed: grant it again.
      if (credit && this.shutdownAt === undefined) s.send({ credit: { grant: 1 } });
    };
    if (this.shutdownAt !== undefined) {
      // An Assign may already have been on the wire when we reset our credits.
      reject("worker shutting down", false);
      return;
    }
    if (this.attempts.has(key) || this.unacked.has(key) || this.orphans.has(key)) {
      this.log.warn(`duplicate Assign ${key} ignored`);
      return;
    }
    const fn = this.handlers.get(m.handler);
    if (fn === undefined) {
      reject(`handler ${JSON.stringify(m.handler)} is not registered on this worker`, true);
      return;
    }
    const acceptBy = timestampMs(m.accept_by);
    const stale = staleReason(this.clock, acceptBy, this.fenceMarginMs, mono());
    if (stale !== undefined) {
      // Read too late (the process was paused, or the message waited in a buffer): axd has taken it
      // back by now, or is about to, and may have given it to another worker.
      this.stats.stale++;
      this.log.warn(`assignment ${key} not started: ${stale}`);
      reject(stale, true);
      return;
    }
    if (this.attempts.size + this.orphans.size >= this.capacity) {
      // Cannot happen while credits are granted as above; refuse rather than queue.
      reject("worker at capacity", false);
      return;
    }
    // Until a renewal covers it, the attempt is ours until its accept-by time.
    let leaseEnd: number | undefined;
    if (this.leaseTtlMs !== undefined && acceptBy !== undefined) leaseEnd = this.clock.instantOf(acceptBy);
    const lease = new Lease(leaseEnd, this.fenceMarginMs);
    const stop = new AbortController();
    const a: Attempt = {
      key,
      instanceId: m.instance_id,
      attempt: m.attempt,
      fn,
      stop,
      lease,
      acceptBy,
      held: false,
      holdOver: false,
      holdTimer: undefined,
      leaseTimer: undefined,
      acceptedAfter: undefined,
      fencedAt: undefined,
      runBy: undefined,
      timedOutAt: undefined,
      revoked: false,
      ctx: undefined as unknown as Context,
    };
    a.ctx = new Context({
      instanceId: m.instance_id,
      attempt: m.attempt,
      taskName: m.task_name,
      handler: m.handler,
      paramsRaw: m.params === "" ? "{}" : m.params,
      idempotencyKey: m.idempotency_key,
      triggerTime: m.trigger_time ? new Date(timestampMs(m.trigger_time)!) : undefined,
      timeoutMs: durationMs(m.timeout),
      shard: m.shard_total > 0 ? { index: m.shard_index, total: m.shard_total } : undefined,
      signal: stop.signal,
      lease,
      sink: {
        progress: (percent, message) => this.sendProgress(a, percent, message),
        log: (level, message, at) => this.sendLog(a, level, message, at),
      },
    });
    this.attempts.set(key, a);
    this.stats.assigned++;
    // Sent ahead of its time (we set Hello.start_after_supported): hold it that long from now.
    const hold = durationMs(m.start_after);
    this.log.info(`${hold !== undefined ? `hold ${Math.round(hold)} ms` : "run"} ${m.handler} ${key} (task ${m.task_name})`);
    if (hold !== undefined) {
      a.held = true;
      this.armHold(a, mono() + hold);
      this.armLease(a);
    } else {
      this.start(s, a);
    }
  }

  /** Holds `a` until local instant `until`. Node's timers may fire a millisecond or so early (they
   * count from the event loop's cached time), and a run must never start early: the timer is
   * checked against the monotonic clock and re-armed for what is left. */
  private armHold(a: Attempt, until: number): void {
    a.holdTimer = setTimeout(() => {
      a.holdTimer = undefined;
      const left = until - mono();
      if (left > 0) this.armHold(a, until);
      else this.holdEnded(a);
    }, Math.max(1, Math.ceil(until - mono())));
  }

  /** An early assignment's hold is over: the same checks as for a new Assign, then start it. */
  private holdEnded(a: Attempt): void {
    if (this.attempts.get(a.key) !== a || !a.held) return;
    a.holdOver = true;
    a.holdTimer = undefined;
    const now = mono();
    if (a.lease.expired(now)) {
      // Its lease (its accept-by time, unless Welcome adopted it since) is about to end.
      this.dropHeld(a, `stale assignment: its hold ended less than the fence margin (${this.fenceMarginMs} ms) before its accept-by time`, true);
      return;
    }
    const s = this.connected();
    if (s === undefined) return; // Accepted must go out when the handler starts: wait for a stream
    if (this.shutdownAt !== undefined) {
      this.dropHeld(a, "worker shutting down", false);
      return;
    }
    const why = a.acceptedAfter === undefined ? staleReason(this.clock, a.acceptBy, this.fenceMarginMs, now) : undefined;
    if (why !== undefined) {
      this.dropHeld(a, why, true);
      return;
    }
    this.start(s, a);
  }

  /** Starts a handler: Accepted (DISPATCHED -> RUNNING on axd, and its run timeout starts). */
  private start(s: Session, a: Attempt): void {
    a.held = false;
    a.holdOver = false;
    s.send({ accepted: { instance_id: a.instanceId, attempt: a.attempt } });
    a.acceptedAfter = s.seq;
    // The attempt's own deadline, enforced with its lease (worker.proto, Assign.timeout): its
    // timeout counted from its start (now, after any hold) plus the fence margin, so that axd,
    // counting from when Accepted arrives, times it out first and its Cancel normally comes
    // before; this stops it when that Cancel does not come.
    const timeout = a.ctx.timeoutMs;
    a.runBy = timeout === undefined ? undefined : mono() + timeout + this.fenceMarginMs;
    this.armLease(a);
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(a.fn(a.ctx));
    } catch (e) {
      result = Promise.reject(e);
    }
    result.then(
      (v) => this.onDone(a, this.success(a, v)),
      (e: unknown) => this.onDone(a, this.failure(a, e)),
    );
  }

  private success(a: Attempt, v: unknown): Result {
    let output: string;
    try {
      output = outputText(v);
    } catch (e) {
      return this.failure(a, new HandlerError(`handler output could not be serialized: ${(e as Error).message}`));
    }
    return {
      instance_id: a.instanceId,
      attempt: a.attempt,
      outcome: "OUTCOME_SUCCESS",
      message: "",
      output,
      retryable: false,
      finished_at: timestampOf(new Date()),
    };
  }

  private failure(a: Attempt, e: unknown): Result {
    let message: string;
    let retryable: boolean;
    if (e instanceof HandlerError) {
      message = e.message;
      retryable = e.retryable;
    } else if (e instanceof AttemptStopped) {
      message = `stopped (${e.kind}): ${e.message}`;
      retryable = true;
    } else if (e instanceof Error) {
      // Any bug in a handler fails only its attempt (like a panic in the Rust SDK).
      message = `handler threw ${e.name}: ${e.message}`;
      retryable = true;
    } else {
      message = `handler threw ${String(e)}`;
      retryable = true;
    }
    if (a.lease.expired(mono())) {
      // It was told to stop because its lease ran out; another worker may run it: say so.
      message = `stopped: lease ran out with no renewal from axd (${message})`;
      retryable = true;
    }
    return {
      instance_id: a.instanceId,
      attempt: a.attempt,
      outcome: "OUTCOME_FAILED",
      message,
      output: "",
      retryable,
      finished_at: timestampOf(new Date()),
    };
  }

  private onCancel(c: Cancel__Output): void {
    const a = this.attempts.get(keyOf(c.instance_id, c.attempt));
    if (a === undefined) return;
    // Any reason (timeout, operator, ack timeout, not ours): stop it. After an ack timeout axd has
    // freed the slot on its side; we grant it back once we report the Result, as always.
    this.log.info(`cancel ${a.key}: ${c.reason}`);
    if (a.held) {
      this.finishUnstarted(a, `canceled before its start time: ${c.reason}`);
      return;
    }
    // Cooperative: the handler watches ctx.signal. Its lease is not extended any more, so one that
    // ignores the Cancel is fenced and abandoned when the lease runs out.
    a.revoked = true;
    a.stop.abort(new AttemptStopped("canceled", `canceled by axd: ${c.reason}`));
  }

  private onResultAck(instanceId: string, attempt: number, applied: boolean, note: string): void {
    const key = keyOf(instanceId, attempt);
    // Durable (or deliberately ignored): forget it.
    if (this.unacked.delete(key)) this.stats.acked++;
    if (!applied) this.log.info(`result ${key} not applied: ${note}`);
    this.checkShutdown();
  }

  // --- leases and timeouts -------------------------------------------------------------------------

  /** (Re)arms the attempt's lease timer for the next thing due: its fence, or, once fenced, its
   * abandonment; its timeout, or, once told to stop at it, its abandonment. The timer re-checks the
   * lease when it fires (renewals only move it later). */
  private armLease(a: Attempt): void {
    clearTimeout(a.leaseTimer);
    a.leaseTimer = undefined;
    const lease = this.leaseDue(a);
    const timeout = this.timeoutDue(a);
    const due = lease === undefined || timeout === undefined ? (lease ?? timeout) : Math.min(lease, timeout);
    if (due === undefined) return;
    a.leaseTimer = setTimeout(() => this.onLeaseTimer(a), Math.max(0, due - mono()));
  }

  private leaseDue(a: Attempt): number | undefined {
    const fence = a.lease.fenceAt();
    if (fence === undefined) return undefined;
    if (a.fencedAt === undefined) return fence;
    return Math.max(a.lease.abandonAt()!, a.fencedAt + STOP_GRACE_MS);
  }

  private timeoutDue(a: Attempt): number | undefined {
    if (a.runBy === undefined) return undefined;
    return a.timedOutAt === undefined ? a.runBy : a.timedOutAt + STOP_GRACE_MS;
  }

  private onLeaseTimer(a: Attempt): void {
    a.leaseTimer = undefined;
    if (this.attempts.get(a.key) !== a) return;
    const now = mono();
    const timeout = this.timeoutDue(a);
    if (timeout !== undefined && now >= timeout) {
      this.onTimeout(a, now);
      return;
    }
    const due = this.leaseDue(a);
    if (due === undefined || now < due) {
      this.armLease(a); // renewed meanwhile, or only its timeout is left to watch
      return;
    }
    if (a.held) {
      // Its lease (its accept-by time, unless Welcome adopted it) is about to end: axd takes it back
      // and may give it to another worker. Never start it.
      this.dropHeld(a, `stale assignment: its accept-by time is less than the fence margin (${this.fenceMarginMs} ms) away`, true);
      return;
    }
    if (a.fencedAt === undefined) {
      a.fencedAt = now;
      this.stats.fenced++;
      this.log.warn(`lease of ${a.key} is about to run out with no renewal from axd: stopping the handler`);
      a.stop.abort(new AttemptStopped("fenced", "the lease is about to run out with no renewal from axd"));
      this.armLease(a);
      return;
    }
    // The handler did not stop. It is no longer ours: another worker may be given the instance once
    // the lease ends. Report it now; discard whatever it returns later.
    this.abandon(a, "stopped: lease ran out with no renewal from axd (the handler did not stop in time; another worker may run it)");
  }

  /** The attempt's timeout and the fence margin have passed since it started: axd has timed it out,
   * whether or not its Cancel came. The handler is told to stop, as for a fence; one that has not
   * returned STOP_GRACE_MS later is abandoned. */
  private onTimeout(a: Attempt, now: number): void {
    if (a.timedOutAt === undefined) {
      a.timedOutAt = now;
      this.log.warn(`timeout of ${a.key} has passed: stopping the handler`);
      a.stop.abort(new AttemptStopped("timeout", "the attempt's timeout has passed"));
      this.armLease(a);
      return;
    }
    // It did not stop: report it now (the retry waits for this Result, or for the lease to end) and
    // discard whatever it returns later.
    this.abandon(a, TIMED_OUT);
  }

  // --- ending attempts ------------------------------------------------------------------------------

  private forget(a: Attempt): void {
    this.attempts.delete(a.key);
    clearTimeout(a.holdTimer);
    clearTimeout(a.leaseTimer);
    a.holdTimer = undefined;
    a.leaseTimer = undefined;
  }

  /** A held assignment that must never start: Reject it (and grant its credit back) if we can talk
   * to axd; if not, forget it (it is not re-announced, and axd takes it back at its accept-by). */
  private dropHeld(a: Attempt, why: string, stale: boolean): void {
    this.forget(a);
    if (stale) this.stats.stale++;
    this.stats.rejected++;
    this.log.warn(`held assignment ${a.key} not started: ${why}`);
    const s = this.connected();
    if (s !== undefined) {
      s.send({ reject: { instance_id: a.instanceId, attempt: a.attempt, reason: truncate(why, MAX_REJECT_REASON) } });
      if (this.shutdownAt === undefined) s.send({ credit: { grant: 1 } });
    }
    this.checkShutdown();
  }

  /** A held assignment ends without running: FAILED (retryable), and its slot is free. */
  private finishUnstarted(a: Attempt, why: string): void {
    this.forget(a);
    a.stop.abort(new AttemptStopped("canceled", why));
    this.report(a.key, this.result(a, why), true);
  }

  /** A handler that did not stop is no longer ours: report it FAILED (retryable) now and discard
   * whatever it returns. Its slot stays busy until it returns. */
  private abandon(a: Attempt, why: string): void {
    this.forget(a);
    this.stats.abandoned++;
    this.orphans.set(a.key, a);
    this.report(a.key, this.result(a, why), false);
  }

  private result(a: Attempt, why: string): Result {
    return {
      instance_id: a.instanceId,
      attempt: a.attempt,
      outcome: "OUTCOME_FAILED",
      message: why,
      output: "",
      retryable: true,
      finished_at: timestampOf(new Date()),
    };
  }

  private onDone(a: Attempt, r: Result): void {
    if (this.attempts.get(a.key) === a) {
      this.forget(a);
      this.report(a.key, r, true);
      return;
    }
    if (this.orphans.get(a.key) === a) {
      // Reported FAILED when it was abandoned; what it says now is not ours to report.
      this.orphans.delete(a.key);
      this.log.warn(`abandoned handler ${a.key} returned (${r.outcome}); its result is discarded`);
      const s = this.connected();
      // Its slot is free at last.
      if (s !== undefined && this.shutdownAt === undefined) s.send({ credit: { grant: 1 } });
      this.checkShutdown();
    }
  }

  /** Sends a Result (kept until its ResultAck, whether or not it can be sent now) and, if its slot
   * is free, grants it back. Text axd would cut is cut here, so the Result fits. */
  private report(key: Key, r: Result, slotFree: boolean): void {
    r.output = truncate(r.output ?? "", MAX_OUTPUT);
    r.message = truncate(r.message ?? "", MAX_RESULT_MESSAGE);
    this.log.info(`done ${key}: ${r.outcome}${r.message ? ` ${r.message}` : ""}`);
    this.unacked.set(key, r);
    const s = this.connected();
    if (s !== undefined) {
      s.send({ result: r });
      if (slotFree && this.shutdownAt === undefined) s.send({ credit: { grant: 1 } }); // the slot is free again
    }
    this.checkShutdown();
  }

  /** Whether Progress and Log about `a` may go out: only while it runs and is still ours. */
  private ours(a: Attempt): boolean {
    return this.attempts.get(a.key) === a && !a.revoked && !a.held;
  }

  private sendProgress(a: Attempt, percent: number, message: string): void {
    const s = this.connected();
    if (s === undefined || !this.ours(a)) return;
    const p = Math.max(0, Math.min(100, Math.round(Number.isFinite(percent) ? percent : 0)));
    s.send({
      progress: { instance_id: a.instanceId, attempt: a.attempt, percent: p, message: truncate(String(message), MAX_PROGRESS_MESSAGE) },
    });
  }

  private sendLog(a: Attempt, level: LogLevel, message: string, at: Date): void {
    const s = this.connected();
    if (s === undefined || !this.ours(a)) return;
    s.send({
      log: {
        instance_id: a.instanceId,
        attempt: a.attempt,
        level: LOG_LEVELS[level] ?? "LOG_LEVEL_INFO",
        message: truncate(String(message), MAX_LOG_LINE),
        at: timestampOf(at),
      },
    });
  }

  // --- shutdown -------------------------------------------------------------------------------------

  /** Arms the next shutdown step: abort at the deadline, abandon 2 s later, give up 5 s after that. */
  private armShutdown(): void {
    clearTimeout(this.shutdownTimer);
    if (this.shutdownAt === undefined || this.gaveUp) return;
    const at = !this.canceledAll
      ? this.shutdownAt + this.shutdownDeadlineMs
      : !this.abandonedAll
        ? this.shutdownAt + this.shutdownDeadlineMs + STRAGGLER_GRACE_MS
        : this.shutdownAt + this.shutdownDeadlineMs + STRAGGLER_GRACE_MS + GIVE_UP_AFTER_MS;
    this.shutdownTimer = setTimeout(() => this.onShutdownTimer(), Math.max(0, at - mono()));
  }

  private onShutdownTimer(): void {
    if (!this.canceledAll) {
      this.canceledAll = true;
      this.log.warn(`shutdown deadline passed: asking ${this.attempts.size} handlers to stop`);
      for (const a of this.attempts.values()) a.stop.abort(new AttemptStopped("shutdown", "the worker is shutting down"));
    } else if (!this.abandonedAll) {
      this.abandonedAll = true;
      // Report them FAILED (retryable) so axd can run them elsewhere, and leave them behind.
      for (const a of [...this.attempts.values()]) {
        if (a.held) this.finishUnstarted(a, "worker shut down before its start time");
        else this.abandon(a, "worker shut down before the handler finished");
      }
    } else {
      this.log.error(`giving up delivering ${this.unacked.size} results`);
      this.gaveUp = true;
    }
    this.armShutdown();
    this.checkShutdown();
  }

  private shutdownComplete(): boolean {
    if (this.shutdownAt === undefined) return false;
    return this.gaveUp || (this.attempts.size === 0 && this.unacked.size === 0);
  }

  /** Ends the worker once the shutdown is complete: the stream is closed (half-close), or the
   * reconnect pause ends. */
  private checkShutdown(): void {
    if (!this.shutdownComplete()) return;
    const s = this.session;
    if (s !== undefined && !s.ended) {
      if (s.welcome !== undefined) this.log.info("all results delivered; closing the stream");
      this.endSession(s, "finished");
    } else if (this.wakeOffline !== undefined) {
      this.wakeOffline();
    }
  }

  private cleanup(): void {
    clearTimeout(this.shutdownTimer);
    for (const a of this.attempts.values()) {
      clearTimeout(a.holdTimer);
      clearTimeout(a.leaseTimer);
    }
    for (const a of this.orphans.values()) clearTimeout(a.leaseTimer);
    if (this.signalHandler !== undefined) {
      process.off("SIGTERM", this.signalHandler);
      process.off("SIGINT", this.signalHandler);
      this.signalHandler = undefined;
    }
  }
}

// Re-exported for the README's "how cancellation reaches a handler".
export type { StopKind };
