// Instances, newest first, filtered by task, status and trigger time (by axd: ListInstances).
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useState } from "preact/hooks";
import { api } from "../api";
import { STATUSES, browserZone, statusName, timeIn } from "../format";
import type { Instance } from "../gen/ax/v1/admin_pb";
import { InstanceStatus } from "../gen/ax/v1/types_pb";
import { instanceHref, navigate, taskHref, useLocation } from "../router";
import { type Column, Field, Link, PageTitle, StatusBadge, Table, useLoad } from "../ui";

const PAGE = 100;

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
  const [form, setForm] = useState({ task, status, from, to });
  const statusValue = status ? (InstanceStatus[status as keyof typeof InstanceStatus] ?? 0) : 0;

  const [pages, setPages] = useState<string[]>([]);
  const list = useLoad(
    async () => {
      const lo = local(from);
      const hi = local(to);
      return api.listInstances({
        taskName: task,
        status: statusValue,
        pageSize: PAGE,
        pageToken: pages.at(-1) ?? "",
        startTime: lo && timestampFromDate(lo),
        endTime: hi && timestampFromDate(hi),
      });
    },
    [task, status, from, to, pages.at(-1)],
    3000,
  );

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
        <div class="actions">
          <button type="submit" class="primary">
            Filter
          </button>
        </div>
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
