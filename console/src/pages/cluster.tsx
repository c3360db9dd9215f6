// The cluster: the counts, the axd serving this console (its loops and its clock offset from the
// database), and every axd node with its heartbeat (a node is alive while its heartbeat loop makes
// rounds).
import { api } from "../api";
import { STATUSES, browserZone, durationMs, span, statusName, timeIn, toDate } from "../format";
import type { LoopHealth, SchedulerHealth, SchedulerNode } from "../gen/ax/v1/admin_pb";
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
      {s?.answeredBy && <Health h={s.answeredBy} />}
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

const loopColumns: Column<LoopHealth>[] = [
  { header: "Loop", cell: (l) => l.name },
  { header: "Last round", cell: (l) => `${span(durationMs(l.sinceLastRound) ?? 0)} ago` },
  { header: "State", cell: (l) => <span class={l.stalled ? "badge off" : "badge on"}>{l.stalled ? "stalled" : "ok"}</span> },
];

/** The axd serving this console, as it sees itself. */
function Health(props: { h: SchedulerHealth }) {
  const h = props.h;
  const offset = durationMs(h.clockOffset) ?? 0;
  return (
    <>
      <h2>This axd</h2>
      <p>
        {h.schedulerId}:{" "}
        <span class={h.serving ? "badge on" : "badge off"}>{h.serving ? "SERVING" : "NOT SERVING"}</span> · its clock is{" "}
        {Math.abs(offset) < 1 ? "in step with" : `${span(Math.abs(offset))} ${offset > 0 ? "ahead of" : "behind"}`} the
        database's · a loop is stalled after {span(durationMs(h.stallAfter) ?? 0)} without a round
      </p>
      <Table caption="Loops of this axd" columns={loopColumns} rows={h.loops} rowKey={(l) => l.name} empty="No loops." />
    </>
  );
}
