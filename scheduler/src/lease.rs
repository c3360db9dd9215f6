//! The lease loop: while a worker heartbeats, the leases of its RUNNING attempts are renewed, in one
//! batch per round for every live stream on this axd, and `ax_worker` shows its live numbers.
//!
//! If the worker or this axd dies, renewals stop and the leases expire; the sweeper (on any axd)
//! then fails the attempts as "worker lost", unless the worker re-announced them elsewhere first.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::{model::add, service::Core};

/// Renews leases every heartbeat interval until `cancel` fires.
pub async fn run(core: Arc<Core>, cancel: CancellationToken) {
    let every = core.sessions.heartbeat_interval;
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        renew(&core).await;
    }
}

/// One renewal round.
pub async fn renew(core: &Core) {
    let now = core.clock.now();
    let sessions: Vec<_> = core.registry.all().iter().map(|s| s.sync()).collect();
    if sessions.is_empty() {
        return;
    }
    if let Err(e) = core.pools.workers.sync_sessions(&sessions, add(now, core.sessions.lease_ttl())).await {
        tracing::warn!(error = %e, sessions = sessions.len(), "renewing worker leases failed");
    }
}
