// The console: a skip link, the navigation, and the page the path names.
import { render } from "preact";
import { AlertsPage, AuditPage, CalendarsPage, LimitsPage } from "./pages/admin";
import { ApplyPage } from "./pages/apply";
import { ClusterPage } from "./pages/cluster";
import { InstancePage } from "./pages/instance";
import { InstancesPage } from "./pages/instances";
import { RunPage } from "./pages/run";
import { TaskPage } from "./pages/task";
import { TaskFormPage } from "./pages/taskform";
import { TasksPage } from "./pages/tasks";
import { WorkersPage } from "./pages/workers";
import { useLocation } from "./router";
import { Link, PageTitle } from "./ui";

const NAV: [string, string][] = [
  ["/tasks", "Tasks"],
  ["/instances", "Instances"],
  ["/workers", "Workers"],
  ["/alerts", "Alerts"],
  ["/calendars", "Calendars"],
  ["/limits", "Rate limits"],
  ["/audit", "Audit"],
  ["/cluster", "Cluster"],
];

function Page(props: { path: string }) {
  const parts = props.path.split("/").filter((p) => p).map(decodeURIComponent);
  switch (parts[0]) {
    case undefined:
    case "tasks":
      if (parts.length <= 1) return <TasksPage />;
      if (parts[1] === "new" && parts.length === 2) return <TaskFormPage />;
      if (parts.length === 2) return <TaskPage name={parts[1]} />;
      if (parts.length === 3 && parts[2] === "edit") return <TaskFormPage name={parts[1]} />;
      break;
    case "instances":
      if (parts.length === 1) return <InstancesPage />;
      if (parts.length === 2) return <InstancePage id={parts[1]} />;
      break;
    case "workers":
      return <WorkersPage />;
    case "code":
      if (parts.length === 1) return <ApplyPage />;
      break;
    case "runs":
      if (parts.length === 2 && /^[1-9][0-9]*$/.test(parts[1])) return <RunPage id={parts[1]} />;
      break;
    case "alerts":
      return <AlertsPage />;
    case "calendars":
      return <CalendarsPage />;
    case "limits":
      return <LimitsPage />;
    case "audit":
      return <AuditPage />;
    case "cluster":
      return <ClusterPage />;
  }
  return (
    <section>
      <PageTitle title="Not found">Not found</PageTitle>
      <p>
        There is no page at {props.path}. <Link href="/tasks">Go to the tasks</Link>.
      </p>
    </section>
  );
}

function App() {
  const { path } = useLocation();
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">ax console</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([href, label]) => (
              <li>
                <Link href={href} current={path.startsWith(href)}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main">
        <Page path={path} />
      </main>
    </>
  );
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
