//! The dispatch loop: hands PENDING instances to worker streams with free credits.
//!
//! A round claims ready instances (available_at <= now) only for the (app, handler) pairs that
//! streams on this axd can take, at most their free credits, marks them DISPATCHED with a new
//! attempt and an ack lease, commits, and only then sends `Assign` without waiting (bounded
//! channels; a stream that cannot take it is treated as gone and the attempt is re-queued at once).
//! It sleeps until the next `available_at` it knows of, a local signal (instances created, credits
//! granted), or at most the poll interval; it never busy-polls.

use std::{sync::Arc, time::Duration};

use ax_proto::v1 as pb;
use tokio_util::sync::CancellationToken;

use crate::{
    convert::{duration_to_pb, ts_to_pb},
    error::StoreResult,
    model::add,
    registry::Session,
    service::Core,
    store::{Assignment, WorkerOp},
};

/// The dispatcher of one axd.
pub struct Dispatcher {
    core: Arc<Core>,
}

/// The Assign message for an assignment.
pub fn assign_message(a: &Assignment) -> pb::SchedulerMessage {
    let i = &a.instance;
    pb::SchedulerMessage {
        msg: Some(pb::scheduler_message::Msg::Assign(pb::Assign {
            instance_id: i.id,
            attempt: i.attempt,
            task_name: i.task_name.clone(),
            handler: i.handler.clone(),
            params: i.params.clone(),
            trigger_time: Some(ts_to_pb(i.fire_at)),
            timeout: i.timeout.map(duration_to_pb),
            idempotency_key: i.idempotency_key.clone(),
        })),
    }
}

impl Dispatcher {
    /// A dispatcher over the shared core.
    pub fn new(core: Arc<Core>) -> Self {
        Dispatcher { core }
    }

    /// One claim-and-send round. Returns how many instances were assigned.
    pub async fn run_round(&self) -> StoreResult<usize> {
        let core = &self.core;
        let demand = core.registry.demand();
        if demand.is_empty() {
            return Ok(0);
        }
        let started = std::time::Instant::now();
        let now = core.clock.now();
        let lease_until = add(now, core.sessions.ack_timeout);
        let mut reserved: Vec<(Arc<Session>, (i64, u32))> = Vec::new();
        let registry = core.registry.clone();
        let claimed = core
            .pools
            .dispatch
            .claim_ready(now, &demand, lease_until, &core.scheduler_id, &mut |ready| {
                let attempt = ready.attempt + 1;
                let (session, r) = registry.route(ready, attempt)?;
                reserved.push((session, (ready.id, attempt)));
                Some(r)
            })
            .await;
        let assignments = match claimed {
            Ok(a) => a,
            Err(e) => {
                for (s, key) in reserved {
                    s.unreserve(key);
                }
                return Err(e);
            }
        };
        if !assignments.is_empty() {
            // Leases were set: the sweeper may need to wake earlier than it planned.
            core.signals.sweep.offer(lease_until);
        }
        let n = assignments.len();
        tracing::debug!(assigned = n, took_us = started.elapsed().as_micros() as u64, "dispatch round");
        for a in assignments {
            let key = (a.instance.id, a.instance.attempt);
            let delivered = match core.registry.get(&a.session_id) {
                Some(s) => match s.tx.try_send(Ok(assign_message(&a))) {
                    Ok(()) => true,
                    Err(_) => {
                        s.unreserve(key);
                        false
                    }
                },
                None => false,
            };
            if !delivered {
                let reason =
                    format!("could not be delivered to session {} (stream closed or not reading)", a.session_id);
                let op =
                    WorkerOp::Reject { instance_id: key.0, attempt: key.1, session_id: a.session_id.clone(), reason };
                // If axd is shutting down, the ack lease brings it back instead.
                let _ = core.writer.submit(op, None).await;
            }
        }
        Ok(n)
    }

    /// How long to sleep before the next round: until the next known `available_at` of apps with
    /// free credits, at most the poll interval.
    async fn idle_time(&self) -> Duration {
        let poll = self.core.sessions.poll_interval;
        let apps: Vec<String> = self.core.registry.demand().into_iter().map(|d| d.app).collect();
        if apps.is_empty() {
            return poll;
        }
        match self.core.pools.dispatch.next_available(&apps).await {
            Ok(Some(t)) => (t - self.core.clock.now()).to_std().unwrap_or(Duration::ZERO).min(poll),
            Ok(None) => poll,
            Err(e) => {
                tracing::warn!(error = %e, "dispatch: reading the next available time failed");
                poll
            }
        }
    }

    /// Runs until `cancel` fires.
    pub async fn run(self, cancel: CancellationToken) {
        let wake = self.core.signals.dispatch.clone();
        let mut backoff = Duration::from_millis(50);
        loop {
            let sleep = match self.run_round().await {
                Ok(n) => {
                    self.core.progress.tick(crate::health::Loop::Dispatch);
                    backoff = Duration::from_millis(50);
                    let full = n > 0 && self.core.registry.demand().iter().any(|d| d.limit > 0);
                    if full { Duration::ZERO } else { self.idle_time().await }
                }
                Err(e @ crate::error::StoreError::Conflict(_)) => {
                    // Another axd's claim won a lock race: claim again at once.
                    tracing::debug!(error = %e, "dispatch round lost a lock race; retrying");
                    Duration::from_millis(1)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "dispatch round failed; retrying in {backoff:?}");
                    let b = backoff;
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                    b
                }
            };
            if sleep.is_zero() {
                if cancel.is_cancelled() {
                    return;
                }
                tokio::task::yield_now().await;
                continue;
            }
            tokio::select! {
                () = cancel.cancelled() => return,
                () = wake.notified() => {}
                () = tokio::time::sleep(sleep) => {}
            }
        }
    }
}
