// The TypeScript SDK's worker for the conformance kit:
//   ax-conformance -- node sdks/typescript/dist/examples/conformance-worker.js
//
// It serves the kit's handlers and takes its settings from the environment the kit sets:
// AX_ENDPOINT (comma-separated), AX_APP, AX_WORKER_ID, AX_CAPACITY. It logs to stderr.
// With AX_TLS_CA, AX_TLS_CERT and AX_TLS_KEY (PEM file paths; AX_TLS_SERVER_NAME optional) it
// connects with mTLS (tests/tests/suite/sdk_mtls.rs).
//
// - echo: returns its params unchanged.
// - sleep: {"ms": N} sleeps N ms; canceled or fenced, it stops at once and fails. With
//   "ignore_cancel": true it ignores ctx.signal: nothing ends it early (the SDK abandons it).
// - fail: {"message": "..."} fails with that message.
// - panic: throws an unexpected error (a TypeError); the worker reports FAILED and goes on.
// - big-output: {"bytes": N} returns N bytes of "x".

import { Context, HandlerError, Worker } from "../src/index";

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === "") {
    process.stderr.write(`${name} is not set (the conformance kit sets it)\n`);
    process.exit(2);
  }
  return v;
}

function number(ctx: Context, field: string): number {
  const params = ctx.params<Record<string, unknown>>();
  const v = params?.[field];
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
    throw new HandlerError(`params.${field} must be a number`, { retryable: false });
  }
  return v;
}

const tls =
  process.env.AX_TLS_CA !== undefined
    ? {
        ca: env("AX_TLS_CA"),
        cert: env("AX_TLS_CERT"),
        key: env("AX_TLS_KEY"),
        serverName: process.env.AX_TLS_SERVER_NAME || undefined,
      }
    : undefined;

const worker = new Worker({
  endpoints: env("AX_ENDPOINT").split(","),
  tls,
  app: env("AX_APP"),
  workerId: env("AX_WORKER_ID"),
  capacity: Number(env("AX_CAPACITY")),
  reconnectMaxMs: 1000,
  installSignalHandlers: true,
});

worker
  .handler("echo", (ctx) => ctx.paramsRaw)
  .handler("sleep", async (ctx) => {
    const ms = number(ctx, "ms");
    if (ctx.params<{ ignore_cancel?: unknown }>().ignore_cancel === true) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return "";
    }
    try {
      await ctx.sleep(ms); // rejects as soon as ctx.signal is aborted (Cancel or fence)
    } catch (e) {
      throw new HandlerError(`canceled: ${(e as Error).message}`, { retryable: true });
    }
    return "";
  })
  .handler("fail", (ctx) => {
    const params = ctx.params<{ message?: unknown }>();
    throw new HandlerError(typeof params.message === "string" ? params.message : "failed on purpose");
  })
  .handler("panic", (ctx) => {
    // A real bug, not a HandlerError: reading a property of undefined throws a TypeError.
    const missing = (ctx.params<Record<string, { deeper: string }>>())["conformance: panicking on purpose"];
    return missing!.deeper;
  })
  .handler("big-output", (ctx) => "x".repeat(number(ctx, "bytes")));

worker.run().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`worker failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
