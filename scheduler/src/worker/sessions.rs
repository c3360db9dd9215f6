//! Worker sessions in the database: opening one (re-adopting what the worker re-announces),
//! closing one (its attempts wait a grace period), and the periodic sync of live sessions and
//! their leases.

use std::collections::{HashMap, HashSet};

use crate::routing::registry::Renewal;
use crate::{
    error::StoreResult,
    lifecycle::{Batch, Ctx},
    model::{Instance, Ts, WorkerRecord},
    routing::RoutingState,
    store::{BATCH, SessionSync, Store},
    transitions::persist,
};

/// What [`open_session`] decided about the attempts a worker re-announced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reopened {
    /// Still this worker's: they move to the new session as RUNNING with a fresh lease.
    pub adopted: Vec<(i64, u32)>,
    /// No longer this worker's, but they were assigned to it: a late Result for them is recorded
    /// on the instance's trail.
    pub released_to_worker: Vec<(i64, u32)>,
}

/// Records a new session and re-adopts the attempts it lists (same worker id, still DISPATCHED or
/// RUNNING on that attempt): they move to this session as RUNNING with a fresh lease. The others
/// are no longer this worker's; those that were assigned to it are reported so that their late
/// results can be recorded.
pub async fn open_session(
    store: &Store,
    w: &WorkerRecord,
    in_flight: &[(i64, u32)],
    now: Ts,
    lease_until: Ts,
    routing: &RoutingState,
) -> StoreResult<Reopened> {
    let mut tx = store.begin().await?;
    tx.cluster().insert_worker(w).await?;
    let mut ids: Vec<i64> = in_flight.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut rows = tx.instances().lock_instances(&ids).await?;
    let ctx = Ctx { now, scheduler_id: &w.scheduler_id };
    let mut batch = Batch::default();
    let mut out = Reopened::default();
    let mut others = Vec::new();
    for &(id, attempt) in in_flight {
        let Some(inst) = rows.get_mut(&id) else { continue };
        let (ours, fx) =
            crate::lifecycle::readopt(inst, attempt, &w.worker_id, &w.app, &w.session_id, lease_until, ctx);
        batch.add(id, fx);
        if ours {
            out.adopted.push((id, attempt));
        } else if inst.app == w.app {
            others.push((id, attempt));
        }
    }
    // Released attempts that were assigned to this worker (their DISPATCHED event names it): a
    // result it still holds for them is recorded as a late result.
    out.released_to_worker = tx.instances().dispatched_to_worker(&w.worker_id, &others).await?;
    // Those whose row holds that DISPATCHED event (see crate::model::trail), as it was read.
    for &(id, attempt) in &others {
        let held = rows.get(&id).is_some_and(|i| {
            i.trail.held.iter().any(|e| {
                e.to == crate::model::InstanceStatus::Dispatched && e.attempt == attempt && e.worker_id == w.worker_id
            })
        });
        if held && !out.released_to_worker.contains(&(id, attempt)) {
            out.released_to_worker.push((id, attempt));
        }
    }
    let persisted = persist(&mut tx, &mut rows, batch, ctx, routing).await?;
    tx.commit().await?;
    persisted.after_commit(routing);
    Ok(out)
}

/// Ends a session: its held attempts keep their state until `grace_until` (for the worker to come
/// back and re-announce them), with an event saying why; the session row is removed. If the
/// session ended on a message axd could not read (`unreadable`), the attempts are not kept for the
/// worker: they end with their lease (see [`crate::lifecycle::session_ended_unreadable`]).
#[allow(clippy::too_many_arguments)]
pub async fn close_session(
    store: &Store,
    session_id: &str,
    reason: &str,
    now: Ts,
    grace_until: Ts,
    scheduler_id: &str,
    unreadable: bool,
    routing: &RoutingState,
) -> StoreResult<()> {
    let mut tx = store.begin().await?;
    let ids = tx.instances().held_by_session(session_id).await?;
    let mut rows: HashMap<i64, Instance> = tx.instances().lock_instances(&ids).await?;
    let ctx = Ctx { now, scheduler_id };
    let mut batch = Batch::default();
    for (id, inst) in rows.iter_mut() {
        let fx = if unreadable {
            crate::lifecycle::session_ended_unreadable(inst, session_id, reason, ctx)
        } else {
            crate::lifecycle::session_ended(inst, session_id, reason, grace_until, ctx)
        };
        batch.add(*id, fx);
    }
    let persisted = persist(&mut tx, &mut rows, batch, ctx, routing).await?;
    tx.cluster().delete_worker(session_id).await?;
    tx.cluster().close_session_log(session_id, now, reason).await?;
    tx.commit().await?;
    persisted.after_commit(routing);
    Ok(())
}

/// Renews, until `lease_until`, the leases of these attempts of these live sessions (each still
/// DISPATCHED or RUNNING on one of the sessions), and refreshes the sessions' rows. Returns the
/// attempts (session, (instance, attempt)) the database no longer holds for these sessions: the
/// renewal did not cover them.
pub async fn sync_sessions(
    store: &Store,
    sessions: &[SessionSync],
    renew: &[Renewal],
    lease_until: Ts,
) -> StoreResult<Vec<(String, (i64, u32))>> {
    if sessions.is_empty() {
        return Ok(Vec::new());
    }
    // The accepted attempts of live sessions: still DISPATCHED (Accepted not yet written) or
    // RUNNING, on one of these sessions. A row that moved to another live session of this axd (the
    // worker reconnected here) may be renewed through the old session's list: it is held by a live
    // stream either way.
    let mut pairs: Vec<(&str, i64)> =
        renew.iter().flat_map(|r| r.attempts.iter().map(move |(id, _)| (r.session_id.as_str(), *id))).collect();
    pairs.sort_unstable_by_key(|(_, id)| *id);
    let mut conn = store.conn().await?;
    conn.instances().renew_leases(&pairs, lease_until).await?;
    // What the database still holds for these sessions after the renewal: an attempt it does not
    // (timed out or canceled by any axd, taken back) must not be covered by the heartbeat that
    // answers this renewal, whether or not its Cancel has reached this axd yet.
    let ids: Vec<i64> = pairs.iter().map(|(_, id)| *id).collect();
    let held = conn.instances().held_attempts(&ids).await?;
    let sessions_here: HashSet<&str> = renew.iter().map(|r| r.session_id.as_str()).collect();
    let revoked: Vec<(String, (i64, u32))> = renew
        .iter()
        .flat_map(|r| r.attempts.iter().map(move |k| (r.session_id.as_str(), *k)))
        .filter(|(_, (id, attempt))| {
            !held.get(id).is_some_and(|(a, session)| a == attempt && sessions_here.contains(session.as_str()))
        })
        .map(|(s, k)| (s.to_owned(), k))
        .collect();
    drop(conn);
    // One commit per BATCH sessions, not one per session: at 10,000 streams the commits were most
    // of axd's heartbeat cost. (Chunks keep each transaction short.)
    for chunk in sessions.chunks(BATCH) {
        let mut tx = store.begin().await?;
        tx.cluster().update_workers(chunk).await?;
        tx.commit().await?;
    }
    Ok(revoked)
}
