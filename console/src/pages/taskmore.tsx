// The task form's fields beyond the core ones (taskform.tsx): placement and limits, keys, the
// active window and calendar, deadlines and events, chains and DAG edges, search params — each as
// `axctl task create`/`update` takes it (flags named in errors), each with its UpdateTask mask
// path. `moreFacts` shows the ones a task sets on its page.
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { JSX } from "preact";
import { durationMs } from "../format";
import { RetryTarget, ScheduleSchema, type Schedule, type TaskSpec } from "../gen/ax/v1/admin_pb";
import { count, field, formatDuration, parseAlso, parseDuration, parseList, parseTimestamp } from "../parse";
import { Field } from "../ui";

export interface More {
  also: string;
  selector: string;
  retryOn: string;
  shards: string;
  hashKey: string;
  priority: string;
  maxRunning: string;
  maxPending: string;
  cooldownAfter: string;
  cooldown: string;
  concurrencyKey: string;
  concurrencyLimit: string;
  uniqueKey: string;
  uniqueFor: string;
  searchParams: string;
  startTime: string;
  endTime: string;
  excludeDates: string;
  calendar: string;
  jitter: string;
  mustFinishWithin: string;
  onEvent: string;
  eventFilter: string;
  onSuccess: string;
  onFailure: string;
  afterAll: string;
}

export const MORE_EMPTY: More = {
  also: "",
  selector: "",
  retryOn: "",
  shards: "",
  hashKey: "",
  priority: "",
  maxRunning: "",
  maxPending: "",
  cooldownAfter: "",
  cooldown: "",
  concurrencyKey: "",
  concurrencyLimit: "",
  uniqueKey: "",
  uniqueFor: "",
  searchParams: "",
  startTime: "",
  endTime: "",
  excludeDates: "",
  calendar: "",
  jitter: "",
  mustFinishWithin: "",
  onEvent: "",
  eventFilter: "",
  onSuccess: "",
  onFailure: "",
  afterAll: "",
};

/** The UpdateTask mask path and JSON name of each field here. */
export const MORE_MASK: [string, string][] = [
  ["selector", "selector"],
  ["retry_on", "retryOn"],
  ["shards", "shards"],
  ["hash_key", "hashKey"],
  ["priority", "priority"],
  ["max_running", "maxRunning"],
  ["max_pending", "maxPending"],
  ["cooldown_after", "cooldownAfter"],
  ["cooldown", "cooldown"],
  ["concurrency_key", "concurrencyKey"],
  ["concurrency_limit", "concurrencyLimit"],
  ["unique_key", "uniqueKey"],
  ["unique_for", "uniqueFor"],
  ["search_params", "searchParams"],
  ["start_time", "startTime"],
  ["end_time", "endTime"],
  ["exclude_dates", "excludeDates"],
  ["calendar", "calendar"],
  ["jitter", "jitter"],
  ["must_finish_within", "mustFinishWithin"],
  ["on_event", "onEvent"],
  ["event_filter", "eventFilter"],
  ["on_success", "onSuccess"],
  ["on_failure", "onFailure"],
  ["after_all", "afterAll"],
  ["extra_schedules", "extraSchedules"],
];

const dur = (d: Parameters<typeof durationMs>[0]) => {
  const ms = durationMs(d);
  return ms === undefined ? "" : formatDuration(ms);
};
const num = (n: number | undefined) => (n === undefined ? "" : String(n));

/** An extra schedule as `--also` takes it (a fixed rate's anchor is not shown). */
function alsoText(s: Schedule): string {
  const k = s.kind;
  if (k.case === "cron") return `cron ${k.value.expression}${k.value.timeZone ? ` in ${k.value.timeZone}` : ""}`;
  if (k.case === "fixedRate") return `every ${dur(k.value.interval)}`;
  return "";
}

export function moreOf(s: TaskSpec): More {
  return {
    also: s.extraSchedules.map(alsoText).join("; "),
    selector: s.selector,
    retryOn: s.retryOn ? (RetryTarget[s.retryOn] ?? "") : "",
    shards: s.shards ? String(s.shards) : "",
    hashKey: s.hashKey,
    priority: s.priority ? String(s.priority) : "",
    maxRunning: num(s.maxRunning),
    maxPending: num(s.maxPending),
    cooldownAfter: num(s.cooldownAfter),
    cooldown: dur(s.cooldown),
    concurrencyKey: s.concurrencyKey,
    concurrencyLimit: num(s.concurrencyLimit),
    uniqueKey: s.uniqueKey,
    uniqueFor: dur(s.uniqueFor),
    searchParams: s.searchParams.join(","),
    startTime: s.startTime ? timestampDate(s.startTime).toISOString() : "",
    endTime: s.endTime ? timestampDate(s.endTime).toISOString() : "",
    excludeDates: s.excludeDates.join(","),
    calendar: s.calendar,
    jitter: dur(s.jitter),
    mustFinishWithin: dur(s.mustFinishWithin),
    onEvent: s.onEvent,
    eventFilter: s.eventFilter,
    onSuccess: s.onSuccess.join(","),
    onFailure: s.onFailure.join(","),
    afterAll: s.afterAll.join(","),
  };
}

/** The TaskSpec fields of `m` (axctl's syntax checks; the flag named in an error). */
export function specMore(m: More): Omit<Partial<TaskSpec>, "$typeName" | "$unknown"> {
  const opt = <T,>(text: string, parse: () => T) => (text.trim() ? parse() : undefined);
  const d = (flag: string, text: string) => opt(text, () => field(flag, text, parseDuration));
  const n = (flag: string, text: string) => opt(text, () => count(flag, text));
  const t = (flag: string, text: string) => opt(text, () => field(flag, text, parseTimestamp));
  const list = (flag: string, text: string) => field(flag, text, parseList);
  return {
    extraSchedules: field("also", m.also, parseAlso).map((a) =>
      create(ScheduleSchema, {
        kind:
          a.case === "cron"
            ? { case: "cron", value: { expression: a.expression, timeZone: a.timeZone } }
            : { case: "fixedRate", value: { interval: a.interval } },
      }),
    ),
    selector: m.selector.trim(),
    retryOn: m.retryOn ? (RetryTarget[m.retryOn as keyof typeof RetryTarget] ?? 0) : 0,
    shards: n("shards", m.shards) ?? 0,
    hashKey: m.hashKey.trim(),
    priority: n("priority", m.priority) ?? 0,
    maxRunning: n("max-running", m.maxRunning),
    maxPending: n("max-pending", m.maxPending),
    cooldownAfter: n("cooldown-after", m.cooldownAfter),
    cooldown: d("cooldown", m.cooldown),
    concurrencyKey: m.concurrencyKey.trim(),
    concurrencyLimit: n("concurrency-limit", m.concurrencyLimit),
    uniqueKey: m.uniqueKey.trim(),
    uniqueFor: d("unique-for", m.uniqueFor),
    searchParams: list("search-params", m.searchParams),
    startTime: t("active-from", m.startTime),
    endTime: t("active-until", m.endTime),
    excludeDates: list("exclude", m.excludeDates),
    calendar: m.calendar.trim(),
    jitter: d("jitter", m.jitter),
    mustFinishWithin: d("must-finish-within", m.mustFinishWithin),
    onEvent: m.onEvent.trim(),
    eventFilter: m.eventFilter.trim(),
    onSuccess: list("on-success", m.onSuccess),
    onFailure: list("on-failure", m.onFailure),
    afterAll: list("after-all", m.afterAll),
  };
}

type Input = (k: keyof More, label: string, hint?: string, extra?: Record<string, unknown>) => JSX.Element;

/** The fieldsets of the fields here. */
export function MoreFields(props: { m: More; set: (m: More) => void }) {
  const { m, set } = props;
  const text: Input = (k, label, hint, extra) => (
    <Field label={label} hint={hint}>
      {(id, d) => (
        <input id={id} aria-describedby={d} value={m[k]} onInput={(e) => set({ ...m, [k]: e.currentTarget.value })} {...extra} />
      )}
    </Field>
  );
  const numeric = { inputMode: "numeric" };
  return (
    <>
      <fieldset>
        <legend>Placement and limits</legend>
        <div class="row">
          {text("selector", "Worker selector", "e.g. region=cn,gpu=true,zone in (a,b) [default: any worker]")}
          <Field label="Retry on">
            {(id) => (
              <select id={id} value={m.retryOn} onChange={(e) => set({ ...m, retryOn: e.currentTarget.value })}>
                <option value="">default (another worker)</option>
                <option value="OTHER">another worker</option>
                <option value="SAME">the same worker</option>
              </select>
            )}
          </Field>
        </div>
        <div class="row">
          {text("shards", "Shards", "Split each fire into N children [default: not sharded]", numeric)}
          {text("hashKey", "Hash key", "With hash routing: a params field (e.g. customer_id)")}
          {text("priority", "Priority", "0-9, higher first [default: 0]", numeric)}
        </div>
        <div class="row">
          {text("maxRunning", "Max running", "At once across the cluster [default: no limit]", numeric)}
          {text("maxPending", "Max pending", "Fires past it are coalesced [default: 100]", numeric)}
          {text("cooldownAfter", "Cooldown after", "Failures in a row [default: axd's]", numeric)}
          {text("cooldown", "Cooldown", "e.g. 30s [default: axd's]")}
        </div>
        <div class="row">
          {text("concurrencyKey", "Concurrency key", "A params path, e.g. params.customer_id")}
          {text("concurrencyLimit", "Concurrency limit", "Running per key value", numeric)}
          {text("uniqueKey", "Unique key", "A params path")}
          {text("uniqueFor", "Unique for", "e.g. 10m (at most 1d)")}
        </div>
        {text("searchParams", "Search params", "Params paths instances are found by, e.g. params.customer_id,params.region")}
      </fieldset>
      <fieldset>
        <legend>Window, deadline and events</legend>
        {text("also", "Also fires on", "More schedules merged with this one (cron or every only): cron 0 9 * * 1-5 in Europe/Berlin; every 4h")}
        <div class="row">
          {text("startTime", "Active from", "RFC 3339, e.g. 2026-03-08T00:00:00Z")}
          {text("endTime", "Active until", "RFC 3339")}
          {text("jitter", "Jitter", "Random delay per fire, e.g. 30s")}
        </div>
        <div class="row">
          {text("excludeDates", "Excluded dates", "YYYY-MM-DD,YYYY-MM-DD in the task's zone")}
          {text("calendar", "Calendar", "A calendar's name: no fires on its dates")}
          {text("mustFinishWithin", "Must finish within", "After each fire, e.g. 1h: an alert when not SUCCESS by then")}
        </div>
        <div class="row">
          {text("onEvent", "On event", "An event name: one instance per event published to the app")}
          {text("eventFilter", "Event filter", "e.g. payload.type=paid,payload.vip")}
        </div>
      </fieldset>
      <fieldset>
        <legend>Chains and DAG</legend>
        <div class="row">
          {text("onSuccess", "On success", "Tasks fired when an instance succeeds: A,B")}
          {text("onFailure", "On failure", "Tasks fired when one fails: A,B")}
          {text("afterAll", "After all", "Upstream tasks of a DAG: A,B")}
        </div>
      </fieldset>
    </>
  );
}

/** The fields here a task sets, as (name, value) facts for its page. */
export function moreFacts(s: TaskSpec): [string, string][] {
  const m = moreOf(s);
  const out: [string, string][] = [];
  const add = (name: string, v: string) => v && out.push([name, v]);
  add("Also fires on", m.also);
  add("Worker selector", m.selector);
  add("Retry on", m.retryOn && m.retryOn.toLowerCase());
  add("Shards", m.shards);
  add("Hash key", m.hashKey);
  add("Priority", m.priority);
  add("Max running", m.maxRunning);
  add("Max pending", m.maxPending);
  add("Cooldown after", m.cooldownAfter && `${m.cooldownAfter} failures`);
  add("Cooldown", m.cooldown);
  add("Concurrency key", m.concurrencyKey && `${m.concurrencyKey} (at most ${m.concurrencyLimit || "?"} running per value)`);
  add("Unique key", m.uniqueKey && `${m.uniqueKey} for ${m.uniqueFor || "?"}`);
  add("Search params", m.searchParams);
  add("Active from", m.startTime);
  add("Active until", m.endTime);
  add("Excluded dates", m.excludeDates);
  add("Calendar", m.calendar);
  add("Jitter", m.jitter);
  add("Must finish within", m.mustFinishWithin);
  add("On event", m.onEvent && (m.eventFilter ? `${m.onEvent} where ${m.eventFilter}` : m.onEvent));
  add("On success", m.onSuccess);
  add("On failure", m.onFailure);
  add("After all", m.afterAll);
  return out;
}
