// Times, durations and names as the console shows them. Times are shown in a named zone (the task's
// or the browser's) as `YYYY-MM-DD HH:MM:SS ZONE`, so two columns in two zones read side by side.
import type { Duration, Timestamp } from "@bufbuild/protobuf/wkt";
import type { FireSpan } from "./gen/ax/v1/admin_pb";
import { InstanceStatus } from "./gen/ax/v1/types_pb";

/** The browser's IANA time zone. */
export const browserZone: string = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

export function toDate(ts: Timestamp | undefined): Date | undefined {
  if (!ts) return undefined;
  return new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6));
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `2026-12-02 06:40:01 GMT+1` in `zone` (IANA), or `-`. */
export function timeIn(ts: Timestamp | Date | undefined, zone: string = browserZone): string {
  const d = ts instanceof Date ? ts : toDate(ts);
  if (!d) return "-";
  let f = formatters.get(zone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat("en-GB", {
        timeZone: zone,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
        hourCycle: "h23",
        timeZoneName: "short",
      });
    } catch {
      return `${d.toISOString()} (unknown zone ${zone})`;
    }
    formatters.set(zone, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(d)) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${p.timeZoneName ?? zone}`;
}

/** Milliseconds as `850ms`, `12.3s`, `4m 05s`, `2h 03m`, `3d 04h`. */
/** The fires a misfire decision skipped or caught up: `9 fires, A to B`, `1 fire, at A`, or `-`. */
export function fireSpan(f: FireSpan | undefined, zone: string = browserZone): string {
  if (!f) return "-";
  const first = timeIn(f.firstTime, zone);
  const last = timeIn(f.lastTime, zone);
  if (f.count === 1 || first === last) return `${f.count} fire${f.count === 1 ? "" : "s"}, at ${first}`;
  return `${f.count} fires, ${first} to ${last}`;
}

export function span(ms: number): string {
  const sign = ms < 0 ? "-" : "";
  ms = Math.abs(ms);
  if (ms < 1000) return `${sign}${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${sign}${s.toFixed(s < 10 ? 2 : 1)}s`;
  const pad = (n: number) => String(Math.floor(n)).padStart(2, "0");
  if (s < 3600) return `${sign}${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${sign}${Math.floor(s / 3600)}h ${pad((s % 3600) / 60)}m`;
  return `${sign}${Math.floor(s / 86400)}d ${pad((s % 86400) / 3600)}h`;
}

/** A configured duration exactly, as axctl's flags take it: 3s, 1m30s, 1.5s, 250ms, 1d2h (not
 * rounded like {@link span}, which shows measured times). */
export function setting(ms: number): string {
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  let rest = Math.round(Math.abs(ms));
  const parts: string[] = [];
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest >= 1000) parts.push(`${rest / 1000}s`);
  else if (rest > 0) parts.push(`${rest}ms`);
  return sign + parts.join("");
}

export function durationMs(d: Duration | undefined): number | undefined {
  return d ? Number(d.seconds) * 1000 + d.nanos / 1e6 : undefined;
}

/** `PENDING`, `SUCCESS`, … */
export function statusName(s: InstanceStatus): string {
  return InstanceStatus[s] ?? String(s);
}

export const FINAL = new Set([
  InstanceStatus.SUCCESS,
  InstanceStatus.FAILED,
  InstanceStatus.TIMEOUT,
  InstanceStatus.CANCELED,
  InstanceStatus.SKIPPED,
]);

/** The statuses a filter offers, in life order. */
export const STATUSES = [
  InstanceStatus.PENDING,
  InstanceStatus.DISPATCHED,
  InstanceStatus.RUNNING,
  InstanceStatus.SUCCESS,
  InstanceStatus.FAILED,
  InstanceStatus.TIMEOUT,
  InstanceStatus.CANCELED,
  InstanceStatus.SKIPPED,
];
