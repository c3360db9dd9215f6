// Holds the console's duration parser (src/parse.ts) to ax's one duration syntax: every case of
// proto/duration-cases.txt, which proto/src/duration.rs (axd, axctl) is held to as well.
// Run by check.sh; fails with the cases that differ.
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const console_ = dirname(dirname(fileURLToPath(import.meta.url)));
const out = await build({
  entryPoints: [join(console_, "src/parse.ts")],
  bundle: true,
  format: "esm",
  platform: "node",
  write: false,
  logLevel: "error",
});
const dir = mkdtempSync(join(tmpdir(), "ax-parse-"));
let failures = [];
let n = 0;
try {
  const file = join(dir, "parse.mjs");
  writeFileSync(file, out.outputFiles[0].text);
  const { parseDuration } = await import(pathToFileURL(file).href);
  const cases = readFileSync(join(console_, "../proto/duration-cases.txt"), "utf8");
  for (const line of cases.split("\n").filter((l) => l.startsWith("|"))) {
    const end = line.indexOf("| ", 1);
    const input = line.slice(1, end);
    const expected = line.slice(end + 2);
    const [kind, ...rest] = expected.split(" ");
    let got;
    try {
      const d = parseDuration(input);
      got = `ok ${d.seconds} ${d.nanos}`;
    } catch (e) {
      got = `err ${e.message}`;
    }
    const ok = kind === "ok" ? got === expected : got.startsWith("err ") && got.includes(rest.join(" "));
    if (!ok) failures.push(`${JSON.stringify(input)}: expected ${expected}, got ${got}`);
    n += 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (n < 30) failures.push(`only ${n} cases read`);
if (failures.length) {
  console.error(`console/scripts/duration-cases.mjs: src/parse.ts differs from proto/duration-cases.txt:\n${failures.join("\n")}`);
  process.exit(1);
}
console.log(`console/scripts/duration-cases.mjs: ${n} duration cases hold`);
