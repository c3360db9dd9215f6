import { test } from "node:test";
import * as assert from "node:assert/strict";
import { durationMs, outputText, timestampMs } from "../src/worker";

test("handler return values become Result.output text", () => {
  assert.equal(outputText("plain"), "plain");
  assert.equal(outputText(undefined), "");
  assert.equal(outputText(null), "");
  assert.equal(outputText(Buffer.from("bytes é")), "bytes é");
  assert.equal(outputText(new TextEncoder().encode("u8")), "u8");
  assert.equal(outputText({ a: [1, 2] }), '{"a":[1,2]}');
  assert.equal(outputText(42), "42");
});

test("Durations and Timestamps (longs as strings) convert to milliseconds", () => {
  assert.equal(durationMs({ seconds: "2", nanos: 500_000_000 }), 2500);
  assert.equal(durationMs({ seconds: "0", nanos: 0 }), undefined, "zero means unset");
  assert.equal(durationMs(null), undefined);
  assert.equal(timestampMs({ seconds: "1800000000", nanos: 1_000_000 }), 1_800_000_000_001);
  assert.equal(timestampMs(null), undefined);
});
