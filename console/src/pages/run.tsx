// One workflow run (GetRun): the instances of a DAG run or a chain, and the edges between them.
import { api } from "../api";
import { browserZone, timeIn } from "../format";
import { type Instance, LinkKind, type RunEdge } from "../gen/ax/v1/admin_pb";
import { instanceHref, taskHref } from "../router";
import { type Column, Link, PageTitle, StatusBadge, Table, useLoad } from "../ui";

const kindName = (k: LinkKind) => (LinkKind[k] ?? String(k)).replace(/_/g, " ").toLowerCase();

export function RunPage(props: { id: string }) {
  const run = useLoad(async () => api.getRun({ runId: BigInt(props.id) }), [props.id], 3000);
  const instances: Column<Instance>[] = [
    { header: "Instance", cell: (i) => <Link href={instanceHref(i.id)}>{String(i.id)}</Link> },
    { header: "Task", cell: (i) => <Link href={taskHref(i.taskName)}>{i.taskName}</Link> },
    { header: "Status", cell: (i) => <StatusBadge status={i.status} /> },
    { header: `Trigger time (${browserZone})`, cell: (i) => timeIn(i.triggerTime) },
    { header: "Attempts", cell: (i) => i.attempt, class: "num" },
  ];
  const edges: Column<RunEdge>[] = [
    { header: "From", cell: (e) => <Link href={instanceHref(e.fromInstanceId)}>{String(e.fromInstanceId)}</Link> },
    { header: "To", cell: (e) => <Link href={instanceHref(e.toInstanceId)}>{String(e.toInstanceId)}</Link> },
    { header: "Why", cell: (e) => kindName(e.kind) },
  ];
  return (
    <section>
      <PageTitle title={`Run ${props.id}`}>Run {props.id}</PageTitle>
      <h2>Instances</h2>
      <Table
        caption="Instances of the run"
        columns={instances}
        rows={run.data?.instances}
        rowKey={(i) => String(i.id)}
        empty="No instance."
        error={run.error}
      />
      <h2>Edges</h2>
      <Table
        caption="Edges"
        columns={edges}
        rows={run.data?.edges}
        rowKey={(e) => `${e.fromInstanceId}-${e.toInstanceId}`}
        empty="No edge yet."
        error={run.error}
      />
    </section>
  );
}
