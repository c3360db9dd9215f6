//! AdminService: the operator API (axctl and any generated client).
//!
//! Every call authorizes the caller (role, then the app scope of its target: see [`crate::auth`]),
//! validates every field (errors name the field), and changes nothing when it fails. Task changes
//! are optimistic: read, compute, write if the version is unchanged, retry otherwise. A write call
//! whose transaction the database aborts to break a deadlock runs again (`again_on_conflict!`).
//!
//! Every mutating call (and every denial) logs one line at info: identity, RPC, target, outcome.
//! Every mutating call is also kept in `ax_audit`, written right after the change on the admin
//! pool (not in the change's transaction: the lifecycle and trigger own those transactions). A
//! crash between the two loses that one entry; a failure to write it is logged at warn and does
//! not fail the call, whose change is already committed.

use std::{sync::Arc, time::Duration};

use ax_proto::v1::{self as pb, admin_service_server::AdminService};
use tonic::{Request, Response, Status};

use crate::{
    auth::{self, Access, Grant},
    core::Core,
    error::{Error, Result, StoreError},
    grpc::convert::{self, apply_field, task_from_pb},
    loops::trigger::trigger_manual,
    model::{Task, TaskConfig, TaskEventKind, Ts},
    schedule::{Compiled, preview},
    store::{Actor, AuditEntry, AuditFilter, InstanceFilter, ManualTrigger, NewTask, TaskUpdate, Tx},
    transitions::{CancelOutcome, RetryOutcome, cancel_instance, retry_instance},
    validate,
};

mod alerts;
mod apply;
mod bulk;
mod calendars;
mod cluster;
mod events;
mod explain;
mod graph;
mod instances;
mod limits;
mod schedules;
mod tasks;
mod wait;

/// A change to a task that [`AdminApi::change_task`] applies: the update, and whether its next
/// fire time is recomputed (from the stored calendar and pause, in the same transaction).
struct Change {
    update: TaskUpdate,
    reschedule: bool,
}

/// The AdminService implementation.
#[derive(Clone)]
pub struct AdminApi {
    core: Arc<Core>,
}

impl AdminApi {
    /// An AdminService over `core`.
    pub fn new(core: Arc<Core>) -> Self {
        AdminApi { core }
    }

    /// The caller's grant for a call needing `access`; notes who it is.
    fn caller<T>(&self, req: &Request<T>, access: Access, note: &mut Note) -> Result<Grant> {
        let id = auth::identity(&self.core.auth, req)?;
        note.actor = id.actor();
        auth::authorize_admin(&self.core.auth, &id, access)
    }

    /// Logs (and, for a mutating call, audits) the outcome of a call, and turns it into a reply.
    async fn finish<T>(&self, note: Note, result: Result<T>) -> Reply<T> {
        let (outcome, detail) = match &result {
            Ok(_) => ("ok".to_owned(), note.detail.clone()),
            Err(Error::PermissionDenied(why)) => ("denied".to_owned(), why.clone()),
            Err(e) => (code_name(e.code()), e.to_string()),
        };
        self.record(note, outcome, detail).await;
        result.map(Response::new).map_err(Status::from)
    }

    /// The log line and audit entry of [`AdminApi::finish`]: not generic, so that it is compiled
    /// once rather than once per reply type (37 of them).
    async fn record(&self, note: Note, outcome: String, detail: String) {
        let denied = outcome == "denied";
        if note.mutating || denied {
            tracing::info!(
                identity = %note.actor,
                rpc = note.rpc,
                audit_target = %note.target,
                outcome = %outcome,
                detail = %detail,
                "admin call {}",
                if denied { "denied" } else { "audited" }
            );
        }
        if note.mutating {
            let entry = AuditEntry {
                id: 0,
                at: self.now(),
                actor: note.actor,
                rpc: note.rpc.to_owned(),
                target: note.target,
                app: note.app,
                outcome,
                detail,
                before: note.before,
                after: note.after,
            };
            if let Err(e) = self.core.pools.admin.insert_audit(&entry).await {
                tracing::warn!(error = %e, rpc = entry.rpc, audit_target = %entry.target, "could not write the audit entry");
            }
        }
    }

    fn now(&self) -> Ts {
        self.core.clock.now()
    }

    async fn task(&self, name: &str) -> Result<Task> {
        validate::task_name("name", name)?;
        self.core
            .pools
            .admin
            .get_task(name)
            .await?
            .ok_or_else(|| Error::NotFound(format!("task {}", validate::quote(name))))
    }

    /// The dates of a task's calendar (empty without one, or when it is gone).
    async fn calendar_of(&self, tx: &mut Tx, c: &TaskConfig) -> Result<std::collections::BTreeSet<chrono::NaiveDate>> {
        let Some(name) = &c.timing.calendar else { return Ok(Default::default()) };
        Ok(tx.calendars().calendar_dates(std::iter::once(name.as_str())).await?.remove(name).unwrap_or_default())
    }

    fn preview_of(
        task: &Task,
        calendar: &std::collections::BTreeSet<chrono::NaiveDate>,
        now: Ts,
    ) -> pb::SchedulePreview {
        match Compiled::for_task(&task.config, calendar) {
            Ok(c) => {
                // Preview from the stored next fire (inclusive) so the list starts with what will happen.
                let from = task.next_fire_at.map_or(now, |n| crate::model::sub(n, Duration::from_micros(1)));
                let mut p = preview(&c, from, 5);
                if !task.config.enabled {
                    p.warnings.push("the task is disabled: it does not fire until enabled".to_owned());
                }
                if let Some(pause) = &task.pause {
                    let until = pause.until.map_or("it is resumed".to_owned(), |u| u.to_rfc3339());
                    p.warnings.push(format!("the task is paused: fires before {until} do not run"));
                }
                convert::preview_to_pb(&p, task.config.timing.jitter.map(|j| (task.name.as_str(), j)))
            }
            Err(e) => {
                pb::SchedulePreview { warnings: vec![format!("{}: {}", e.field, e.reason)], ..Default::default() }
            }
        }
    }

    /// Applies `change` to the task named `name` until it lands on an unchanged version: in one
    /// transaction, its next fire time (when rescheduled, from its calendar and pause), the update,
    /// and what its configuration names (calendar, chains, DAG edges: see `graph`).
    async fn change_task(
        &self,
        name: &str,
        grant: &Grant,
        note: &mut Note,
        change: impl Fn(&Task, Ts) -> Result<Option<Change>>,
    ) -> Result<Task> {
        for _ in 0..8 {
            let task = self.task(name).await?;
            note.app = task.config.app.clone();
            grant.app(&task.config.app)?;
            let now = self.now();
            let Some(Change { mut update, reschedule }) = change(&task, now)? else {
                note.detail = "no change".to_owned();
                return Ok(task);
            };
            grant.app(&update.config.app)?;
            let actor = grant.identity.actor();
            let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
            let mut tx = self.core.pools.admin.begin().await?;
            if reschedule {
                let calendar = self.calendar_of(&mut tx, &update.config).await?;
                update.next_fire_at =
                    Some(crate::schedule::next_fire_from(&update.config, &calendar, task.pause.as_ref(), now));
            }
            let Some(t) = tx.tasks().update_task(&update, Some(&task.config), now, &a).await? else { continue };
            let had_edges = !task.config.flow.names().is_empty();
            if update.config.timing.calendar != task.config.timing.calendar || update.config.flow != task.config.flow {
                graph::link_task(&mut tx, grant, t.id, &t.name, &t.config, "task", had_edges).await?;
            }
            tx.commit().await?;
            self.core.signals.trigger.notify_one();
            note.before = Some(task_json(&task));
            note.after = Some(task_json(&t));
            note.detail = update.event.1.clone();
            return Ok(t);
        }
        Err(Error::Aborted(format!("task {} kept changing; retry", validate::quote(name))))
    }
}

/// Whether a task's change moves its next fire: a change of its schedules, window, excluded dates,
/// calendar or enabled flag.
fn reschedules(old: &TaskConfig, new: &TaskConfig) -> bool {
    let (o, n) = (&old.timing, &new.timing);
    new.schedule != old.schedule
        || new.enabled != old.enabled
        || n.start != o.start
        || n.end != o.end
        || n.exclude_dates != o.exclude_dates
        || n.calendar != o.calendar
        || n.extra_schedules != o.extra_schedules
}

fn page_size(field: &str, v: u32, default: u32) -> Result<u32> {
    match v {
        0 => Ok(default),
        1..=1000 => Ok(v),
        n => Err(Error::invalid(field, format!("{n} is out of range 1-1000"))),
    }
}

/// The id a `page_token` names (`None` for the first page): a token is the last id of the page
/// before, as [`next_page_token`] writes it, so anything but a positive integer was never one.
fn before_id(page_token: &str) -> Result<Option<i64>> {
    if page_token.is_empty() {
        return Ok(None);
    }
    let id = page_token.parse::<i64>().ok().filter(|id| *id > 0);
    id.map(Some).ok_or_else(|| Error::invalid("page_token", "is not a token from a previous response"))
}

/// The token of the page after `list` (the last id), or empty when `list` is the last page.
fn next_page_token<T>(list: &[T], limit: u32, id: impl Fn(&T) -> i64) -> String {
    match list.last() {
        Some(last) if list.len() == limit as usize => id(last).to_string(),
        _ => String::new(),
    }
}

fn unique_key() -> String {
    format!("manual:{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

type Reply<T> = std::result::Result<Response<T>, Status>;

/// How many times a write call runs in all when the database aborts its transaction to break a
/// deadlock or a serialization conflict with another writer (SQLSTATE 40001/40P01, MySQL 1213,
/// SQLite busy). Such a try wrote nothing, and running it again is the databases' documented
/// answer; only after the last does the call answer ABORTED.
const CONFLICT_TRIES: u32 = 4;

/// Runs a call (`$call`, awaited anew on each try) until it ends other than in a database
/// conflict, at most [`CONFLICT_TRIES`] times. For calls that write in one transaction, or whose
/// earlier commits a repeat finds and keeps (a trigger's idempotency key). A macro, not a function
/// taking an async closure: the closure's future could not be shown `Send` to tonic.
macro_rules! again_on_conflict {
    ($call:expr) => {{
        let mut tries = 1;
        loop {
            match $call.await {
                Err(Error::Store(e @ StoreError::Conflict(_))) if tries < CONFLICT_TRIES => {
                    before_try_again(tries, &e).await;
                    tries += 1;
                }
                r => break r,
            }
        }
    }};
}

/// The pause before try `tries + 1`: short, random and growing, so two writers that deadlocked do
/// not meet again in step.
async fn before_try_again(tries: u32, e: &StoreError) {
    tracing::debug!(error = %e, tries, "admin call's transaction aborted by the database; running it again");
    tokio::time::sleep(Duration::from_millis(fastrand::u64(1..=10 * u64::from(tries)))).await;
}

/// What [`AdminApi::finish`] logs and audits about one call.
#[derive(Debug, Default)]
struct Note {
    rpc: &'static str,
    mutating: bool,
    actor: String,
    target: String,
    app: String,
    detail: String,
    before: Option<String>,
    after: Option<String>,
}

impl Note {
    fn read(rpc: &'static str, target: impl Into<String>) -> Note {
        Note { rpc, target: target.into(), actor: "unknown".to_owned(), ..Default::default() }
    }

    fn write(rpc: &'static str, target: impl Into<String>) -> Note {
        Note { mutating: true, ..Note::read(rpc, target) }
    }
}

/// `not_found` for `Code::NotFound`, …
fn code_name(code: tonic::Code) -> String {
    let mut out = String::new();
    for (i, c) in format!("{code:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// A task as JSON, for the audit trail's before and after.
fn task_json(t: &Task) -> String {
    let c = &t.config;
    serde_json::json!({
        "name": t.name,
        "version": t.version,
        "app": c.app,
        "handler": c.handler,
        "description": c.description,
        "schedule": format!("{:?}", c.schedule),
        "params": serde_json::from_str::<serde_json::Value>(&c.params).unwrap_or(serde_json::Value::String(c.params.clone())),
        "enabled": c.enabled,
        "misfire_policy": format!("{:?}", c.misfire_policy),
        "misfire_threshold_ms": u64::try_from(c.misfire_threshold.as_millis()).unwrap_or(u64::MAX),
        "max_catch_up": c.max_catch_up.get(),
        "concurrency": format!("{:?}", c.concurrency),
        "routing": format!("{:?}", c.routing),
        "timeout_ms": c.timeout.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        "retry": format!("{:?}", c.retry),
        "labels": c.labels,
    })
    .to_string()
}

fn task_target(name: &str) -> String {
    format!("task/{}", clip(name))
}

/// At most 128 bytes of a name from the wire, for logs and the audit trail.
fn clip(s: &str) -> &str {
    let mut end = s.len().min(128);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[tonic::async_trait]
impl AdminService for AdminApi {
    async fn create_task(&self, req: Request<pb::CreateTaskRequest>) -> Reply<pb::CreateTaskResponse> {
        let name = req.get_ref().task.as_ref().map(|t| t.name.as_str()).unwrap_or_default();
        let mut n = Note::write("CreateTask", task_target(name));
        let r = again_on_conflict!(self.create_task_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn get_task(&self, req: Request<pb::GetTaskRequest>) -> Reply<pb::GetTaskResponse> {
        let mut n = Note::read("GetTask", task_target(&req.get_ref().name));
        let r = self.get_task_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn list_tasks(&self, req: Request<pb::ListTasksRequest>) -> Reply<pb::ListTasksResponse> {
        let mut n = Note::read("ListTasks", "tasks");
        let r = self.list_tasks_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn update_task(&self, req: Request<pb::UpdateTaskRequest>) -> Reply<pb::UpdateTaskResponse> {
        let mut n = Note::write("UpdateTask", task_target(&req.get_ref().name));
        let r = again_on_conflict!(self.update_task_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn delete_task(&self, req: Request<pb::DeleteTaskRequest>) -> Reply<pb::DeleteTaskResponse> {
        let mut n = Note::write("DeleteTask", task_target(&req.get_ref().name));
        let r = again_on_conflict!(self.delete_task_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn apply_tasks(&self, req: Request<pb::ApplyTasksRequest>) -> Reply<pb::ApplyTasksResponse> {
        let mut n = Note::write("ApplyTasks", "tasks");
        let r = again_on_conflict!(self.apply_tasks_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn enable_task(&self, req: Request<pb::EnableTaskRequest>) -> Reply<pb::EnableTaskResponse> {
        let mut n = Note::write("EnableTask", task_target(&req.get_ref().name));
        let r = again_on_conflict!(self.enable_task_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn disable_task(&self, req: Request<pb::DisableTaskRequest>) -> Reply<pb::DisableTaskResponse> {
        let mut n = Note::write("DisableTask", task_target(&req.get_ref().name));
        let r = again_on_conflict!(self.disable_task_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn trigger_task(&self, req: Request<pb::TriggerTaskRequest>) -> Reply<pb::TriggerTaskResponse> {
        let mut n = Note::write("TriggerTask", task_target(&req.get_ref().name));
        // A call that waits takes its place before anything is created, and answers once audited.
        let mut waiting = None;
        // One key for every try: a try whose instance committed is found, not doubled, by the next.
        let key = unique_key();
        let r = again_on_conflict!(self.trigger_task_(&req, &mut n, &mut waiting, &key));
        let reply = self.finish(n, r).await?;
        match waiting {
            Some((wait, _place)) => Ok(Response::new(self.wait_until_done(reply.into_inner(), wait).await)),
            None => Ok(reply),
        }
    }

    async fn publish_event(&self, req: Request<pb::PublishEventRequest>) -> Reply<pb::PublishEventResponse> {
        let mut n = Note::write("PublishEvent", format!("event/{}", clip(&req.get_ref().name)));
        let r = self.publish_event_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn preview_schedule(&self, req: Request<pb::PreviewScheduleRequest>) -> Reply<pb::PreviewScheduleResponse> {
        let mut n = Note::read("PreviewSchedule", "schedule");
        let r = self.preview_schedule_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn list_instances(&self, req: Request<pb::ListInstancesRequest>) -> Reply<pb::ListInstancesResponse> {
        let mut n = Note::read("ListInstances", "instances");
        let r = self.list_instances_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn get_instance(&self, req: Request<pb::GetInstanceRequest>) -> Reply<pb::GetInstanceResponse> {
        let mut n = Note::read("GetInstance", format!("instance/{}", req.get_ref().id));
        let r = self.get_instance_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn cancel_instance(&self, req: Request<pb::CancelInstanceRequest>) -> Reply<pb::CancelInstanceResponse> {
        let mut n = Note::write("CancelInstance", format!("instance/{}", req.get_ref().id));
        let r = again_on_conflict!(self.cancel_instance_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn retry_instance(&self, req: Request<pb::RetryInstanceRequest>) -> Reply<pb::RetryInstanceResponse> {
        let mut n = Note::write("RetryInstance", format!("instance/{}", req.get_ref().id));
        let r = again_on_conflict!(self.retry_instance_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn bulk_instances(&self, req: Request<pb::BulkInstancesRequest>) -> Reply<pb::BulkInstancesResponse> {
        let mut n = Note::write("BulkInstances", "instances");
        let r = self.bulk_instances_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn explain_task(&self, req: Request<pb::ExplainTaskRequest>) -> Reply<pb::ExplainTaskResponse> {
        let mut n = Note::read("ExplainTask", task_target(&req.get_ref().name));
        let r = self.explain_task_(&req, &mut n).await;
        self.finish(n, r).await
    }

    type WatchInstanceStream = wait::Watch;

    async fn watch_instance(&self, req: Request<pb::WatchInstanceRequest>) -> Reply<Self::WatchInstanceStream> {
        let mut n = Note::read("WatchInstance", format!("instance/{}", req.get_ref().id));
        let r = self.watch_instance_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn get_instance_logs(&self, req: Request<pb::GetInstanceLogsRequest>) -> Reply<pb::GetInstanceLogsResponse> {
        let mut n = Note::read("GetInstanceLogs", format!("instance/{}", req.get_ref().id));
        let r = self.get_instance_logs_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn list_workers(&self, req: Request<pb::ListWorkersRequest>) -> Reply<pb::ListWorkersResponse> {
        let mut n = Note::read("ListWorkers", "workers");
        let r = self.list_workers_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn list_schedulers(&self, req: Request<pb::ListSchedulersRequest>) -> Reply<pb::ListSchedulersResponse> {
        let mut n = Note::read("ListSchedulers", "schedulers");
        let r = self.list_schedulers_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn get_cluster_stats(&self, req: Request<pb::GetClusterStatsRequest>) -> Reply<pb::GetClusterStatsResponse> {
        let mut n = Note::read("GetClusterStats", "cluster");
        let r = self.get_cluster_stats_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn list_audit_entries(
        &self,
        req: Request<pb::ListAuditEntriesRequest>,
    ) -> Reply<pb::ListAuditEntriesResponse> {
        let mut n = Note::read("ListAuditEntries", "audit");
        let r = self.list_audit_entries_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn create_alert_rule(&self, req: Request<pb::CreateAlertRuleRequest>) -> Reply<pb::CreateAlertRuleResponse> {
        let name = req.get_ref().rule.as_ref().map(|r| r.name.as_str()).unwrap_or_default();
        let mut n = Note::write("CreateAlertRule", alerts::alert_target(name));
        let r = again_on_conflict!(self.create_alert_rule_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn list_alert_rules(&self, req: Request<pb::ListAlertRulesRequest>) -> Reply<pb::ListAlertRulesResponse> {
        let mut n = Note::read("ListAlertRules", "alerts");
        let r = self.list_alert_rules_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn delete_alert_rule(&self, req: Request<pb::DeleteAlertRuleRequest>) -> Reply<pb::DeleteAlertRuleResponse> {
        let mut n = Note::write("DeleteAlertRule", alerts::alert_target(&req.get_ref().name));
        let r = again_on_conflict!(self.delete_alert_rule_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn test_alert_rule(&self, req: Request<pb::TestAlertRuleRequest>) -> Reply<pb::TestAlertRuleResponse> {
        let mut n = Note::write("TestAlertRule", alerts::alert_target(&req.get_ref().name));
        let r = self.test_alert_rule_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn list_alert_deliveries(
        &self,
        req: Request<pb::ListAlertDeliveriesRequest>,
    ) -> Reply<pb::ListAlertDeliveriesResponse> {
        let mut n = Note::read("ListAlertDeliveries", "alert-deliveries");
        let r = self.list_alert_deliveries_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn set_app_limit(&self, req: Request<pb::SetAppLimitRequest>) -> Reply<pb::SetAppLimitResponse> {
        let mut n = Note::write("SetAppLimit", limits::set_target(req.get_ref()));
        let r = again_on_conflict!(self.set_app_limit_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn list_app_limits(&self, req: Request<pb::ListAppLimitsRequest>) -> Reply<pb::ListAppLimitsResponse> {
        let mut n = Note::read("ListAppLimits", "app-limits");
        let r = self.list_app_limits_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn delete_app_limit(&self, req: Request<pb::DeleteAppLimitRequest>) -> Reply<pb::DeleteAppLimitResponse> {
        let mut n = Note::write("DeleteAppLimit", limits::app_target(&req.get_ref().app));
        let r = again_on_conflict!(self.delete_app_limit_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn pause_task(&self, req: Request<pb::PauseTaskRequest>) -> Reply<pb::PauseTaskResponse> {
        let mut n = Note::write("PauseTask", task_target(&req.get_ref().name));
        let r = again_on_conflict!(self.pause_task_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn resume_task(&self, req: Request<pb::ResumeTaskRequest>) -> Reply<pb::ResumeTaskResponse> {
        let mut n = Note::write("ResumeTask", task_target(&req.get_ref().name));
        let r = again_on_conflict!(self.resume_task_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn backfill_task(&self, req: Request<pb::BackfillTaskRequest>) -> Reply<pb::BackfillTaskResponse> {
        let target = task_target(&req.get_ref().name);
        let mut n = if req.get_ref().dry_run {
            Note::read("BackfillTask", target)
        } else {
            Note::write("BackfillTask", target)
        };
        let r = again_on_conflict!(self.backfill_task_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn create_calendar(&self, req: Request<pb::CreateCalendarRequest>) -> Reply<pb::CreateCalendarResponse> {
        let name = req.get_ref().calendar.as_ref().map(|c| c.name.as_str()).unwrap_or_default();
        let mut n = Note::write("CreateCalendar", calendars::calendar_target(name));
        let r = again_on_conflict!(self.create_calendar_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn update_calendar(&self, req: Request<pb::UpdateCalendarRequest>) -> Reply<pb::UpdateCalendarResponse> {
        let name = req.get_ref().calendar.as_ref().map(|c| c.name.as_str()).unwrap_or_default();
        let mut n = Note::write("UpdateCalendar", calendars::calendar_target(name));
        let r = again_on_conflict!(self.update_calendar_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn get_calendar(&self, req: Request<pb::GetCalendarRequest>) -> Reply<pb::GetCalendarResponse> {
        let mut n = Note::read("GetCalendar", calendars::calendar_target(&req.get_ref().name));
        let r = self.get_calendar_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn list_calendars(&self, req: Request<pb::ListCalendarsRequest>) -> Reply<pb::ListCalendarsResponse> {
        let mut n = Note::read("ListCalendars", "calendars");
        let r = self.list_calendars_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn delete_calendar(&self, req: Request<pb::DeleteCalendarRequest>) -> Reply<pb::DeleteCalendarResponse> {
        let mut n = Note::write("DeleteCalendar", calendars::calendar_target(&req.get_ref().name));
        let r = again_on_conflict!(self.delete_calendar_(&req, &mut n));
        self.finish(n, r).await
    }

    async fn get_run(&self, req: Request<pb::GetRunRequest>) -> Reply<pb::GetRunResponse> {
        let mut n = Note::read("GetRun", format!("run/{}", req.get_ref().run_id));
        let r = self.get_run_(&req, &mut n).await;
        self.finish(n, r).await
    }
}

#[cfg(test)]
mod page_token_tests {
    use super::{before_id, next_page_token};

    #[test]
    fn one_page_token_grammar_for_every_list() {
        assert_eq!(before_id("").expect("first page"), None);
        assert_eq!(before_id("42").expect("a token"), Some(42));
        assert_eq!(before_id(&next_page_token(&[7_i64, 9], 2, |i| *i)).expect("round trip"), Some(9));
        for bad in ["0", "-5", "x", "9223372036854775808", " 1"] {
            let e = before_id(bad).expect_err(bad).to_string();
            assert!(e.contains("page_token") && e.contains("not a token from a previous response"), "{bad}: {e}");
        }
    }
}
