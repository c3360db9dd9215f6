// The cluster: the axd nodes and their heartbeats (a node is alive while its heartbeat loop, which
// also re-reads the database clock, makes rounds), and the counts of GetClusterStats.
import { api } from "../api";
import { STATUSES, browserZone, span, statusName, timeIn, toDate } from "../format";
import type { SchedulerNode } from "../gen/ax/v1/admin_pb";
import { type Column, PageTitle, Table, useLoad } from "../ui";

export function ClusterPage() {
  const nodes = useLoad(async () => (await api.listSchedulers({})).schedulers, [], 2000);
  const stats = useLoad(() => api.getClusterStats({}), [], 2000);
  // Heartbeats are database-clock times: the newest is the best reading of the database's "now".
  const newest = Math.max(0, ...(nodes.data ?? []).map((n) => toDate(n.heartbeatTime)?.getTime() ?? 0));
  const columns: Column<SchedulerNode>[] = [
    { header: "axd", cell: (n) => n.schedulerId },
    { header: "Host", cell: (n) => n.host },
    { header: "gRPC address", cell: (n) => n.address },
    { header: "Version", cell: (n) => n.version },
    { header: "Health", cell: (n) => <span class={n.alive ? "badge on" : "badge off"}>{n.alive ? "alive" : "stale"}</span> },
    {
      header: "Last heartbeat",
      cell: (n) => {
        const t = toDate(n.heartbeatTime)?.getTime();
        return t === undefined ? "-" : `${timeIn(n.heartbeatTime)} (${span(newest - t)} before the newest)`;
      },
    },
    { header: `Started (${browserZone})`, cell: (n) => timeIn(n.startTime) },
    { header: "Workers", cell: (n) => n.workers, class: "num" },
  ];
  const s = stats.data;
  const byStatus = new Map((s?.instances ?? []).map((c) => [c.status, c.count]));
  return (
    <section>
      <PageTitle title="Cluster">Cluster</PageTitle>
      <h2>Counts</h2>
      {stats.error && <p class="msg error">{stats.error}</p>}
      {s && (
        <dl class="counts">
          <div>
            <dt>Tasks</dt>
            <dd>{String(s.tasks)}</dd>
          </div>
          <div>
            <dt>Enabled tasks</dt>
            <dd>{String(s.enabledTasks)}</dd>
          </div>
          <div>
            <dt>Workers</dt>
            <dd>{String(s.workers)}</dd>
          </div>
          <div>
            <dt>axd nodes</dt>
            <dd>{String(s.schedulers)}</dd>
          </div>
          {STATUSES.map((st) => (
            <div>
              <dt>{statusName(st)}</dt>
              <dd>{String(byStatus.get(st) ?? 0n)}</dd>
            </div>
          ))}
        </dl>
      )}
      <h2>axd nodes</h2>
      <Table
        caption="axd nodes"
        columns={columns}
        rows={nodes.data}
        rowKey={(n) => n.schedulerId}
        empty="No axd has registered."
        error={nodes.error}
      />
    </section>
  );
}
