// What axctl shows beside tasks and instances: the audit trail, calendars, rate limits and alert
// rules with their deliveries. Each page is one table (or two) of a List call; the columns are
// lists, so a new field is one more entry.
import { api } from "../api";
import { browserZone, durationMs, setting, timeIn } from "../format";
import type { AlertDelivery, AlertRule, AppLimit, AuditEntry, Calendar } from "../gen/ax/v1/admin_pb";
import { type Column, PageTitle, Table, useLoad } from "../ui";

export const auditColumns: Column<AuditEntry>[] = [
  { header: `Time (${browserZone})`, cell: (e) => timeIn(e.time) },
  { header: "Actor", cell: (e) => e.actor },
  { header: "Call", cell: (e) => e.rpc },
  { header: "Target", cell: (e) => e.target },
  { header: "App", cell: (e) => e.app || "-" },
  { header: "Outcome", cell: (e) => e.outcome },
  { header: "Detail", cell: (e) => e.detail || "-" },
];

export function AuditPage() {
  const entries = useLoad(async () => (await api.listAuditEntries({ pageSize: 200 })).entries, [], 5000);
  return (
    <section>
      <PageTitle title="Audit">Audit</PageTitle>
      <p class="hint">Every call that changes something, and every denial, newest first (the latest 200).</p>
      <Table
        caption="Audit entries"
        columns={auditColumns}
        rows={entries.data}
        rowKey={(e) => String(e.id)}
        empty="Nothing is audited yet."
        error={entries.error}
      />
    </section>
  );
}

export const calendarColumns: Column<Calendar>[] = [
  { header: "Calendar", cell: (c) => c.name },
  { header: "Description", cell: (c) => c.description || "-" },
  { header: "Dates", cell: (c) => (c.dates.length > 6 ? `${c.dates.slice(0, 6).join(", ")}, ... (${c.dates.length})` : c.dates.join(", ") || "-") },
  { header: "Updated by", cell: (c) => c.updatedBy || c.createdBy },
  { header: `Updated (${browserZone})`, cell: (c) => timeIn(c.updateTime ?? c.createTime) },
];

export function CalendarsPage() {
  const calendars = useLoad(async () => (await api.listCalendars({})).calendars, [], 10000);
  return (
    <section>
      <PageTitle title="Calendars">Calendars</PageTitle>
      <p class="hint">Dates on which the tasks that name a calendar do not fire.</p>
      <Table
        caption="Calendars"
        columns={calendarColumns}
        rows={calendars.data}
        rowKey={(c) => c.name}
        empty="No calendar."
        error={calendars.error}
      />
    </section>
  );
}

export const limitColumns: Column<AppLimit>[] = [
  { header: "App", cell: (l) => l.app },
  { header: "Per second", cell: (l) => l.perSecond, class: "num" },
  { header: "Burst", cell: (l) => l.burst, class: "num" },
  { header: "Tokens now", cell: (l) => l.tokens.toFixed(1), class: "num" },
  { header: "Set by", cell: (l) => l.updatedBy },
  { header: `Set (${browserZone})`, cell: (l) => timeIn(l.updateTime) },
];

export function LimitsPage() {
  const limits = useLoad(async () => (await api.listAppLimits({})).limits, [], 3000);
  return (
    <section>
      <PageTitle title="Rate limits">Rate limits</PageTitle>
      <p class="hint">Dispatches per second per app, across the cluster (a token bucket).</p>
      <Table
        caption="Rate limits per app"
        columns={limitColumns}
        rows={limits.data}
        rowKey={(l) => l.app}
        empty="No app has a rate limit."
        error={limits.error}
      />
    </section>
  );
}

export const ruleColumns: Column<AlertRule>[] = [
  { header: "Rule", cell: (r) => r.name },
  { header: "App", cell: (r) => r.app },
  { header: "Task", cell: (r) => r.task || "every task" },
  {
    header: "Watches",
    cell: (r) => {
      const noWorker = durationMs(r.noWorkerFor);
      const parts = [...r.events];
      if (noWorker !== undefined) parts.push(`no worker for ${setting(noWorker)}`);
      if (r.backlogOver !== undefined) parts.push(`backlog over ${r.backlogOver}`);
      return parts.join(", ") || "-";
    },
  },
  { header: "Webhook", cell: (r) => r.url },
  { header: "Created by", cell: (r) => r.createdBy },
];

export const deliveryColumns: Column<AlertDelivery>[] = [
  { header: "Delivery", cell: (d) => String(d.id) },
  { header: "Rule", cell: (d) => d.rule },
  { header: "Event", cell: (d) => d.event },
  { header: "Task", cell: (d) => d.task || "-" },
  { header: "Status", cell: (d) => d.status },
  { header: "Attempts", cell: (d) => d.attempts, class: "num" },
  { header: `Created (${browserZone})`, cell: (d) => timeIn(d.createTime) },
  { header: "Last error", cell: (d) => d.lastError || "-" },
];

export function AlertsPage() {
  const rules = useLoad(async () => (await api.listAlertRules({})).rules, [], 10000);
  const deliveries = useLoad(async () => (await api.listAlertDeliveries({ pageSize: 100 })).deliveries, [], 5000);
  return (
    <section>
      <PageTitle title="Alerts">Alerts</PageTitle>
      <h2>Rules</h2>
      <Table
        caption="Alert rules"
        columns={ruleColumns}
        rows={rules.data}
        rowKey={(r) => r.name}
        empty="No alert rule."
        error={rules.error}
      />
      <h2>Deliveries, newest first</h2>
      <Table
        caption="Deliveries, newest first"
        columns={deliveryColumns}
        rows={deliveries.data}
        rowKey={(d) => String(d.id)}
        empty="No delivery yet."
        error={deliveries.error}
      />
    </section>
  );
}
