//! The sweeper: applies every deadline. DISPATCHED attempts not accepted in time go back to PENDING;
//! RUNNING attempts past their run deadline time out (and their worker is told to stop); RUNNING
//! attempts whose lease expired fail as "worker lost"; the retry policy applies to both. It also
//! purges finished instances (and finished alert deliveries) past retention and forgets axd
//! processes that stopped heartbeating.
//!
//! Work is claimed with SKIP LOCKED in bounded batches, so every axd runs a sweeper and none waits
//! on another. It sleeps until the earliest lease or deadline, the poll interval, or a local signal
//! that this axd set a lease or deadline earlier than that (see [`crate::core::SweepHint`]).

use std::{collections::HashMap, sync::Arc, time::Duration};

use tokio_util::sync::CancellationToken;

use crate::{
    core::Core,
    error::StoreResult,
    lifecycle::{Batch, Ctx},
    model::{Instance, InstanceStatus, Ts, add, sub},
    routing::RoutingState,
    store::{Expiry, Store},
    traces::{Expired, Traces},
    transitions::persist,
};

/// What a sweep changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// DISPATCHED attempts never accepted, back to PENDING.
    pub ack_timeouts: usize,
    /// RUNNING attempts past their deadline.
    pub timeouts: usize,
    /// RUNNING attempts whose worker was lost.
    pub lost: usize,
    /// Finished instances purged by retention.
    pub purged: u64,
}

/// One sweep transaction: claims, in bounded batches with SKIP LOCKED, DISPATCHED attempts whose
/// lease passed (back to PENDING), RUNNING attempts past their deadline (TIMEOUT, Cancel queued,
/// retry policy) and RUNNING attempts whose lease passed (worker lost, retry policy), and applies
/// the state machine to each. Each expired attempt is an `ax.expire` span of its instance's trace.
#[allow(clippy::too_many_arguments)]
pub async fn sweep(
    store: &Store,
    now: Ts,
    limit: u32,
    scheduler_id: &str,
    traces: &Traces,
    routing: &RoutingState,
    grace: std::time::Duration,
) -> StoreResult<SweepReport> {
    let span_start = std::time::SystemTime::now();
    let mut tx = store.begin().await?;
    let ctx = Ctx { now, scheduler_id };
    let acks = tx.instances().claim_expired(InstanceStatus::Dispatched, Expiry::Lease, now, limit).await?;
    let timeouts = tx.instances().claim_expired(InstanceStatus::Running, Expiry::Deadline, now, limit).await?;
    let lost = tx.instances().claim_expired(InstanceStatus::Running, Expiry::Lease, now, limit).await?;
    let orphans = tx.instances().claim_orphans(crate::model::sub(now, grace), limit).await?;
    let report = SweepReport { ack_timeouts: acks.len(), timeouts: timeouts.len(), lost: lost.len(), purged: 0 };
    let mut rows: HashMap<i64, Instance> = HashMap::new();
    let mut batch = Batch::default();
    // (instance, attempt, why) of each attempt this sweep ends, for its span.
    let mut expired: Vec<(i64, u32, Expired)> = Vec::new();
    for i in acks {
        let id = i.id;
        let inst = rows.entry(id).or_insert(i);
        expired.push((id, inst.attempt, Expired::AckTimeout));
        batch.add(id, crate::lifecycle::expire_ack(inst, ctx));
    }
    for i in timeouts {
        let id = i.id;
        let inst = rows.entry(id).or_insert(i);
        expired.push((id, inst.attempt, Expired::Timeout));
        batch.add(id, crate::lifecycle::time_out(inst, ctx, fastrand::f64()));
    }
    let mut lost_by_app = crate::prometheus::Tally::default();
    for i in lost {
        let id = i.id;
        // A row timed out above is no longer RUNNING; `lose` leaves it alone.
        let timed_out = rows.contains_key(&id);
        let inst = rows.entry(id).or_insert(i);
        if !timed_out {
            expired.push((id, inst.attempt, Expired::WorkerLost));
        }
        let fx = crate::lifecycle::lose(inst, ctx, fastrand::f64());
        if fx.changed {
            lost_by_app.add(crate::prometheus::WORKERS_LOST, &inst.app, None, 1);
        }
        batch.add(id, fx);
    }
    for i in orphans {
        let id = i.id;
        let inst = rows.entry(id).or_insert(i);
        batch.add(id, crate::lifecycle::fanout::unreachable(inst, ctx));
    }
    let persisted = persist(&mut tx, &mut rows, batch, ctx, routing).await?;
    tx.commit().await?;
    persisted.after_commit(routing);
    lost_by_app.record();
    if traces.is_on() {
        let span = (span_start, std::time::SystemTime::now());
        for (id, attempt, why) in expired {
            if let Some(inst) = rows.get(&id) {
                traces.expired(inst, attempt, why, span);
            }
        }
    }
    Ok(report)
}

/// Forgets axd whose heartbeat is older than `dead_before` (at most 100), with their worker
/// sessions and undelivered commands; how many.
pub async fn purge_dead_schedulers(store: &Store, dead_before: Ts) -> StoreResult<u64> {
    let mut tx = store.begin().await?;
    let n = tx.cluster().purge_dead_schedulers(dead_before).await?;
    tx.commit().await?;
    Ok(n)
}

/// Deletes, in batches of `limit`, finished instances (with their events, logs and keys) that
/// finished before `before`; how many.
pub async fn purge_finished(store: &Store, before: Ts, limit: u32) -> StoreResult<u64> {
    let mut tx = store.begin().await?;
    let n = tx.instances().purge_finished(before, limit).await?;
    // DAG join rows of runs that began before the retention horizon go with them.
    tx.flow().purge_joins(before).await?;
    tx.commit().await?;
    Ok(n)
}

/// Deletes every delivered or failed alert delivery finished before `before` (in transactions of at
/// most 1000 rows); how many.
pub async fn purge_deliveries(store: &Store, before: Ts) -> StoreResult<u64> {
    let mut purged = 0;
    loop {
        let mut tx = store.begin().await?;
        let n = tx.alerts().purge_deliveries(before, 1000).await?;
        tx.commit().await?;
        purged += n;
        if n < 1000 {
            return Ok(purged);
        }
    }
}

/// Deletes every audit entry older than `before` (in transactions of at most 1000 rows); how many.
pub async fn purge_audit(store: &Store, before: Ts) -> StoreResult<u64> {
    let mut purged = 0;
    loop {
        let mut tx = store.begin().await?;
        let n = tx.audit().purge_audit(before, 1000).await?;
        tx.commit().await?;
        purged += n;
        if n < 1000 {
            return Ok(purged);
        }
    }
}

/// Sweeper settings.
#[derive(Debug, Clone, Copy)]
pub struct SweeperConfig {
    /// Most rows per batch.
    pub batch: u32,
    /// Finished instances older than this are purged.
    pub retention: Duration,
    /// How often retention and dead-scheduler cleanup run.
    pub housekeeping_every: Duration,
    /// Audit entries older than this are purged.
    pub audit_retention: Duration,
}

/// The sweeper of one axd.
pub struct Sweeper {
    core: Arc<Core>,
    config: SweeperConfig,
}

impl Sweeper {
    /// A sweeper over the shared core.
    pub fn new(core: Arc<Core>, config: SweeperConfig) -> Self {
        Sweeper { core, config }
    }

    /// Applies every expired lease and deadline (all batches).
    pub async fn sweep_once(&self) -> StoreResult<SweepReport> {
        let mut total = SweepReport::default();
        loop {
            let now = self.core.clock.now();
            let core = &self.core;
            let r = sweep(
                &core.pools.sweeper,
                now,
                self.config.batch,
                &core.scheduler_id,
                &core.traces,
                &core.routing,
                core.sessions.lost_worker_grace,
            )
            .await?;
            let full = [r.ack_timeouts, r.timeouts, r.lost].iter().any(|n| *n >= self.config.batch as usize);
            total.ack_timeouts += r.ack_timeouts;
            total.timeouts += r.timeouts;
            total.lost += r.lost;
            if !full {
                break;
            }
        }
        if total.ack_timeouts + total.timeouts + total.lost > 0 {
            self.core.signals.dispatch.notify_one();
            if total.timeouts > 0 {
                self.core.signals.commands.notify_one();
            }
        }
        Ok(total)
    }

    /// Retention and forgetting dead schedulers.
    pub async fn housekeeping(&self) -> StoreResult<u64> {
        let now = self.core.clock.now();
        let mut purged = 0;
        loop {
            let n = purge_finished(&self.core.pools.sweeper, sub(now, self.config.retention), 1000).await?;
            purged += n;
            if n < 1000 {
                break;
            }
        }
        // A scheduler silent for ten heartbeats (at least 30 s) is gone; its sessions' attempts are
        // already covered by their leases.
        let dead_after = (self.core.scheduler_heartbeat * 10).max(Duration::from_secs(30));
        purge_dead_schedulers(&self.core.pools.sweeper, sub(now, dead_after)).await?;
        // Session history lasts as long as the instances it explains.
        let mut tx = self.core.pools.sweeper.begin().await?;
        tx.cluster().purge_session_log(sub(now, self.config.retention)).await?;
        // Uniqueness values whose window has ended hold nothing (a trigger would take them over).
        tx.limits().purge_unique(now, 10_000).await?;
        tx.commit().await?;
        // Finished alert deliveries are history like finished instances: the same retention.
        purge_deliveries(&self.core.pools.sweeper, sub(now, self.config.retention)).await?;
        let audit = purge_audit(&self.core.pools.sweeper, sub(now, self.config.audit_retention)).await?;
        if audit > 0 {
            tracing::info!(purged = audit, "purged audit entries past audit retention");
        }
        Ok(purged)
    }

    /// Runs until `cancel` fires.
    pub async fn run(self, cancel: CancellationToken) {
        let wake = self.core.signals.sweep.clone();
        let poll = self.core.sessions.poll_interval;
        let mut last_housekeeping = tokio::time::Instant::now();
        loop {
            wake.collect();
            let started = std::time::Instant::now();
            let swept = self.sweep_once().await;
            crate::prometheus::loop_round("sweeper", started.elapsed(), swept.is_err());
            match swept {
                Ok(_) => self.core.progress.tick(crate::core::health::Loop::Sweeper),
                Err(e) => tracing::warn!(error = %e, "sweep failed"),
            }
            if last_housekeeping.elapsed() >= self.config.housekeeping_every {
                last_housekeeping = tokio::time::Instant::now();
                let started = std::time::Instant::now();
                let kept = self.housekeeping().await;
                crate::prometheus::loop_round("housekeeping", started.elapsed(), kept.is_err());
                match kept {
                    Ok(n) if n > 0 => {
                        tracing::info!(purged = n, "purged finished instances past retention")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "housekeeping failed"),
                }
            }
            let next = async { self.core.pools.sweeper.conn().await?.instances().next_deadline().await };
            let sleep = match next.await {
                // A millisecond past the deadline, so `< now` holds when we wake; at least 10 ms, so
                // rows another axd is sweeping (skipped as locked) do not make this spin.
                Ok(Some(t)) => (t - self.core.clock.now())
                    .to_std()
                    .map_or(Duration::ZERO, |d| d + Duration::from_millis(1))
                    .clamp(Duration::from_millis(10), poll),
                Ok(None) => poll,
                Err(e) => {
                    tracing::warn!(error = %e, "sweeper: reading the next deadline failed");
                    poll
                }
            };
            wake.plan(add(self.core.clock.now(), sleep));
            tokio::select! {
                () = cancel.cancelled() => return,
                () = wake.notified() => {}
                () = tokio::time::sleep(sleep) => {}
            }
        }
    }
}
