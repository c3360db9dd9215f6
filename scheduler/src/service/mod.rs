//! The gRPC services axd serves, and the state they share with the loops.

use std::{sync::Arc, time::Duration};

use tokio::sync::Notify;

use crate::{auth::AuthMode, clock::Clock, model::Ts, registry::Registry, store::Store, writer::Writer};

pub mod admin;
pub mod worker;

/// Local wake-ups between the parts of one axd (other axd learn through the database).
#[derive(Debug, Default)]
pub struct Signals {
    /// A task was created or changed: the trigger loop recomputes its sleep.
    pub trigger: Arc<Notify>,
    /// Instances became available or credits were granted: the dispatcher looks again.
    pub dispatch: Arc<Notify>,
    /// A command (e.g. Cancel) was queued for a worker stream.
    pub commands: Arc<Notify>,
    /// An attempt got a lease or deadline: the sweeper recomputes its sleep.
    pub sweep: Arc<Notify>,
}

/// Timing rules of worker sessions.
#[derive(Debug, Clone, Copy)]
pub struct SessionSettings {
    /// Workers send a message at least this often.
    pub heartbeat_interval: Duration,
    /// A DISPATCHED attempt waits this long for Accepted.
    pub ack_timeout: Duration,
    /// A lost worker's attempts wait this long for it to come back.
    pub lost_worker_grace: Duration,
    /// Longest sleep of the loops.
    pub poll_interval: Duration,
    /// How long a draining stream stays open after Drain.
    pub drain_timeout: Duration,
}

impl SessionSettings {
    /// Silence after which a session is dead: three heartbeat intervals.
    pub fn dead_after(&self) -> Duration {
        self.heartbeat_interval * 3
    }

    /// A lease renewed now lasts through the renewal period, the detection of a dead session and
    /// the grace period, so only a worker (or axd) that is really gone lets it expire.
    pub fn lease_ttl(&self) -> Duration {
        self.heartbeat_interval * 4 + self.lost_worker_grace
    }
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            heartbeat_interval: Duration::from_secs(2),
            ack_timeout: Duration::from_secs(10),
            lost_worker_grace: Duration::from_secs(10),
            poll_interval: Duration::from_secs(1),
            drain_timeout: Duration::from_secs(5),
        }
    }
}

/// One database pool per role, so that a flood of admin queries or a slow sweep can never take the
/// connections the trigger loop needs (the cascade of the origin post: a full pool stalled
/// scheduling for half an hour).
#[derive(Clone)]
pub struct Pools {
    /// AdminService calls, the scheduler heartbeat and the database clock.
    pub admin: Arc<dyn Store>,
    /// The trigger loop.
    pub trigger: Arc<dyn Store>,
    /// The dispatch loop's claims.
    pub dispatch: Arc<dyn Store>,
    /// Worker sessions: group commits of their messages, leases, commands.
    pub workers: Arc<dyn Store>,
    /// The sweeper and retention.
    pub sweeper: Arc<dyn Store>,
}

impl Pools {
    /// Every role on one store (tests, and tools that do not care).
    pub fn shared(store: Arc<dyn Store>) -> Self {
        Pools {
            admin: store.clone(),
            trigger: store.clone(),
            dispatch: store.clone(),
            workers: store.clone(),
            sweeper: store,
        }
    }

    /// Closes every pool.
    pub async fn close(&self) {
        for s in [&self.admin, &self.trigger, &self.dispatch, &self.workers, &self.sweeper] {
            s.close().await;
        }
    }
}

/// What the services and loops of one axd share.
pub struct Core {
    /// The database, one pool per role.
    pub pools: Pools,
    /// The database clock.
    pub clock: Arc<dyn Clock>,
    /// This axd's id.
    pub scheduler_id: String,
    /// mTLS or open.
    pub auth: AuthMode,
    /// Local wake-ups.
    pub signals: Signals,
    /// Worker streams on this axd.
    pub registry: Arc<Registry>,
    /// Group commit of worker messages.
    pub writer: Writer,
    /// When each loop last made progress (health).
    pub progress: Arc<crate::health::Progress>,
    /// Session timing.
    pub sessions: SessionSettings,
    /// How often axd heartbeats into `ax_scheduler`; three missed heartbeats mean "not alive".
    pub scheduler_heartbeat: Duration,
}

impl Core {
    /// Schedulers whose heartbeat is newer than this are alive.
    pub fn alive_since(&self) -> Ts {
        crate::model::sub(self.clock.now(), self.scheduler_heartbeat * 3)
    }
}
