//! Bulk actions on instances (`BulkInstances`): cancel, retry or delete the instances a selector
//! matched, oldest first, in transactions of up to [`BULK_BATCH`] instances. Each transaction
//! locks its instances and decides on what it finds then, as the single-instance calls do: an
//! instance someone else changed in the meantime is skipped, not forced.

use std::collections::HashMap;

use super::{RetryOutcome, persist, retry_instance};
use crate::{
    error::StoreResult,
    lifecycle::{Batch, Ctx},
    model::{Instance, Ts},
    routing::RoutingState,
    store::{Actor, Matched, Store},
};

/// Instances per transaction.
pub const BULK_BATCH: usize = 500;

/// What a bulk action does to each instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkAction {
    /// As an operator's cancel: an instance that is not final becomes CANCELED (a parent's
    /// children that are not final with it).
    Cancel,
    /// As an operator's retry: a final instance becomes PENDING (a parent retries its children).
    Retry,
    /// A final instance that is no child is deleted with its children and everything it left
    /// behind; one of a DAG run that has not ended stays.
    Delete,
}

impl BulkAction {
    /// Whether the action applies to an instance as it was read (a dry run's count).
    pub fn applies(self, m: &Matched) -> bool {
        match self {
            BulkAction::Cancel => !m.status.is_terminal(),
            BulkAction::Retry => m.status.is_terminal(),
            BulkAction::Delete => m.status.is_terminal() && !m.is_child,
        }
    }

    /// The name the audit trail and errors use.
    pub fn as_str(self) -> &'static str {
        match self {
            BulkAction::Cancel => "cancel",
            BulkAction::Retry => "retry",
            BulkAction::Delete => "delete",
        }
    }
}

/// Applies `action` to the instances `ids` (any order); returns how many it changed. A matched
/// child canceled with its matched parent counts once.
pub async fn apply_bulk(
    store: &Store,
    action: BulkAction,
    ids: &[i64],
    reason: &str,
    now: Ts,
    actor: &Actor<'_>,
    routing: &RoutingState,
) -> StoreResult<u64> {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut changed = 0;
    for chunk in ids.chunks(BULK_BATCH) {
        changed += match action {
            BulkAction::Cancel => cancel_batch(store, chunk, reason, now, actor, routing).await?,
            BulkAction::Retry => retry_batch(store, chunk, now, actor, routing).await?,
            BulkAction::Delete => delete_batch(store, chunk).await?,
        };
    }
    Ok(changed)
}

async fn cancel_batch(
    store: &Store,
    ids: &[i64],
    reason: &str,
    now: Ts,
    actor: &Actor<'_>,
    routing: &RoutingState,
) -> StoreResult<u64> {
    let mut tx = store.begin().await?;
    // A parent's children are locked before it, as everywhere (a child's end locks its parent).
    let peek = tx.instances().instances_by_ids(ids).await?;
    let mut children = Vec::new();
    for p in peek.iter().filter(|p| p.is_parent() && !p.status.is_terminal()) {
        children.extend(tx.instances().active_children(p.id).await?);
    }
    let mut rows: HashMap<i64, Instance> = tx.instances().lock_instances(&children).await?;
    rows.extend(tx.instances().lock_instances(ids).await?);
    let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
    let mut batch = Batch::default();
    let mut changed = 0;
    let mut canceled_parents = Vec::new();
    for id in ids {
        let Some(inst) = rows.get_mut(id) else { continue };
        if let Some(fx) = crate::lifecycle::cancel(inst, reason, actor.caller, ctx) {
            batch.add(*id, fx);
            changed += 1;
            if inst.is_parent() {
                canceled_parents.push(*id);
            }
        }
    }
    for parent in canceled_parents {
        let why = if reason.is_empty() {
            format!("parent {parent} canceled")
        } else {
            format!("parent {parent} canceled: {reason}")
        };
        let mine: Vec<i64> = rows.values().filter(|c| c.route.parent_id == Some(parent)).map(|c| c.id).collect();
        for c in mine {
            if let Some(fx) =
                rows.get_mut(&c).and_then(|child| crate::lifecycle::cancel(child, &why, actor.caller, ctx))
            {
                batch.add(c, fx);
            }
        }
    }
    let persisted = persist(&mut tx, &mut rows, batch, ctx, routing).await?;
    tx.commit().await?;
    persisted.after_commit(routing);
    Ok(changed)
}

async fn retry_batch(
    store: &Store,
    ids: &[i64],
    now: Ts,
    actor: &Actor<'_>,
    routing: &RoutingState,
) -> StoreResult<u64> {
    let mut tx = store.begin().await?;
    let peek = tx.instances().instances_by_ids(ids).await?;
    let parents: Vec<i64> = peek.iter().filter(|p| p.is_parent()).map(|p| p.id).collect();
    let plain: Vec<i64> = ids.iter().copied().filter(|id| !parents.contains(id)).collect();
    let mut rows = tx.instances().lock_instances(&plain).await?;
    let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
    let mut batch = Batch::default();
    let mut changed = 0;
    for id in &plain {
        if let Some(fx) = rows.get_mut(id).and_then(|inst| crate::lifecycle::retry(inst, actor.caller, ctx)) {
            batch.add(*id, fx);
            changed += 1;
        }
    }
    let persisted = persist(&mut tx, &mut rows, batch, ctx, routing).await?;
    tx.commit().await?;
    persisted.after_commit(routing);
    // A parent retries its children in a transaction of its own (see `retry_instance`).
    for id in parents {
        if let RetryOutcome::Retried(_) = retry_instance(store, id, now, actor, routing).await? {
            changed += 1;
        }
    }
    Ok(changed)
}

async fn delete_batch(store: &Store, ids: &[i64]) -> StoreResult<u64> {
    let mut tx = store.begin().await?;
    let rows = tx.instances().lock_instances(ids).await?;
    let final_roots: Vec<&Instance> =
        rows.values().filter(|i| i.status.is_terminal() && i.route.parent_id.is_none()).collect();
    let runs: Vec<i64> = final_roots.iter().map(|i| i.lineage.run_id.unwrap_or(i.id)).collect();
    let going = tx.instances().runs_in_progress(&runs).await?;
    let doomed: Vec<i64> =
        final_roots.iter().filter(|i| !going.contains(&i.lineage.run_id.unwrap_or(i.id))).map(|i| i.id).collect();
    tx.instances().delete_instances(&doomed).await?;
    tx.commit().await?;
    Ok(doomed.len() as u64)
}
