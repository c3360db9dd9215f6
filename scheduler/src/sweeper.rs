//! The sweeper: applies every deadline. DISPATCHED attempts not accepted in time go back to PENDING;
//! RUNNING attempts past their run deadline time out (and their worker is told to stop); RUNNING
//! attempts whose lease expired fail as "worker lost"; the retry policy applies to both. It also
//! purges finished instances past retention and forgets axd processes that stopped heartbeating.
//!
//! Work is claimed with SKIP LOCKED in bounded batches, so every axd runs a sweeper and none waits
//! on another. It sleeps until the earliest lease or deadline, the poll interval, or a local signal
//! that this axd set a lease or deadline earlier than that (see [`crate::service::SweepHint`]).

use std::{sync::Arc, time::Duration};

use tokio_util::sync::CancellationToken;

use crate::{
    error::StoreResult,
    model::{add, sub},
    service::Core,
    store::SweepReport,
};

/// Sweeper settings.
#[derive(Debug, Clone, Copy)]
pub struct SweeperConfig {
    /// Most rows per batch.
    pub batch: u32,
    /// Finished instances older than this are purged.
    pub retention: Duration,
    /// How often retention and dead-scheduler cleanup run.
    pub housekeeping_every: Duration,
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
            let r = self.core.pools.sweeper.sweep(now, self.config.batch, &self.core.scheduler_id).await?;
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
            let n = self.core.pools.sweeper.purge_finished(sub(now, self.config.retention), 1000).await?;
            purged += n;
            if n < 1000 {
                break;
            }
        }
        // A scheduler silent for ten heartbeats (at least 30 s) is gone; its sessions' attempts are
        // already covered by their leases.
        let dead_after = (self.core.scheduler_heartbeat * 10).max(Duration::from_secs(30));
        self.core.pools.sweeper.purge_dead_schedulers(sub(now, dead_after)).await?;
        Ok(purged)
    }

    /// Runs until `cancel` fires.
    pub async fn run(self, cancel: CancellationToken) {
        let wake = self.core.signals.sweep.clone();
        let poll = self.core.sessions.poll_interval;
        let mut last_housekeeping = tokio::time::Instant::now();
        loop {
            wake.collect();
            match self.sweep_once().await {
                Ok(_) => self.core.progress.tick(crate::health::Loop::Sweeper),
                Err(e) => tracing::warn!(error = %e, "sweep failed"),
            }
            if last_housekeeping.elapsed() >= self.config.housekeeping_every {
                last_housekeeping = tokio::time::Instant::now();
                match self.housekeeping().await {
                    Ok(n) if n > 0 => {
                        tracing::info!(purged = n, "purged finished instances past retention")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "housekeeping failed"),
                }
            }
            let sleep = match self.core.pools.sweeper.next_deadline().await {
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
