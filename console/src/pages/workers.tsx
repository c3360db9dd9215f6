// Connected worker sessions. The columns are one list (`workerColumns`): a new column of
// ListWorkers is one more entry.
import { api } from "../api";
import { browserZone, timeIn } from "../format";
import type { WorkerSession } from "../gen/ax/v1/admin_pb";
import { type Column, PageTitle, Table, useLoad } from "../ui";

export const workerColumns: Column<WorkerSession>[] = [
  { header: "Worker", cell: (w) => w.workerId },
  { header: "App", cell: (w) => w.app },
  { header: "Handlers", cell: (w) => w.handlers.join(", ") },
  { header: "Capacity", cell: (w) => w.capacity, class: "num" },
  { header: "Free credits", cell: (w) => w.credits, class: "num" },
  { header: "In flight", cell: (w) => w.inFlight, class: "num" },
  {
    header: "Labels",
    cell: (w) =>
      Object.entries(w.labels)
        .sort()
        .map(([k, v]) => `${k}=${v}`)
        .join(", ") || "-",
  },
  { header: "axd", cell: (w) => w.schedulerId },
  { header: `Connected (${browserZone})`, cell: (w) => timeIn(w.connectTime) },
  { header: "Last seen", cell: (w) => timeIn(w.lastSeenTime) },
  {
    header: "Cooling",
    cell: (w) =>
      w.cooldowns
        .map((c) => {
          const failures = `${c.consecutiveFailures} failure${c.consecutiveFailures === 1 ? "" : "s"}`;
          const active = c.until && Number(c.until.seconds) * 1000 > Date.now();
          return active ? `${c.handler} until ${timeIn(c.until)} (${failures})` : `${c.handler}: ${failures}`;
        })
        .join("; ") || "-",
  },
];

export function WorkersPage() {
  const workers = useLoad(async () => (await api.listWorkers({})).workers, [], 2000);
  return (
    <section>
      <PageTitle title="Workers">Workers</PageTitle>
      <p class="hint">
        Credits and in-flight counts are as of the holding axd's latest lease round (one heartbeat interval behind at most).
      </p>
      <Table
        caption="Connected worker sessions"
        columns={workerColumns}
        rows={workers.data}
        rowKey={(w) => w.sessionId}
        empty="No worker is connected."
        error={workers.error}
      />
    </section>
  );
}
