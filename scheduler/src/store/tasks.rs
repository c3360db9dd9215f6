//! Operations on `ax_task` and `ax_task_event`.

use std::collections::HashMap;

use super::{
    BATCH, Instances, NewTask, Tasks,
    tables::TaskRaw,
    value::{Kind, Stmt, Value},
};
use crate::{
    error::{StoreError, StoreResult},
    model::{Instance, Task, TaskEvent, TaskEventKind, Ts, from_micros, to_micros},
};

/// Columns an update of a task's configuration leaves alone (identity, schedule state, versioning).
const NOT_CONFIG: [&str; 12] = [
    "id",
    "name",
    "next_fire_at",
    "version",
    "created_at",
    "updated_at",
    "coalesced_since",
    "coalesced_count",
    "paused_at",
    "paused_by",
    "pause_note",
    "paused_until",
];

/// What the trigger loop has to do next ([`Tasks::next_trigger_work`](super::Tasks::next_trigger_work)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextTriggerWork {
    /// The earliest next fire of tasks that allow overlap (claimed `lookahead` ahead of it).
    pub allow: Option<Ts>,
    /// The earliest next fire of tasks with another overlap policy (claimed once due).
    pub others: Option<Ts>,
    /// Rows in `ax_intake` wait to be consumed.
    pub intake: bool,
}

/// A due task claimed by the trigger, or the id of a row that could not be read.
pub type Claimed = Result<Task, (i64, StoreError)>;

impl Tasks<'_> {
    /// The tasks a `SELECT` of [`TaskRaw::columns`] returns.
    async fn read_tasks(&mut self, s: Stmt<'_>) -> StoreResult<Vec<Task>> {
        self.tx.fetch(s, TaskRaw::TABLE, |r| TaskRaw::read(r)?.into_task()).await
    }

    /// Inserts a task at version 1; its id. [`StoreError::UniqueViolation`] if the name exists.
    pub async fn insert_task(&mut self, task: &NewTask, now: Ts) -> StoreResult<i64> {
        let mut raw = TaskRaw::from_config(0, &task.name, &task.config);
        raw.next_fire_at = task.next_fire_at.map(to_micros);
        raw.created_at = to_micros(now);
        raw.updated_at = to_micros(now);
        let names = &TaskRaw::NAMES[1..];
        let mut s = Stmt::new(format!("INSERT INTO ax_task ({}) VALUES ", names.join(", ")));
        s.push_list(raw.into_values().into_iter().skip(1));
        self.tx.insert_id(s).await
    }

    /// Replaces the configuration of task `id` if its version is still `expected_version` (and
    /// sets its next fire time when `next_fire_at` is `Some`); whether it did.
    pub async fn update_task_config(
        &mut self,
        id: i64,
        expected_version: i64,
        config: &crate::model::TaskConfig,
        next_fire_at: Option<Option<Ts>>,
        now: Ts,
    ) -> StoreResult<bool> {
        let raw = TaskRaw::from_config(id, "", config);
        let mut s = Stmt::new("UPDATE ax_task SET ");
        for (name, v) in TaskRaw::NAMES.iter().zip(raw.into_values()) {
            if !NOT_CONFIG.contains(name) {
                s.push(name).push(" = ").push_bind(v).push(", ");
            }
        }
        if let Some(next) = next_fire_at {
            s.push("next_fire_at = ").push_bind(next.map(to_micros)).push(", ");
        }
        s.push("version = version + 1, updated_at = ").push_bind(to_micros(now));
        s.push(" WHERE id = ").push_bind(id).push(" AND version = ").push_bind(expected_version);
        Ok(self.tx.execute(s).await? == 1)
    }

    /// The task with this id.
    pub async fn task_by_id(&mut self, id: i64) -> StoreResult<Option<Task>> {
        let s = Stmt::new(format!("SELECT {} FROM ax_task WHERE id = ?", TaskRaw::columns())).bind(id);
        Ok(self.read_tasks(s).await?.pop())
    }

    /// The task with this name.
    pub async fn get_task(&mut self, name: &str) -> StoreResult<Option<Task>> {
        let s = Stmt::new(format!("SELECT {} FROM ax_task WHERE name = ?", TaskRaw::columns())).bind(name);
        Ok(self.read_tasks(s).await?.pop())
    }

    /// Locks the task with this name (waiting for other writers); its id.
    pub async fn lock_task(&mut self, name: &str) -> StoreResult<Option<i64>> {
        let s = Stmt::new(format!("SELECT id FROM ax_task WHERE name = ?{}", self.tx.dialect().for_update)).bind(name);
        Ok(self.tx.fetch(s, TaskRaw::TABLE, |r| r.take()).await?.pop())
    }

    /// Per task among these, its latest creation, change or resume event (since when its schedule
    /// owes fires; `explain::deadline::owed_since` reads the same from a task's events).
    pub async fn last_owed_changes(&mut self, task_ids: &[i64]) -> StoreResult<HashMap<i64, Ts>> {
        let mut out = HashMap::new();
        let kinds = [TaskEventKind::Created, TaskEventKind::Updated, TaskEventKind::Resumed];
        for chunk in task_ids.chunks(BATCH) {
            let mut s = Stmt::new("SELECT task_id, MAX(at) FROM ax_task_event WHERE kind IN ");
            s.push_list(kinds.iter().map(|k| Value::from(k.as_str()))).push(" AND task_id IN ");
            s.push_list(chunk.iter().copied()).push(" GROUP BY task_id");
            let rows =
                self.tx.fetch(s, "ax_task_event", |r| Ok((r.take::<i64>()?, from_micros(r.take::<i64>()?)))).await?;
            out.extend(rows);
        }
        Ok(out)
    }

    /// The tasks of these apps that have a deadline (`must_finish_within`), by id.
    pub async fn tasks_with_deadlines(&mut self, apps: &[String]) -> StoreResult<Vec<Task>> {
        let mut s =
            Stmt::new(format!("SELECT {} FROM ax_task WHERE must_finish_within_us IS NOT NULL", TaskRaw::columns()));
        super::instances::push_apps(&mut s, "app", Some(apps));
        s.push(" ORDER BY id");
        self.read_tasks(s).await
    }

    /// The tasks of `app` subscribed to events named `name`, by name.
    pub async fn subscribed_tasks(&mut self, app: &str, name: &str) -> StoreResult<Vec<Task>> {
        let s = Stmt::new(format!(
            "SELECT {} FROM ax_task WHERE on_event = ? AND app = ? ORDER BY name",
            TaskRaw::columns()
        ))
        .bind(name)
        .bind(app);
        self.read_tasks(s).await
    }

    /// Tasks ordered by name, after `after_name`, optionally of one app.
    pub async fn list_tasks(
        &mut self,
        apps: Option<&[String]>,
        after_name: Option<&str>,
        limit: u32,
    ) -> StoreResult<Vec<Task>> {
        let mut s = Stmt::new(format!("SELECT {} FROM ax_task WHERE 1 = 1", TaskRaw::columns()));
        super::instances::push_apps(&mut s, "app", apps);
        if let Some(after) = after_name {
            s.push(" AND name > ").push_bind(after);
        }
        s.push(" ORDER BY name LIMIT ").push_bind(i64::from(limit));
        self.read_tasks(s).await
    }
}

impl Instances<'_> {
    /// The top-level instances (no children) of these tasks fired in (`after`, `until`]: what
    /// the deadline look judges, in one statement for every task due a look.
    pub async fn fired_between(&mut self, task_ids: &[i64], after: Ts, until: Ts) -> StoreResult<Vec<Instance>> {
        let mut out = Vec::new();
        for chunk in task_ids.chunks(BATCH) {
            // Through the key rows (the primary key leads with task_id on every backend).
            let mut s = super::instances::select_instances(
                " WHERE id IN (SELECT instance_id FROM ax_instance_key WHERE task_id IN ",
            );
            s.push_list(chunk.iter().copied()).push(") AND parent_id IS NULL AND fire_at > ");
            s.push_bind(to_micros(after)).push(" AND fire_at <= ").push_bind(to_micros(until));
            out.extend(self.read_instances(s).await?);
        }
        Ok(out)
    }

    /// Gives a task's PENDING instances its current selector and priority (instances not started
    /// yet follow a change of where and in what order they run).
    pub async fn restamp_pending(&mut self, task_id: i64, p: &crate::model::Placement) -> StoreResult<()> {
        let step = crate::model::duration_micros(crate::model::PRIORITY_STEP) * i64::from(p.priority);
        let s = Stmt::new(
            "UPDATE ax_instance SET selector = ?, priority = ?, ready_at = available_at - ? \
             WHERE task_id = ? AND status = 'PENDING' AND (selector <> ? OR priority <> ?)",
        )
        .bind(p.selector.as_str())
        .bind(i32::from(p.priority))
        .bind(step)
        .bind(task_id)
        .bind(p.selector.as_str())
        .bind(i32::from(p.priority));
        self.tx.execute(s).await?;
        Ok(())
    }
}

impl Tasks<'_> {
    /// Deletes the task row, its limit row and the graph edges its configuration declared.
    pub async fn delete_task_row(&mut self, id: i64) -> StoreResult<()> {
        self.tx.execute(Stmt::new("DELETE FROM ax_task WHERE id = ?").bind(id)).await?;
        self.tx.flow().write_edges(id, &[]).await?;
        self.tx.limits().set_task_limit(id, None).await
    }

    /// Records a task event.
    pub async fn insert_task_event(
        &mut self,
        task_id: i64,
        task_name: &str,
        at: Ts,
        kind: TaskEventKind,
        actor: &str,
        message: &str,
    ) -> StoreResult<()> {
        let e = TaskEvent { task_id, at, kind, actor: actor.to_owned(), message: message.to_owned(), fires: None };
        self.insert_event(task_name, &e).await
    }

    /// Records a task event, with the fires it is about when it has them.
    pub async fn insert_event(&mut self, task_name: &str, e: &TaskEvent) -> StoreResult<()> {
        let s = Stmt::new(
            "INSERT INTO ax_task_event (task_id, task_name, at, kind, actor, message, first_fire_at, last_fire_at, \
             fire_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(e.task_id)
        .bind(task_name)
        .bind(to_micros(e.at))
        .bind(e.kind.as_str())
        .bind(e.actor.as_str())
        .bind(e.message.as_str())
        .bind(e.fires.map(|f| to_micros(f.first)))
        .bind(e.fires.map(|f| to_micros(f.last)))
        .bind(e.fires.map(|f| i64::from(f.count)));
        self.tx.execute(s).await?;
        Ok(())
    }

    /// The most recent task events, newest first.
    pub async fn task_events(&mut self, task_id: i64, limit: u32) -> StoreResult<Vec<TaskEvent>> {
        self.task_events_before(task_id, None, limit).await
    }

    /// The most recent task events at or before `at` (any time if `None`), newest first.
    pub async fn task_events_before(
        &mut self,
        task_id: i64,
        at: Option<Ts>,
        limit: u32,
    ) -> StoreResult<Vec<TaskEvent>> {
        let mut s =
            Stmt::new("SELECT task_id, at, kind, actor, message, first_fire_at, last_fire_at, fire_count FROM ax_task_event WHERE task_id = ?").bind(task_id);
        if let Some(at) = at {
            s.push(" AND at <= ").push_bind(to_micros(at));
        }
        s.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(limit));
        self.tx
            .fetch(s, "ax_task_event", |r| {
                let task_id = r.take()?;
                let at = from_micros(r.take()?);
                let kind: String = r.take()?;
                Ok(TaskEvent {
                    task_id,
                    at,
                    kind: kind.parse().map_err(|e| StoreError::Corrupt { table: "ax_task_event", reason: e })?,
                    actor: r.take()?,
                    message: r.take()?,
                    fires: fire_span(r.take()?, r.take()?, r.take()?),
                })
            })
            .await
    }

    /// What the trigger loop has to do next, in one statement: the earliest next fire of tasks
    /// that allow overlapping instances, of tasks with another overlap policy (fired only once
    /// due), and whether `ax_intake` holds rows to consume. One index probe per policy: a `<>` or
    /// `IN` over the policy column would read every such task.
    pub async fn next_trigger_work(&mut self) -> StoreResult<NextTriggerWork> {
        let min = |p: &str| {
            format!(
                "(SELECT MIN(next_fire_at) FROM ax_task WHERE concurrency_policy = '{p}' AND next_fire_at IS NOT NULL)"
            )
        };
        let others: Vec<String> = crate::model::ConcurrencyPolicy::ALL
            .iter()
            .filter(|p| p.decides_at_fire_time())
            .map(|p| min(p.as_str()))
            .collect();
        let s = Stmt::new(format!(
            "SELECT {}, {}, (SELECT MIN(id) FROM ax_intake WHERE error IS NULL)",
            min("ALLOW"),
            others.join(", ")
        ));
        let n = others.len();
        let (allow, rest, intake): (Option<i64>, Vec<Option<i64>>, Option<i64>) = self
            .tx
            .fetch_one(s, TaskRaw::TABLE, |r| {
                let allow = r.take()?;
                let rest = (0..n).map(|_| r.take()).collect::<StoreResult<Vec<Option<i64>>>>()?;
                Ok((allow, rest, r.take()?))
            })
            .await?;
        Ok(NextTriggerWork {
            allow: allow.map(from_micros),
            others: rest.into_iter().flatten().min().map(from_micros),
            intake: intake.is_some(),
        })
    }

    /// Locks up to `limit` tasks due by `horizon` (tasks with an overlap policy other than ALLOW:
    /// due by `now`), earliest first, skipping tasks other axd hold.
    pub async fn claim_due_tasks(&mut self, now: Ts, horizon: Ts, limit: u32) -> StoreResult<Vec<Claimed>> {
        let s = Stmt::new(format!(
            "SELECT {} FROM ax_task WHERE next_fire_at IS NOT NULL AND next_fire_at <= ? \
             AND (concurrency_policy = 'ALLOW' OR next_fire_at <= ?) ORDER BY next_fire_at LIMIT ?{}",
            TaskRaw::columns(),
            self.tx.dialect().skip_locked
        ))
        .bind(to_micros(horizon))
        .bind(to_micros(now))
        .bind(i64::from(limit));
        self.tx
            .fetch(s, TaskRaw::TABLE, |r| {
                Ok(match TaskRaw::read(r) {
                    Ok(raw) => {
                        let id = raw.id;
                        raw.into_task().map_err(|e| (id, e))
                    }
                    Err(e) => Err((0, e)),
                })
            })
            .await
    }

    /// Disables a task and clears its next fire time.
    pub async fn disable_task(&mut self, id: i64, now: Ts) -> StoreResult<()> {
        let s = Stmt::new("UPDATE ax_task SET enabled = FALSE, next_fire_at = NULL, updated_at = ? WHERE id = ?")
            .bind(to_micros(now))
            .bind(id);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Sets tasks' next fire times (`None`: no more fires).
    pub async fn set_next_fires(&mut self, next: &[(i64, Option<Ts>)]) -> StoreResult<()> {
        if next.is_empty() {
            return Ok(());
        }
        if self.tx.dialect().arrays {
            let rows = next.iter().map(|(id, at)| vec![Value::I64(*id), Value::OptI64(at.map(to_micros))]).collect();
            let s = super::postgres::unnest_stmt(
                "UPDATE ax_task AS t SET next_fire_at = v.at FROM {UNNEST} WHERE t.id = v.id",
                &["id", "at"],
                &[Kind::I64, Kind::OptI64],
                rows,
            );
            self.tx.execute(s).await?;
            return Ok(());
        }
        for chunk in next.chunks(BATCH) {
            let mut s = Stmt::new("UPDATE ax_task SET next_fire_at = CASE id");
            for (id, at) in chunk {
                s.push(" WHEN ").push_bind(*id).push(" THEN ").push_bind(at.map(to_micros));
            }
            s.push(" END WHERE id IN ").push_list(chunk.iter().map(|(id, _)| *id));
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// FIXED_DELAY tasks among `task_ids` that wait for their instance to finish get their next
    /// fire `interval` after `now`.
    pub async fn schedule_fixed_delay_after(&mut self, task_ids: &[i64], now: Ts) -> StoreResult<()> {
        for chunk in task_ids.chunks(BATCH) {
            let mut s = Stmt::new("UPDATE ax_task SET next_fire_at = ");
            s.push_bind(to_micros(now));
            s.push(
                " + interval_us WHERE schedule_kind = 'FIXED_DELAY' AND enabled AND next_fire_at IS NULL AND id IN ",
            );
            s.push_list(chunk.iter().copied());
            self.tx.execute(s).await?;
        }
        Ok(())
    }
}

impl Tasks<'_> {
    /// Inserts a task with its limit row and its "created" event; the task as stored.
    /// [`StoreError::UniqueViolation`] if the name exists.
    pub async fn create_task(&mut self, task: &NewTask, now: Ts, actor: &super::Actor<'_>) -> StoreResult<Task> {
        let id = self.insert_task(task, now).await?;
        self.tx.limits().set_task_limit(id, Some(&task.config)).await?;
        self.insert_task_event(id, &task.name, now, TaskEventKind::Created, actor.caller, "created").await?;
        self.tx.notify(super::Notice::Tasks).await?;
        self.task_by_id(id)
            .await?
            .ok_or_else(|| StoreError::Corrupt { table: "ax_task", reason: format!("task {id} vanished") })
    }

    /// Applies `update` if the task's version is unchanged, with its limit row, the selector and
    /// priority of its PENDING instances and its event; `None` if it changed (read again and retry)
    /// or is gone. `before`, the configuration read with that version, spares the writes to the
    /// limit row and the instances when the change leaves them as they are (`None`: write both).
    pub async fn update_task(
        &mut self,
        u: &super::TaskUpdate,
        before: Option<&crate::model::TaskConfig>,
        now: Ts,
        actor: &super::Actor<'_>,
    ) -> StoreResult<Option<Task>> {
        if !self.update_task_config(u.id, u.expected_version, &u.config, u.next_fire_at, now).await? {
            return Ok(None);
        }
        // Only what the change moves: a disable or a new schedule locks neither the limit row nor
        // the pending instances, rows the dispatcher's claims lock too (CI once saw a DisableTask
        // chosen as a MySQL deadlock victim beside three claiming axd; which statements met is
        // not known, and fewer locks leave fewer ways to meet).
        let (new, old) = (&u.config, before);
        if old.is_none_or(|o| super::routing::limit_row(o) != super::routing::limit_row(new)) {
            self.tx.limits().set_task_limit(u.id, Some(new)).await?;
        }
        let (p, q) = (&new.placement, old.map(|o| &o.placement));
        if q.is_none_or(|q| q.selector != p.selector || q.priority != p.priority) {
            self.tx.instances().restamp_pending(u.id, p).await?;
        }
        let task = self.task_by_id(u.id).await?;
        if let Some(t) = &task {
            self.insert_task_event(t.id, &t.name, now, u.event.0, actor.caller, &u.event.1).await?;
        }
        self.tx.notify(super::Notice::Tasks).await?;
        Ok(task)
    }
}

impl super::Store {
    /// Inserts a task with its "created" event; [`StoreError::UniqueViolation`] if the name exists.
    pub async fn create_task(&self, task: &NewTask, now: Ts, actor: &super::Actor<'_>) -> StoreResult<Task> {
        let mut tx = self.begin().await?;
        let created = tx.tasks().create_task(task, now, actor).await?;
        tx.commit().await?;
        Ok(created)
    }

    /// Applies `update` if the task's version is unchanged, with its event; `None` if it changed
    /// (read again and retry) or is gone.
    pub async fn update_task(
        &self,
        u: &super::TaskUpdate,
        now: Ts,
        actor: &super::Actor<'_>,
    ) -> StoreResult<Option<Task>> {
        let mut tx = self.begin().await?;
        let task = tx.tasks().update_task(u, None, now, actor).await?;
        if task.is_some() {
            tx.commit().await?;
        }
        Ok(task)
    }
}

/// The fires a stored task event is about: all three columns, or none.
fn fire_span(first: Option<i64>, last: Option<i64>, count: Option<i64>) -> Option<crate::model::FireSpan> {
    Some(crate::model::FireSpan {
        first: from_micros(first?),
        last: from_micros(last?),
        count: u32::try_from(count?).unwrap_or(u32::MAX),
    })
}
