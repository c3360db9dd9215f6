//! AdminService calls on tasks: create, read, list, update, delete, enable, disable, trigger, preview.

use super::*;

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
        match crate::lifecycle::apply::delete_task(&self.core.pools.admin, name, self.now(), &a, &self.core.routing)
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

    pub(super) async fn trigger_task_(
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
        if task.config.routing == crate::model::Routing::Hash
            && let Some(field) = &task.config.placement.hash_key
        {
            crate::routing::hash::key_of(&params, Some(field), &task.name)
                .map_err(|why| Error::invalid("params", why))?;
        }
        let key = if r.idempotency_key.is_empty() {
            unique_key()
        } else {
            validate::idempotency_key("idempotency_key", &r.idempotency_key)?;
            r.idempotency_key.clone()
        };
        let trigger = ManualTrigger { params, key, actor: grant.identity.actor() };
        let (core, now) = (&self.core, self.now());
        let triggered = trigger_manual(&core.pools.admin, &task, &trigger, now, &core.scheduler_id, &core.traces);
        let (inst, created) = triggered.await.map_err(Error::from)?;
        if created {
            self.core.signals.dispatch.notify_one();
        }
        n.detail = format!("instance {} ({})", inst.id, if created { "created" } else { "existing" });
        Ok(pb::TriggerTaskResponse { instance: Some(convert::instance_to_pb(&inst)), created })
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
        let compiled =
            Compiled::compile(&schedule).map_err(|e| Error::invalid(format!("schedule.{}", e.field), e.reason))?;
        let p = preview(&compiled, from, count);
        Ok(pb::PreviewScheduleResponse { preview: Some(convert::preview_to_pb(&p)) })
    }
}
