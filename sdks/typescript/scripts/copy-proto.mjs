// Copies the repository's .proto files (../../proto/ax/v1) into this package (proto/ax/v1), where
// the compiled SDK loads them at run time (see src/proto.ts): an installed package then works
// without the repository around it.
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const from = join(pkg, "..", "..", "proto", "ax", "v1");
const to = join(pkg, "proto", "ax", "v1");
rmSync(join(pkg, "proto"), { recursive: true, force: true });
mkdirSync(to, { recursive: true });
for (const f of readdirSync(from).filter((f) => f.endsWith(".proto"))) {
  cpSync(join(from, f), join(to, f));
}
console.error(`copied ${from}/*.proto to ${to}`);
