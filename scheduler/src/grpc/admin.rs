//! AdminService: the operator API (axctl and any generated client).
//!
//! Every call authorizes the caller, validates every field (errors name the field), and changes
//! nothing when it fails. Task changes are optimistic: read, compute, write if the version is
//! unchanged, retry otherwise.

use std::{sync::Arc, time::Duration};

use ax_proto::v1::{self as pb, admin_service_server::AdminService};
use tonic::{Request, Response, Status};

use crate::{
    auth::{self, Access, Identity},
    core::Core,
    error::{Error, Result, StoreError},
    grpc::convert::{self, apply_field, initial_next_fire, task_from_pb},
    lifecycle::apply::{CancelOutcome, RetryOutcome, cancel_instance, retry_instance},
    loops::trigger::trigger_manual,
    model::{Task, TaskEventKind, Ts},
    schedule::{Compiled, preview},
    store::{Actor, InstanceFilter, ManualTrigger, NewTask, TaskUpdate},
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

    fn caller<T>(&self, req: &Request<T>, access: Access) -> Result<Identity> {
        let id = auth::identity(self.core.auth, req)?;
        auth::authorize_admin(&id, access)?;
        Ok(id)
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
        actor: &Identity,
        change: impl Fn(&Task, Ts) -> Result<Option<TaskUpdate>>,
    ) -> Result<Task> {
        for _ in 0..8 {
            let task = self.task(name).await?;
            let now = self.now();
            let Some(update) = change(&task, now)? else {
                return Ok(task);
            };
            let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor.actor() };
            if let Some(t) = self.core.pools.admin.update_task(&update, now, &a).await? {
                self.core.signals.trigger.notify_one();
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

#[tonic::async_trait]
impl AdminService for AdminApi {
    async fn create_task(&self, req: Request<pb::CreateTaskRequest>) -> Reply<pb::CreateTaskResponse> {
        let caller = self.caller(&req, Access::Write)?;
        let spec = req.get_ref().task.as_ref().ok_or_else(|| Error::invalid("task", "is required"))?;
        let now = self.now();
        let (name, config) = task_from_pb(spec, now)?;
        let next_fire_at = initial_next_fire(&config, now);
        let actor = caller.actor();
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
                return Err(Error::AlreadyExists(format!("task {}", validate::quote(&name))).into());
            }
            Err(e) => return Err(Error::from(e).into()),
        };
        self.core.signals.trigger.notify_one();
        tracing::info!(task = %task.name, by = %actor, "task created");
        let preview = Self::preview_of(&task, now);
        Ok(Response::new(pb::CreateTaskResponse { task: Some(convert::task_to_pb(&task)), preview: Some(preview) }))
    }

    async fn get_task(&self, req: Request<pb::GetTaskRequest>) -> Reply<pb::GetTaskResponse> {
        self.caller(&req, Access::Read)?;
        let task = self.task(&req.get_ref().name).await?;
        let events = self.core.pools.admin.task_events(task.id, 20).await.map_err(Error::from)?;
        Ok(Response::new(pb::GetTaskResponse {
            task: Some(convert::task_to_pb(&task)),
            events: events.iter().map(convert::task_event_to_pb).collect(),
        }))
    }

    async fn list_tasks(&self, req: Request<pb::ListTasksRequest>) -> Reply<pb::ListTasksResponse> {
        self.caller(&req, Access::Read)?;
        let r = req.get_ref();
        let limit = page_size("page_size", r.page_size, 100)?;
        if !r.app.is_empty() {
            validate::app("app", &r.app)?;
        }
        let after = (!r.page_token.is_empty()).then_some(r.page_token.as_str());
        let app = (!r.app.is_empty()).then_some(r.app.as_str());
        let tasks = self.core.pools.admin.list_tasks(app, after, limit).await.map_err(Error::from)?;
        let next_page_token = if tasks.len() == limit as usize {
            tasks.last().map(|t| t.name.clone()).unwrap_or_default()
        } else {
            String::new()
        };
        Ok(Response::new(pb::ListTasksResponse {
            tasks: tasks.iter().map(convert::task_to_pb).collect(),
            next_page_token,
        }))
    }

    async fn update_task(&self, req: Request<pb::UpdateTaskRequest>) -> Reply<pb::UpdateTaskResponse> {
        let caller = self.caller(&req, Access::Write)?;
        let r = req.get_ref();
        let spec = r.task.as_ref().ok_or_else(|| Error::invalid("task", "is required"))?;
        if !spec.name.is_empty() && spec.name != r.name {
            return Err(Error::invalid("task.name", "tasks cannot be renamed; leave it empty or equal to name").into());
        }
        let paths: Vec<String> = r.update_mask.as_ref().map(|m| m.paths.clone()).unwrap_or_default();
        if paths.is_empty() {
            return Err(Error::invalid("update_mask", "names no field; nothing to update").into());
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
                )
                .into());
            }
        }
        let task = self
            .change_task(&r.name, &caller, |task, now| {
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
        Ok(Response::new(pb::UpdateTaskResponse { task: Some(convert::task_to_pb(&task)), preview: Some(preview) }))
    }

    async fn delete_task(&self, req: Request<pb::DeleteTaskRequest>) -> Reply<pb::DeleteTaskResponse> {
        let caller = self.caller(&req, Access::Write)?;
        let name = &req.get_ref().name;
        validate::task_name("name", name)?;
        let actor = caller.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        match crate::lifecycle::apply::delete_task(&self.core.pools.admin, name, self.now(), &a)
            .await
            .map_err(Error::from)?
        {
            Some(n) => Ok(Response::new(pb::DeleteTaskResponse { canceled_instances: n })),
            None => Err(Error::NotFound(format!("task {}", validate::quote(name))).into()),
        }
    }

    async fn enable_task(&self, req: Request<pb::EnableTaskRequest>) -> Reply<pb::EnableTaskResponse> {
        let caller = self.caller(&req, Access::Write)?;
        let task = self
            .change_task(&req.get_ref().name, &caller, |task, now| {
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
        Ok(Response::new(pb::EnableTaskResponse { task: Some(convert::task_to_pb(&task)) }))
    }

    async fn disable_task(&self, req: Request<pb::DisableTaskRequest>) -> Reply<pb::DisableTaskResponse> {
        let caller = self.caller(&req, Access::Write)?;
        let task = self
            .change_task(&req.get_ref().name, &caller, |task, _| {
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
        Ok(Response::new(pb::DisableTaskResponse { task: Some(convert::task_to_pb(&task)) }))
    }

    async fn trigger_task(&self, req: Request<pb::TriggerTaskRequest>) -> Reply<pb::TriggerTaskResponse> {
        let caller = self.caller(&req, Access::Write)?;
        let r = req.get_ref();
        let task = self.task(&r.name).await?;
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
        let trigger = ManualTrigger { params, key, actor: caller.actor() };
        let triggered = trigger_manual(&self.core.pools.admin, &task, &trigger, self.now(), &self.core.scheduler_id);
        let (inst, created) = triggered.await.map_err(Error::from)?;
        if created {
            self.core.signals.dispatch.notify_one();
        }
        Ok(Response::new(pb::TriggerTaskResponse { instance: Some(convert::instance_to_pb(&inst)), created }))
    }

    async fn preview_schedule(&self, req: Request<pb::PreviewScheduleRequest>) -> Reply<pb::PreviewScheduleResponse> {
        self.caller(&req, Access::Read)?;
        let r = req.get_ref();
        let now = self.now();
        let from = match &r.from {
            Some(t) => convert::ts_from_pb("from", t)?,
            None => now,
        };
        let count = match r.count {
            0 => 10,
            1..=1000 => r.count as usize,
            n => return Err(Error::invalid("count", format!("{n} is out of range 1-1000")).into()),
        };
        let schedule = r.schedule.as_ref().ok_or_else(|| Error::invalid("schedule", "is required"))?;
        let schedule = convert::schedule_from_pb("schedule", schedule, from)?;
        let compiled =
            Compiled::compile(&schedule).map_err(|e| Error::invalid(format!("schedule.{}", e.field), e.reason))?;
        let p = preview(&compiled, from, count);
        Ok(Response::new(pb::PreviewScheduleResponse { preview: Some(convert::preview_to_pb(&p)) }))
    }

    async fn list_instances(&self, req: Request<pb::ListInstancesRequest>) -> Reply<pb::ListInstancesResponse> {
        self.caller(&req, Access::Read)?;
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
            before_id,
            limit,
        };
        let list = self.core.pools.admin.list_instances(&filter).await.map_err(Error::from)?;
        let next_page_token = if list.len() == limit as usize {
            list.last().map(|i| i.id.to_string()).unwrap_or_default()
        } else {
            String::new()
        };
        Ok(Response::new(pb::ListInstancesResponse {
            instances: list.iter().map(convert::instance_to_pb).collect(),
            next_page_token,
        }))
    }

    async fn get_instance(&self, req: Request<pb::GetInstanceRequest>) -> Reply<pb::GetInstanceResponse> {
        self.caller(&req, Access::Read)?;
        let id = req.get_ref().id;
        let inst = self
            .core
            .pools
            .admin
            .get_instance(id)
            .await
            .map_err(Error::from)?
            .ok_or_else(|| Error::NotFound(format!("instance {id}")))?;
        let events = self.core.pools.admin.instance_events(id).await.map_err(Error::from)?;
        Ok(Response::new(pb::GetInstanceResponse {
            instance: Some(convert::instance_to_pb(&inst)),
            events: events.iter().map(convert::event_to_pb).collect(),
        }))
    }

    async fn cancel_instance(&self, req: Request<pb::CancelInstanceRequest>) -> Reply<pb::CancelInstanceResponse> {
        let caller = self.caller(&req, Access::Write)?;
        let r = req.get_ref();
        validate::text("reason", &r.reason, validate::MAX_REASON)?;
        let actor = caller.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        match cancel_instance(&self.core.pools.admin, r.id, &r.reason, self.now(), &a).await.map_err(Error::from)? {
            CancelOutcome::Canceled(i) => {
                self.core.signals.commands.notify_one();
                Ok(Response::new(pb::CancelInstanceResponse { instance: Some(convert::instance_to_pb(&i)) }))
            }
            CancelOutcome::AlreadyFinal(i) => {
                Err(Error::FailedPrecondition(format!("instance {} is already {}; nothing to cancel", i.id, i.status))
                    .into())
            }
            CancelOutcome::NotFound => Err(Error::NotFound(format!("instance {}", r.id)).into()),
        }
    }

    async fn retry_instance(&self, req: Request<pb::RetryInstanceRequest>) -> Reply<pb::RetryInstanceResponse> {
        let caller = self.caller(&req, Access::Write)?;
        let id = req.get_ref().id;
        let actor = caller.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        match retry_instance(&self.core.pools.admin, id, self.now(), &a).await.map_err(Error::from)? {
            RetryOutcome::Retried(i) => {
                self.core.signals.dispatch.notify_one();
                Ok(Response::new(pb::RetryInstanceResponse { instance: Some(convert::instance_to_pb(&i)) }))
            }
            RetryOutcome::NotFinal(i) => Err(Error::FailedPrecondition(format!(
                "instance {} is {}; only a finished instance can be retried",
                i.id, i.status
            ))
            .into()),
            RetryOutcome::NotFound => Err(Error::NotFound(format!("instance {id}")).into()),
        }
    }

    async fn get_instance_logs(&self, req: Request<pb::GetInstanceLogsRequest>) -> Reply<pb::GetInstanceLogsResponse> {
        self.caller(&req, Access::Read)?;
        let r = req.get_ref();
        let limit = page_size("limit", r.limit, 1000)?;
        if self.core.pools.admin.get_instance(r.id).await.map_err(Error::from)?.is_none() {
            return Err(Error::NotFound(format!("instance {}", r.id)).into());
        }
        let (lines, dropped) =
            self.core.pools.admin.instance_logs(r.id, r.after_seq, limit).await.map_err(Error::from)?;
        Ok(Response::new(pb::GetInstanceLogsResponse {
            lines: lines.iter().map(convert::log_to_pb).collect(),
            dropped,
        }))
    }

    async fn list_workers(&self, req: Request<pb::ListWorkersRequest>) -> Reply<pb::ListWorkersResponse> {
        self.caller(&req, Access::Read)?;
        let app = &req.get_ref().app;
        if !app.is_empty() {
            validate::app("app", app)?;
        }
        let list =
            self.core.pools.admin.list_workers((!app.is_empty()).then_some(app.as_str())).await.map_err(Error::from)?;
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
        let workers = list.iter().filter(|w| alive.contains(&w.scheduler_id)).map(convert::worker_to_pb).collect();
        Ok(Response::new(pb::ListWorkersResponse { workers }))
    }

    async fn list_schedulers(&self, req: Request<pb::ListSchedulersRequest>) -> Reply<pb::ListSchedulersResponse> {
        self.caller(&req, Access::Read)?;
        let schedulers = self.core.pools.admin.list_schedulers().await.map_err(Error::from)?;
        let workers = self.core.pools.admin.list_workers(None).await.map_err(Error::from)?;
        let alive_since = self.core.alive_since();
        Ok(Response::new(pb::ListSchedulersResponse {
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
        }))
    }

    async fn get_cluster_stats(&self, req: Request<pb::GetClusterStatsRequest>) -> Reply<pb::GetClusterStatsResponse> {
        self.caller(&req, Access::Read)?;
        let s = self.core.pools.admin.cluster_stats(self.core.alive_since()).await.map_err(Error::from)?;
        Ok(Response::new(pb::GetClusterStatsResponse {
            tasks: s.tasks,
            enabled_tasks: s.enabled_tasks,
            instances: s
                .instances
                .iter()
                .map(|(status, n)| pb::StatusCount { status: convert::status_to_pb(*status).into(), count: *n })
                .collect(),
            workers: s.workers,
            schedulers: s.schedulers,
        }))
    }
}
