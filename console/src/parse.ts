// The syntax checks axctl makes before it sends a task (admin-cli/src/args.rs; durations in ax's
// one syntax, proto/src/duration.rs), with the same messages; ranges and everything else are
// checked by axd, whose messages the console shows as axctl does (`InvalidArgument: task.timeout: ...`).
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema, type Timestamp, timestampFromMs } from "@bufbuild/protobuf/wkt";

const HINT = "use numbers with units ms, s, m, h, d, e.g. 250ms, 90s, 1h30m, 2d";
const UNITS = ["d", "h", "m", "s", "ms"];
const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

export class InputError extends Error {}

const UNIT_NS: Record<string, bigint> = { d: 86_400_000_000_000n, h: 3_600_000_000_000n, m: 60_000_000_000n, s: 1_000_000_000n, ms: 1_000_000n };

/**
 * ax's one duration syntax (README "Durations", proto/src/duration.rs): `250ms`, `90s`, `1h30m`,
 * `1.5h`, `2d` or a bare `0`; units d, h, m, s, ms, each at most once and largest first.
 */
export function parseDuration(text: string): Duration {
  const trimmed = text.trim();
  let last = -1;
  for (const unit of trimmed.split(/[^\p{L}]+/u).filter((u) => u)) {
    const index = UNITS.indexOf(unit);
    if (index < 0) throw new InputError(`unknown unit \`${unit}\`; ${HINT}`);
    if (index <= last) throw new InputError(`unit \`${unit}\` is repeated or out of order; write larger units first, e.g. 1h30m`);
    last = index;
  }
  if (!trimmed) throw new InputError(`empty duration; ${HINT}`);
  if (trimmed === "0") return create(DurationSchema, {});
  let ns = 0n;
  let rest = trimmed;
  while (rest) {
    const m = /^(\d+)(?:\.(\d+))?\s*([a-z]*)\s*/.exec(rest);
    if (!m) throw new InputError(`expected a number at \`${rest}\`; ${HINT}`);
    const [all, whole, fraction = "", unit] = m;
    if (!unit) throw new InputError(`\`${whole}\` has no unit; ${HINT}`);
    ns += BigInt(whole) * UNIT_NS[unit];
    // Digits past the nanosecond are dropped, as axd and axctl drop them.
    if (fraction) ns += (BigInt(fraction.slice(0, 9).padEnd(9, "0")) * UNIT_NS[unit]) / 1_000_000_000n;
    rest = rest.slice(all.length);
  }
  if (ns / 1_000_000n > BigInt(Number.MAX_SAFE_INTEGER)) throw new InputError("duration is too large");
  return create(DurationSchema, { seconds: ns / 1_000_000_000n, nanos: Number(ns % 1_000_000_000n) });
}

/** Milliseconds written back the way [`parseDuration`] reads them: `1h30m`, `250ms`, `0s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  let out = "";
  for (const u of UNITS) {
    const n = Math.floor(ms / UNIT_MS[u]);
    if (n > 0) {
      out += `${n}${u}`;
      ms -= n * UNIT_MS[u];
    }
  }
  return out;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 time with an offset, e.g. `2026-03-08T07:30:00Z`. */
export function parseTimestamp(text: string): Timestamp {
  const t = text.trim();
  const ms = RFC3339.test(t) ? Date.parse(t.replace(" ", "T")) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new InputError(`\`${t}\` is not an RFC 3339 time; expected RFC 3339 with an offset, e.g. 2026-03-08T07:30:00Z`);
  }
  return timestampFromMs(ms);
}

export type BackoffInit =
  | { kind: { case: "list"; value: { delays: Duration[] } } }
  | { kind: { case: "exponential"; value: { initial: Duration; max: Duration; multiplier: number; jitter: number } } };

/** `10s,60s,300s`, or `exp:INITIAL:MAX[:MULTIPLIER[:JITTER]]`. */
export function parseBackoff(text: string): BackoffInit {
  if (text.startsWith("exp:")) {
    const parts = text.slice(4).split(":");
    if (parts.length < 2 || parts.length > 4) {
      throw new InputError("expected exp:INITIAL:MAX[:MULTIPLIER[:JITTER]], e.g. exp:10s:5m:2:0.1");
    }
    const number = (part: string | undefined, what: string) => {
      if (part === undefined) return 0;
      const n = Number(part);
      if (part.trim() === "" || !Number.isFinite(n)) throw new InputError(`${what} \`${part}\` is not a number`);
      return n;
    };
    const sub = (part: string, what: string) => {
      try {
        return parseDuration(part);
      } catch (e) {
        throw new InputError(`${what}: ${(e as Error).message}`);
      }
    };
    return {
      kind: {
        case: "exponential",
        value: {
          initial: sub(parts[0], "initial delay"),
          max: sub(parts[1], "max delay"),
          multiplier: number(parts[2], "multiplier"),
          jitter: number(parts[3], "jitter"),
        },
      },
    };
  }
  try {
    return { kind: { case: "list", value: { delays: text.split(",").map(parseDuration) } } };
  } catch (e) {
    throw new InputError(`${(e as Error).message} (a backoff is a list like 10s,60s,300s or exp:10s:5m:2:0.1)`);
  }
}

/** `KEY=VALUE`, one per line. */
export function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim()).filter((l) => l)) {
    const eq = line.indexOf("=");
    if (eq < 0) throw new InputError(`\`${line}\`: expected KEY=VALUE`);
    if (eq === 0) throw new InputError(`\`${line}\`: the label key is empty; expected KEY=VALUE`);
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

/** Runs a parser on one field; its error names the field as axctl's flag does. */
export function field<T>(flag: string, text: string, parse: (t: string) => T): T {
  try {
    return parse(text.trim());
  } catch (e) {
    if (e instanceof InputError) throw new InputError(`--${flag}: ${e.message}`);
    throw e;
  }
}

/** A whole number 0-4294967295 (a proto uint32), as axctl reads one. */
export function count(flag: string, text: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) > 4294967295) throw new InputError(`--${flag}: \`${t}\` is not a whole number`);
  return Number(t);
}

/** A comma-separated list (`--on-success A,B`): its items without surrounding spaces; empty is none. */
/** One of a task's extra schedules as axctl's `--also` takes it: `cron EXPR [in ZONE]` or
 * `every DUR`. */
export type Also = { case: "cron"; expression: string; timeZone: string } | { case: "every"; interval: Duration };

/** A `;`-separated list of `--also` schedules (nothing for none). */
export function parseAlso(text: string): Also[] {
  const items = text.split(";").map((i) => i.trim());
  if (items.length > 1 && items.some((i) => !i)) throw new InputError("an empty item; expected 'cron EXPR [in ZONE]; every DUR'");
  return items
    .filter((i) => i)
    .map((item): Also => {
      if (item.startsWith("every ")) return { case: "every", interval: parseDuration(item.slice(6)) };
      if (item.startsWith("cron ")) {
        const rest = item.slice(5);
        const at = rest.lastIndexOf(" in ");
        const [expression, timeZone] = at < 0 ? [rest.trim(), ""] : [rest.slice(0, at).trim(), rest.slice(at + 4).trim()];
        if (!expression) throw new InputError("no cron expression; expected e.g. 'cron 0 9 * * 1-5 in Europe/Berlin'");
        return { case: "cron", expression, timeZone };
      }
      throw new InputError(`${JSON.stringify(item)}: expected 'cron EXPR [in ZONE]' or 'every DUR'`);
    });
}

export function parseList(text: string): string[] {
  const items = text.split(",").map((i) => i.trim());
  if (items.length > 1 && items.some((i) => !i)) throw new InputError("an empty item; expected A,B,C (or nothing for none)");
  return items.filter((i) => i);
}
