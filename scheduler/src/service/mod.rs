//! The gRPC services axd serves, and the state they share with the loops.

use std::{sync::Arc, time::Duration};

use tokio::sync::Notify;

use crate::{auth::AuthMode, clock::Clock, model::Ts, store::Store};

pub mod admin;

/// Local wake-ups between the parts of one axd (other axd learn through the database).
#[derive(Debug, Default)]
pub struct Signals {
    /// A task was created or changed: the trigger loop recomputes its sleep.
    pub trigger: Arc<Notify>,
    /// Instances became available or credits were granted: the dispatcher looks again.
    pub dispatch: Arc<Notify>,
    /// A command (e.g. Cancel) was queued for a worker stream.
    pub commands: Arc<Notify>,
}

/// What the services and loops of one axd share.
pub struct Core {
    /// The database.
    pub store: Arc<dyn Store>,
    /// The database clock.
    pub clock: Arc<dyn Clock>,
    /// This axd's id.
    pub scheduler_id: String,
    /// mTLS or open.
    pub auth: AuthMode,
    /// Local wake-ups.
    pub signals: Signals,
    /// How often axd heartbeats into `ax_scheduler`; three missed heartbeats mean "not alive".
    pub scheduler_heartbeat: Duration,
}

impl Core {
    /// Schedulers whose heartbeat is newer than this are alive.
    pub fn alive_since(&self) -> Ts {
        crate::model::sub(self.clock.now(), self.scheduler_heartbeat * 3)
    }
}
