// Tasks: search, state, next fire in the task's zone and the browser's, enable and disable, pause
// with a note (and an optional end) and resume.
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
  // The task whose pause form is open, its note and its optional end (datetime-local, local time).
  const [pausing, setPausing] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const [until, setUntil] = useState("");
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
  const pause = (name: string) =>
    act(setMsg, async () => {
      const end = until ? new Date(until) : undefined;
      if (end && Number.isNaN(end.getTime())) throw new Error("Pause until: not a date and time");
      await api.pauseTask({
        name,
        note,
        until: end ? { seconds: BigInt(Math.floor(end.getTime() / 1000)), nanos: 0 } : undefined,
      });
      setPausing(null);
      setNote("");
      setUntil("");
      return `Paused ${name}.`;
    }).then(tasks.reload);
  const resume = (name: string) =>
    act(setMsg, async () => {
      await api.resumeTask({ name });
      return `Resumed ${name}.`;
    }).then(tasks.reload);
  const state = (t: Task) => {
    if (t.pause) {
      const end = t.pause.until ? ` until ${timeIn(t.pause.until, browserZone)}` : "";
      return (
        <span class="badge off" title={`paused by ${t.pause.actor}${end}: ${t.pause.note}`}>
          paused{end}: {t.pause.note}
        </span>
      );
    }
    return <span class={t.spec?.enabled ? "badge on" : "badge off"}>{t.spec?.enabled ? "enabled" : "disabled"}</span>;
  };
  const columns: Column<Task>[] = [
    { header: "Name", cell: (t) => <Link href={taskHref(t.spec?.name ?? "")}>{t.spec?.name}</Link> },
    { header: "App", cell: (t) => t.spec?.app },
    { header: "Handler", cell: (t) => t.spec?.handler },
    { header: "Schedule", cell: (t) => describeSchedule(t.spec?.schedule) },
    { header: "State", cell: state },
    { header: "Next fire (task zone)", cell: (t) => timeIn(t.nextFireTime, taskZone(t)) },
    { header: `Next fire (${browserZone})`, cell: (t) => timeIn(t.nextFireTime, browserZone) },
    {
      header: "Actions",
      cell: (t) => {
        const name = t.spec?.name ?? "";
        return (
          <span class="actions">
            <button type="button" class="small" onClick={() => toggle(t)}>
              {t.spec?.enabled ? "Disable" : "Enable"}
              <span class="visually-hidden"> {name}</span>
            </button>{" "}
            {t.pause ? (
              <button type="button" class="small" onClick={() => resume(name)}>
                Resume<span class="visually-hidden"> {name}</span>
              </button>
            ) : (
              <button type="button" class="small" aria-expanded={pausing === name} onClick={() => setPausing(name)}>
                Pause<span class="visually-hidden"> {name}</span>
              </button>
            )}
          </span>
        );
      },
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
        <Link href="/code" class="button">
          Tasks as code
        </Link>
        <Link href="/tasks/new" class="button primary">
          New task
        </Link>
      </div>
      {pausing && (
        <form
          class="pause toolbar"
          aria-label={`Pause ${pausing}`}
          onSubmit={(e) => {
            e.preventDefault();
            pause(pausing);
          }}
        >
          <div class="field inline">
            <label for="pause-note">Why pause {pausing}</label>
            <input id="pause-note" value={note} required maxLength={1024} onInput={(e) => setNote(e.currentTarget.value)} />
          </div>
          <div class="field inline">
            <label for="pause-until">Until ({browserZone}, optional)</label>
            <input id="pause-until" type="datetime-local" value={until} onInput={(e) => setUntil(e.currentTarget.value)} />
          </div>
          <button type="submit" class="primary">
            Pause
          </button>
          <button type="button" onClick={() => setPausing(null)}>
            Cancel
          </button>
        </form>
      )}
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
