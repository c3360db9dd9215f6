// One task: what it is, its next fires in its zone and the browser's, enable/disable, trigger with
// params and an idempotency key, its recent instances, its events and ExplainTask's answer.
import { useState } from "preact/hooks";
import { api } from "../api";
import { browserZone, durationMs, fireSpan, span, timeIn } from "../format";
import { ExplainFindingKind, type ExplainFinding, type Instance, type TaskEvent } from "../gen/ax/v1/admin_pb";
import { instanceHref, taskHref } from "../router";
import { describeSchedule, taskZone } from "../schedule";
import {
  act,
  type Column,
  Field,
  Link,
  type Message,
  PageTitle,
  Status,
  StatusBadge,
  Table,
  takeFlash,
  useLoad,
} from "../ui";
import { PreviewTable } from "./taskform";
import { moreFacts } from "./taskmore";

export function TaskPage(props: { name: string }) {
  const name = props.name;
  const [msg, setMsg] = useState<Message>(takeFlash);
  const got = useLoad(() => api.getTask({ name }), [name], 5000);
  const task = got.data?.task;
  const spec = task?.spec;
  const zone = taskZone(task);
  const preview = useLoad(
    async () =>
      spec?.schedule ? (await api.previewSchedule({ schedule: spec.schedule, extraSchedules: spec.extraSchedules, count: 5 })).preview : undefined,
    [task?.version, String(task?.nextFireTime?.seconds)],
  );
  const instances = useLoad(async () => (await api.listInstances({ taskName: name, pageSize: 10 })).instances, [name], 3000);
  const explain = useLoad(() => api.explainTask({ name, limit: 10 }), [name], 10000);

  if (!task) {
    return (
      <section>
        <PageTitle title={name}>Task {name}</PageTitle>
        {got.error ? <p class="msg error" role="alert">{got.error}</p> : <p class="loading">Loading…</p>}
      </section>
    );
  }

  const toggle = () =>
    act(setMsg, async () => {
      if (spec?.enabled) {
        await api.disableTask({ name });
        return `Disabled ${name}.`;
      }
      await api.enableTask({ name });
      return `Enabled ${name}.`;
    }).then(got.reload);

  const instanceColumns: Column<Instance>[] = [
    { header: "Instance", cell: (i) => <Link href={instanceHref(i.id)}>{String(i.id)}</Link> },
    { header: "Status", cell: (i) => <StatusBadge status={i.status} /> },
    { header: "Trigger time", cell: (i) => timeIn(i.triggerTime, zone) },
    { header: "Attempts", cell: (i) => i.attempt, class: "num" },
    { header: "Worker", cell: (i) => i.workerId || "-" },
    { header: "Message", cell: (i) => i.message || "-" },
  ];
  const eventColumns: Column<TaskEvent>[] = [
    { header: "Time", cell: (e) => timeIn(e.time, browserZone) },
    { header: "Kind", cell: (e) => e.kind },
    { header: "Actor", cell: (e) => e.actor },
    { header: "Fires", cell: (e) => fireSpan(e.fires, browserZone) },
    { header: "Message", cell: (e) => e.message },
  ];

  return (
    <section>
      <PageTitle title={name}>Task {name}</PageTitle>
      <div class="toolbar">
        <span class={spec?.enabled ? "badge on" : "badge off"}>{spec?.enabled ? "enabled" : "disabled"}</span>
        <button type="button" onClick={toggle}>
          {spec?.enabled ? "Disable" : "Enable"}
        </button>
        <Link href={`${taskHref(name)}/edit`} class="button">
          Edit
        </Link>
        <Link href={`/instances?task=${encodeURIComponent(name)}`} class="button">
          All instances
        </Link>
      </div>
      <Status msg={msg} />
      <dl class="facts">
        <dt>App</dt>
        <dd>{spec?.app}</dd>
        <dt>Handler</dt>
        <dd>{spec?.handler}</dd>
        {spec?.description && (
          <>
            <dt>Description</dt>
            <dd>{spec.description}</dd>
          </>
        )}
        <dt>Schedule</dt>
        <dd>{describeSchedule(spec?.schedule)}</dd>
        <dt>Next fire</dt>
        <dd>
          {timeIn(task.nextFireTime, zone)}
          {task.nextFireTime && zone !== browserZone && <> · {timeIn(task.nextFireTime, browserZone)}</>}
        </dd>
        <dt>Params</dt>
        <dd>
          <code>{spec?.params}</code>
        </dd>
        <dt>Timeout</dt>
        <dd>{spec?.timeout ? span(durationMs(spec.timeout) ?? 0) : "none"}</dd>
        <dt>Retries</dt>
        <dd>{spec?.retryPolicy?.maxRetries ?? 0}</dd>
        {spec &&
          moreFacts(spec).map(([name, value]) => (
            <>
              <dt>{name}</dt>
              <dd>{value}</dd>
            </>
          ))}
        <dt>Version</dt>
        <dd>
          {String(task.version)} · changed {timeIn(task.updateTime, browserZone)}
        </dd>
      </dl>

      <TriggerForm name={name} onDone={instances.reload} />

      <h2>Next fires</h2>
      {preview.data ? (
        preview.data.fires.length ? (
          <PreviewTable preview={preview.data} zone={zone} />
        ) : (
          <p>{preview.data.warnings.join(" ") || "No fires: it runs only when triggered."}</p>
        )
      ) : (
        <p class="loading">{preview.error ?? "Loading…"}</p>
      )}

      <h2>Recent instances</h2>
      <Table
        caption={`Recent instances of ${name}`}
        columns={instanceColumns}
        rows={instances.data}
        rowKey={(i) => String(i.id)}
        empty="No instances yet."
        error={instances.error}
      />

      <h2>Explain</h2>
      {explain.error && <p class="msg error">{explain.error}</p>}
      {explain.data && (
        <>
          <ul class="findings">
            {explain.data.findings.map((f) => (
              <Finding f={f} zone={zone} />
            ))}
          </ul>
          {explain.data.workers && (
            <p>
              Workers now: {explain.data.workers.sessions} session(s) of app {spec?.app}, {explain.data.workers.serving}{" "}
              serving {spec?.handler}, capacity {explain.data.workers.capacity}, {explain.data.workers.freeCredits} free
              credit(s).
            </p>
          )}
        </>
      )}

      <h2>Events</h2>
      <Table
        caption={`Events of ${name}`}
        columns={eventColumns}
        rows={got.data?.events}
        rowKey={(e) => `${e.time?.seconds}-${e.time?.nanos}-${e.kind}`}
        empty="No events."
      />
    </section>
  );
}

function Finding(props: { f: ExplainFinding; zone: string }) {
  const f = props.f;
  const kind = ExplainFindingKind[f.kind] ?? String(f.kind);
  return (
    <li class={`finding k-${kind.toLowerCase()}`}>
      <strong>{kind}</strong>
      {f.time && <> [{timeIn(f.time, props.zone)}]</>}: {f.message}
      {f.fires && <> ({fireSpan(f.fires, props.zone)})</>}
      {f.instanceId > 0n && (
        <>
          {" "}
          (<Link href={instanceHref(f.instanceId)}>instance {String(f.instanceId)}</Link>)
        </>
      )}
    </li>
  );
}

function TriggerForm(props: { name: string; onDone: () => void }) {
  const [params, setParams] = useState("");
  const [key, setKey] = useState("");
  const [msg, setMsg] = useState<Message>(null);
  const [created, setCreated] = useState<bigint | undefined>();
  const submit = (e: Event) => {
    e.preventDefault();
    setCreated(undefined);
    act(setMsg, async () => {
      const r = await api.triggerTask({
        name: props.name,
        params: params.trim() ? params : undefined,
        idempotencyKey: key.trim(),
      });
      const id = r.instance?.id ?? 0n;
      setCreated(id);
      return r.created ? `Triggered: instance ${id} created.` : `Instance ${id} exists for that idempotency key; nothing created.`;
    }).then(props.onDone);
  };
  return (
    <form class="trigger" onSubmit={submit} aria-labelledby="trigger-title">
      <h2 id="trigger-title">Trigger now</h2>
      <div class="row">
        <Field label="Params for this run (JSON)" hint="Empty: the task's params">
          {(id, d) => <textarea id={id} aria-describedby={d} rows={2} value={params} onInput={(e) => setParams(e.currentTarget.value)} />}
        </Field>
        <Field label="Idempotency key" hint="The same key twice creates one instance; empty: a new one">
          {(id, d) => <input id={id} aria-describedby={d} value={key} onInput={(e) => setKey(e.currentTarget.value)} />}
        </Field>
      </div>
      <div class="actions">
        <button type="submit" class="primary">
          Trigger
        </button>
        {created !== undefined && created > 0n && <Link href={instanceHref(created)}>Open instance {String(created)}</Link>}
      </div>
      <Status msg={msg} />
    </form>
  );
}
