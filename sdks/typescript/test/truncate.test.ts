import { test } from "node:test";
import * as assert from "node:assert/strict";
import { MAX_OUTPUT, truncate } from "../src/truncate";

test("text that fits is left alone", () => {
  assert.equal(truncate("short", 10), "short");
  assert.equal(truncate("x".repeat(MAX_OUTPUT), MAX_OUTPUT), "x".repeat(MAX_OUTPUT));
  // Bytes count, not UTF-16 units: 4 two-byte characters are 8 bytes.
  assert.equal(truncate("éééé", 8), "éééé");
});

test("an oversized output is cut to what axd keeps and marked with its full length", () => {
  const s = "é".repeat(5 * 1024 * 1024); // 10 MiB of two-byte characters
  const out = truncate(s, MAX_OUTPUT);
  const bytes = Buffer.byteLength(out, "utf8");
  assert.ok(bytes <= MAX_OUTPUT, `${bytes} bytes`);
  assert.ok(bytes > MAX_OUTPUT - 64, `not cut more than needed: ${bytes} bytes`);
  assert.ok(out.endsWith("…[truncated, 10485760 bytes in all]"), out.slice(-60));
});

test("the cut falls on a UTF-8 character boundary", () => {
  const marker = (n: number) => `…[truncated, ${n} bytes in all]`;
  // For each offset of a 4-byte character against the cut, the kept text is whole characters.
  for (let pad = 0; pad < 4; pad++) {
    const s = "a".repeat(pad) + "😀".repeat(100); // U+1F600: 4 bytes in UTF-8, a surrogate pair in JS
    const total = Buffer.byteLength(s, "utf8");
    const max = 50 + Buffer.byteLength(marker(total), "utf8");
    const out = truncate(s, max);
    assert.ok(Buffer.byteLength(out, "utf8") <= max);
    const kept = out.slice(0, out.length - marker(total).length);
    // A split character would decode to U+FFFD (and re-encode to different bytes).
    assert.ok(!kept.includes("\uFFFD"), `pad ${pad}: ${JSON.stringify(kept.slice(-4))}`);
    assert.equal(Buffer.from(kept, "utf8").toString("utf8"), kept);
    assert.ok(s.startsWith(kept), `pad ${pad}: the kept part is a prefix of the text`);
    // And nothing more than the partial character was dropped.
    assert.ok(Buffer.byteLength(kept, "utf8") > 50 - 4);
  }
});

test("a limit smaller than the marker keeps only the marker", () => {
  const out = truncate("x".repeat(100), 5);
  assert.equal(out, "…[truncated, 100 bytes in all]");
});
