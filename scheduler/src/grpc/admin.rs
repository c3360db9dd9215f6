//! AdminService: the operator API (axctl and any generated client).
//!
//! Every call authorizes the caller (role, then the app scope of its target: see [`crate::auth`]),
//! validates every field (errors name the field), and changes nothing when it fails. Task changes
//! are optimistic: read, compute, write if the version is unchanged, retry otherwise.
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
    grpc::convert::{self, apply_field, initial_next_fire, task_from_pb},
    lifecycle::apply::{CancelOutcome, RetryOutcome, cancel_instance, retry_instance},
    loops::trigger::trigger_manual,
    model::{Task, TaskEventKind, Ts},
    schedule::{Compiled, preview},
    store::{Actor, AuditEntry, AuditFilter, InstanceFilter, ManualTrigger, NewTask, TaskUpdate},
    validate,
};

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
        let denied = outcome == "denied";
        if note.mutating || denied {
            tracing::info!(
                identity = %note.actor,
                rpc = note.rpc,
                target = %note.target,
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
                tracing::warn!(error = %e, rpc = entry.rpc, target = %entry.target, "could not write the audit entry");
            }
        }
        result.map(Response::new).map_err(Status::from)
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

    fn preview_of(task: &Task, now: Ts) -> pb::SchedulePreview {
        match Compiled::compile(&task.config.schedule) {
            Ok(c) => {
                // Preview from the stored next fire (inclusive) so the list starts with what will happen.
                let from = task.next_fire_at.map_or(now, |n| crate::model::sub(n, Duration::from_micros(1)));
                let mut p = preview(&c, from, 5);
                if !task.config.enabled {
                    p.warnings.push("the task is disabled: it does not fire until enabled".to_owned());
                }
                convert::preview_to_pb(&p)
            }
            Err(e) => {
                pb::SchedulePreview { warnings: vec![format!("{}: {}", e.field, e.reason)], ..Default::default() }
            }
        }
    }

    /// Applies `change` to the task named `name` until it lands on an unchanged version.
    async fn change_task(
        &self,
        name: &str,
        grant: &Grant,
        note: &mut Note,
        change: impl Fn(&Task, Ts) -> Result<Option<TaskUpdate>>,
    ) -> Result<Task> {
        for _ in 0..8 {
            let task = self.task(name).await?;
            note.app = task.config.app.clone();
            grant.app(&task.config.app)?;
            let now = self.now();
            let Some(update) = change(&task, now)? else {
                note.detail = "no change".to_owned();
                return Ok(task);
            };
            grant.app(&update.config.app)?;
            let actor = grant.identity.actor();
            let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
            if let Some(t) = self.core.pools.admin.update_task(&update, now, &a).await? {
                self.core.signals.trigger.notify_one();
                note.before = Some(task_json(&task));
                note.after = Some(task_json(&t));
                note.detail = update.event.1.clone();
                return Ok(t);
            }
        }
        Err(Error::Aborted(format!("task {} kept changing; retry", validate::quote(name))))
    }
}

fn page_size(field: &str, v: u32, default: u32) -> Result<u32> {
    match v {
        0 => Ok(default),
        1..=1000 => Ok(v),
        n => Err(Error::invalid(field, format!("{n} is out of range 1-1000"))),
    }
}

fn unique_key() -> String {
    format!("manual:{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

type Reply<T> = std::result::Result<Response<T>, Status>;

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

impl AdminApi {
    async fn create_task_(&self, req: &Request<pb::CreateTaskRequest>, n: &mut Note) -> Result<pb::CreateTaskResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        let spec = req.get_ref().task.as_ref().ok_or_else(|| Error::invalid("task", "is required"))?;
        let now = self.now();
        let (name, config) = task_from_pb(spec, now)?;
        n.app = config.app.clone();
        grant.app(&config.app)?;
        let next_fire_at = initial_next_fire(&config, now);
        let actor = grant.identity.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        let task = match self
            .core
            .pools
            .admin
            .create_task(&NewTask { name: name.clone(), config, next_fire_at }, now, &a)
            .await
        {
            Ok(t) => t,
            Err(StoreError::UniqueViolation(_)) => {
                return Err(Error::AlreadyExists(format!("task {}", validate::quote(&name))));
            }
            Err(e) => return Err(Error::from(e)),
        };
        self.core.signals.trigger.notify_one();
        n.after = Some(task_json(&task));
        let preview = Self::preview_of(&task, now);
        Ok(pb::CreateTaskResponse { task: Some(convert::task_to_pb(&task)), preview: Some(preview) })
    }

    async fn get_task_(&self, req: &Request<pb::GetTaskRequest>, n: &mut Note) -> Result<pb::GetTaskResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let task = self.task(&req.get_ref().name).await?;
        grant.app(&task.config.app)?;
        let events = self.core.pools.admin.task_events(task.id, 20).await.map_err(Error::from)?;
        Ok(pb::GetTaskResponse {
            task: Some(convert::task_to_pb(&task)),
            events: events.iter().map(convert::task_event_to_pb).collect(),
        })
    }

    async fn list_tasks_(&self, req: &Request<pb::ListTasksRequest>, n: &mut Note) -> Result<pb::ListTasksResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let limit = page_size("page_size", r.page_size, 100)?;
        let apps = if r.app.is_empty() {
            grant.apps()
        } else {
            validate::app("app", &r.app)?;
            grant.app(&r.app)?;
            Some(vec![r.app.clone()])
        };
        let after = (!r.page_token.is_empty()).then_some(r.page_token.as_str());
        let tasks = self.core.pools.admin.list_tasks(apps.as_deref(), after, limit).await.map_err(Error::from)?;
        let next_page_token = if tasks.len() == limit as usize {
            tasks.last().map(|t| t.name.clone()).unwrap_or_default()
        } else {
            String::new()
        };
        Ok(pb::ListTasksResponse { tasks: tasks.iter().map(convert::task_to_pb).collect(), next_page_token })
    }

    async fn update_task_(&self, req: &Request<pb::UpdateTaskRequest>, n: &mut Note) -> Result<pb::UpdateTaskResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        let r = req.get_ref();
        let spec = r.task.as_ref().ok_or_else(|| Error::invalid("task", "is required"))?;
        if !spec.name.is_empty() && spec.name != r.name {
            return Err(Error::invalid("task.name", "tasks cannot be renamed; leave it empty or equal to name"));
        }
        let paths: Vec<String> = r.update_mask.as_ref().map(|m| m.paths.clone()).unwrap_or_default();
        if paths.is_empty() {
            return Err(Error::invalid("update_mask", "names no field; nothing to update"));
        }
        for p in &paths {
            if !convert::UPDATABLE_FIELDS.contains(&p.as_str()) {
                return Err(Error::invalid(
                    "update_mask",
                    format!(
                        "unknown or immutable field {}; updatable: {}",
                        validate::quote(p),
                        convert::UPDATABLE_FIELDS.join(", ")
                    ),
                ));
            }
        }
        let task = self
            .change_task(&r.name, &grant, n, |task, now| {
                let mut c = task.config.clone();
                for p in &paths {
                    apply_field(&mut c, spec, p, "task", now)?;
                }
                let reschedule = c.schedule != task.config.schedule || c.enabled != task.config.enabled;
                let next = reschedule.then(|| initial_next_fire(&c, now));
                Ok(Some(TaskUpdate {
                    id: task.id,
                    expected_version: task.version,
                    config: c,
                    next_fire_at: next,
                    event: (TaskEventKind::Updated, format!("changed: {}", paths.join(", "))),
                }))
            })
            .await?;
        let preview = Self::preview_of(&task, self.now());
        Ok(pb::UpdateTaskResponse { task: Some(convert::task_to_pb(&task)), preview: Some(preview) })
    }

    async fn delete_task_(&self, req: &Request<pb::DeleteTaskRequest>, n: &mut Note) -> Result<pb::DeleteTaskResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        let name = &req.get_ref().name;
        let task = self.task(name).await?;
        n.app = task.config.app.clone();
        grant.app(&task.config.app)?;
        let actor = grant.identity.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        match crate::lifecycle::apply::delete_task(&self.core.pools.admin, name, self.now(), &a)
            .await
            .map_err(Error::from)?
        {
            Some(canceled) => {
                n.before = Some(task_json(&task));
                n.detail = format!("{canceled} pending instances canceled");
                Ok(pb::DeleteTaskResponse { canceled_instances: canceled })
            }
            None => Err(Error::NotFound(format!("task {}", validate::quote(name)))),
        }
    }

    async fn enable_task_(&self, req: &Request<pb::EnableTaskRequest>, n: &mut Note) -> Result<pb::EnableTaskResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let task = self
            .change_task(&req.get_ref().name, &grant, n, |task, now| {
                if task.config.enabled {
                    return Ok(None);
                }
                let mut c = task.config.clone();
                c.enabled = true;
                let next = match &c.schedule {
                    // A one-time task that already fired (or whose time passed) stays done.
                    crate::model::Schedule::OneTime { at } => (*at >= now).then_some(*at),
                    _ => initial_next_fire(&c, now),
                };
                Ok(Some(TaskUpdate {
                    id: task.id,
                    expected_version: task.version,
                    config: c,
                    next_fire_at: Some(next),
                    event: (TaskEventKind::Enabled, "enabled; fires missed while disabled are not run".to_owned()),
                }))
            })
            .await?;
        Ok(pb::EnableTaskResponse { task: Some(convert::task_to_pb(&task)) })
    }

    async fn disable_task_(
        &self,
        req: &Request<pb::DisableTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::DisableTaskResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let task = self
            .change_task(&req.get_ref().name, &grant, n, |task, _| {
                if !task.config.enabled {
                    return Ok(None);
                }
                let mut c = task.config.clone();
                c.enabled = false;
                Ok(Some(TaskUpdate {
                    id: task.id,
                    expected_version: task.version,
                    config: c,
                    next_fire_at: Some(None),
                    event: (TaskEventKind::Disabled, "disabled".to_owned()),
                }))
            })
            .await?;
        Ok(pb::DisableTaskResponse { task: Some(convert::task_to_pb(&task)) })
    }

    async fn trigger_task_(
        &self,
        req: &Request<pb::TriggerTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::TriggerTaskResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let r = req.get_ref();
        let task = self.task(&r.name).await?;
        n.app = task.config.app.clone();
        grant.app(&task.config.app)?;
        let params = match &r.params {
            Some(p) => validate::params("params", p)?,
            None => task.config.params.clone(),
        };
        let key = if r.idempotency_key.is_empty() {
            unique_key()
        } else {
            validate::idempotency_key("idempotency_key", &r.idempotency_key)?;
            r.idempotency_key.clone()
        };
        let trigger = ManualTrigger { params, key, actor: grant.identity.actor() };
        let triggered = trigger_manual(&self.core.pools.admin, &task, &trigger, self.now(), &self.core.scheduler_id);
        let (inst, created) = triggered.await.map_err(Error::from)?;
        if created {
            self.core.signals.dispatch.notify_one();
        }
        n.detail = format!("instance {} ({})", inst.id, if created { "created" } else { "existing" });
        Ok(pb::TriggerTaskResponse { instance: Some(convert::instance_to_pb(&inst)), created })
    }

    async fn preview_schedule_(
        &self,
        req: &Request<pb::PreviewScheduleRequest>,
        n: &mut Note,
    ) -> Result<pb::PreviewScheduleResponse> {
        self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let now = self.now();
        let from = match &r.from {
            Some(t) => convert::ts_from_pb("from", t)?,
            None => now,
        };
        let count = match r.count {
            0 => 10,
            1..=1000 => r.count as usize,
            n => return Err(Error::invalid("count", format!("{n} is out of range 1-1000"))),
        };
        let schedule = r.schedule.as_ref().ok_or_else(|| Error::invalid("schedule", "is required"))?;
        let schedule = convert::schedule_from_pb("schedule", schedule, from)?;
        let compiled =
            Compiled::compile(&schedule).map_err(|e| Error::invalid(format!("schedule.{}", e.field), e.reason))?;
        let p = preview(&compiled, from, count);
        Ok(pb::PreviewScheduleResponse { preview: Some(convert::preview_to_pb(&p)) })
    }

    async fn list_instances_(
        &self,
        req: &Request<pb::ListInstancesRequest>,
        n: &mut Note,
    ) -> Result<pb::ListInstancesResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let limit = page_size("page_size", r.page_size, 50)?;
        if !r.task_name.is_empty() {
            validate::task_name("task_name", &r.task_name)?;
        }
        let before_id = if r.page_token.is_empty() {
            None
        } else {
            Some(
                r.page_token
                    .parse::<i64>()
                    .map_err(|_| Error::invalid("page_token", "is not a token from a previous response"))?,
            )
        };
        let filter = InstanceFilter {
            task_name: (!r.task_name.is_empty()).then(|| r.task_name.clone()),
            status: convert::status_from_pb("status", r.status)?,
            apps: grant.apps(),
            before_id,
            limit,
        };
        let list = self.core.pools.admin.list_instances(&filter).await.map_err(Error::from)?;
        let next_page_token = if list.len() == limit as usize {
            list.last().map(|i| i.id.to_string()).unwrap_or_default()
        } else {
            String::new()
        };
        Ok(pb::ListInstancesResponse { instances: list.iter().map(convert::instance_to_pb).collect(), next_page_token })
    }

    /// The instance `id` if it exists and is in the caller's scope.
    async fn instance_in_scope(&self, id: i64, grant: &Grant, n: &mut Note) -> Result<crate::model::Instance> {
        let inst = self
            .core
            .pools
            .admin
            .get_instance(id)
            .await
            .map_err(Error::from)?
            .ok_or_else(|| Error::NotFound(format!("instance {id}")))?;
        n.app = inst.app.clone();
        grant.app(&inst.app)?;
        Ok(inst)
    }

    async fn get_instance_(
        &self,
        req: &Request<pb::GetInstanceRequest>,
        n: &mut Note,
    ) -> Result<pb::GetInstanceResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let id = req.get_ref().id;
        let inst = self.instance_in_scope(id, &grant, n).await?;
        let events = self.core.pools.admin.instance_events(id).await.map_err(Error::from)?;
        Ok(pb::GetInstanceResponse {
            instance: Some(convert::instance_to_pb(&inst)),
            events: events.iter().map(convert::event_to_pb).collect(),
        })
    }

    async fn cancel_instance_(
        &self,
        req: &Request<pb::CancelInstanceRequest>,
        n: &mut Note,
    ) -> Result<pb::CancelInstanceResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let r = req.get_ref();
        self.instance_in_scope(r.id, &grant, n).await?;
        validate::text("reason", &r.reason, validate::MAX_REASON)?;
        let actor = grant.identity.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        match cancel_instance(&self.core.pools.admin, r.id, &r.reason, self.now(), &a).await.map_err(Error::from)? {
            CancelOutcome::Canceled(i) => {
                self.core.signals.commands.notify_one();
                Ok(pb::CancelInstanceResponse { instance: Some(convert::instance_to_pb(&i)) })
            }
            CancelOutcome::AlreadyFinal(i) => {
                Err(Error::FailedPrecondition(format!("instance {} is already {}; nothing to cancel", i.id, i.status)))
            }
            CancelOutcome::NotFound => Err(Error::NotFound(format!("instance {}", r.id))),
        }
    }

    async fn retry_instance_(
        &self,
        req: &Request<pb::RetryInstanceRequest>,
        n: &mut Note,
    ) -> Result<pb::RetryInstanceResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let id = req.get_ref().id;
        self.instance_in_scope(id, &grant, n).await?;
        let actor = grant.identity.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        match retry_instance(&self.core.pools.admin, id, self.now(), &a).await.map_err(Error::from)? {
            RetryOutcome::Retried(i) => {
                self.core.signals.dispatch.notify_one();
                Ok(pb::RetryInstanceResponse { instance: Some(convert::instance_to_pb(&i)) })
            }
            RetryOutcome::NotFinal(i) => Err(Error::FailedPrecondition(format!(
                "instance {} is {}; only a finished instance can be retried",
                i.id, i.status
            ))),
            RetryOutcome::NotFound => Err(Error::NotFound(format!("instance {id}"))),
        }
    }

    async fn get_instance_logs_(
        &self,
        req: &Request<pb::GetInstanceLogsRequest>,
        n: &mut Note,
    ) -> Result<pb::GetInstanceLogsResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let limit = page_size("limit", r.limit, 1000)?;
        self.instance_in_scope(r.id, &grant, n).await?;
        let (lines, dropped) =
            self.core.pools.admin.instance_logs(r.id, r.after_seq, limit).await.map_err(Error::from)?;
        Ok(pb::GetInstanceLogsResponse { lines: lines.iter().map(convert::log_to_pb).collect(), dropped })
    }

    /// Sessions of live axd, of the apps in the caller's scope.
    async fn live_workers(&self, grant: &Grant, app: Option<&str>) -> Result<Vec<crate::model::WorkerRecord>> {
        let list = self.core.pools.admin.list_workers(app).await.map_err(Error::from)?;
        // Sessions of an axd that stopped heartbeating are gone, even before its rows are purged.
        let alive_since = self.core.alive_since();
        let alive: std::collections::HashSet<String> = self
            .core
            .pools
            .admin
            .list_schedulers()
            .await
            .map_err(Error::from)?
            .into_iter()
            .filter(|s| s.heartbeat_at >= alive_since)
            .map(|s| s.scheduler_id)
            .collect();
        Ok(list.into_iter().filter(|w| alive.contains(&w.scheduler_id) && grant.scope.contains(&w.app)).collect())
    }

    async fn list_workers_(
        &self,
        req: &Request<pb::ListWorkersRequest>,
        n: &mut Note,
    ) -> Result<pb::ListWorkersResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let app = &req.get_ref().app;
        if !app.is_empty() {
            validate::app("app", app)?;
            grant.app(app)?;
        }
        let workers = self.live_workers(&grant, (!app.is_empty()).then_some(app.as_str())).await?;
        Ok(pb::ListWorkersResponse { workers: workers.iter().map(convert::worker_to_pb).collect() })
    }

    async fn list_schedulers_(
        &self,
        req: &Request<pb::ListSchedulersRequest>,
        n: &mut Note,
    ) -> Result<pb::ListSchedulersResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let schedulers = self.core.pools.admin.list_schedulers().await.map_err(Error::from)?;
        // Only sessions of apps in scope are counted and named.
        let workers: Vec<_> = self
            .core
            .pools
            .admin
            .list_workers(None)
            .await
            .map_err(Error::from)?
            .into_iter()
            .filter(|w| grant.scope.contains(&w.app))
            .collect();
        let alive_since = self.core.alive_since();
        Ok(pb::ListSchedulersResponse {
            schedulers: schedulers
                .iter()
                .map(|s| pb::SchedulerNode {
                    scheduler_id: s.scheduler_id.clone(),
                    host: s.host.clone(),
                    address: s.address.clone(),
                    version: s.version.clone(),
                    start_time: Some(convert::ts_to_pb(s.started_at)),
                    heartbeat_time: Some(convert::ts_to_pb(s.heartbeat_at)),
                    workers: u32::try_from(workers.iter().filter(|w| w.scheduler_id == s.scheduler_id).count())
                        .unwrap_or(u32::MAX),
                    worker_ids: {
                        let mut ids: Vec<String> = workers
                            .iter()
                            .filter(|w| w.scheduler_id == s.scheduler_id)
                            .map(|w| w.worker_id.clone())
                            .collect();
                        ids.sort();
                        ids
                    },
                    alive: s.heartbeat_at >= alive_since,
                })
                .collect(),
        })
    }

    async fn get_cluster_stats_(
        &self,
        req: &Request<pb::GetClusterStatsRequest>,
        n: &mut Note,
    ) -> Result<pb::GetClusterStatsResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        grant.all_apps("GetClusterStats")?;
        let s = self.core.pools.admin.cluster_stats(self.core.alive_since()).await.map_err(Error::from)?;
        Ok(pb::GetClusterStatsResponse {
            tasks: s.tasks,
            enabled_tasks: s.enabled_tasks,
            instances: s
                .instances
                .iter()
                .map(|(status, n)| pb::StatusCount { status: convert::status_to_pb(*status).into(), count: *n })
                .collect(),
            workers: s.workers,
            schedulers: s.schedulers,
        })
    }

    async fn list_audit_entries_(
        &self,
        req: &Request<pb::ListAuditEntriesRequest>,
        n: &mut Note,
    ) -> Result<pb::ListAuditEntriesResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let limit = page_size("page_size", r.page_size, 100)?;
        let text = |field: &str, v: &str| -> Result<Option<String>> {
            if v.is_empty() {
                return Ok(None);
            }
            if v.len() > 255 {
                return Err(Error::invalid(field, format!("is {} bytes long, at most 255 allowed", v.len())));
            }
            Ok(Some(v.to_owned()))
        };
        let before_id = if r.page_token.is_empty() {
            None
        } else {
            Some(
                r.page_token
                    .parse::<i64>()
                    .ok()
                    .filter(|id| *id > 0)
                    .ok_or_else(|| Error::invalid("page_token", "is not a token from a previous response"))?,
            )
        };
        let since = r.start_time.as_ref().map(|t| convert::ts_from_pb("start_time", t)).transpose()?;
        let until = r.end_time.as_ref().map(|t| convert::ts_from_pb("end_time", t)).transpose()?;
        if let (Some(a), Some(b)) = (since, until)
            && a > b
        {
            return Err(Error::invalid("end_time", "is before start_time"));
        }
        let filter = AuditFilter {
            actor: text("actor", &r.actor)?,
            target: text("target", &r.target)?,
            rpc: text("rpc", &r.rpc)?,
            since,
            until,
            apps: grant.apps(),
            before_id,
            limit,
        };
        let list = self.core.pools.admin.list_audit(&filter).await.map_err(Error::from)?;
        let next_page_token = if list.len() == limit as usize {
            list.last().map(|e| e.id.to_string()).unwrap_or_default()
        } else {
            String::new()
        };
        Ok(pb::ListAuditEntriesResponse {
            entries: list
                .into_iter()
                .map(|e| pb::AuditEntry {
                    id: e.id,
                    time: Some(convert::ts_to_pb(e.at)),
                    actor: e.actor,
                    rpc: e.rpc,
                    target: e.target,
                    app: e.app,
                    outcome: e.outcome,
                    detail: e.detail,
                    before_json: e.before.unwrap_or_default(),
                    after_json: e.after.unwrap_or_default(),
                })
                .collect(),
            next_page_token,
        })
    }
}

#[tonic::async_trait]
impl AdminService for AdminApi {
    async fn create_task(&self, req: Request<pb::CreateTaskRequest>) -> Reply<pb::CreateTaskResponse> {
        let name = req.get_ref().task.as_ref().map(|t| t.name.as_str()).unwrap_or_default();
        let mut n = Note::write("CreateTask", task_target(name));
        let r = self.create_task_(&req, &mut n).await;
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
        let r = self.update_task_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn delete_task(&self, req: Request<pb::DeleteTaskRequest>) -> Reply<pb::DeleteTaskResponse> {
        let mut n = Note::write("DeleteTask", task_target(&req.get_ref().name));
        let r = self.delete_task_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn enable_task(&self, req: Request<pb::EnableTaskRequest>) -> Reply<pb::EnableTaskResponse> {
        let mut n = Note::write("EnableTask", task_target(&req.get_ref().name));
        let r = self.enable_task_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn disable_task(&self, req: Request<pb::DisableTaskRequest>) -> Reply<pb::DisableTaskResponse> {
        let mut n = Note::write("DisableTask", task_target(&req.get_ref().name));
        let r = self.disable_task_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn trigger_task(&self, req: Request<pb::TriggerTaskRequest>) -> Reply<pb::TriggerTaskResponse> {
        let mut n = Note::write("TriggerTask", task_target(&req.get_ref().name));
        let r = self.trigger_task_(&req, &mut n).await;
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
        let r = self.cancel_instance_(&req, &mut n).await;
        self.finish(n, r).await
    }

    async fn retry_instance(&self, req: Request<pb::RetryInstanceRequest>) -> Reply<pb::RetryInstanceResponse> {
        let mut n = Note::write("RetryInstance", format!("instance/{}", req.get_ref().id));
        let r = self.retry_instance_(&req, &mut n).await;
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
}
