//! AdminService calls on tasks: create, read, list, update, delete, enable, disable, trigger, preview.

use super::*;
use crate::{
    schedule::{fmt_duration, next_fire_from},
    transitions::DeleteOutcome,
};

impl AdminApi {
    pub(super) async fn create_task_(
        &self,
        req: &Request<pb::CreateTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::CreateTaskResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        let spec = req.get_ref().task.as_ref().ok_or_else(|| Error::invalid("task", "is required"))?;
        let now = self.now();
        let (name, config) = task_from_pb(spec, now)?;
        n.app = config.app.clone();
        grant.app(&config.app)?;
        let actor = grant.identity.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        let mut tx = self.core.pools.admin.begin().await?;
        let calendar = self.calendar_of(&mut tx, &config).await?;
        let next_fire_at = next_fire_from(&config, &calendar, None, now);
        let task = match tx.tasks().create_task(&NewTask { name: name.clone(), config, next_fire_at }, now, &a).await {
            Ok(t) => t,
            Err(StoreError::UniqueViolation(_)) => {
                return Err(Error::AlreadyExists(format!("task {}", validate::quote(&name))));
            }
            Err(e) => return Err(Error::from(e)),
        };
        graph::link_task(&mut tx, &grant, task.id, &task.name, &task.config, "task", false).await?;
        tx.commit().await?;
        self.core.signals.trigger.notify_one();
        n.after = Some(task_json(&task));
        let preview = Self::preview_of(&task, &calendar, now);
        Ok(pb::CreateTaskResponse { task: Some(convert::task_to_pb(&task)), preview: Some(preview) })
    }

    pub(super) async fn get_task_(
        &self,
        req: &Request<pb::GetTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::GetTaskResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let task = self.task(&req.get_ref().name).await?;
        grant.app(&task.config.app)?;
        let events = self.core.pools.admin.task_events(task.id, 20).await.map_err(Error::from)?;
        Ok(pb::GetTaskResponse {
            task: Some(convert::task_to_pb(&task)),
            events: events.iter().map(convert::task_event_to_pb).collect(),
        })
    }

    pub(super) async fn list_tasks_(
        &self,
        req: &Request<pb::ListTasksRequest>,
        n: &mut Note,
    ) -> Result<pb::ListTasksResponse> {
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

    pub(super) async fn update_task_(
        &self,
        req: &Request<pb::UpdateTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::UpdateTaskResponse> {
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
                convert::check_placement(&c, &task.name, "task")?;
                convert::check_timing(&c, &task.name, "task", now)?;
                let reschedule = reschedules(&task.config, &c);
                Ok(Some(Change {
                    update: TaskUpdate {
                        id: task.id,
                        expected_version: task.version,
                        config: c,
                        next_fire_at: None,
                        event: (TaskEventKind::Updated, format!("changed: {}", paths.join(", "))),
                    },
                    reschedule,
                }))
            })
            .await?;
        let mut conn = self.core.pools.admin.conn().await?;
        let calendar = self.calendar_of(&mut conn, &task.config).await?;
        let preview = Self::preview_of(&task, &calendar, self.now());
        Ok(pb::UpdateTaskResponse { task: Some(convert::task_to_pb(&task)), preview: Some(preview) })
    }

    pub(super) async fn delete_task_(
        &self,
        req: &Request<pb::DeleteTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::DeleteTaskResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        let name = &req.get_ref().name;
        let task = self.task(name).await?;
        n.app = task.config.app.clone();
        grant.app(&task.config.app)?;
        let actor = grant.identity.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        match crate::transitions::delete_task(&self.core.pools.admin, name, self.now(), &a, &self.core.routing)
            .await
            .map_err(Error::from)?
        {
            DeleteOutcome::Deleted(canceled) => {
                n.before = Some(task_json(&task));
                n.detail = format!("{canceled} pending instances canceled");
                Ok(pb::DeleteTaskResponse { canceled_instances: canceled })
            }
            DeleteOutcome::Named(ids) => {
                let tasks = self.core.pools.admin.conn().await?.tasks().tasks_by_ids(&ids).await?;
                let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
                Err(Error::FailedPrecondition(format!(
                    "task {} is named by the chains or DAG edges (--on-success, --on-failure, --after-all) of {}; \
                     change those first",
                    validate::quote(name),
                    names.join(", ")
                )))
            }
            DeleteOutcome::NotFound => Err(Error::NotFound(format!("task {}", validate::quote(name)))),
        }
    }

    pub(super) async fn enable_task_(
        &self,
        req: &Request<pb::EnableTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::EnableTaskResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let task = self
            .change_task(&req.get_ref().name, &grant, n, |task, now| {
                if task.config.enabled {
                    return Ok(None);
                }
                let mut c = task.config.clone();
                c.enabled = true;
                // A one-time task that already fired (or whose time passed) stays done.
                let done = matches!(&c.schedule, crate::model::Schedule::OneTime { at } if *at < now);
                Ok(Some(Change {
                    update: TaskUpdate {
                        id: task.id,
                        expected_version: task.version,
                        config: c,
                        next_fire_at: done.then_some(None),
                        event: (TaskEventKind::Enabled, "enabled; fires missed while disabled are not run".to_owned()),
                    },
                    reschedule: !done,
                }))
            })
            .await?;
        Ok(pb::EnableTaskResponse { task: Some(convert::task_to_pb(&task)) })
    }

    pub(super) async fn disable_task_(
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
                Ok(Some(Change {
                    update: TaskUpdate {
                        id: task.id,
                        expected_version: task.version,
                        config: c,
                        next_fire_at: Some(None),
                        event: (TaskEventKind::Disabled, "disabled".to_owned()),
                    },
                    reschedule: false,
                }))
            })
            .await?;
        Ok(pb::DisableTaskResponse { task: Some(convert::task_to_pb(&task)) })
    }

    pub(super) async fn trigger_task_(
        &self,
        req: &Request<pb::TriggerTaskRequest>,
        n: &mut Note,
        waiting: &mut Option<super::wait::Waiting>,
        fresh_key: &str,
    ) -> Result<pb::TriggerTaskResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let r = req.get_ref();
        let task = self.task(&r.name).await?;
        n.app = task.config.app.clone();
        grant.app(&task.config.app)?;
        *waiting = self.wait_place(r.wait.as_ref())?;
        let params = match &r.params {
            Some(p) => validate::params("params", p)?,
            None => task.config.params.clone(),
        };
        crate::birth::shape::check_keys(&task, &params).map_err(|why| Error::invalid("params", why))?;
        let key = if r.idempotency_key.is_empty() {
            fresh_key.to_owned()
        } else {
            validate::idempotency_key("idempotency_key", &r.idempotency_key)?;
            r.idempotency_key.clone()
        };
        let now = self.now();
        let run_at = run_at_of(r.when.as_ref(), &task, now)?;
        let tags = validate::instance_tags("tags", &r.tags)?;
        let trigger = ManualTrigger { params, key: key.clone(), actor: grant.identity.actor(), run_at, tags };
        let core = &self.core;
        let triggered = trigger_manual(&core.pools.admin, &task, &trigger, now, &core.scheduler_id, &core.traces);
        let (inst, created) = triggered.await.map_err(Error::from)?;
        if created {
            self.core.signals.dispatch.notify_one();
        }
        let how = match (created, &task.config.placement.unique_key) {
            (true, _) => "created".to_owned(),
            (false, Some(path)) if inst.idempotency_key != key => format!("existing: it holds the {path} value"),
            (false, _) => "existing".to_owned(),
        };
        n.detail = format!("instance {} ({how})", inst.id);
        // Tags read back only when the instance may have some.
        let instance = if r.tags.is_empty() && task.config.placement.search_params.is_empty() {
            convert::instance_to_pb(&inst)
        } else {
            self.with_tags(std::slice::from_ref(&inst)).await?.pop().unwrap_or_else(|| convert::instance_to_pb(&inst))
        };
        Ok(pb::TriggerTaskResponse { instance: Some(instance), created, done: false })
    }

    pub(super) async fn preview_schedule_(
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
        let extra = convert::extra_schedules_from_pb("extra_schedules", &r.extra_schedules, from)?;
        use crate::model::Schedule;
        if !extra.is_empty() && !matches!(schedule, Schedule::Cron { .. } | Schedule::FixedRate { .. }) {
            return Err(Error::invalid(
                "schedule",
                "must be a cron or fixed_rate schedule when extra_schedules are set (their fires are merged)",
            ));
        }
        let mut compiled =
            Compiled::compile(&schedule).map_err(|e| Error::invalid(format!("schedule.{}", e.field), e.reason))?;
        if !extra.is_empty() {
            let mut all = vec![compiled];
            for (i, s) in extra.iter().enumerate() {
                all.push(
                    Compiled::compile(s)
                        .map_err(|e| Error::invalid(format!("extra_schedules[{i}].{}", e.field), e.reason))?,
                );
            }
            compiled = Compiled::Merged(all);
        }
        // The window and jitter fields, checked as a task's are.
        let mut timing = crate::model::Timing {
            start: r.start_time.as_ref().map(|t| convert::ts_from_pb("start_time", t)).transpose()?,
            end: r.end_time.as_ref().map(|t| convert::ts_from_pb("end_time", t)).transpose()?,
            exclude_dates: convert::dates_from_pb("exclude_dates", &r.exclude_dates)?,
            calendar: None,
            jitter: None,
            extra_schedules: extra,
        };
        if let (Some(start), Some(end)) = (timing.start, timing.end)
            && end < start
        {
            return Err(Error::invalid("end_time", "is before start_time"));
        }
        let mut calendar = std::collections::BTreeSet::new();
        if !r.calendar.is_empty() {
            validate::task_name("calendar", &r.calendar)?;
            let conn = &mut self.core.pools.admin.conn().await?;
            calendar = conn
                .calendars()
                .get_calendar(&r.calendar, false)
                .await?
                .ok_or_else(|| {
                    Error::invalid("calendar", format!("no calendar named {}", validate::quote(&r.calendar)))
                })?
                .dates;
            timing.calendar = Some(r.calendar.clone());
        }
        let jitter = match &r.jitter {
            Some(d) => {
                let d = convert::duration_from_pb("jitter", d)?;
                validate::duration_between("jitter", d, Duration::from_millis(1), crate::model::MAX_JITTER)?;
                validate::task_name("task_name", &r.task_name)?;
                if schedule == crate::model::Schedule::Manual {
                    return Err(Error::invalid("jitter", "a manual schedule has no fires to delay"));
                }
                if let Some(p) = compiled.shortest_period(from, 1000).filter(|p| d >= *p) {
                    return Err(Error::invalid(
                        "jitter",
                        format!("{} is not shorter than the schedule's period {}", fmt_duration(d), fmt_duration(p)),
                    ));
                }
                Some((r.task_name.as_str(), d))
            }
            None => None,
        };
        let config = crate::model::TaskConfig { schedule, timing, ..preview_config() };
        let compiled = Compiled::for_task(&config, &calendar)
            .map_err(|e| Error::invalid(format!("schedule.{}", e.field), e.reason))?;
        let p = preview(&compiled, from, count);
        Ok(pb::PreviewScheduleResponse { preview: Some(convert::preview_to_pb(&p, jitter)) })
    }
}

/// A configuration to preview a bare schedule with (only its schedule and timing are read).
fn preview_config() -> crate::model::TaskConfig {
    crate::model::TaskConfig {
        app: String::new(),
        handler: String::new(),
        description: String::new(),
        schedule: crate::model::Schedule::Manual,
        params: "{}".to_owned(),
        enabled: true,
        misfire_policy: crate::model::MisfirePolicy::FireOnce,
        misfire_threshold: crate::model::DEFAULT_MISFIRE_THRESHOLD,
        max_catch_up: crate::model::DEFAULT_MAX_CATCH_UP,
        concurrency: crate::model::ConcurrencyPolicy::Allow,
        routing: crate::model::Routing::LeastLoaded,
        timeout: None,
        retry: Default::default(),
        labels: Default::default(),
        placement: Default::default(),
        timing: Default::default(),
        flow: Default::default(),
    }
}

/// Longest delay of a trigger's `run_at` / `delay`.
const MAX_TRIGGER_DELAY: Duration = Duration::from_secs(366 * 86_400);

/// When a trigger's instance runs: `None` for now. A `run_at` in the past within the task's misfire
/// threshold runs at once; further in the past is refused, like one more than 366 days ahead.
fn run_at_of(when: Option<&pb::trigger_task_request::When>, task: &Task, now: Ts) -> Result<Option<Ts>> {
    use pb::trigger_task_request::When;
    let at = match when {
        None => return Ok(None),
        Some(When::Delay(d)) => {
            let d = convert::duration_from_pb("delay", d)?;
            validate::duration_between("delay", d, Duration::ZERO, MAX_TRIGGER_DELAY)?;
            crate::model::add(now, d)
        }
        Some(When::RunAt(t)) => {
            let at = convert::ts_from_pb("run_at", t)?;
            let threshold = task.config.misfire_threshold;
            if at < crate::model::sub(now, threshold) {
                return Err(Error::invalid(
                    "run_at",
                    format!(
                        "{} is {} in the past, beyond the task's misfire threshold {} (now {}); nothing was created",
                        at.to_rfc3339(),
                        fmt_duration((now - at).to_std().unwrap_or_default()),
                        fmt_duration(threshold),
                        now.to_rfc3339()
                    ),
                ));
            }
            if at > crate::model::add(now, MAX_TRIGGER_DELAY) {
                return Err(Error::invalid("run_at", format!("{} is more than 366 days ahead", at.to_rfc3339())));
            }
            at.max(now)
        }
    };
    Ok(Some(at))
}
