// Tasks as code, as `axctl export`, `plan` and `apply` do it: the stored tasks as a task set in the
// proto's canonical JSON (to download or edit here), a plan of what a set changes (ApplyTasks as a
// dry run), and the change in one all-or-nothing call with a note for the audit.
import { create, fromJson, type JsonValue, toJsonString } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { useState } from "preact/hooks";
import { api, errorText } from "../api";
import { timeIn } from "../format";
import {
  type ApplyTasksResponse,
  type TaskChange,
  TaskChangeKind,
  type TaskSpec,
  TaskSetSchema,
  TaskSpecSchema,
} from "../gen/ax/v1/admin_pb";
import { Field, type Message, PageTitle, Status, Table } from "../ui";

/** Every task the caller may read, as a task set in the proto's canonical JSON (axctl's export). */
export async function exportJson(): Promise<string> {
  const tasks: TaskSpec[] = [];
  let pageToken = "";
  do {
    const page = await api.listTasks({ pageSize: 1000, pageToken });
    for (const t of page.tasks) if (t.spec) tasks.push(t.spec);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return `${toJsonString(TaskSetSchema, create(TaskSetSchema, { tasks }), { useProtoFieldName: true, prettySpaces: 2 })}\n`;
}

/** The tasks of a task file's JSON: a task set, a list of tasks or one task; errors name the task. */
export function parseSet(text: string): TaskSpec[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  let items: unknown[];
  let at: (i: number) => string;
  if (isObject(doc) && "tasks" in doc) {
    const extra = Object.keys(doc).find((k) => k !== "tasks");
    if (extra) throw new Error(`unknown field "${extra}"; a task set holds only "tasks"`);
    if (!Array.isArray(doc.tasks)) throw new Error('"tasks" must be a list of tasks');
    items = doc.tasks;
    at = (i) => `tasks[${i}]`;
  } else if (Array.isArray(doc)) {
    items = doc;
    at = (i) => `[${i}]`;
  } else if (isObject(doc)) {
    items = [doc];
    at = () => "the task";
  } else {
    throw new Error('expected a task set ({"tasks": [...]}), a task or a list of tasks');
  }
  return items.map((item, i) => {
    const name = isObject(item) && typeof item.name === "string" ? `task "${item.name}"` : at(i);
    let spec: TaskSpec;
    try {
      spec = fromJson(TaskSpecSchema, item as JsonValue);
    } catch (e) {
      throw new Error(`${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!spec.name) throw new Error(`${name}: field name: is required`);
    return spec;
  });
}

/** axd's message about `tasks[i]` with the task's name in place of the index. */
function located(e: unknown, tasks: TaskSpec[]): string {
  const text = errorText(e);
  if (!(e instanceof ConnectError)) return text;
  return text.replace(/tasks\[(\d+)\](\.)?/, (whole, i: string, dot: string | undefined) => {
    const t = tasks[Number(i)];
    return t ? `task "${t.name}"${dot ? ": field " : ""}` : whole;
  });
}

const KIND: Record<number, [string, string]> = {
  [TaskChangeKind.CREATE]: ["+", "create"],
  [TaskChangeKind.UPDATE]: ["~", "update"],
  [TaskChangeKind.DELETE]: ["-", "delete"],
  [TaskChangeKind.UNCHANGED]: ["=", "unchanged"],
};

function counts(r: ApplyTasksResponse): string {
  const n = (k: TaskChangeKind) => r.changes.filter((c) => c.kind === k).length;
  const [c, u, d, s] = [n(TaskChangeKind.CREATE), n(TaskChangeKind.UPDATE), n(TaskChangeKind.DELETE), n(TaskChangeKind.UNCHANGED)];
  return r.applied
    ? `Applied: ${c} created, ${u} updated, ${d} deleted, ${s} unchanged.`
    : c + u + d === 0
      ? `No changes: ${s} task(s) as the set says.`
      : `Plan: ${c} to create, ${u} to update, ${d} to delete, ${s} unchanged.`;
}

function impact(c: TaskChange): string {
  const out: string[] = [];
  const before = c.nextFireBefore ? timeIn(c.nextFireBefore, "UTC") : "none";
  const after = c.nextFireAfter ? timeIn(c.nextFireAfter, "UTC") : "none";
  if (c.kind === TaskChangeKind.CREATE) out.push(`next fire ${after}`);
  else if (c.kind === TaskChangeKind.DELETE) out.push(`next fire ${before} → none`);
  else if (before !== after) out.push(`next fire moves ${before} → ${after}`);
  for (const e of c.edgesRemoved) out.push(`edge removed ${e}`);
  for (const e of c.edgesAdded) out.push(`edge added ${e}`);
  if (c.calendars.length) out.push(`calendars ${c.calendars.join(", ")}`);
  return out.join("; ") || "-";
}

export function ApplyPage() {
  const [text, setText] = useState("");
  const [prune, setPrune] = useState(false);
  const [apps, setApps] = useState("");
  const [note, setNote] = useState("");
  const [msg, setMsg] = useState<Message>(null);
  const [plan, setPlan] = useState<ApplyTasksResponse | undefined>();
  const [busy, setBusy] = useState(false);

  const call = async (dryRun: boolean) => {
    setBusy(true);
    let tasks: TaskSpec[] = [];
    try {
      tasks = parseSet(text);
      const r = await api.applyTasks({
        tasks,
        prune,
        apps: apps.split(",").map((a) => a.trim()).filter((a) => a),
        dryRun,
        changeNote: note.trim(),
      });
      setPlan(r);
      setMsg({ kind: "ok", text: counts(r) });
    } catch (e) {
      setPlan(undefined);
      setMsg({ kind: "error", text: located(e, tasks) });
    } finally {
      setBusy(false);
    }
  };
  const load = async () => {
    try {
      setText(await exportJson());
      setPlan(undefined);
      setMsg({ kind: "ok", text: "Loaded the stored tasks." });
    } catch (e) {
      setMsg({ kind: "error", text: errorText(e) });
    }
  };
  const download = async () => {
    try {
      const url = URL.createObjectURL(new Blob([await exportJson()], { type: "application/json" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = "tasks.json";
      a.click();
      URL.revokeObjectURL(url);
    } catch (e) {
      setMsg({ kind: "error", text: errorText(e) });
    }
  };
  const changes = plan?.changes.filter((c) => c.kind !== TaskChangeKind.UNCHANGED) ?? [];
  const pending = plan && !plan.applied && changes.length > 0;
  return (
    <section>
      <PageTitle title="Tasks as code">Tasks as code</PageTitle>
      <p>
        A task set in the proto's canonical JSON, as <code>axctl export</code> writes it and <code>axctl apply</code> reads
        it. Plan shows what applying it would change; Apply makes the change in one call, all or nothing.
      </p>
      <div class="toolbar">
        <button type="button" onClick={load}>
          Load the stored tasks
        </button>
        <button type="button" onClick={download}>
          Export as JSON
        </button>
        <Field label="Open a task file">
          {(id) => (
            <input
              id={id}
              type="file"
              accept=".json,application/json"
              onChange={async (e) => {
                const f = e.currentTarget.files?.[0];
                if (f) {
                  setText(await f.text());
                  setPlan(undefined);
                }
              }}
            />
          )}
        </Field>
      </div>
      <form
        class="task-form"
        aria-label="Task set"
        onSubmit={(e) => {
          e.preventDefault();
          call(true);
        }}
      >
        <Field label="Task set (JSON)" hint='{"tasks": [{"name": ..., "app": ..., "handler": ..., "schedule": {...}}]}'>
          {(id, d) => (
            <textarea
              id={id}
              aria-describedby={d}
              rows={16}
              spellcheck={false}
              value={text}
              onInput={(e) => {
                setText(e.currentTarget.value);
                setPlan(undefined);
              }}
            />
          )}
        </Field>
        <div class="row">
          <Field label="Apps" hint="The apps the set describes, A,B [default: its tasks' apps]">
            {(id, d) => <input id={id} aria-describedby={d} value={apps} onInput={(e) => setApps(e.currentTarget.value)} />}
          </Field>
          <Field label="Change note" hint="Kept in the audit entry, e.g. a commit id">
            {(id, d) => <input id={id} aria-describedby={d} value={note} onInput={(e) => setNote(e.currentTarget.value)} />}
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" checked={prune} onChange={(e) => setPrune(e.currentTarget.checked)} /> Prune: delete the
          apps' tasks the set does not name
        </label>
        <div class="toolbar">
          <button type="submit" disabled={busy}>
            Plan
          </button>
          <button type="button" class="primary" disabled={busy || !pending} onClick={() => call(false)}>
            Apply
          </button>
        </div>
      </form>
      <Status msg={msg} />
      {plan && (
        <Table
          caption="Changes"
          columns={[
            { header: "Change", cell: (c: TaskChange) => (KIND[c.kind] ?? ["?", "?"]).join(" ") },
            { header: "Task", cell: (c: TaskChange) => c.name },
            { header: "App", cell: (c: TaskChange) => c.app },
            { header: "Fields", cell: (c: TaskChange) => c.changedFields.join(", ") || "-" },
            { header: "Schedule impact", cell: impact },
          ]}
          rows={changes}
          rowKey={(c) => `${c.kind}:${c.name}`}
          empty="Nothing to change."
        />
      )}
    </section>
  );
}
