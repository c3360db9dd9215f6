// Generates TypeScript types for proto/ax/v1/*.proto into src/gen with proto-loader-gen-types
// (shipped with @grpc/proto-loader). `--check` generates into a temporary folder and fails if
// src/gen differs: the committed types are stale (run `npm run gen`).
//
// The options here must match the ones src/proto.ts loads the .proto files with at run time.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const protoRoot = join(pkg, "..", "..", "proto");
const files = readdirSync(join(protoRoot, "ax", "v1"))
  .filter((f) => f.endsWith(".proto"))
  .sort()
  .map((f) => `ax/v1/${f}`);
const check = process.argv.includes("--check");
const target = join(pkg, "src", "gen");
const out = check ? mkdtempSync(join(tmpdir(), "ax-gen-")) : target;
if (!check) rmSync(target, { recursive: true, force: true });

const bin = join(pkg, "node_modules", "@grpc", "proto-loader", "build", "bin", "proto-loader-gen-types.js");
const r = spawnSync(
  process.execPath,
  [
    bin,
    // The files come first: --includeDirs takes a list and would swallow what follows it.
    ...files,
    "--keepCase",
    "--longs=String",
    "--enums=String",
    "--defaults",
    "--oneofs",
    "--grpcLib=@grpc/grpc-js",
    `--outDir=${out}`,
    // Relative, from the proto root: the generated files name their source ("Original file:"),
    // and an absolute path would make the check fail in any other checkout.
    "--includeDirs=.",
  ],
  { stdio: "inherit", cwd: protoRoot },
);
if (r.status !== 0) process.exit(r.status ?? 1);

function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

if (check) {
  const want = new Map(walk(out).map((p) => [relative(out, p), readFileSync(p, "utf8")]));
  const have = new Map(walk(target).map((p) => [relative(target, p), readFileSync(p, "utf8")]));
  const stale = [];
  for (const [f, text] of want) if (have.get(f) !== text) stale.push(f);
  for (const f of have.keys()) if (!want.has(f)) stale.push(f);
  rmSync(out, { recursive: true, force: true });
  if (stale.length > 0) {
    console.error(`src/gen is stale (run \`npm run gen\`): ${stale.join(", ")}`);
    process.exit(1);
  }
  console.error("src/gen is up to date");
} else {
  console.error(`generated ${walk(target).length} files into src/gen`);
}
