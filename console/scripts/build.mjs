// Builds console/dist, which axd embeds (scheduler/build.rs): one minified bundle of src/main.tsx and
// one stylesheet, named by a hash of their contents (served as immutable), and index.html naming
// them. The output depends only on the sources and the locked packages, so `console/check.sh` can
// rebuild it and compare with the committed copy. `--out DIR` writes the build to DIR instead
// (console/check.sh builds into a temporary directory, so that it never touches console/dist: axd's
// build script reads console/dist, and a rewrite would race with a cargo build running alongside
// and make cargo rebuild axd afterwards).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outAt = process.argv.indexOf("--out");
const dist = outAt >= 0 && process.argv[outAt + 1] ? resolve(process.argv[outAt + 1]) : join(root, "dist");
const hash = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 12);

const bundle = await build({
  entryPoints: [join(root, "src/main.tsx")],
  bundle: true,
  write: false,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  jsx: "automatic",
  jsxImportSource: "preact",
  charset: "utf8",
  logLevel: "warning",
});
const js = bundle.outputFiles[0].contents;
const css = readFileSync(join(root, "src/style.css"));
const icon = readFileSync(join(root, "src/icon.svg"));
const names = {
  js: `assets/app-${hash(js)}.js`,
  css: `assets/app-${hash(css)}.css`,
  icon: `assets/icon-${hash(icon)}.svg`,
};
const html = readFileSync(join(root, "src/index.html"), "utf8")
  .replace("%JS%", `/${names.js}`)
  .replace("%CSS%", `/${names.css}`)
  .replace("%ICON%", `/${names.icon}`);

rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "assets"), { recursive: true });
writeFileSync(join(dist, names.js), js);
writeFileSync(join(dist, names.css), css);
writeFileSync(join(dist, names.icon), icon);
writeFileSync(join(dist, "index.html"), html);
console.log(`${outAt >= 0 ? dist : "console/dist"}: ${names.js} (${js.length} bytes), ${names.css}, index.html`);
