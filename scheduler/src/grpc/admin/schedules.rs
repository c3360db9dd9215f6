//! AdminService calls on a task's schedule beyond its configuration — pause and resume, backfill —
//! and on workflow runs.

use super::*;
use crate::{
    loops::{backfill, pause},
    model::{MAX_BACKFILL, Pause},
    schedule::next_fire_from,
};

/// Longest pause with an end.
const MAX_PAUSE: Duration = Duration::from_secs(366 * 86_400);

impl AdminApi {
    /// Locks the task named `name` for a pause or resume, in `tx`, and checks the caller's scope.
    async fn lock_for_pause(&self, tx: &mut Tx, name: &str, grant: &Grant, n: &mut Note) -> Result<Task> {
        validate::task_name("name", name)?;
        let not_found = || Error::NotFound(format!("task {}", validate::quote(name)));
        tx.tasks().lock_task(name).await?.ok_or_else(not_found)?;
        let task = tx.tasks().get_task(name).await?.ok_or_else(not_found)?;
        n.app = task.config.app.clone();
        grant.app(&task.config.app)?;
        Ok(task)
    }

    /// Ends a pause or resume: the task's event, the notice to other axd, the commit, the trigger
    /// woken, and the audit note's before and after; the task as stored now.
    async fn finish_pause_change(
        &self,
        mut tx: Tx,
        task: &Task,
        (kind, message): (TaskEventKind, String),
        actor: &str,
        now: Ts,
        n: &mut Note,
    ) -> Result<Task> {
        tx.tasks().insert_task_event(task.id, &task.name, now, kind, actor, &message).await?;
        tx.notify(crate::store::Notice::Tasks).await?;
        let after =
            tx.tasks().task_by_id(task.id).await?.ok_or_else(|| Error::NotFound(format!("task {}", task.name)))?;
        tx.commit().await?;
        self.core.signals.trigger.notify_one();
        n.before = Some(task_json(task));
        n.after = Some(task_json(&after));
        n.detail = message;
        Ok(after)
    }

    pub(super) async fn pause_task_(
        &self,
        req: &Request<pb::PauseTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::PauseTaskResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let r = req.get_ref();
        let now = self.now();
        if r.note.trim().is_empty() {
            return Err(Error::invalid("note", "is required: say why the task is paused"));
        }
        validate::text("note", &r.note, validate::MAX_REASON)?;
        let until = r.until.as_ref().map(|t| convert::ts_from_pb("until", t)).transpose()?;
        if let Some(u) = until {
            if u <= now {
                return Err(Error::invalid(
                    "until",
                    format!("{} is not after now ({})", u.to_rfc3339(), now.to_rfc3339()),
                ));
            }
            if u > crate::model::add(now, MAX_PAUSE) {
                return Err(Error::invalid("until", format!("{} is more than 366 days ahead", u.to_rfc3339())));
            }
        }
        let actor = grant.identity.actor();
        let mut tx = self.core.pools.admin.begin().await?;
        let task = self.lock_for_pause(&mut tx, &r.name, &grant, n).await?;
        let p = Pause { at: task.pause.as_ref().map_or(now, |p| p.at), by: actor.clone(), note: r.note.clone(), until };
        let calendar = self.calendar_of(&mut tx, &task.config).await?;
        tx.tasks().set_pause(task.id, Some(&p)).await?;
        tx.tasks().set_next_fire(task.id, next_fire_from(&task.config, &calendar, Some(&p), now)).await?;
        let message = match until {
            Some(u) => format!("paused until {}: {}", u.to_rfc3339(), r.note),
            None => format!("paused until resumed: {}", r.note),
        };
        let after = self.finish_pause_change(tx, &task, (TaskEventKind::Paused, message), &actor, now, n).await?;
        Ok(pb::PauseTaskResponse { task: Some(convert::task_to_pb(&after)) })
    }

    pub(super) async fn resume_task_(
        &self,
        req: &Request<pb::ResumeTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::ResumeTaskResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let r = req.get_ref();
        let now = self.now();
        let actor = grant.identity.actor();
        let mut tx = self.core.pools.admin.begin().await?;
        let task = self.lock_for_pause(&mut tx, &r.name, &grant, n).await?;
        let Some(p) = task.pause.clone() else {
            n.detail = "not paused; no change".to_owned();
            return Ok(pb::ResumeTaskResponse { task: Some(convert::task_to_pb(&task)) });
        };
        let calendar = self.calendar_of(&mut tx, &task.config).await?;
        tx.tasks().set_pause(task.id, None).await?;
        // Fires that fell in the pause are not run: the schedule goes on from now.
        tx.tasks().set_next_fire(task.id, next_fire_from(&task.config, &calendar, None, now)).await?;
        let message = format!("resumed by {actor}; {}", pause::skipped(&task, &calendar, &p, now));
        let after = self.finish_pause_change(tx, &task, (TaskEventKind::Resumed, message), &actor, now, n).await?;
        Ok(pb::ResumeTaskResponse { task: Some(convert::task_to_pb(&after)) })
    }

    pub(super) async fn backfill_task_(
        &self,
        req: &Request<pb::BackfillTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::BackfillTaskResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let r = req.get_ref();
        let task = self.task(&r.name).await?;
        n.app = task.config.app.clone();
        grant.app(&task.config.app)?;
        let from = convert::ts_from_pb("from", r.from.as_ref().ok_or_else(|| Error::invalid("from", "is required"))?)?;
        let to = convert::ts_from_pb("to", r.to.as_ref().ok_or_else(|| Error::invalid("to", "is required"))?)?;
        let now = self.now();
        let calendar = self.calendar_of(&mut self.core.pools.admin.conn().await?, &task.config).await?;
        let fires = backfill::fires_between(&task, &calendar, from, to, now).map_err(|e| match e {
            backfill::RangeError::Schedule(why) => Error::invalid("name", format!("task {}: {why}", task.name)),
            backfill::RangeError::Reversed => {
                Error::invalid("to", format!("{} is before from {}", to.to_rfc3339(), from.to_rfc3339()))
            }
            backfill::RangeError::Future(now) => Error::invalid(
                "to",
                format!(
                    "{} is in the future (now {}): a backfill creates past fires",
                    to.to_rfc3339(),
                    now.to_rfc3339()
                ),
            ),
            backfill::RangeError::TooMany(at) => Error::invalid(
                "to",
                format!(
                    "the range holds more than {MAX_BACKFILL} fires (the cap; the next is at {}): split it",
                    at.to_rfc3339()
                ),
            ),
        })?;
        let actor = grant.identity.actor();
        let (core, id) = (&self.core, &self.core.scheduler_id);
        let req = backfill::Request { fires: &fires, dry_run: r.dry_run, now, actor: &actor };
        let done = backfill::backfill(&core.pools.admin, &task, req, id, &core.traces).await?;
        let created = done.iter().filter(|f| f.created).count();
        if created > 0 && !r.dry_run {
            self.core.signals.dispatch.notify_one();
        }
        n.detail = format!(
            "{}{created} of {} fire(s) from {} to {}",
            if r.dry_run { "dry run: would create " } else { "created " },
            fires.len(),
            from.to_rfc3339(),
            to.to_rfc3339()
        );
        Ok(pb::BackfillTaskResponse {
            fires: done
                .iter()
                .map(|f| pb::BackfilledFire {
                    time: Some(convert::ts_to_pb(f.fire_at)),
                    instance_id: f.instance_id.unwrap_or(0),
                    created: f.created,
                })
                .collect(),
            created: u32::try_from(created).unwrap_or(u32::MAX),
        })
    }

    pub(super) async fn get_run_(&self, req: &Request<pb::GetRunRequest>, n: &mut Note) -> Result<pb::GetRunResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let run_id = req.get_ref().run_id;
        let mut conn = self.core.pools.admin.conn().await?;
        let mut instances = conn.flow().run_instances(run_id, 1000).await?;
        let first = instances.first().filter(|i| i.id == run_id && i.lineage.run_id.is_none());
        let Some(first) = first else {
            return Err(Error::NotFound(format!("run {run_id} (the id of the first instance of a run)")));
        };
        n.app = first.app.clone();
        grant.app(&first.app)?;
        instances.retain(|i| grant.app(&i.app).is_ok());
        let ids: Vec<i64> = instances.iter().map(|i| i.id).collect();
        let shown: std::collections::HashSet<i64> = ids.iter().copied().collect();
        let edges = conn
            .flow()
            .links_touching(&ids)
            .await?
            .into_iter()
            .filter(|(f, t, _)| shown.contains(f) && shown.contains(t))
            .map(|(f, t, k)| pb::RunEdge {
                from_instance_id: f,
                to_instance_id: t,
                kind: convert::link_kind_to_pb(k).into(),
            })
            .collect();
        Ok(pb::GetRunResponse { run_id, instances: instances.iter().map(convert::instance_to_pb).collect(), edges })
    }
}
