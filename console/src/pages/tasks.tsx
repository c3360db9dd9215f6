// Tasks: search, state, next fire in the task's zone and the browser's, enable and disable.
import { useState } from "preact/hooks";
import { api } from "../api";
import { browserZone, timeIn } from "../format";
import type { Task } from "../gen/ax/v1/admin_pb";
import { taskHref } from "../router";
import { describeSchedule, taskZone } from "../schedule";
import { act, type Column, Link, type Message, PageTitle, Status, Table, useLoad } from "../ui";

export function TasksPage() {
  const [search, setSearch] = useState("");
  const [msg, setMsg] = useState<Message>(null);
  const tasks = useLoad(async () => (await api.listTasks({ pageSize: 1000 })).tasks, [], 5000);
  const needle = search.trim().toLowerCase();
  const rows = tasks.data?.filter(
    (t) =>
      !needle ||
      [t.spec?.name, t.spec?.app, t.spec?.handler, t.spec?.description].some((v) => v?.toLowerCase().includes(needle)),
  );
  const toggle = (t: Task) =>
    act(setMsg, async () => {
      const name = t.spec?.name ?? "";
      if (t.spec?.enabled) {
        await api.disableTask({ name });
        return `Disabled ${name}.`;
      }
      await api.enableTask({ name });
      return `Enabled ${name}.`;
    }).then(tasks.reload);
  const columns: Column<Task>[] = [
    { header: "Name", cell: (t) => <Link href={taskHref(t.spec?.name ?? "")}>{t.spec?.name}</Link> },
    { header: "App", cell: (t) => t.spec?.app },
    { header: "Handler", cell: (t) => t.spec?.handler },
    { header: "Schedule", cell: (t) => describeSchedule(t.spec?.schedule) },
    {
      header: "State",
      cell: (t) => <span class={t.spec?.enabled ? "badge on" : "badge off"}>{t.spec?.enabled ? "enabled" : "disabled"}</span>,
    },
    { header: "Next fire (task zone)", cell: (t) => timeIn(t.nextFireTime, taskZone(t)) },
    { header: `Next fire (${browserZone})`, cell: (t) => timeIn(t.nextFireTime, browserZone) },
    {
      header: "Actions",
      cell: (t) => (
        <button type="button" class="small" onClick={() => toggle(t)}>
          {t.spec?.enabled ? "Disable" : "Enable"}
          <span class="visually-hidden"> {t.spec?.name}</span>
        </button>
      ),
    },
  ];
  return (
    <section>
      <PageTitle title="Tasks">Tasks</PageTitle>
      <div class="toolbar">
        <div class="field inline">
          <label for="task-search">Search tasks</label>
          <input
            id="task-search"
            type="search"
            value={search}
            placeholder="name, app, handler"
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
        </div>
        <Link href="/tasks/new" class="button primary">
          New task
        </Link>
      </div>
      <Status msg={msg} />
      <Table
        caption="Tasks"
        columns={columns}
        rows={rows}
        rowKey={(t) => t.spec?.name ?? ""}
        empty={needle ? "No task matches." : "No tasks yet."}
        error={tasks.error}
      />
    </section>
  );
}
