// Create and edit a task: every field of `axctl task create` / `task update` (the core ones here,
// the rest in taskmore.tsx), the same syntax checks
// and messages, and a preview of the schedule before saving. An edit sends only the changed fields
// (UpdateTask's field mask), as `task update` does.
import { create, toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useState } from "preact/hooks";
import { api, errorText } from "../api";
import { browserZone, durationMs, timeIn } from "../format";
import {
  ConcurrencyPolicy,
  CronDialect,
  MisfirePolicy,
  RoutingStrategy,
  type Schedule,
  type SchedulePreview,
  ScheduleSchema,
  type Task,
  type TaskSpec,
  TaskSpecSchema,
} from "../gen/ax/v1/admin_pb";
import { InputError, count, field, formatDuration, parseBackoff, parseDuration, parseLabels, parseTimestamp } from "../parse";
import { navigate, taskHref } from "../router";
import { Field, type Message, PageTitle, Status, flash, useLoad } from "../ui";
import { MORE_EMPTY, MORE_MASK, type More, MoreFields, moreOf, specMore } from "./taskmore";

type Kind = "cron" | "every" | "fixedDelay" | "at" | "after" | "manual";

interface Form {
  name: string;
  app: string;
  handler: string;
  description: string;
  kind: Kind;
  cron: string;
  tz: string;
  dialect: "" | "unix" | "quartz";
  interval: string;
  startAt: string;
  at: string;
  after: string;
  params: string;
  timeout: string;
  retries: string;
  backoff: string;
  misfire: string;
  misfireThreshold: string;
  maxCatchUp: string;
  concurrency: string;
  routing: string;
  labels: string;
  enabled: boolean;
}

const EMPTY: Form = {
  name: "",
  app: "",
  handler: "",
  description: "",
  kind: "cron",
  cron: "",
  tz: "",
  dialect: "",
  interval: "",
  startAt: "",
  at: "",
  after: "",
  params: "",
  timeout: "",
  retries: "",
  backoff: "",
  misfire: "",
  misfireThreshold: "",
  maxCatchUp: "",
  concurrency: "",
  routing: "",
  labels: "",
  enabled: true,
};

const KINDS: [Kind, string][] = [
  ["cron", "Cron"],
  ["every", "Fixed rate"],
  ["fixedDelay", "Fixed delay"],
  ["at", "Once at"],
  ["after", "Once after"],
  ["manual", "Manual"],
];

const dur = (ms: number | undefined) => (ms === undefined ? "" : formatDuration(ms));
const iso = (d: Date | undefined) => (d ? d.toISOString() : "");

function formOf(t: Task): Form {
  const s = t.spec;
  if (!s) return EMPTY;
  const f: Form = { ...EMPTY, name: s.name, app: s.app, handler: s.handler, description: s.description };
  const k = s.schedule?.kind;
  switch (k?.case) {
    case "cron":
      Object.assign(f, {
        kind: "cron",
        cron: k.value.expression,
        tz: k.value.timeZone,
        dialect: k.value.dialect === CronDialect.UNIX ? "unix" : k.value.dialect === CronDialect.QUARTZ ? "quartz" : "",
      });
      break;
    case "fixedRate":
    case "fixedDelay":
      Object.assign(f, {
        kind: k.case === "fixedRate" ? "every" : "fixedDelay",
        interval: dur(durationMs(k.value.interval)),
        startAt: iso(k.value.startAt && timestampDate(k.value.startAt)),
      });
      break;
    case "oneTime":
      if (k.value.when.case === "at") Object.assign(f, { kind: "at", at: iso(timestampDate(k.value.when.value)) });
      else Object.assign(f, { kind: "after", after: dur(durationMs(k.value.when.value)) });
      break;
    default:
      f.kind = "manual";
  }
  f.params = s.params;
  f.timeout = dur(durationMs(s.timeout));
  f.retries = s.retryPolicy ? String(s.retryPolicy.maxRetries) : "";
  const b = s.retryPolicy?.backoff?.kind;
  if (b?.case === "list") f.backoff = b.value.delays.map((d) => dur(durationMs(d))).join(",");
  if (b?.case === "exponential") {
    const v = b.value;
    f.backoff = `exp:${dur(durationMs(v.initial))}:${dur(durationMs(v.max))}:${v.multiplier}:${v.jitter}`;
  }
  f.misfire = MisfirePolicy[s.misfirePolicy] ?? "";
  f.misfireThreshold = dur(durationMs(s.misfireThreshold));
  f.maxCatchUp = s.maxCatchUp ? String(s.maxCatchUp) : "";
  f.concurrency = ConcurrencyPolicy[s.concurrencyPolicy] ?? "";
  f.routing = RoutingStrategy[s.routing] ?? "";
  f.labels = Object.entries(s.labels)
    .sort()
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");
  f.enabled = s.enabled ?? true;
  return f;
}

function scheduleOf(f: Form): Schedule {
  const interval = () => ({
    interval: field(f.kind === "every" ? "every" : "fixed-delay", f.interval, parseDuration),
    startAt: f.startAt.trim() ? field("start-at", f.startAt, parseTimestamp) : undefined,
  });
  switch (f.kind) {
    case "cron":
      return create(ScheduleSchema, {
        kind: {
          case: "cron",
          value: {
            expression: f.cron,
            timeZone: f.tz.trim(),
            dialect: f.dialect === "unix" ? CronDialect.UNIX : f.dialect === "quartz" ? CronDialect.QUARTZ : CronDialect.UNSPECIFIED,
          },
        },
      });
    case "every":
      return create(ScheduleSchema, { kind: { case: "fixedRate", value: interval() } });
    case "fixedDelay":
      return create(ScheduleSchema, { kind: { case: "fixedDelay", value: interval() } });
    case "at":
      return create(ScheduleSchema, {
        kind: { case: "oneTime", value: { when: { case: "at", value: field("at", f.at, parseTimestamp) } } },
      });
    case "after":
      return create(ScheduleSchema, {
        kind: { case: "oneTime", value: { when: { case: "after", value: field("after", f.after, parseDuration) } } },
      });
    case "manual":
      return create(ScheduleSchema, { kind: { case: "manual", value: {} } });
  }
}

function specOf(f: Form, m: More): TaskSpec {
  const enumOf = <E extends Record<string, string | number>>(e: E, name: string) => (name ? (e[name] as number) : 0);
  const retries = f.retries.trim() ? count("retries", f.retries) : undefined;
  const backoff = f.backoff.trim() ? field("backoff", f.backoff, parseBackoff) : undefined;
  return create(TaskSpecSchema, {
    name: f.name.trim(),
    app: f.app.trim(),
    handler: f.handler.trim(),
    description: f.description,
    schedule: scheduleOf(f),
    params: f.params,
    enabled: f.enabled,
    misfirePolicy: enumOf(MisfirePolicy, f.misfire),
    misfireThreshold: f.misfireThreshold.trim() ? field("misfire-threshold", f.misfireThreshold, parseDuration) : undefined,
    maxCatchUp: f.maxCatchUp.trim() ? count("max-catch-up", f.maxCatchUp) : 0,
    concurrencyPolicy: enumOf(ConcurrencyPolicy, f.concurrency),
    routing: enumOf(RoutingStrategy, f.routing),
    timeout: f.timeout.trim() ? field("timeout", f.timeout, parseDuration) : undefined,
    retryPolicy: retries !== undefined || backoff ? { maxRetries: retries ?? 0, backoff } : undefined,
    labels: field("label", f.labels, parseLabels),
    ...specMore(m),
  });
}

/** The TaskSpec fields UpdateTask may change, by proto name (the field mask) and JSON name. */
const MASK: [string, string][] = [
  ["app", "app"],
  ["handler", "handler"],
  ["description", "description"],
  ["schedule", "schedule"],
  ["params", "params"],
  ["enabled", "enabled"],
  ["misfire_policy", "misfirePolicy"],
  ["misfire_threshold", "misfireThreshold"],
  ["max_catch_up", "maxCatchUp"],
  ["concurrency_policy", "concurrencyPolicy"],
  ["routing", "routing"],
  ["timeout", "timeout"],
  ["retry_policy", "retryPolicy"],
  ["labels", "labels"],
];

function stable(v: unknown): string {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${k}:${stable((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

/** The mask paths whose values differ between the two specs. */
function changed(before: TaskSpec, after: TaskSpec): string[] {
  const a = toJson(TaskSpecSchema, before) as Record<string, unknown>;
  const b = toJson(TaskSpecSchema, after) as Record<string, unknown>;
  return [...MASK, ...MORE_MASK].filter(([, json]) => stable(a[json]) !== stable(b[json])).map(([path]) => path);
}

export function TaskFormPage(props: { name?: string }) {
  const editing = props.name !== undefined;
  const loaded = useLoad(async () => (editing ? (await api.getTask({ name: props.name })).task : undefined), [props.name]);
  if (editing && !loaded.data) {
    return (
      <section>
        <PageTitle title={`Edit ${props.name}`}>Edit task {props.name}</PageTitle>
        {loaded.error ? <p class="msg error" role="alert">{loaded.error}</p> : <p class="loading">Loading…</p>}
      </section>
    );
  }
  return <TaskForm key={props.name ?? ""} original={loaded.data} />;
}

function TaskForm(props: { original: Task | undefined }) {
  const original = props.original;
  const [f, setF] = useState<Form>(() => (original ? formOf(original) : EMPTY));
  const [m, setM] = useState<More>(() => (original?.spec ? moreOf(original.spec) : MORE_EMPTY));
  const [msg, setMsg] = useState<Message>(null);
  const [preview, setPreview] = useState<SchedulePreview | undefined>();
  const [busy, setBusy] = useState(false);
  const set = (k: keyof Form) => (e: Event) => {
    const el = e.currentTarget as HTMLInputElement;
    setF({ ...f, [k]: el.type === "checkbox" ? el.checked : el.value });
  };
  const title = original ? `Edit task ${original.spec?.name}` : "New task";

  const onPreview = async () => {
    try {
      const r = await api.previewSchedule({ schedule: scheduleOf(f), extraSchedules: specMore(m).extraSchedules, count: 5 });
      setPreview(r.preview);
      setMsg(null);
    } catch (e) {
      setPreview(undefined);
      setMsg({ kind: "error", text: e instanceof InputError ? e.message : errorText(e) });
    }
  };

  const onSubmit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const spec = specOf(f, m);
      if (original?.spec) {
        const paths = changed(specOf(formOf(original), moreOf(original.spec)), spec);
        if (paths.length === 0) {
          setMsg({ kind: "ok", text: "Nothing changed." });
          return;
        }
        spec.name = "";
        await api.updateTask({ name: original.spec.name, task: spec, updateMask: { paths } });
        flash(`Saved task ${original.spec.name} (changed: ${paths.join(", ")}).`);
        navigate(taskHref(original.spec.name));
      } else {
        const r = await api.createTask({ task: spec });
        flash(`Created task ${r.task?.spec?.name}.`);
        navigate(taskHref(r.task?.spec?.name ?? spec.name));
      }
    } catch (err) {
      setMsg({ kind: "error", text: err instanceof InputError ? err.message : errorText(err) });
    } finally {
      setBusy(false);
    }
  };

  const text = (k: keyof Form, label: string, hint?: string, extra?: Record<string, unknown>) => (
    <Field label={label} hint={hint}>
      {(id, d) => <input id={id} aria-describedby={d} value={f[k] as string} onInput={set(k)} {...extra} />}
    </Field>
  );
  const select = (k: keyof Form, label: string, options: [string, string][]) => (
    <Field label={label}>
      {(id) => (
        <select id={id} value={f[k] as string} onChange={set(k)}>
          {options.map(([v, l]) => (
            <option value={v}>{l}</option>
          ))}
        </select>
      )}
    </Field>
  );

  return (
    <section>
      <PageTitle title={title}>{title}</PageTitle>
      <form class="task-form" onSubmit={onSubmit} noValidate>
        <fieldset>
          <legend>Task</legend>
          {original ? (
            <p>
              Name: <strong>{original.spec?.name}</strong> (a task keeps its name)
            </p>
          ) : (
            text("name", "Name", "Letters, digits and . _ : - (at most 128)", { required: true, autocomplete: "off" })
          )}
          {text("app", "App", "The app whose workers run it", { required: true })}
          {text("handler", "Handler", "The handler the workers run", { required: true })}
          {text("description", "Description")}
        </fieldset>
        <fieldset>
          <legend>Schedule</legend>
          <div class="radios" role="radiogroup" aria-label="Schedule kind">
            {KINDS.map(([k, l]) => (
              <label class="radio">
                <input type="radio" name="kind" value={k} checked={f.kind === k} onChange={() => setF({ ...f, kind: k })} />
                {l}
              </label>
            ))}
          </div>
          {f.kind === "cron" && (
            <div class="row">
              {text("cron", "Cron expression", "e.g. 0 2 * * * (5 fields), */10 * * * * * (with seconds), 0 0 2 ? * 2 (Quartz)")}
              {text("tz", "Time zone", "IANA zone, e.g. Europe/London [default: UTC]")}
              {select("dialect", "Dialect", [
                ["", "detect"],
                ["unix", "unix"],
                ["quartz", "quartz"],
              ])}
            </div>
          )}
          {(f.kind === "every" || f.kind === "fixedDelay") && (
            <div class="row">
              {text("interval", f.kind === "every" ? "Every" : "Delay after each finishes", "e.g. 15m, 1h30m")}
              {text("startAt", "Start at", "RFC 3339, e.g. 2026-03-08T07:30:00Z [default: one interval from now]")}
            </div>
          )}
          {f.kind === "at" && text("at", "At", "RFC 3339 with an offset, e.g. 2026-03-08T07:30:00Z")}
          {f.kind === "after" && text("after", "After", "e.g. 90s, 2h")}
          {f.kind !== "manual" && (
            <button type="button" onClick={onPreview}>
              Preview schedule
            </button>
          )}
          {preview && <PreviewTable preview={preview} zone={f.kind === "cron" ? f.tz || "UTC" : "UTC"} />}
        </fieldset>
        <fieldset>
          <legend>Run</legend>
          <Field label="Params (JSON)" hint='Given to every instance, e.g. {"greeting":"hi"} [default: {}]'>
            {(id, d) => <textarea id={id} aria-describedby={d} rows={3} value={f.params} onInput={set("params")} />}
          </Field>
          <div class="row">
            {text("timeout", "Timeout", "e.g. 30s, 1h [default: none]")}
            {text("retries", "Retries", "Retries after a failed attempt [default: 0]", { inputMode: "numeric" })}
            {text("backoff", "Backoff", "10s,60s,300s or exp:10s:5m:2:0.1")}
          </div>
          <div class="row">
            {select("concurrency", "Concurrency", [
              ["", "default (allow)"],
              ["ALLOW", "allow"],
              ["FORBID", "skip"],
              ["BUFFER_ONE", "buffer one"],
              ["BUFFER_ALL", "buffer all"],
              ["CANCEL_OTHER", "cancel other"],
            ])}
            {select("routing", "Routing", [
              ["", "default (least loaded)"],
              ["LEAST_LOADED", "least loaded"],
              ["ROUND_ROBIN", "round robin"],
              ["RANDOM", "random"],
              ["HASH", "hash (a params field)"],
              ["BROADCAST", "broadcast (every worker)"],
            ])}
            {select("misfire", "Misfire", [
              ["", "default (fire once)"],
              ["FIRE_ONCE", "fire once"],
              ["FIRE_ALL", "fire all"],
              ["SKIP", "skip"],
            ])}
          </div>
          <div class="row">
            {text("misfireThreshold", "Misfire threshold", "e.g. 60s [default: 60s]")}
            {text("maxCatchUp", "Max catch-up", "With fire all [default: 10]", { inputMode: "numeric" })}
          </div>
          <Field label="Labels" hint="KEY=VALUE, one per line">
            {(id, d) => <textarea id={id} aria-describedby={d} rows={2} value={f.labels} onInput={set("labels")} />}
          </Field>
          <label class="check">
            <input type="checkbox" checked={f.enabled} onChange={set("enabled")} /> Enabled (fires by itself)
          </label>
        </fieldset>
        <MoreFields m={m} set={setM} />
        <Status msg={msg} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {original ? "Save changes" : "Create task"}
          </button>
          <button type="button" onClick={() => history.back()}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

/** Next fires in UTC, in the schedule's zone (as axd computed them) and in the browser's. */
export function PreviewTable(props: { preview: SchedulePreview; zone: string }) {
  const p = props.preview;
  return (
    <div class="preview">
      {p.description && <p>{p.description}</p>}
      {p.warnings.map((w) => (
        <p class="msg warn">Warning: {w}</p>
      ))}
      <div class="table-wrap">
        <table>
          <caption>Next fires{p.firesPerDay ? ` (about ${Math.round(p.firesPerDay * 10) / 10} a day)` : ""}</caption>
          <thead>
            <tr>
              <th scope="col">UTC</th>
              <th scope="col">Task zone ({props.zone})</th>
              <th scope="col">Your zone ({browserZone})</th>
            </tr>
          </thead>
          <tbody>
            {p.fires.map((fire) => (
              <tr>
                <td data-label="UTC">{timeIn(fire.time, "UTC")}</td>
                <td data-label="Task zone">{fire.localTime ? timeIn(fire.time, props.zone) : "-"}</td>
                <td data-label="Your zone">{timeIn(fire.time, browserZone)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
