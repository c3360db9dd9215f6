//! Where every instance is born: a schedule's fire or catch-up (the trigger loop), a manual trigger
//! (now or later), a backfill, an intake row, a chain or DAG successor, and the children of a
//! broadcast or sharded fire. Each path builds its [`NewInstance`]s, [`conceive`]s them (a
//! selector that matches no worker is noted, a fan-out task's instance becomes a parent with its
//! child plans) and hands them to [`bear`], inside a transaction its caller owns: the rows, their
//! children, every creation event, the alerts of a SKIPPED fire or of a broadcast that reached no
//! worker, and the notice to dispatchers are written there, and what to log, count and trace
//! waits for the commit ([`Spawned::after_commit`]). [`spawn`] does both steps for the paths that
//! need nothing in between.
//!
//! A (task, idempotency key) that has an instance already creates nothing (the key row is the
//! primary key of `ax_instance_key`), so whoever calls this twice for one key gets one instance.

use std::collections::HashMap;

pub mod events;
pub mod shape;

use crate::{
    error::{StoreError, StoreResult},
    lifecycle::log::{Change, Changes},
    model::add,
    model::{
        Instance, InstanceEvent, InstanceSource, InstanceStatus, Task, Ts, WorkerRecord,
        alerts::{AlertCause, AlertEvent},
        trail,
    },
    routing::fanout::ChildPlan,
    store::{InstanceRow, ManualTrigger, NewInstance, Store, Tx, UniqueHold},
    traces::Traces,
};

/// One instance to create, for `task` (an index into the caller's tasks).
#[derive(Debug, Clone)]
pub struct Spawn {
    pub task: usize,
    pub new: NewInstance,
}

/// An instance ready to be born ([`conceive`]): its task (an index into the caller's tasks), the
/// instance, and for a fan-out task the children it gets once it has an id.
#[derive(Debug, Clone)]
pub struct Birth {
    pub task: usize,
    pub new: NewInstance,
    pub children: Option<Vec<ChildPlan>>,
}

/// Readies `new`, an instance of `task` (index `task_index`), against the live `workers`: a
/// PENDING instance whose selector matches none of them says so in its reason, and a broadcast or
/// sharded task's instance becomes the parent of the children planned for it.
pub fn conceive(task_index: usize, task: &Task, mut new: NewInstance, workers: &[WorkerRecord]) -> Birth {
    if new.status == InstanceStatus::Pending
        && let Some(note) = shape::selector_note(task, workers)
    {
        new.reason = format!("{}; {note}", new.reason);
    }
    let children = match shape::shape(task, workers) {
        shape::Shape::Single => None,
        shape::Shape::Fanout(plans) => {
            shape::make_parent(task, &mut new, &plans);
            Some(plans)
        }
    };
    Birth { task: task_index, new, children }
}

/// What [`bear`] created; log, count and trace it once the transaction has committed.
#[derive(Debug, Default)]
#[must_use = "call .after_commit() once the transaction has committed"]
pub struct Spawned {
    /// The births that were created (not already there), as (instance id, index into the births).
    pub created: Vec<(i64, usize)>,
    /// Instances created PENDING (children included): (id, app, available at).
    pub pending: Vec<(i64, String, Ts)>,
    /// Instances created SKIPPED (by an overlap policy).
    pub skipped: usize,
    /// Creation events recorded, as rows or held by their instance rows (children included).
    pub events: usize,
    changes: Changes,
    tally: crate::prometheus::Tally,
    /// Instances to trace.
    traced: Vec<Traced>,
}

/// A created instance whose span is recorded after the commit.
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
    /// Logs the changes, records the metrics and the spans.
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
        self.skipped += other.skipped;
        self.events += other.events;
        self.changes.extend(other.changes);
        self.tally.merge(other.tally);
        self.traced.extend(other.traced);
    }
}

/// Readies `spawns` (of `tasks`) with [`conceive`] and creates them with [`bear`]. A spawn whose
/// (task, key) has an instance already is left out of [`Spawned::created`]; two transactions
/// racing with one key make the later fail with [`StoreError::UniqueViolation`].
pub async fn spawn(
    tx: &mut Tx,
    tasks: &[&Task],
    spawns: Vec<Spawn>,
    now: Ts,
    scheduler_id: &str,
) -> StoreResult<Spawned> {
    if spawns.is_empty() {
        return Ok(Spawned::default());
    }
    let workers = if spawns.iter().any(|s| shape::needs_workers(tasks[s.task])) {
        tx.cluster().list_workers(None).await?
    } else {
        Vec::new()
    };
    let births: Vec<Birth> = spawns.into_iter().map(|s| conceive(s.task, tasks[s.task], s.new, &workers)).collect();
    bear(tx, tasks, &births, Vec::new(), now, scheduler_id, true).await
}

/// [`spawn`] for callers whose keys another transaction may be creating at the same moment: `None`
/// when it created nothing — the keys have instances, or a racing transaction committed them
/// first (this one then failed on the key and is to be dropped, rolled back, unused).
pub async fn spawn_new(
    tx: &mut Tx,
    tasks: &[&Task],
    spawns: Vec<Spawn>,
    now: Ts,
    scheduler_id: &str,
) -> StoreResult<Option<Spawned>> {
    match spawn(tx, tasks, spawns, now, scheduler_id).await {
        Ok(s) if !s.created.is_empty() => Ok(Some(s)),
        Ok(_) | Err(StoreError::UniqueViolation(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Creates `births` (of `tasks`) in `tx`: the rows, then each WAITING parent's children, every
/// creation event, the alerts of a SKIPPED instance and of a broadcast that reached no worker
/// (with `alerts`, the caller's own of the same transaction), and a notice to dispatchers when
/// something is PENDING. A birth whose (task, key) has an instance already creates nothing.
/// `trace`: whether the created instances get spans.
pub async fn bear(
    tx: &mut Tx,
    tasks: &[&Task],
    births: &[Birth],
    mut alerts: Vec<AlertCause>,
    now: Ts,
    scheduler_id: &str,
    trace: bool,
) -> StoreResult<Spawned> {
    let mut out = Spawned::default();
    if births.is_empty() {
        crate::alerts::outbox::enqueue(tx, &alerts, now).await?;
        return Ok(out);
    }
    // A row that can hold its creation event does (model::trail::CREATED): one event row less.
    let in_row = tx.trail_in_row();
    let holds =
        |n: &NewInstance| in_row && trail::holds_creation(n.source, n.status, n.route.parent_id, n.fire_at, &n.reason);
    let rows: Vec<InstanceRow<'_>> = births
        .iter()
        .map(|b| InstanceRow { task: tasks[b.task], new: &b.new, creator: holds(&b.new).then_some(scheduler_id) })
        .collect();
    let inserted = tx.instances().insert_instances(&rows, now).await?;
    // Children, now that their parents have ids.
    let index: HashMap<(i64, &str), usize> =
        births.iter().enumerate().map(|(n, b)| ((tasks[b.task].id, b.new.key.as_str()), n)).collect();
    let mut created: Vec<(i64, usize, &NewInstance)> = Vec::with_capacity(inserted.len());
    let mut kids: Vec<(usize, NewInstance)> = Vec::new();
    for (id, task_id, key) in &inserted {
        let Some(&n) = index.get(&(*task_id, key.as_str())) else { continue };
        let b = &births[n];
        out.created.push((*id, n));
        created.push((*id, b.task, &b.new));
        if let Some(plans) = b.children.as_ref().filter(|_| b.new.status == InstanceStatus::Waiting) {
            kids.extend(shape::children(tasks[b.task], *id, &b.new, plans).into_iter().map(|k| (b.task, k)));
        }
    }
    let kid_rows: Vec<InstanceRow<'_>> =
        kids.iter().map(|(t, k)| InstanceRow { task: tasks[*t], new: k, creator: None }).collect();
    let inserted_kids = tx.instances().insert_instances(&kid_rows, now).await?;
    let kid_index: HashMap<(i64, &str), usize> =
        kids.iter().enumerate().map(|(n, (t, k))| ((tasks[*t].id, k.key.as_str()), n)).collect();
    for (id, task_id, key) in &inserted_kids {
        let Some(&n) = kid_index.get(&(*task_id, key.as_str())) else { continue };
        created.push((*id, kids[n].0, &kids[n].1));
    }
    let mut events = Vec::with_capacity(created.len());
    for (id, ti, n) in created {
        let task = tasks[ti];
        let app = &task.config.app;
        out.tally.add(crate::prometheus::INSTANCES_CREATED, app, Some(("status", n.status.as_str())), 1);
        match n.status {
            InstanceStatus::Skipped => {
                out.skipped += 1;
                alerts.push(shape::created_alert(AlertEvent::Skipped, task, id, n, now));
            }
            InstanceStatus::Pending => out.pending.push((id, app.clone(), n.available_at)),
            _ => {}
        }
        if shape::empty_broadcast(n) {
            alerts.push(shape::created_alert(AlertEvent::FinalFailure, task, id, n, now));
        }
        for event in creation_events(id, n, now, scheduler_id) {
            if Changes::wants(event.from, event.to) {
                out.changes.push(Change {
                    instance_id: id,
                    attempt: 0,
                    task: task.name.clone(),
                    app: app.clone(),
                    worker: String::new(),
                    from: event.from,
                    to: event.to,
                    reason: event.reason.clone(),
                });
            }
            out.events += 1;
            if !holds(n) {
                events.push(event);
            }
        }
        // A child shares its parent's root span: that span is recorded once, for the parent.
        if trace && n.route.parent_id.is_none() {
            out.traced.push(Traced {
                id,
                task: task.name.clone(),
                app: app.clone(),
                trace_parent: n.trace_parent.clone(),
                source: n.source,
                status: n.status,
                fire_at: n.fire_at,
            });
        }
    }
    tx.instances().insert_events(&events).await?;
    crate::alerts::outbox::enqueue(tx, &alerts, now).await?;
    if !out.pending.is_empty() {
        tx.notify(crate::store::Notice::Work).await?;
    }
    Ok(out)
}

/// The events that record an instance's creation: one, or for a broadcast that found no worker its
/// creation as WAITING and its end as FAILED.
pub fn creation_events(id: i64, n: &NewInstance, now: Ts, scheduler_id: &str) -> Vec<InstanceEvent> {
    if shape::empty_broadcast(n) {
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
pub fn creation_event(id: i64, n: &NewInstance, now: Ts, scheduler_id: &str) -> InstanceEvent {
    InstanceEvent {
        id: 0,
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
/// children) available from `run_at` (`now` for "at once"), or returns the existing one (`false`)
/// for the same idempotency key or, for a task with a uniqueness window, for the same value of its
/// uniqueness key triggered less than the window ago.
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
        route: shape::route_of(task, &trigger.params),
        tags: shape::search_tags(task, &trigger.params).into_iter().chain(trigger.tags.iter().cloned()).collect(),
        lineage: Default::default(),
    };
    let mut tx = store.begin().await?;
    let unique = shape::unique_of(task, &trigger.params);
    if let Some((value, window)) = &unique
        && let UniqueHold::HeldBy(id, _) = tx.limits().take_unique(task.id, value, now, add(now, *window)).await?
    {
        // An instance triggered less than the window ago holds the value: it is the answer.
        drop(tx);
        let instance = store.conn().await?.instances().get_instance(id).await?.ok_or_else(|| StoreError::Corrupt {
            table: "ax_unique",
            reason: format!("no instance {id} for task {}", task.id),
        })?;
        return Ok((instance, false));
    }
    let created = match spawn_new(&mut tx, &[task], vec![Spawn { task: 0, new }], now, scheduler_id).await? {
        Some(s) => {
            if let Some((value, _)) = &unique {
                tx.limits().hold_unique(task.id, value, Some(s.created[0].0)).await?;
            }
            tx.commit().await?;
            s.after_commit(traces, started);
            true
        }
        None => {
            drop(tx);
            false
        }
    };
    let instance = store.conn().await?.instances().instance_by_key(task.id, &trigger.key).await?.ok_or_else(|| {
        StoreError::Corrupt { table: "ax_instance_key", reason: format!("no instance for key {:?}", trigger.key) }
    })?;
    Ok((instance, created))
}
