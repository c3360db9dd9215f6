// Calls of axd's AdminService a program makes beside its workers (README "Trigger and wait").
//
//   import { adminClient, triggerAndWait } from "ax-worker";
//   const admin = adminClient("127.0.0.1:7070", grpc.credentials.createInsecure());
//   const r = await triggerAndWait(admin, { name: "resize", params: '{"image":"a.png"}' }, 120_000);
//   if (r.done) console.log(r.instance?.status, r.instance?.output);
//
// The instance is created before the wait begins: when the wait runs out (`done` false) it still
// runs. axd answers a waiting call before its own call limit (--request-timeout, 30 s by
// default); until the wait has passed triggerAndWait calls again with the instance's idempotency
// key, which waits on for the same instance and creates nothing.

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "./gen/admin";
import type { AdminServiceClient } from "./gen/ax/v1/AdminService";
import type { TriggerTaskRequest } from "./gen/ax/v1/TriggerTaskRequest";
import type { TriggerTaskResponse__Output } from "./gen/ax/v1/TriggerTaskResponse";
import { LOAD_OPTIONS, protoDir } from "./proto";

/** The longest wait axd takes (TriggerTaskRequest.wait), in milliseconds. */
export const MAX_WAIT_MS = 600_000;

/** A client of axd's AdminService at `address` ("host:port") with these credentials. */
export function adminClient(address: string, credentials: grpc.ChannelCredentials): AdminServiceClient {
  const def = protoLoader.loadSync("ax/v1/admin.proto", { ...LOAD_OPTIONS, includeDirs: [protoDir()] });
  const proto = grpc.loadPackageDefinition(def) as unknown as ProtoGrpcType;
  return new proto.ax.v1.AdminService(address, credentials);
}

/** What triggerAndWait calls: the generated client's TriggerTask (a fake in tests). */
export interface TriggerTaskCaller {
  TriggerTask(
    request: TriggerTaskRequest,
    callback: (error: grpc.ServiceError | null, response?: TriggerTaskResponse__Output) => void,
  ): unknown;
}

/** What to trigger: the task, and optionally its params (JSON) and an idempotency key. */
export interface TriggerSpec {
  name: string;
  params?: string;
  idempotency_key?: string;
}

/** Triggers a task and waits up to `waitMs` (at most 10 minutes) for its instance to be final.
 * Resolves with axd's TriggerTaskResponse: `done` says whether the instance is final, `instance`
 * holds its status, output and message, `created` whether this call made it (false when the key
 * had an instance already, which is then the one waited for). `now` replaces the clock in tests. */
export async function triggerAndWait(
  client: TriggerTaskCaller,
  spec: TriggerSpec,
  waitMs: number,
  now: () => number = Date.now,
): Promise<TriggerTaskResponse__Output> {
  if (!(waitMs > 0 && waitMs <= MAX_WAIT_MS)) {
    throw new RangeError(`wait: ${waitMs} ms is not within (0, ${MAX_WAIT_MS}] ms`);
  }
  const until = now() + waitMs;
  let key = spec.idempotency_key ?? "";
  let created: boolean | undefined;
  for (;;) {
    const left = Math.max(until - now(), 1);
    const request: TriggerTaskRequest = {
      name: spec.name,
      idempotency_key: key,
      wait: { seconds: String(Math.floor(left / 1000)), nanos: (left % 1000) * 1_000_000 },
    };
    if (spec.params !== undefined) request.params = spec.params;
    const response = await new Promise<TriggerTaskResponse__Output>((resolve, reject) => {
      client.TriggerTask(request, (error, value) => {
        if (error) reject(error);
        else if (value === undefined) reject(new Error("axd sent no TriggerTaskResponse"));
        else resolve(value);
      });
    });
    created ??= response.created;
    if (response.done || now() >= until) return { ...response, created };
    // axd answered before its call limit: wait on for the same instance, by its key.
    key = response.instance?.idempotency_key ?? key;
  }
}
