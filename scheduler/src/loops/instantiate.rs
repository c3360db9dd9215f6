//! Creating instances outside the schedule's own rounds — a manual trigger (now or later), a
//! backfill, an intake row, a chain or DAG successor — inside a transaction its caller owns: each
//! fan-out task's parent gets its children, every instance its creation event, and what to log,
//! count and trace waits for the commit ([`Spawned::after_commit`]).
//!
//! A (task, idempotency key) that has an instance already creates nothing (the key row is the
//! primary key of `ax_instance_key`), so whoever calls this twice for one key gets one instance.

use std::collections::HashMap;

use crate::{
    alerts::AlertEvent,
    error::{StoreError, StoreResult},
    lifecycle::log::{Change, Changes},
    loops::create,
    model::{Instance, InstanceSource, InstanceStatus, Task, Ts},
    store::{InstanceRow, ManualTrigger, NewEvent, NewInstance, Store, Tx},
    traces::Traces,
};

/// One instance to create, for `task` (an index into the caller's tasks).
#[derive(Debug, Clone)]
pub struct Spawn {
    pub task: usize,
    pub new: NewInstance,
}

/// What [`spawn`] created; log, count and trace it once the transaction has committed.
#[derive(Debug, Default)]
#[must_use = "call .after_commit() once the transaction has committed"]
pub struct Spawned {
    /// The spawns that were created (not already there), as (instance id, index into the spawns).
    pub created: Vec<(i64, usize)>,
    /// Instances created PENDING (children included): (id, app, available at).
    pub pending: Vec<(i64, String, Ts)>,
    changes: Changes,
    tally: crate::prometheus::Tally,
    /// Roots to trace.
    traced: Vec<Traced>,
}

/// A created root instance whose span is recorded after the commit.
#[derive(Debug)]
struct Traced {
    id: i64,
    task: String,
    app: String,
    trace_parent: Option<String>,
    source: InstanceSource,
    status: InstanceStatus,
    fire_at: Ts,
}

impl Spawned {
    /// Logs the changes, records the metrics and the root spans.
    pub fn after_commit(self, traces: &Traces, started: std::time::SystemTime) {
        self.changes.log();
        self.tally.record();
        let span = (started, std::time::SystemTime::now());
        for t in self.traced {
            traces.created(t.trace_parent.as_deref(), t.id, &t.task, &t.app, t.source, t.status, t.fire_at, span);
        }
    }

    /// Adds another batch's after-commit work to this one's.
    pub fn merge(&mut self, other: Spawned) {
        self.created.extend(other.created);
        self.pending.extend(other.pending);
        self.changes.extend(other.changes);
        self.tally.merge(other.tally);
        self.traced.extend(other.traced);
    }
}

/// Creates `spawns` (of `tasks`) in `tx` with their creation events, each fan-out task's parent
/// with its children, and the alert of a broadcast that reached no worker. A spawn whose (task,
/// key) has an instance already is left out of [`Spawned::created`]; two transactions racing with
/// one key make the later fail with [`StoreError::UniqueViolation`].
pub async fn spawn(
    tx: &mut Tx,
    tasks: &[&Task],
    mut spawns: Vec<Spawn>,
    now: Ts,
    scheduler_id: &str,
) -> StoreResult<Spawned> {
    let mut out = Spawned::default();
    if spawns.is_empty() {
        return Ok(out);
    }
    let workers = if spawns.iter().any(|s| create::needs_workers(tasks[s.task])) {
        tx.list_workers(None).await?
    } else {
        Vec::new()
    };
    let mut plans = Vec::with_capacity(spawns.len());
    for s in &mut spawns {
        let task = tasks[s.task];
        if s.new.status == InstanceStatus::Pending
            && let Some(note) = create::selector_note(task, &workers)
        {
            s.new.reason = format!("{}; {note}", s.new.reason);
        }
        plans.push(match create::shape(task, &workers) {
            create::Shape::Single => None,
            create::Shape::Fanout(p) => {
                create::make_parent(task, &mut s.new, &p);
                Some(p)
            }
        });
    }
    let rows: Vec<InstanceRow<'_>> = spawns.iter().map(|s| InstanceRow { task: tasks[s.task], new: &s.new }).collect();
    let inserted = tx.insert_instances(&rows, now).await?;
    let index: HashMap<(i64, &str), usize> =
        spawns.iter().enumerate().map(|(n, s)| ((tasks[s.task].id, s.new.key.as_str()), n)).collect();
    let mut kids: Vec<(usize, NewInstance)> = Vec::new();
    let mut events = Vec::new();
    let mut alerts = Vec::new();
    for (id, task_id, key) in &inserted {
        let Some(&n) = index.get(&(*task_id, key.as_str())) else { continue };
        let (s, task) = (&spawns[n], tasks[spawns[n].task]);
        out.created.push((*id, n));
        if let Some(p) = plans[n].as_ref().filter(|_| s.new.status == InstanceStatus::Waiting) {
            kids.extend(create::children(task, *id, &s.new, p).into_iter().map(|k| (s.task, k)));
        }
        events.extend(creation_events(*id, &s.new, now, scheduler_id));
        if s.new.status == InstanceStatus::Pending {
            out.pending.push((*id, task.config.app.clone(), s.new.available_at));
        }
        if create::empty_broadcast(&s.new) {
            alerts.push(create::created_alert(AlertEvent::FinalFailure, task, *id, &s.new, now));
        }
        out.tally.add(
            crate::prometheus::INSTANCES_CREATED,
            &task.config.app,
            Some(("status", s.new.status.as_str())),
            1,
        );
        out.traced.push(Traced {
            id: *id,
            task: task.name.clone(),
            app: task.config.app.clone(),
            trace_parent: s.new.trace_parent.clone(),
            source: s.new.source,
            status: s.new.status,
            fire_at: s.new.fire_at,
        });
    }
    let kid_rows: Vec<InstanceRow<'_>> = kids.iter().map(|(t, k)| InstanceRow { task: tasks[*t], new: k }).collect();
    let kid_ids = tx.insert_instances(&kid_rows, now).await?;
    let kid_index: HashMap<(i64, &str), usize> =
        kids.iter().enumerate().map(|(n, (t, k))| ((tasks[*t].id, k.key.as_str()), n)).collect();
    for (id, task_id, key) in &kid_ids {
        let Some(&n) = kid_index.get(&(*task_id, key.as_str())) else { continue };
        let (t, k) = &kids[n];
        events.push(creation_event(*id, k, now, scheduler_id));
        out.pending.push((*id, tasks[*t].config.app.clone(), k.available_at));
        out.tally.add(crate::prometheus::INSTANCES_CREATED, &tasks[*t].config.app, Some(("status", "PENDING")), 1);
    }
    tx.insert_events(&events).await?;
    crate::alerts::outbox::enqueue(tx, &alerts, now).await?;
    if !out.pending.is_empty() {
        tx.notify(crate::store::Notice::Work).await?;
    }
    let app_of: HashMap<i64, (&str, &str)> = out
        .created
        .iter()
        .map(|(id, n)| (*id, tasks[spawns[*n].task]))
        .chain(kid_ids.iter().zip(&kids).map(|((id, _, _), (t, _))| (*id, tasks[*t])))
        .map(|(id, t)| (id, (t.name.as_str(), t.config.app.as_str())))
        .collect();
    for e in &events {
        let (task, app) = app_of.get(&e.instance_id).copied().unwrap_or_default();
        out.changes.push(Change {
            instance_id: e.instance_id,
            attempt: 0,
            task: task.to_owned(),
            app: app.to_owned(),
            worker: String::new(),
            from: e.from,
            to: e.to,
            reason: e.reason.clone(),
        });
    }
    Ok(out)
}

/// The events that record an instance's creation: one, or for a broadcast that found no worker its
/// creation as WAITING and its end as FAILED.
pub fn creation_events(id: i64, n: &NewInstance, now: Ts, scheduler_id: &str) -> Vec<NewEvent> {
    if create::empty_broadcast(n) {
        let mut waiting = creation_event(id, n, now, scheduler_id);
        waiting.to = InstanceStatus::Waiting;
        waiting.reason = "fired as a broadcast".to_owned();
        let mut failed = creation_event(id, n, now, scheduler_id);
        failed.from = Some(InstanceStatus::Waiting);
        return vec![waiting, failed];
    }
    vec![creation_event(id, n, now, scheduler_id)]
}

/// The event of an instance's creation in the state it was created in.
pub fn creation_event(id: i64, n: &NewInstance, now: Ts, scheduler_id: &str) -> NewEvent {
    NewEvent {
        instance_id: id,
        at: now,
        from: None,
        to: n.status,
        attempt: 0,
        scheduler_id: scheduler_id.to_owned(),
        worker_id: String::new(),
        reason: n.reason.clone(),
    }
}

/// Creates a manual instance of `task` (for a broadcast or sharded task, a parent and its
/// children) available from `run_at` (`now` for "at once"), or returns the existing one for the
/// same key (`false`).
pub async fn trigger_manual(
    store: &Store,
    task: &Task,
    trigger: &ManualTrigger,
    now: Ts,
    scheduler_id: &str,
    traces: &Traces,
) -> StoreResult<(Instance, bool)> {
    let started = std::time::SystemTime::now();
    let run_at = trigger.run_at.unwrap_or(now);
    let reason = match trigger.run_at.filter(|at| *at > now) {
        Some(at) => format!(
            "triggered by {}, to run at {}",
            trigger.actor,
            at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
        ),
        None => format!("triggered by {}", trigger.actor),
    };
    let new = NewInstance {
        fire_at: run_at,
        available_at: run_at,
        key: trigger.key.clone(),
        source: InstanceSource::Manual,
        status: InstanceStatus::Pending,
        params: trigger.params.clone(),
        reason,
        trace_parent: traces.new_root(),
        route: create::route_of(task, &trigger.params),
        lineage: Default::default(),
    };
    let mut tx = store.begin().await?;
    let spawned = match spawn(&mut tx, &[task], vec![Spawn { task: 0, new }], now, scheduler_id).await {
        Ok(s) => Some(s),
        // Another trigger with the same key committed first: it made the one instance. The
        // transaction is dropped (rolled back) unused.
        Err(StoreError::UniqueViolation(_)) => None,
        Err(e) => return Err(e),
    };
    let created = match spawned {
        Some(s) if !s.created.is_empty() => {
            tx.commit().await?;
            s.after_commit(traces, started);
            true
        }
        _ => {
            drop(tx);
            false
        }
    };
    let instance = store.conn().await?.instance_by_key(task.id, &trigger.key).await?.ok_or_else(|| {
        StoreError::Corrupt { table: "ax_instance_key", reason: format!("no instance for key {:?}", trigger.key) }
    })?;
    Ok((instance, created))
}
