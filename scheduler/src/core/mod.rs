//! What the loops and services of one axd share: database pools per role, wake-up signals,
//! session settings, the clock, health progress, the registry of worker streams and the writer.

use std::{sync::Arc, time::Duration};

use tokio::sync::Notify;

use crate::{auth::AuthMode, model::Ts, routing::registry::Registry, store::Store};
use clock::Clock;
use queue::Writer;

pub mod clock;
pub mod health;
pub mod queue;

/// Local wake-ups between the parts of one axd (other axd learn through the database).
#[derive(Debug, Default)]
pub struct Signals {
    /// A task was created or changed: the trigger loop recomputes its sleep.
    pub trigger: Arc<Notify>,
    /// Instances became available or credits were granted: the dispatcher looks again.
    pub dispatch: Arc<Notify>,
    /// A command (e.g. Cancel) was queued for a worker stream.
    pub commands: Arc<Notify>,
    /// An attempt got a lease or deadline: the sweeper wakes earlier if it is due before its plan.
    pub sweep: Arc<SweepHint>,
    /// An alert delivery was queued by this axd (`axctl alert test`): the alert loop looks now.
    pub alerts: Arc<Notify>,
}

/// Timing rules of worker sessions.
#[derive(Debug, Clone, Copy)]
pub struct SessionSettings {
    /// Workers send a message at least this often.
    pub heartbeat_interval: Duration,
    /// A DISPATCHED attempt waits this long for Accepted (after its hold, if assigned early).
    pub ack_timeout: Duration,
    /// How early an instance may be assigned to a stream that holds it until its time.
    pub dispatch_ahead: Duration,
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

    /// How long a lease lasts after a renewal (or acceptance, or re-adoption), and what Welcome
    /// promises the worker (`Welcome.lease_ttl`): counted from the heartbeat a renewal answers, no
    /// axd gives those attempts to another worker for at least this long. A renewal is decided after
    /// that heartbeat arrived, so a lease written as `now + lease_ttl` keeps the promise; a session
    /// that goes silent ends after [`Self::dead_after`] and its attempts keep their lease (at least
    /// the grace period from then), which also keeps it.
    pub fn lease_ttl(&self) -> Duration {
        self.dead_after() + self.lost_worker_grace
    }

    /// `Welcome.fence_margin`: a worker stops an attempt when less than this is left of its lease,
    /// and does not start an assignment whose ack deadline is closer. It covers the time a handler
    /// takes to stop, timers firing late on a busy host, and the lag of the database-clock
    /// estimates that leases are written with: one heartbeat interval (configuration keeps it
    /// below the ack timeout).
    pub fn fence_margin(&self) -> Duration {
        self.heartbeat_interval
    }
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            heartbeat_interval: Duration::from_secs(2),
            ack_timeout: Duration::from_secs(10),
            dispatch_ahead: Duration::from_millis(200),
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
    pub admin: Arc<Store>,
    /// The trigger loop.
    pub trigger: Arc<Store>,
    /// The dispatch loop's claims.
    pub dispatch: Arc<Store>,
    /// Worker sessions: group commits of their messages, leases, commands.
    pub workers: Arc<Store>,
    /// The sweeper and retention.
    pub sweeper: Arc<Store>,
    /// The PENDING backlog `/metrics` reads: one connection of its own when `--metrics-listen` is
    /// set, so that scrapes never wait for, nor take, a connection of AdminService calls.
    pub metrics: Arc<Store>,
}

impl Pools {
    /// Every role on one store (tests, and tools that do not care).
    pub fn shared(store: Arc<Store>) -> Self {
        Pools {
            admin: store.clone(),
            trigger: store.clone(),
            dispatch: store.clone(),
            workers: store.clone(),
            sweeper: store.clone(),
            metrics: store,
        }
    }

    /// Every pool once (a role without a pool of its own shares another's).
    pub fn distinct(&self) -> Vec<&Arc<Store>> {
        let mut out: Vec<&Arc<Store>> = Vec::new();
        for s in [&self.admin, &self.trigger, &self.dispatch, &self.workers, &self.sweeper, &self.metrics] {
            if !out.iter().any(|o| Arc::ptr_eq(o, s)) {
                out.push(s);
            }
        }
        out
    }

    /// Closes every pool.
    pub async fn close(&self) {
        for s in self.distinct() {
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
    pub progress: Arc<crate::core::health::Progress>,
    /// A loop without a round for this long is stalled (`--health-stall-after`).
    pub health_stall_after: Duration,
    /// Session timing.
    pub sessions: SessionSettings,
    /// How often axd heartbeats into `ax_scheduler`; three missed heartbeats mean "not alive".
    pub scheduler_heartbeat: Duration,
    /// OpenTelemetry spans (off unless `--otlp-endpoint`).
    pub traces: crate::traces::Traces,
    /// How alert webhooks are checked and delivered.
    pub alerts: crate::model::alerts::AlertSettings,
    /// Cooldowns and the cluster's workers as this axd last read them (README "Routing and limits").
    pub routing: Arc<crate::routing::RoutingState>,
    /// TriggerTask calls waiting for their instance to end and WatchInstance streams
    /// (`--max-waiting-calls`, [`MAX_WAITS`] by default, at once).
    pub waits: Arc<tokio::sync::Semaphore>,
    /// The longest unary call (`--request-timeout`): a waiting call answers before it.
    pub request_timeout: Duration,
}

/// The default of `--max-waiting-calls`: TriggerTask calls that may wait for their instance and
/// WatchInstance streams at once on one axd (each reads its instance at most twice a second).
pub const MAX_WAITS: u32 = 1000;

impl Core {
    /// Schedulers whose heartbeat is newer than this are alive.
    pub fn alive_since(&self) -> Ts {
        crate::model::sub(self.clock.now(), self.scheduler_heartbeat * 3)
    }
}

/// The earliest lease or deadline this axd set since the sweeper last looked, so the sweeper is
/// woken only when a new deadline falls before the time it planned to wake anyway (every dispatch
/// round sets leases; waking and querying on each of them kept the sweeper busy under load).
#[derive(Debug)]
pub struct SweepHint {
    /// Microseconds since the epoch of the sweeper's planned wake-up (or of an earlier offer).
    earliest_us: std::sync::atomic::AtomicI64,
    notify: Notify,
}

impl Default for SweepHint {
    fn default() -> Self {
        SweepHint { earliest_us: std::sync::atomic::AtomicI64::new(i64::MIN), notify: Notify::new() }
    }
}

impl SweepHint {
    /// Something may be due at `at`: wakes the sweeper if that is before its plan.
    pub fn offer(&self, at: crate::model::Ts) {
        let us = at.timestamp_micros();
        if self.earliest_us.fetch_min(us, std::sync::atomic::Ordering::AcqRel) > us {
            self.notify.notify_one();
        }
    }

    /// Sweep now (a session ended, or a worker re-announced attempts).
    pub fn now(&self) {
        self.earliest_us.store(i64::MIN, std::sync::atomic::Ordering::Release);
        self.notify.notify_one();
    }

    /// The sweeper starts reading the deadlines: offers from now on are kept.
    pub fn collect(&self) {
        self.earliest_us.store(i64::MAX, std::sync::atomic::Ordering::Release);
    }

    /// The sweeper plans to wake at `at`: offers before it wake it. An offer made since
    /// [`SweepHint::collect`] that is earlier than `at` has left a wake-up pending already.
    pub fn plan(&self, at: crate::model::Ts) {
        self.earliest_us.fetch_min(at.timestamp_micros(), std::sync::atomic::Ordering::AcqRel);
    }

    /// Waits for an offer before the plan.
    pub async fn notified(&self) {
        self.notify.notified().await;
    }
}

/// Spawns a background task whose traces carry `name` (in a span `axd{part=NAME}`: a field of
/// its own, as JSON logs name the span itself `name`, and `task` there means an ax task).
pub fn spawn<F>(name: &'static str, fut: F) -> tokio::task::JoinHandle<()>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    tokio::spawn(tracing::Instrument::instrument(fut, tracing::info_span!("axd", part = name)))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::SweepHint;
    use crate::model::{Ts, add};

    fn t(secs: u64) -> Ts {
        add(chrono::DateTime::from_timestamp(1_800_000_000, 0).expect("valid"), Duration::from_secs(secs))
    }

    /// Whether a wake-up is pending (without waiting for one).
    async fn woken(h: &SweepHint) -> bool {
        tokio::time::timeout(Duration::ZERO, h.notified()).await.is_ok()
    }

    #[tokio::test]
    async fn only_offers_before_the_plan_wake_the_sweeper() {
        let h = SweepHint::default();
        h.collect();
        h.plan(t(10));
        h.offer(t(20));
        assert!(!woken(&h).await, "a later deadline changes nothing");
        h.offer(t(5));
        assert!(woken(&h).await, "an earlier deadline wakes it");
        h.offer(t(7));
        assert!(!woken(&h).await, "t(5) is already the plan");
    }

    #[tokio::test]
    async fn an_offer_while_the_sweeper_reads_is_not_lost() {
        let h = SweepHint::default();
        h.collect();
        h.offer(t(5));
        // The sweeper read t(10) from the database before the offer was visible there.
        h.plan(t(10));
        assert!(woken(&h).await);
    }

    #[tokio::test]
    async fn now_always_wakes() {
        let h = SweepHint::default();
        h.collect();
        h.plan(t(10));
        h.now();
        assert!(woken(&h).await);
    }
}
