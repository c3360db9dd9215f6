//! Group commit of worker messages.
//!
//! Accepted, Result and Reject messages from every stream of this axd go through one bounded queue;
//! the writer takes whatever is queued (up to a batch) and applies it in one transaction, then sends
//! the acknowledgements and cancels. Under load many streams share each commit; when idle a message
//! is written at once. A full queue slows the streams down (backpressure), it never grows.

use std::{sync::Arc, time::Duration};

use ax_proto::v1 as pb;
use tokio_util::sync::CancellationToken;

pub use super::queue::{MAX_BATCH, Pending, QUEUE, Writer, WriterQueue};
use crate::{
    core::Core,
    error::StoreError,
    lifecycle::{AcceptOutcome, CompleteOutcome, WorkerOp, WorkerOpOutcome},
    model::add,
};

/// Applies queued messages until `cancel` fires and the queue is drained.
pub async fn run(core: Arc<Core>, mut queue: WriterQueue, cancel: CancellationToken) {
    loop {
        let first = tokio::select! {
            p = queue.0.recv() => p,
            () = cancel.cancelled() => {
                // Finish what the streams already handed over.
                queue.0.close();
                queue.0.recv().await
            }
        };
        let Some(first) = first else { return };
        let mut batch = Vec::with_capacity(64);
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match queue.0.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        apply(&core, batch).await;
    }
}

fn msg(m: pb::scheduler_message::Msg) -> crate::worker::registry::Outbound {
    Ok(pb::SchedulerMessage { msg: Some(m) })
}

async fn apply(core: &Core, batch: Vec<Pending>) {
    // The ops move into the write; what answers them needs only their sessions and keys.
    let (ops, sessions): (Vec<WorkerOp>, Vec<_>) = batch.into_iter().map(|p| (p.op, p.session)).unzip();
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(50);
    let mut attempt = 0;
    let outcomes = loop {
        let now = core.clock.now();
        let lease_until = add(now, core.sessions.lease_ttl());
        let applied = crate::lifecycle::apply::apply_worker_ops(
            &core.pools.workers,
            &ops,
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
                if !session.send(msg(pb::scheduler_message::Msg::ResultAck(ack))) {
                    // The worker keeps the result and re-sends it after reconnecting.
                    tracing::debug!(session = %session.id, "stream full or closed; ack not sent");
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
