// Instances, newest first, filtered by task, status and trigger time (by axd: ListInstances).
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useState } from "preact/hooks";
import { api } from "../api";
import { STATUSES, browserZone, statusName, timeIn } from "../format";
import { InputError } from "../parse";
import { BulkAction, type BulkInstancesResponse, type Instance } from "../gen/ax/v1/admin_pb";
import { InstanceStatus } from "../gen/ax/v1/types_pb";
import { instanceHref, navigate, taskHref, useLocation } from "../router";
import { type Column, Field, Link, type Message, PageTitle, Status, StatusBadge, Table, act, useLoad } from "../ui";

const PAGE = 100;
/** The most instances one bulk action from the console may match (BulkInstances' cap). */
const BULK_MAX = 10_000;
const VERBS: Record<number, [string, string]> = {
  [BulkAction.CANCEL]: ["Cancel", "canceled"],
  [BulkAction.RETRY]: ["Retry", "retried"],
  [BulkAction.DELETE]: ["Delete", "deleted"],
};

/** `K=V,K2=V2` as a map (a key without `prefix` gets it). */
function pairs(text: string, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of text.split(",").map((i) => i.trim()).filter((i) => i)) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new InputError(`${prefix ? "Params" : "Tags"}: \`${item}\`: expected KEY=VALUE`);
    const key = item.slice(0, eq).trim();
    out[key.startsWith(prefix) ? key : prefix + key] = item.slice(eq + 1).trim();
  }
  return out;
}

/** `datetime-local` text (the browser's zone) as a Date, or undefined when empty or invalid. */
function local(text: string): Date | undefined {
  if (!text) return undefined;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export function InstancesPage() {
  const { query } = useLocation();
  const task = query.get("task") ?? "";
  const status = query.get("status") ?? "";
  const from = query.get("from") ?? "";
  const to = query.get("to") ?? "";
  // `KEY=VALUE` filters, several separated by commas: tags (or the task's labels), params fields.
  const tag = query.get("tag") ?? "";
  const param = query.get("param") ?? "";
  const [form, setForm] = useState({ task, status, from, to, tag, param });
  const statusValue = status ? (InstanceStatus[status as keyof typeof InstanceStatus] ?? 0) : 0;

  const [pages, setPages] = useState<string[]>([]);
  const list = useLoad(
    async () => {
      const lo = local(from);
      const hi = local(to);
      return api.listInstances({
        taskName: task,
        status: statusValue,
        tags: pairs(tag),
        params: pairs(param, "params."),
        pageSize: PAGE,
        pageToken: pages.at(-1) ?? "",
        startTime: lo && timestampFromDate(lo),
        endTime: hi && timestampFromDate(hi),
      });
    },
    [task, status, from, to, tag, param, pages.at(-1)],
    3000,
  );

  // A bulk action: counted first (a dry run), then confirmed, then pinned to what was counted.
  const [bulkMsg, setBulkMsg] = useState<Message>(null);
  const [counted, setCounted] = useState<{ action: BulkAction; r: BulkInstancesResponse } | null>(null);
  const selector = (maxId = 0n) => {
    const lo = local(from);
    const hi = local(to);
    return {
      taskName: task,
      status: statusValue,
      startTime: lo && timestampFromDate(lo),
      endTime: hi && timestampFromDate(hi),
      tags: pairs(tag),
      params: pairs(param, "params."),
      maxId,
    };
  };
  const count = (action: BulkAction) =>
    act(setBulkMsg, async () => {
      setCounted(null);
      const r = await api.bulkInstances({ action, selector: selector(), dryRun: true, maxInstances: BULK_MAX });
      const [, done] = VERBS[action];
      if (r.changed > 0n) setCounted({ action, r });
      return `${r.matched} instance(s) match; ${r.changed} would be ${done}, ${r.skipped} skipped`;
    });
  const confirm = () =>
    act(setBulkMsg, async () => {
      if (!counted) return "";
      const { action, r } = counted;
      setCounted(null);
      const max = Number(r.matched) || 1;
      const done = await api.bulkInstances({ action, selector: selector(r.maxId), maxInstances: max });
      list.reload();
      return `${VERBS[action][1]} ${done.changed} instance(s); ${done.matched} matched, ${done.skipped} skipped`;
    });

  const apply = (e: Event) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) if (v) q.set(k, v);
    setPages([]);
    navigate(`/instances${q.size ? `?${q}` : ""}`);
  };

  const columns: Column<Instance>[] = [
    { header: "Instance", cell: (i) => <Link href={instanceHref(i.id)}>{String(i.id)}</Link> },
    { header: "Task", cell: (i) => <Link href={taskHref(i.taskName)}>{i.taskName}</Link> },
    { header: "App", cell: (i) => i.app },
    { header: "Status", cell: (i) => <StatusBadge status={i.status} /> },
    { header: `Trigger time (${browserZone})`, cell: (i) => timeIn(i.triggerTime) },
    { header: "Attempts", cell: (i) => i.attempt, class: "num" },
    { header: "Worker", cell: (i) => i.workerId || "-" },
    { header: "Message", cell: (i) => i.message || "-" },
  ];

  return (
    <section>
      <PageTitle title="Instances">Instances</PageTitle>
      <form class="filters" onSubmit={apply} aria-label="Filter instances">
        <Field label="Task">
          {(id) => <input id={id} value={form.task} onInput={(e) => setForm({ ...form, task: e.currentTarget.value })} />}
        </Field>
        <Field label="Status">
          {(id) => (
            <select id={id} value={form.status} onChange={(e) => setForm({ ...form, status: e.currentTarget.value })}>
              <option value="">any</option>
              {STATUSES.map((s) => (
                <option value={statusName(s)}>{statusName(s)}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label={`Triggered from (${browserZone})`}>
          {(id) => (
            <input id={id} type="datetime-local" step={1} value={form.from} onInput={(e) => setForm({ ...form, from: e.currentTarget.value })} />
          )}
        </Field>
        <Field label={`Triggered before (${browserZone})`}>
          {(id) => (
            <input id={id} type="datetime-local" step={1} value={form.to} onInput={(e) => setForm({ ...form, to: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Tags" hint="KEY=VALUE,... (an instance's tag or its task's label)">
          {(id, d) => <input id={id} aria-describedby={d} value={form.tag} onInput={(e) => setForm({ ...form, tag: e.currentTarget.value })} />}
        </Field>
        <Field label="Params" hint="FIELD=VALUE,... (the task's search params)">
          {(id, d) => (
            <input id={id} aria-describedby={d} value={form.param} onInput={(e) => setForm({ ...form, param: e.currentTarget.value })} />
          )}
        </Field>
        <div class="actions">
          <button type="submit" class="primary">
            Filter
          </button>
        </div>
      </form>
      <form class="bulk" aria-label="Bulk actions" onSubmit={(e) => e.preventDefault()}>
        <span class="hint">Every instance the filter matches ({BULK_MAX.toLocaleString("en")} at most):</span>
        {[BulkAction.CANCEL, BulkAction.RETRY, BulkAction.DELETE].map((a) => (
          <button type="button" onClick={() => count(a)}>
            {VERBS[a][0]} matching...
          </button>
        ))}
        {counted && (
          <button type="button" class="primary" onClick={confirm}>
            {`Confirm: ${VERBS[counted.action][0].toLowerCase()} ${counted.r.changed} instance(s)`}
          </button>
        )}
        <Status msg={bulkMsg} />
      </form>
      <Table
        caption="Instances"
        columns={columns}
        rows={list.data?.instances}
        rowKey={(i) => String(i.id)}
        empty="No instance matches."
        error={list.error}
      />
      <div class="actions">
        {pages.length > 0 && (
          <button type="button" onClick={() => setPages([])}>
            Newest
          </button>
        )}
        {list.data?.nextPageToken && (
          <button type="button" onClick={() => setPages([...pages, list.data?.nextPageToken ?? ""])}>
            Older
          </button>
        )}
      </div>
    </section>
  );
}
