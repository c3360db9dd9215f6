//! Applying the state machine's decisions: the transactions that lock instances, run the
//! transitions of [`super`] in order, and write what they decided — changed rows, events, queued
//! cancels, FIXED_DELAY next fires and notifications — together.

use std::collections::HashMap;

use super::{
    AcceptOutcome, Batch, CompleteOutcome, Ctx, WorkerOp, WorkerOpOutcome,
    log::{Change, Changes},
};
use crate::{
    error::StoreResult,
    model::{Instance, InstanceStatus, Ts},
    prometheus::Tally,
    store::{Actor, NewEvent, Notice, Store, Tx},
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
fn tally(rows: &HashMap<i64, Instance>, batch: &Batch) -> Tally {
    use crate::prometheus as p;
    let mut t = Tally::default();
    if !p::enabled() {
        return t;
    }
    for i in batch.finalized.iter().filter_map(|id| rows.get(id)) {
        t.add(p::INSTANCES_FINISHED, &i.app, Some(("status", i.status.as_str())), 1);
    }
    for e in &batch.events {
        let Some(i) = rows.get(&e.instance_id) else { continue };
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

/// What [`persist`] leaves for after the commit: the changes to log and the figures to count,
/// neither of which may happen before the transaction is durable.
#[must_use = "call .after_commit() once the transaction has committed"]
pub struct Persisted {
    changes: Changes,
    tally: Tally,
}

impl Persisted {
    /// Logs the changes and records the metrics.
    pub fn after_commit(self) {
        self.changes.log();
        self.tally.record();
    }
}

/// Writes what a batch of transitions decided: changed rows, events, cancels and the next fire of
/// FIXED_DELAY tasks whose instance finished. Returns what to do once the caller has committed
/// (log the changes, count them).
pub async fn persist(tx: &mut Tx, rows: &HashMap<i64, Instance>, batch: Batch, ctx: Ctx<'_>) -> StoreResult<Persisted> {
    let tally = tally(rows, &batch);
    let t0 = std::time::Instant::now();
    let changed: Vec<&Instance> = batch.changed.iter().filter_map(|id| rows.get(id)).collect();
    tx.write_instances(&changed).await?;
    let t1 = t0.elapsed();
    let mut changes = Changes::new();
    for e in &batch.events {
        let Some(i) = rows.get(&e.instance_id).filter(|_| Changes::wants(e.from, e.to)) else { continue };
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
    let events: Vec<NewEvent> = batch
        .events
        .into_iter()
        .map(|e| NewEvent {
            instance_id: e.instance_id,
            at: e.at,
            from: e.from,
            to: e.to,
            attempt: e.attempt,
            scheduler_id: ctx.scheduler_id.to_owned(),
            worker_id: e.worker_id,
            reason: e.reason,
        })
        .collect();
    tx.insert_events(&events).await?;
    let t2 = t0.elapsed();
    tx.insert_commands(&batch.commands, ctx.now).await?;
    // The outbox rows commit with the change that caused them, or not at all.
    crate::alerts::outbox::enqueue(tx, &batch.alerts, ctx.now).await?;
    tracing::debug!(rows = changed.len(), events = events.len(), write = ?t1, events_took = ?(t2 - t1), "persist");
    let mut fixed_delay: Vec<i64> = batch
        .finalized
        .iter()
        .filter_map(|id| rows.get(id))
        .filter(|i| super::drives_fixed_delay(i))
        .map(|i| i.task_id)
        .collect();
    fixed_delay.sort_unstable();
    fixed_delay.dedup();
    tx.schedule_fixed_delay_after(&fixed_delay, ctx.now).await?;
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
    Ok(Persisted { changes, tally })
}

/// Applies worker messages (Accepted, Result, Reject) in order, in one transaction (group commit
/// across streams): the rows are locked, the state machine decides, and everything it decided is
/// written together.
pub async fn apply_worker_ops(
    store: &Store,
    ops: &[WorkerOp],
    now: Ts,
    lease_until: Ts,
    scheduler_id: &str,
    traces: &Traces,
) -> StoreResult<Vec<WorkerOpOutcome>> {
    let span_start = std::time::SystemTime::now();
    let mut ids: Vec<i64> = ops.iter().map(WorkerOp::instance_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let t0 = std::time::Instant::now();
    let mut tx = store.begin().await?;
    let t1 = t0.elapsed();
    let mut rows = tx.lock_instances(&ids).await?;
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
            WorkerOp::Accepted { attempt, session_id, .. } => {
                let (o, fx) = super::accept(inst, *attempt, session_id, lease_until, ctx);
                (WorkerOpOutcome::Accepted(o), fx)
            }
            WorkerOp::Result(c) => {
                let (o, fx) = super::complete(inst, c, ctx, fastrand::f64());
                (WorkerOpOutcome::Result(o), fx)
            }
            WorkerOp::Reject { attempt, session_id, reason, .. } => {
                let (o, fx) = super::reject(inst, *attempt, session_id, reason, ctx);
                (WorkerOpOutcome::Rejected(o), fx)
            }
        };
        batch.add(id, fx);
        outcomes.push(outcome);
    }
    let t3 = t0.elapsed();
    let persisted = persist(&mut tx, &rows, batch, ctx).await?;
    let t4 = t0.elapsed();
    tx.commit().await?;
    persisted.after_commit();
    if traces.is_on() {
        let span = (span_start, std::time::SystemTime::now());
        for (op, outcome) in ops.iter().zip(&outcomes) {
            if let (WorkerOp::Result(c), WorkerOpOutcome::Result(super::CompleteOutcome::Applied(_))) = (op, outcome)
                && let Some(inst) = rows.get(&c.instance_id)
            {
                let failed = match &c.end {
                    super::AttemptEnd::Success { .. } => None,
                    super::AttemptEnd::Failed { message, .. } => Some(message.as_str()),
                };
                traces.result(inst, c.attempt, &c.worker_id, failed, span);
            }
        }
    }
    tracing::debug!(ops = ops.len(), begin = ?t1, lock = ?(t2 - t1), decide = ?(t3 - t2), persist = ?(t4 - t3), commit = ?(t0.elapsed() - t4), "apply_worker_ops");
    Ok(outcomes)
}

/// An operator's cancel (see [`CancelOutcome`]).
pub async fn cancel_instance(
    store: &Store,
    id: i64,
    reason: &str,
    now: Ts,
    actor: &Actor<'_>,
) -> StoreResult<CancelOutcome> {
    let mut tx = store.begin().await?;
    let mut rows = tx.lock_instances(&[id]).await?;
    let Some(inst) = rows.get_mut(&id) else { return Ok(CancelOutcome::NotFound) };
    let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
    let Some(fx) = super::cancel(inst, reason, actor.caller, ctx) else {
        return Ok(CancelOutcome::AlreadyFinal(inst.clone()));
    };
    let mut batch = Batch::default();
    batch.add(id, fx);
    let persisted = persist(&mut tx, &rows, batch, ctx).await?;
    tx.commit().await?;
    persisted.after_commit();
    Ok(CancelOutcome::Canceled(rows.remove(&id).expect("locked above")))
}

/// An operator's retry of a final instance: PENDING again.
pub async fn retry_instance(store: &Store, id: i64, now: Ts, actor: &Actor<'_>) -> StoreResult<RetryOutcome> {
    let mut tx = store.begin().await?;
    let mut rows = tx.lock_instances(&[id]).await?;
    let Some(inst) = rows.get_mut(&id) else { return Ok(RetryOutcome::NotFound) };
    let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
    let Some(fx) = super::retry(inst, actor.caller, ctx) else {
        return Ok(RetryOutcome::NotFinal(inst.clone()));
    };
    let mut batch = Batch::default();
    batch.add(id, fx);
    let persisted = persist(&mut tx, &rows, batch, ctx).await?;
    tx.commit().await?;
    persisted.after_commit();
    Ok(RetryOutcome::Retried(rows.remove(&id).expect("locked above")))
}

/// Deletes a task and cancels its PENDING instances (through the state machine, like any cancel);
/// how many it canceled, `None` if there is no such task.
pub async fn delete_task(store: &Store, name: &str, now: Ts, actor: &Actor<'_>) -> StoreResult<Option<u64>> {
    let mut tx = store.begin().await?;
    let Some(id) = tx.lock_task(name).await? else { return Ok(None) };
    let pending = tx.lock_pending_of_task(id).await?;
    let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
    let mut rows: HashMap<i64, Instance> = pending.into_iter().map(|i| (i.id, i)).collect();
    let mut batch = Batch::default();
    let mut canceled = 0u64;
    for (iid, inst) in rows.iter_mut() {
        if let Some(fx) = super::cancel(inst, "task deleted", actor.caller, ctx) {
            batch.add(*iid, fx);
            canceled += 1;
        }
    }
    let persisted = persist(&mut tx, &rows, batch, ctx).await?;
    tx.delete_task_row(id).await?;
    let message = format!("deleted; {canceled} pending instance(s) canceled");
    tx.insert_task_event(id, name, now, crate::model::TaskEventKind::Deleted, actor.caller, &message).await?;
    tx.notify(Notice::Tasks).await?;
    tx.commit().await?;
    persisted.after_commit();
    Ok(Some(canceled))
}
