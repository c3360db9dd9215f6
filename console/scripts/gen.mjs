// Regenerates src/gen (TypeScript messages and the AdminService descriptor) from proto/ax/v1 with
// protoc-gen-es, through the buf pinned in tools/buf (installed here with `npm ci` if missing).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const consoleDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const tools = join(consoleDir, "..", "tools", "buf");
const buf = join(tools, "node_modules", ".bin", "buf");
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: "inherit" });
if (!existsSync(buf)) {
  run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], tools);
}
run(buf, ["generate", "--template", "buf.gen.yaml"], consoleDir);
