//! Group commit of worker messages.
//!
//! Accepted, Result and Reject messages from every stream of this axd go through one bounded queue;
//! the writer takes whatever is queued (up to a batch) and applies it in one transaction, then sends
//! the acknowledgements and cancels. Under load many streams share each commit; when idle a message
//! is written at once — except an Accepted whose Result is not in the same batch, which waits for
//! it (at most [`HOLD_ACCEPTED`], over as many rounds as fit) so that a short attempt's start and
//! end are one row write.
//! A full queue slows the streams down (backpressure), it never grows.

use std::{sync::Arc, time::Duration};

use tokio::time::Instant;

use ax_proto::v1 as pb;
use tokio_util::sync::CancellationToken;

pub use crate::core::queue::{MAX_BATCH, Pending, QUEUE, Writer, WriterQueue};
use crate::{
    core::Core,
    error::StoreError,
    lifecycle::{AcceptOutcome, CompleteOutcome, WorkerOp, WorkerOpOutcome},
    model::add,
};

/// How long an Accepted may wait for its attempt's Result to be written with it, over as many
/// rounds of the writer as come meanwhile (under load a round takes a few milliseconds, and a
/// Result can come a round after its Accepted). A short attempt then costs one row write instead
/// of two (RUNNING and the final state, with both events); the attempt's start is the time axd
/// received the Accepted either way (see [`WorkerOp::Accepted`]), and its lease already covers it.
pub const HOLD_ACCEPTED: Duration = Duration::from_millis(10);

/// Applies queued messages until `cancel` fires and the queue is drained.
pub async fn run(core: Arc<Core>, mut queue: WriterQueue, cancel: CancellationToken) {
    // Accepted messages held back for their Results, in arrival order, each until when.
    let mut held: Vec<(Pending, Instant)> = Vec::new();
    let mut closing = false;
    loop {
        let first = if closing {
            queue.0.recv().await
        } else {
            tokio::select! {
                p = queue.0.recv() => p,
                () = sleep_until_first(&held), if !held.is_empty() => None,
                () = cancel.cancelled() => {
                    // Finish what the streams already handed over.
                    closing = true;
                    queue.0.close();
                    queue.0.recv().await
                }
            }
        };
        if first.is_none() && held.is_empty() {
            return;
        }
        let (carried, until): (Vec<Pending>, Vec<Instant>) = std::mem::take(&mut held).into_iter().unzip();
        let (mut batch, _) = next_batch(carried, first, &mut queue.0);
        if !closing {
            held = hold_back(&mut batch, &until, Instant::now());
        }
        if !batch.is_empty() {
            apply(&core, batch).await;
        }
    }
}

/// The next batch: the messages `held` from the last round first (a held Accepted precedes its
/// Result), then `first` and whatever is queued, up to [`MAX_BATCH`] besides the held ones: their
/// Results follow them closely in the queue, and a batch cut before those would write each of
/// these attempts twice (RUNNING, then its end) and read its row again. Returns the batch and how
/// many messages of it were carried over.
fn next_batch(
    held: Vec<Pending>,
    first: Option<Pending>,
    queue: &mut tokio::sync::mpsc::Receiver<Pending>,
) -> (Vec<Pending>, usize) {
    let carried = held.len();
    let mut batch = held;
    batch.extend(first);
    while batch.len() < MAX_BATCH + carried {
        match queue.try_recv() {
            Ok(p) => batch.push(p),
            Err(_) => break,
        }
    }
    (batch, carried)
}

/// Sleeps until the first of the held messages is due.
async fn sleep_until_first(held: &[(Pending, Instant)]) {
    let due = held.iter().map(|(_, until)| *until).min().unwrap_or_else(Instant::now);
    tokio::time::sleep_until(due).await;
}

/// Takes out of `batch` the Accepted messages whose Result is not in it and that may wait longer:
/// those that arrived this round, for [`HOLD_ACCEPTED`] from `now`, and those carried over from
/// earlier rounds (the first `carried_until.len()`, each held until its entry there) that are not
/// due yet — a Result that comes a round late still finds its Accepted. Returns them in order, with
/// when each is due.
fn hold_back(batch: &mut Vec<Pending>, carried_until: &[Instant], now: Instant) -> Vec<(Pending, Instant)> {
    let ended: std::collections::HashSet<(i64, u32)> = batch
        .iter()
        .filter_map(|p| match &p.op {
            WorkerOp::Result(c) => Some((c.instance_id, c.attempt)),
            _ => None,
        })
        .collect();
    let waits = |p: &Pending| matches!(&p.op, WorkerOp::Accepted { instance_id, attempt, .. } if !ended.contains(&(*instance_id, *attempt)));
    let until = |n: usize| carried_until.get(n).copied().unwrap_or(now + HOLD_ACCEPTED);
    if !batch.iter().enumerate().any(|(n, p)| waits(p) && until(n) > now) {
        return Vec::new();
    }
    let mut held = Vec::new();
    let mut kept = Vec::with_capacity(batch.len());
    for (n, p) in batch.drain(..).enumerate() {
        let due = until(n);
        if waits(&p) && due > now { held.push((p, due)) } else { kept.push(p) }
    }
    *batch = kept;
    held
}

fn msg(m: pb::scheduler_message::Msg) -> crate::routing::registry::Outbound {
    Ok(pb::SchedulerMessage { msg: Some(m) })
}

async fn apply(core: &Core, batch: Vec<Pending>) {
    // The ops move into the write; what answers them needs only their sessions and keys.
    let (ops, sessions): (Vec<WorkerOp>, Vec<_>) = batch.into_iter().map(|p| (p.op, p.session)).unzip();
    // The rows their claims wrote, where the sessions kept them: those need not be read again.
    let mut kept = std::collections::HashMap::new();
    for (op, session) in ops.iter().zip(&sessions) {
        if let Some(row) = session.as_ref().and_then(|s| s.take_row(op.key())) {
            kept.insert(row.0.id, row);
        }
    }
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(50);
    let mut attempt = 0;
    let outcomes = loop {
        let now = core.clock.now();
        let lease_until = add(now, core.sessions.lease_ttl());
        let applied = crate::transitions::apply_worker_ops(
            &core.pools.workers,
            &ops,
            std::mem::take(&mut kept),
            now,
            lease_until,
            &core.scheduler_id,
            &core.traces,
            &core.routing,
        );
        match applied.await {
            Ok(o) => break Ok(o),
            // A deadlock with another transaction: nothing was written, write again at once.
            Err(e @ StoreError::Conflict(_)) if attempt < 10 => {
                attempt += 1;
                tracing::debug!(error = %e, ops = ops.len(), "group commit lost a lock race; retrying");
            }
            Err(e) if attempt < 3 => {
                attempt += 1;
                tracing::warn!(error = %e, ops = ops.len(), "writing worker messages failed; retrying");
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
            Err(e) => break Err(e),
        }
    };
    tracing::debug!(ops = ops.len(), took_us = started.elapsed().as_micros() as u64, "group commit");
    let outcomes = match outcomes {
        Ok(o) => o,
        Err(e) => {
            // Nothing was written. Ending these streams makes their workers reconnect and re-send
            // (results are kept until acknowledged; re-announced attempts are re-adopted).
            tracing::error!(error = %e, ops = ops.len(), "could not record worker messages; ending their streams");
            let mut ended = std::collections::HashSet::new();
            for s in sessions.iter().flatten() {
                if ended.insert(s.id.clone()) {
                    s.send(Err(tonic::Status::unavailable(format!(
                        "axd could not record messages ({e}); reconnect and resend"
                    ))));
                }
            }
            return;
        }
    };
    let mut wake_dispatch = false;
    let mut wake_sweep: Option<crate::model::Ts> = None;
    for ((session, op), outcome) in sessions.into_iter().zip(&ops).zip(outcomes) {
        let Some(session) = session else { continue };
        match (outcome, op) {
            (WorkerOpOutcome::Accepted(AcceptOutcome::Started { wake_at }), _) => {
                wake_sweep = Some(wake_sweep.map_or(wake_at, |w| w.min(wake_at)));
            }
            (WorkerOpOutcome::Accepted(AcceptOutcome::AlreadyRunning), _) => {}
            (
                WorkerOpOutcome::Accepted(AcceptOutcome::NotCurrent(why)),
                WorkerOp::Accepted { instance_id, attempt, .. },
            ) => {
                let cancel = pb::Cancel {
                    instance_id: *instance_id,
                    attempt: *attempt,
                    reason: format!("not yours to run: {why}"),
                };
                session.send(msg(pb::scheduler_message::Msg::Cancel(cancel)));
            }
            (WorkerOpOutcome::Result(r), WorkerOp::Result(c)) => {
                let (applied, note) = match r {
                    CompleteOutcome::Applied(status) => {
                        wake_dispatch |= status == crate::model::InstanceStatus::Pending;
                        (true, String::new())
                    }
                    CompleteOutcome::Ignored(why) => (false, why),
                };
                let ack = pb::ResultAck { instance_id: c.instance_id, attempt: c.attempt, applied, note };
                if !session.ack(ack) {
                    // The worker keeps the result and re-sends it after reconnecting.
                    tracing::debug!(session = %session.id, "stream closed or not read; ack not sent");
                }
            }
            (WorkerOpOutcome::Rejected(true), _) => wake_dispatch = true,
            _ => {}
        }
    }
    if wake_dispatch {
        core.signals.dispatch.notify_one();
    }
    if let Some(at) = wake_sweep {
        core.signals.sweep.offer(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::{AttemptEnd, Completion};

    fn accepted(id: i64) -> Pending {
        let op = WorkerOp::Accepted {
            instance_id: id,
            attempt: 1,
            session_id: "s".into(),
            received_at: chrono::DateTime::UNIX_EPOCH,
        };
        Pending { op, session: None }
    }

    fn result(id: i64) -> Pending {
        let op = WorkerOp::Result(Completion {
            instance_id: id,
            attempt: 1,
            session_id: "s".into(),
            worker_id: "w".into(),
            end: AttemptEnd::Success { message: String::new(), output: String::new() },
            finished_at: None,
        });
        Pending { op, session: None }
    }

    fn ids<'a>(batch: impl IntoIterator<Item = &'a Pending>) -> Vec<(char, i64)> {
        batch
            .into_iter()
            .map(|p| match &p.op {
                WorkerOp::Accepted { instance_id, .. } => ('a', *instance_id),
                WorkerOp::Result(c) => ('r', c.instance_id),
                WorkerOp::Reject { instance_id, .. } => ('j', *instance_id),
            })
            .collect()
    }

    fn held_ids(held: &[(Pending, Instant)]) -> Vec<(char, i64)> {
        ids(held.iter().map(|(p, _)| p))
    }

    #[test]
    fn an_accepted_without_its_result_waits_for_it_and_the_rest_keeps_its_order() {
        let now = Instant::now();
        let mut batch = vec![accepted(1), accepted(2), result(3), result(1), accepted(4)];
        let held = hold_back(&mut batch, &[], now);
        assert_eq!(held_ids(&held), [('a', 2), ('a', 4)]);
        assert!(held.iter().all(|(_, until)| *until == now + HOLD_ACCEPTED), "each for the hold's length");
        assert_eq!(ids(&batch), [('a', 1), ('r', 3), ('r', 1)]);
    }

    #[test]
    fn what_was_held_goes_first_and_waits_again_only_until_it_is_due() {
        // A later round: three held ones first (carried), then what arrived since. The first has
        // its Result now, the second is due, the third may wait on.
        let now = Instant::now();
        let carried = [now + Duration::from_millis(3), now, now + Duration::from_millis(3)];
        let mut batch = vec![accepted(2), accepted(4), accepted(6), result(2), accepted(5)];
        let held = hold_back(&mut batch, &carried, now);
        assert_eq!(held_ids(&held), [('a', 6), ('a', 5)]);
        assert_eq!(held[0].1, carried[2], "held again until it was due, not longer");
        assert_eq!(held[1].1, now + HOLD_ACCEPTED);
        assert_eq!(ids(&batch), [('a', 2), ('a', 4), ('r', 2)]);
    }

    #[test]
    fn a_full_queue_does_not_cut_the_held_accepted_from_their_results() {
        // Two Accepted held from the last round; a batch's worth of messages is queued, their
        // Results last.
        let (tx, mut rx) = tokio::sync::mpsc::channel(4 * MAX_BATCH);
        for id in 10..8 + MAX_BATCH as i64 {
            tx.try_send(result(id)).map_err(|_| ()).expect("room");
        }
        tx.try_send(result(1)).map_err(|_| ()).expect("room");
        tx.try_send(result(2)).map_err(|_| ()).expect("room");
        tx.try_send(result(3)).map_err(|_| ()).expect("room");
        let first = rx.try_recv().ok();
        let (mut batch, carried) = next_batch(vec![accepted(1), accepted(2)], first, &mut rx);
        let now = Instant::now();
        assert_eq!(carried, 2);
        assert_eq!(batch.len(), MAX_BATCH + 2, "a batch's worth besides the held ones");
        let got = ids(&batch);
        assert_eq!(got[..2], [('a', 1), ('a', 2)], "the held ones first");
        assert!(got.contains(&('r', 1)) && got.contains(&('r', 2)), "their Results are in the batch");
        assert!(hold_back(&mut batch, &vec![now + HOLD_ACCEPTED; carried], now).is_empty(), "nothing waits on");
        assert_eq!(ids(&[rx.try_recv().expect("left queued")]), [('r', 3)]);
    }

    #[test]
    fn a_result_of_another_attempt_does_not_release_an_accepted() {
        let mut batch = vec![accepted(7), result(7)];
        if let WorkerOp::Result(c) = &mut batch[1].op {
            c.attempt = 2;
        }
        assert_eq!(held_ids(&hold_back(&mut batch, &[], Instant::now())), [('a', 7)]);
    }
}
