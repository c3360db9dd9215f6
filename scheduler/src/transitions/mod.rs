//! Applying the state machine's decisions: the transactions that lock instances, run the pure
//! transitions of [`crate::lifecycle`] in order, and write what they decided — changed rows,
//! events, queued cancels, FIXED_DELAY next fires, successors ([`successors`]) and notifications —
//! together. This layer sits between the state machine, which does no I/O, and the store.

use std::collections::HashMap;

pub mod bulk;
pub mod successors;
#[cfg(test)]
mod tests;
mod trails;

use crate::{
    birth::Spawned,
    error::StoreResult,
    lifecycle::{
        AcceptOutcome, Batch, CompleteOutcome, Ctx, WorkerOp, WorkerOpOutcome,
        fanout::AttemptOutcome,
        log::{Change, Changes},
    },
    model::{Instance, InstanceEvent, InstanceStatus, Ts, WorkerStreak},
    prometheus::Tally,
    routing::{
        RoutingState,
        cooldown::{CooldownRule, Streak, after_failure},
        fanout::ChildCounts,
    },
    store::{Actor, Notice, Store, StreakKey, Tx},
    traces::Traces,
};

/// Outcome of a cancel request.
#[derive(Debug, Clone)]
pub enum CancelOutcome {
    /// Canceled; if the attempt was held by a worker, a Cancel command was queued for its axd.
    Canceled(Instance),
    /// Already terminal; nothing changed.
    AlreadyFinal(Instance),
    /// No such instance.
    NotFound,
}

/// Outcome of a retry request.
#[derive(Debug, Clone)]
pub enum RetryOutcome {
    /// Back to PENDING.
    Retried(Instance),
    /// Not terminal; nothing changed.
    NotFinal(Instance),
    /// No such instance.
    NotFound,
}

/// What a batch means for the metrics: finished instances by status, retries, timeouts, and the
/// fire lag of first attempts that started.
fn tally<'a>(rows: &impl Fn(i64) -> Option<&'a Instance>, batch: &Batch) -> Tally {
    use crate::prometheus as p;
    let mut t = Tally::default();
    if !p::enabled() {
        return t;
    }
    for i in batch.finalized.iter().filter_map(|id| rows(*id)) {
        t.add(p::INSTANCES_FINISHED, &i.app, Some(("status", i.status.as_str())), 1);
    }
    for e in &batch.events {
        let Some(i) = rows(e.instance_id) else { continue };
        match (e.from, e.to) {
            (Some(InstanceStatus::Failed | InstanceStatus::Timeout), InstanceStatus::Pending) => {
                t.add(p::RETRIES, &i.app, None, 1);
            }
            (Some(InstanceStatus::Running), InstanceStatus::Timeout) => t.add(p::TIMEOUTS, &i.app, None, 1),
            (Some(InstanceStatus::Dispatched), InstanceStatus::Running) if e.attempt == 1 => {
                t.observe(p::FIRE_LAG, (e.at - i.fire_at).as_seconds_f64());
            }
            _ => {}
        }
    }
    t
}

/// What [`persist`] leaves for after the commit: the changes to log, the figures to count and the
/// failure streaks to remember, none of which may happen before the transaction is durable.
#[must_use = "call .after_commit() once the transaction has committed"]
pub struct Persisted {
    changes: Changes,
    tally: Tally,
    streaks: Vec<((String, String, String), Option<WorkerStreak>)>,
    /// Instances that chains and DAG joins created.
    successors: Option<Spawned>,
}

impl Persisted {
    /// Logs the changes, records the metrics and tells this axd's routing about new streaks.
    pub fn after_commit(self, routing: &RoutingState) {
        self.changes.log();
        self.tally.record();
        if !self.streaks.is_empty() {
            routing.note_streaks(&self.streaks);
        }
        if let Some(s) = self.successors {
            // Their root spans are their upstreams' (a run is one trace): nothing new to record.
            s.after_commit(&Traces::off(), std::time::SystemTime::now());
        }
    }

    /// Instances created PENDING by chains and DAG joins: (id, app, available at).
    pub fn successors(&self) -> &[(i64, String, Ts)] {
        self.successors.as_ref().map_or(&[], |s| &s.pending)
    }
}

/// Parents whose children this batch finished (or took out of a final state, an operator's retry):
/// locked after their children (every writer locks children first, so two cannot deadlock),
/// counted, and settled. The parents' effects join the batch; the changed parents are returned.
async fn settle_parents(
    tx: &mut Tx,
    rows: &HashMap<i64, Instance>,
    batch: &mut Batch,
    ctx: Ctx<'_>,
) -> StoreResult<HashMap<i64, Instance>> {
    let mut first_from: HashMap<i64, Option<InstanceStatus>> = HashMap::new();
    for e in &batch.events {
        first_from.entry(e.instance_id).or_insert(e.from);
    }
    let mut ids: Vec<i64> = rows
        .values()
        .filter(|i| {
            batch.finalized.contains(&i.id)
                || first_from.get(&i.id).copied().flatten().is_some_and(InstanceStatus::is_terminal)
        })
        .filter_map(|i| i.route.parent_id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let mut parents = tx.instances().lock_instances(&ids).await?;
    let mut counts: HashMap<i64, ChildCounts> = HashMap::new();
    for (parent, status, n) in tx.instances().child_counts(&ids).await? {
        counts.entry(parent).or_default().add(status, n);
    }
    let mut settled = Batch::default();
    for (id, p) in parents.iter_mut() {
        if let Some(fx) = crate::lifecycle::fanout::settle(p, &counts.get(id).copied().unwrap_or_default(), ctx) {
            settled.add(*id, fx);
        }
    }
    parents.retain(|id, _| settled.changed.contains(id));
    tx.instances().write_instances(&parents.values().collect::<Vec<_>>()).await?;
    batch.merge(settled);
    Ok(parents)
}

/// Adds the attempts this batch ended to their workers' failure streaks (a success ends one), and
/// starts cooldowns by each task's rule. The rows are created first if missing and then locked, so
/// that axd recording failures of one worker at once count each of them.
async fn update_streaks(
    tx: &mut Tx,
    outcomes: &[AttemptOutcome],
    ctx: Ctx<'_>,
    routing: &RoutingState,
) -> StoreResult<Vec<((String, String, String), Option<WorkerStreak>)>> {
    if outcomes.is_empty() {
        return Ok(Vec::new());
    }
    let key = |o: &AttemptOutcome| (o.app.clone(), o.worker_id.clone(), o.handler.clone());
    let failing: Vec<&AttemptOutcome> = outcomes.iter().filter(|o| o.failed).collect();
    let mut task_ids: Vec<i64> = failing.iter().map(|o| o.task_id).collect();
    task_ids.sort_unstable();
    task_ids.dedup();
    if !failing.is_empty() {
        // Missing rows first, so that the lock below covers every key this batch counts.
        let seeds: Vec<WorkerStreak> = failing
            .iter()
            .map(|o| WorkerStreak {
                app: o.app.clone(),
                worker_id: o.worker_id.clone(),
                handler: o.handler.clone(),
                failures: 0,
                cooldown_until: None,
                cooldown: None,
            })
            .collect();
        tx.limits().seed_streaks(&seeds, ctx.now).await?;
    }
    let keys: Vec<(String, String, String)> = outcomes.iter().map(key).collect();
    let refs: Vec<StreakKey<'_>> = keys.iter().map(|(a, w, h)| (a.as_str(), w.as_str(), h.as_str())).collect();
    let locked = tx.limits().lock_streaks(&refs).await?;
    if failing.is_empty() && locked.is_empty() {
        return Ok(Vec::new());
    }
    let policies = tx.tasks().task_cooldowns(&task_ids).await?;
    let mut state: HashMap<(String, String, String), Option<Streak>> = locked
        .into_iter()
        .map(|s| {
            let st = Streak { failures: s.failures, cooldown_until: s.cooldown_until, cooldown: s.cooldown };
            ((s.app, s.worker_id, s.handler), Some(st))
        })
        .collect();
    let mut touched: Vec<(String, String, String)> = Vec::new();
    for o in outcomes {
        let k = key(o);
        let prev = state.get(&k).copied().flatten();
        let next = if o.failed {
            let policy = policies.get(&o.task_id).copied().unwrap_or_default();
            Some(after_failure(prev, CooldownRule::of(&policy, &routing.cooldown), ctx.now))
        } else {
            None
        };
        if prev.is_some() || next.is_some() {
            touched.push(k.clone());
        }
        state.insert(k, next);
    }
    touched.sort();
    touched.dedup();
    let mut write = Vec::new();
    let mut ended = Vec::new();
    let mut out = Vec::new();
    for k in touched {
        match state.get(&k).copied().flatten() {
            Some(st) => {
                let row = WorkerStreak {
                    app: k.0.clone(),
                    worker_id: k.1.clone(),
                    handler: k.2.clone(),
                    failures: st.failures,
                    cooldown_until: st.cooldown_until,
                    cooldown: st.cooldown,
                };
                write.push(row.clone());
                out.push((k, Some(row)));
            }
            None => {
                ended.push(k.clone());
                out.push((k, None));
            }
        }
    }
    tx.limits().write_streaks(&write, ctx.now).await?;
    let ended_refs: Vec<StreakKey<'_>> = ended.iter().map(|(a, w, h)| (a.as_str(), w.as_str(), h.as_str())).collect();
    tx.limits().delete_streaks(&ended_refs).await?;
    Ok(out)
}

/// An event the state machine drafted, as `scheduler_id` records it.
pub(crate) fn recorded(e: &crate::lifecycle::EventDraft, scheduler_id: &str) -> InstanceEvent {
    InstanceEvent {
        id: 0,
        instance_id: e.instance_id,
        at: e.at,
        from: e.from,
        to: e.to,
        attempt: e.attempt,
        scheduler_id: scheduler_id.to_owned(),
        worker_id: e.worker_id.clone(),
        reason: e.reason.clone(),
    }
}

/// Writes what a batch of transitions decided: changed rows, the parents their children settle,
/// events, cancels, failure streaks and the next fire of FIXED_DELAY tasks whose instance
/// finished. Returns what to do once the caller has committed (log the changes, count them).
pub async fn persist(
    tx: &mut Tx,
    rows: &mut HashMap<i64, Instance>,
    batch: Batch,
    ctx: Ctx<'_>,
    routing: &RoutingState,
) -> StoreResult<Persisted> {
    persist_rows(tx, rows, batch, ctx, routing, None).await
}

/// [`persist`], for rows read without a lock at these `versions` (see [`apply_worker_ops`]): a
/// changed row is written only if it is still the version read, else [`StoreError::Stale`].
async fn persist_rows(
    tx: &mut Tx,
    rows: &mut HashMap<i64, Instance>,
    mut batch: Batch,
    ctx: Ctx<'_>,
    routing: &RoutingState,
    versions: Option<&HashMap<i64, i64>>,
) -> StoreResult<Persisted> {
    let t0 = std::time::Instant::now();
    let recorded = |e: &crate::lifecycle::EventDraft| recorded(e, ctx.scheduler_id);
    let drafts: Vec<InstanceEvent> = batch.events.iter().map(recorded).collect();
    let drafted = batch.events.len();
    let mut events = trails::hold_trails(rows, drafts, &mut batch.changed, tx.trail_in_row());
    let rows = &*rows;
    let changed: Vec<&Instance> = batch.changed.iter().filter_map(|id| rows.get(id)).collect();
    match versions {
        Some(v) => tx.instances().write_instances_if_unchanged(&changed, v).await?,
        None => tx.instances().write_instances(&changed).await?,
    }
    let t1 = t0.elapsed();
    let parents = settle_parents(tx, rows, &mut batch, ctx).await?;
    let lookup = |id: i64| rows.get(&id).or_else(|| parents.get(&id));
    // Chains and DAG joins, in the transaction that records the final states that create them.
    let ended: Vec<&Instance> = batch.finalized.iter().filter_map(|id| lookup(*id)).collect();
    let successors = successors::create_successors(tx, &ended, ctx.now, ctx.scheduler_id).await?;
    let outcomes = crate::lifecycle::fanout::attempt_outcomes(&batch.events, lookup);
    let streaks = update_streaks(tx, &outcomes, ctx, routing).await?;
    let tally = tally(&lookup, &batch);
    let mut changes = Changes::new();
    for e in &batch.events {
        let Some(i) = lookup(e.instance_id).filter(|_| Changes::wants(e.from, e.to)) else { continue };
        changes.push(Change {
            instance_id: e.instance_id,
            attempt: e.attempt,
            task: i.task_name.clone(),
            app: i.app.clone(),
            worker: e.worker_id.clone(),
            from: e.from,
            to: e.to,
            reason: e.reason.clone(),
        });
    }
    // The parents' events (settle_parents adds them to the batch) are always rows: a parent is
    // never dispatched, so its row holds none.
    events.extend(batch.events[drafted..].iter().map(recorded));
    tx.instances().insert_events(&events).await?;
    let t2 = t0.elapsed();
    tx.cluster().insert_commands(&batch.commands, ctx.now).await?;
    // The outbox rows commit with the change that caused them, or not at all.
    crate::alerts::outbox::enqueue(tx, &batch.alerts, ctx.now).await?;
    tracing::debug!(rows = changed.len(), events = events.len(), write = ?t1, events_took = ?(t2 - t1), "persist");
    let mut fixed_delay: Vec<i64> = batch
        .finalized
        .iter()
        .filter_map(|id| lookup(*id))
        .filter(|i| crate::lifecycle::drives_fixed_delay(i))
        .map(|i| i.task_id)
        .collect();
    fixed_delay.sort_unstable();
    fixed_delay.dedup();
    tx.tasks().schedule_fixed_delay_after(&fixed_delay, ctx.now).await?;
    if batch.earliest_requeue.is_some() || !batch.finalized.is_empty() {
        // Available again, or a FIXED_DELAY task may have a new next fire.
        tx.notify(Notice::Work).await?;
    }
    let mut targets: Vec<&str> = batch.commands.iter().map(|c| c.scheduler_id.as_str()).collect();
    targets.sort_unstable();
    targets.dedup();
    for t in targets {
        tx.notify(Notice::Commands(t.to_owned())).await?;
    }
    Ok(Persisted { changes, tally, streaks, successors })
}

/// Applies worker messages (Accepted, Result, Reject) in order, in one transaction (group commit
/// across streams): the state machine decides from the rows, and everything it decided is written
/// together.
///
/// On PostgreSQL the rows are first read without a lock, with their versions: when every message
/// changes its row (an attempt starts, a result is applied, a reject requeues), each row is written
/// only if it is still the version read, which spares the locking read its lock record and its
/// wait. Any other outcome (a late or repeated result, a message for an attempt that is not
/// current), or a row that changed meanwhile, rolls that transaction back and decides again from
/// rows locked as on the other databases, so every outcome is one the locked rows give.
///
/// `kept`: rows as the claims of these attempts wrote them, with their versions (see
/// `Session::keep_row`); on PostgreSQL they stand for the unlocked read of those rows (and are
/// written under the same version check), so an attempt whose first messages arrive together
/// costs no read. Elsewhere, and on the locked retry, they are not used.
#[allow(clippy::too_many_arguments)]
pub async fn apply_worker_ops(
    store: &Store,
    ops: &[WorkerOp],
    kept: HashMap<i64, (Instance, i64)>,
    now: Ts,
    lease_until: Ts,
    scheduler_id: &str,
    traces: &Traces,
    routing: &RoutingState,
) -> StoreResult<Vec<WorkerOpOutcome>> {
    let args = OpsArgs { ops, now, lease_until, scheduler_id, traces, routing };
    if store.backend() == crate::store::Backend::Postgres {
        match apply_ops(store, &args, Some(kept)).await {
            Ok(Some(outcomes)) => return Ok(outcomes),
            Ok(None) => {}
            Err(crate::error::StoreError::Stale(why)) => {
                tracing::debug!(%why, "group commit decides again from locked rows")
            }
            Err(e) => return Err(e),
        }
    }
    let outcomes = apply_ops(store, &args, None).await?;
    Ok(outcomes.unwrap_or_default())
}

/// What [`apply_worker_ops`] was given.
struct OpsArgs<'a> {
    ops: &'a [WorkerOp],
    now: Ts,
    lease_until: Ts,
    scheduler_id: &'a str,
    traces: &'a Traces,
    routing: &'a RoutingState,
}

/// One try of [`apply_worker_ops`]: from rows read without a lock (`versioned`: `Some` with the
/// rows kept from the claims, which are not read), `None` (nothing written) unless every message
/// changed its row; from locked rows, always `Some`.
async fn apply_ops(
    store: &Store,
    args: &OpsArgs<'_>,
    versioned: Option<HashMap<i64, (Instance, i64)>>,
) -> StoreResult<Option<Vec<WorkerOpOutcome>>> {
    let read_versioned = versioned.is_some();
    let OpsArgs { ops, now, lease_until, scheduler_id, traces, routing } = *args;
    let span_start = std::time::SystemTime::now();
    let mut ids: Vec<i64> = ops.iter().map(WorkerOp::instance_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let t0 = std::time::Instant::now();
    let mut tx = store.begin().await?;
    let t1 = t0.elapsed();
    let (mut rows, versions) = if let Some(kept) = versioned {
        let unread: Vec<i64> = ids.iter().copied().filter(|id| !kept.contains_key(id)).collect();
        let (mut rows, mut versions) = tx.instances().read_versioned(&unread).await?;
        for (id, (row, version)) in kept {
            if ids.binary_search(&id).is_ok() {
                rows.insert(id, row);
                versions.insert(id, version);
            }
        }
        (rows, Some(versions))
    } else {
        (tx.instances().lock_instances(&ids).await?, None)
    };
    let t2 = t0.elapsed();
    let ctx = Ctx { now, scheduler_id };
    let mut batch = Batch::default();
    let mut outcomes = Vec::with_capacity(ops.len());
    for op in ops {
        let id = op.instance_id();
        let Some(inst) = rows.get_mut(&id) else {
            let why = format!("instance {id} does not exist");
            outcomes.push(match op {
                WorkerOp::Accepted { .. } => WorkerOpOutcome::Accepted(AcceptOutcome::NotCurrent(why)),
                WorkerOp::Result(_) => WorkerOpOutcome::Result(CompleteOutcome::Ignored(why)),
                WorkerOp::Reject { .. } => WorkerOpOutcome::Rejected(false),
            });
            continue;
        };
        let (outcome, fx) = match op {
            WorkerOp::Accepted { attempt, session_id, received_at, .. } => {
                let at = Ctx { now: (*received_at).min(now), ..ctx };
                let (o, fx) = crate::lifecycle::accept(inst, *attempt, session_id, lease_until, at);
                (WorkerOpOutcome::Accepted(o), fx)
            }
            WorkerOp::Result(c) => {
                let (o, fx) = crate::lifecycle::complete(inst, c, ctx, fastrand::f64());
                (WorkerOpOutcome::Result(o), fx)
            }
            WorkerOp::Reject { attempt, session_id, reason, .. } => {
                let (o, fx) = crate::lifecycle::reject(inst, *attempt, session_id, reason, ctx);
                (WorkerOpOutcome::Rejected(o), fx)
            }
        };
        batch.add(id, fx);
        outcomes.push(outcome);
    }
    let t3 = t0.elapsed();
    if versions.is_some() && !outcomes.iter().all(WorkerOpOutcome::changes_its_row) {
        // Decided from rows that may have changed since: only a change is checked against them.
        return Ok(None);
    }
    let persisted = match persist_rows(&mut tx, &mut rows, batch, ctx, routing, versions.as_ref()).await {
        Ok(p) => p,
        Err(e @ crate::error::StoreError::Stale(_)) => {
            // Rows of the batch may be written and locked: release them before the caller decides
            // again from locked rows (a dropped transaction's rollback is sent only later).
            if let Err(rollback) = tx.rollback().await {
                tracing::debug!(%rollback, "rolling back a stale group commit");
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let t4 = t0.elapsed();
    tx.commit().await?;
    persisted.after_commit(routing);
    if traces.is_on() {
        let span = (span_start, std::time::SystemTime::now());
        for (op, outcome) in ops.iter().zip(&outcomes) {
            if let (WorkerOp::Result(c), WorkerOpOutcome::Result(crate::lifecycle::CompleteOutcome::Applied(_))) =
                (op, outcome)
                && let Some(inst) = rows.get(&c.instance_id)
            {
                let failed = match &c.end {
                    crate::lifecycle::AttemptEnd::Success { .. } => None,
                    crate::lifecycle::AttemptEnd::Failed { message, .. } => Some(message.as_str()),
                };
                traces.result(inst, c.attempt, &c.worker_id, failed, span);
            }
        }
    }
    tracing::debug!(ops = ops.len(), versioned = read_versioned, begin = ?t1, read = ?(t2 - t1), decide = ?(t3 - t2), persist = ?(t4 - t3), commit = ?(t0.elapsed() - t4), "apply_worker_ops");
    Ok(Some(outcomes))
}

/// An operator's cancel (see [`CancelOutcome`]). Canceling a parent cancels its children that are
/// not final yet, in the same transaction (children are locked before their parent, as everywhere).
pub async fn cancel_instance(
    store: &Store,
    id: i64,
    reason: &str,
    now: Ts,
    actor: &Actor<'_>,
    routing: &RoutingState,
) -> StoreResult<CancelOutcome> {
    let mut tx = store.begin().await?;
    let Some(peek) = tx.instances().get_instance(id).await? else { return Ok(CancelOutcome::NotFound) };
    let children = if peek.is_parent() { tx.instances().active_children(id).await? } else { Vec::new() };
    let mut rows = tx.instances().lock_instances(&children).await?;
    rows.extend(tx.instances().lock_instances(&[id]).await?);
    let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
    let Some(inst) = rows.get_mut(&id) else { return Ok(CancelOutcome::NotFound) };
    let Some(fx) = crate::lifecycle::cancel(inst, reason, actor.caller, ctx) else {
        return Ok(CancelOutcome::AlreadyFinal(inst.clone()));
    };
    let mut batch = Batch::default();
    batch.add(id, fx);
    let why =
        if reason.is_empty() { format!("parent {id} canceled") } else { format!("parent {id} canceled: {reason}") };
    for c in &children {
        if let Some(fx) = rows.get_mut(c).and_then(|child| crate::lifecycle::cancel(child, &why, actor.caller, ctx)) {
            batch.add(*c, fx);
        }
    }
    let persisted = persist(&mut tx, &mut rows, batch, ctx, routing).await?;
    tx.commit().await?;
    persisted.after_commit(routing);
    Ok(CancelOutcome::Canceled(rows.remove(&id).expect("locked above")))
}

/// An operator's retry of a final instance: PENDING again. A final parent's children that did not
/// succeed are retried (all of them if every one did), and the parent waits for them again.
pub async fn retry_instance(
    store: &Store,
    id: i64,
    now: Ts,
    actor: &Actor<'_>,
    routing: &RoutingState,
) -> StoreResult<RetryOutcome> {
    let mut tx = store.begin().await?;
    let Some(peek) = tx.instances().get_instance(id).await? else { return Ok(RetryOutcome::NotFound) };
    let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
    if peek.is_parent() {
        let all = tx.instances().children_of(id, u32::MAX).await?;
        let unsuccessful: Vec<i64> = all.iter().filter(|c| c.status != InstanceStatus::Success).map(|c| c.id).collect();
        let ids: Vec<i64> = if unsuccessful.is_empty() { all.iter().map(|c| c.id).collect() } else { unsuccessful };
        let mut rows = tx.instances().lock_instances(&ids).await?;
        let parent = tx.instances().lock_instances(&[id]).await?.remove(&id);
        let Some(parent) = parent.filter(|p| p.status.is_terminal()) else {
            let current = tx.instances().get_instance(id).await?;
            return Ok(current.map_or(RetryOutcome::NotFound, RetryOutcome::NotFinal));
        };
        let mut batch = Batch::default();
        for (cid, child) in rows.iter_mut() {
            if let Some(fx) = crate::lifecycle::retry(child, actor.caller, ctx) {
                batch.add(*cid, fx);
            }
        }
        let persisted = persist(&mut tx, &mut rows, batch, ctx, routing).await?;
        let after = tx.instances().get_instance(id).await?.unwrap_or(parent);
        tx.commit().await?;
        persisted.after_commit(routing);
        return Ok(RetryOutcome::Retried(after));
    }
    let mut rows = tx.instances().lock_instances(&[id]).await?;
    let Some(inst) = rows.get_mut(&id) else { return Ok(RetryOutcome::NotFound) };
    let Some(fx) = crate::lifecycle::retry(inst, actor.caller, ctx) else {
        return Ok(RetryOutcome::NotFinal(inst.clone()));
    };
    let mut batch = Batch::default();
    batch.add(id, fx);
    let persisted = persist(&mut tx, &mut rows, batch, ctx, routing).await?;
    tx.commit().await?;
    persisted.after_commit(routing);
    Ok(RetryOutcome::Retried(rows.remove(&id).expect("locked above")))
}

/// Outcome of deleting a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// Deleted; this many PENDING instances were canceled.
    Deleted(u64),
    /// Other tasks' chains or DAG edges name it (their ids): nothing changed.
    Named(Vec<i64>),
    /// No such task.
    NotFound,
}

/// Deletes a task and cancels its PENDING instances (through the state machine, like any cancel),
/// unless another task's chains or DAG edges name it (under the task-graph lock, so that no edge to
/// it can appear meanwhile).
pub async fn delete_task(
    store: &Store,
    name: &str,
    now: Ts,
    actor: &Actor<'_>,
    routing: &RoutingState,
) -> StoreResult<DeleteOutcome> {
    let mut tx = store.begin().await?;
    tx.flow().lock_graph().await?;
    let Some(id) = tx.tasks().lock_task(name).await? else { return Ok(DeleteOutcome::NotFound) };
    let (outcome, persisted) = delete_locked_task(&mut tx, id, name, now, actor, routing).await?;
    let Some(persisted) = persisted else { return Ok(outcome) };
    tx.commit().await?;
    persisted.after_commit(routing);
    Ok(outcome)
}

/// [`delete_task`] in the caller's transaction, which holds the task-graph lock and the task's
/// row lock: the outcome, and (when deleted) what to do once the transaction commits.
pub async fn delete_locked_task(
    tx: &mut Tx,
    id: i64,
    name: &str,
    now: Ts,
    actor: &Actor<'_>,
    routing: &RoutingState,
) -> StoreResult<(DeleteOutcome, Option<Persisted>)> {
    let mut naming: Vec<i64> = tx
        .flow()
        .edges_naming(id)
        .await?
        .into_iter()
        .map(|(from, kind, to)| if kind == crate::model::EdgeKind::After { to } else { from })
        .collect();
    naming.sort_unstable();
    naming.dedup();
    if !naming.is_empty() {
        return Ok((DeleteOutcome::Named(naming), None));
    }
    let pending = tx.instances().lock_pending_of_task(id).await?;
    let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
    let mut rows: HashMap<i64, Instance> = pending.into_iter().map(|i| (i.id, i)).collect();
    let mut batch = Batch::default();
    let mut canceled = 0u64;
    for (iid, inst) in rows.iter_mut() {
        if let Some(fx) = crate::lifecycle::cancel(inst, "task deleted", actor.caller, ctx) {
            batch.add(*iid, fx);
            canceled += 1;
        }
    }
    let persisted = persist(tx, &mut rows, batch, ctx, routing).await?;
    tx.tasks().delete_task_row(id).await?;
    let message = format!("deleted; {canceled} pending instance(s) canceled");
    tx.tasks().insert_task_event(id, name, now, crate::model::TaskEventKind::Deleted, actor.caller, &message).await?;
    tx.notify(Notice::Tasks).await?;
    Ok((DeleteOutcome::Deleted(canceled), Some(persisted)))
}
