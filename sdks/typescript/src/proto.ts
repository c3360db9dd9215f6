// Loads proto/ax/v1/worker.proto at run time. The .proto files are copied into the package at
// build time (scripts/copy-proto.mjs) and found relative to this compiled module
// (dist/src/proto.js -> ../../proto), so an installed package works on its own.
//
// The load options match the ones the types in src/gen were generated with (scripts/gen.mjs):
// keepCase (snake_case field names), longs as String (int64/uint64 arrive as decimal strings),
// enums as String ("OUTCOME_SUCCESS"), defaults (unset scalars arrive as their zero value, unset
// messages as null), and oneofs (WorkerMessage.msg / SchedulerMessage.msg name the field set).

import * as path from "node:path";
import * as fs from "node:fs";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "./gen/worker";

export const LOAD_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The folder holding ax/v1/*.proto: the package's own copy, else the repository's (when run from
 * a checkout before `npm run copy-proto`). */
export function protoDir(): string {
  const candidates = [
    path.resolve(__dirname, "..", "..", "proto"), // dist/src/proto.js -> <package>/proto
    path.resolve(__dirname, "..", "..", "..", "..", "proto"), // <repo>/proto from dist/src
  ];
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, "ax", "v1", "worker.proto"))) return dir;
  }
  throw new Error(`ax-worker: cannot find ax/v1/worker.proto (looked in ${candidates.join(", ")})`);
}

let loaded: ProtoGrpcType | undefined;

/** The loaded ax.v1 package (loaded once). */
export function axProto(): ProtoGrpcType {
  if (loaded === undefined) {
    const def = protoLoader.loadSync("ax/v1/worker.proto", { ...LOAD_OPTIONS, includeDirs: [protoDir()] });
    loaded = grpc.loadPackageDefinition(def) as unknown as ProtoGrpcType;
  }
  return loaded;
}
