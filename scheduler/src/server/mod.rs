//! Assembles one axd: pools, clock, loops and the gRPC server, and shuts them down in order.
//!
//! Start-up: connect one pool per role and migrate, sample the database clock, register in
//! `ax_scheduler`, start the loops, then serve AdminService, WorkerService, `grpc.health.v1` and
//! reflection on one port (mTLS when configured), and with `--console-listen` the web console on
//! another (see [`crate::console`]). Shutdown: worker streams are sent Drain (their
//! workers move to another axd), in-flight calls finish, the loops stop, the writer applies what the
//! streams handed over, and axd leaves `ax_scheduler` — all within the configured bound.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use tokio::{task::JoinHandle, time::Instant};
use tokio_util::sync::CancellationToken;

use crate::{
    config::Config,
    core::{
        Core, Pools,
        clock::{Clock, DbClock},
        health::Loop,
    },
    error::StoreError,
    model::SchedulerRecord,
    store::{self, ConnectOptions, Notice, Store},
    transport::{self, Tracker},
};

mod redact;
mod startup;
pub use redact::redact;

/// A boxed future: [`start`] and [`Running::shutdown`] return one, so that their large state
/// machines are compiled once, in this crate, instead of again in every binary and test that
/// awaits them.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// Why axd could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A TLS file could not be read or used.
    #[error("tls: {0}")]
    Tls(String),
    /// The database clock could not be read precisely enough at startup (every round trip was
    /// slower than a quarter of the heartbeat interval for [`STARTUP_WAIT`]).
    #[error(
        "the database clock could not be read within {wanted:?} in {STARTUP_WAIT:?} (the last round trip took \
         {got:?}): the leases axd gives workers would not be safe"
    )]
    ClockUnknown {
        /// The round trip needed.
        wanted: Duration,
        /// The last round trip.
        got: Duration,
    },
    /// The OTLP endpoint cannot be used (configuration checks it first).
    #[error("otlp_endpoint: {0}")]
    Otlp(#[from] ax_proto::otlp::EndpointError),
    /// The alert webhook client could not be set up (e.g. an unreadable `alert_ca_file`).
    #[error("alerts: {0}")]
    Alerts(String),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// Address.
        addr: SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
    /// `console_listen` could not be bound, or the console server could not be set up.
    #[error("console_listen {addr}: {reason}")]
    Console {
        /// Address.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
    /// `metrics_listen` could not be bound, or metrics could not be recorded.
    #[error("metrics_listen {addr}: {reason}")]
    Metrics {
        /// Address.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
}

/// The host name, for scheduler ids and `axctl scheduler list`.
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|h| h.trim().to_owned()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// A running axd.
pub struct Running {
    /// The bound address (useful with port 0).
    pub addr: SocketAddr,
    /// The shared state (tests reach the pools, signals and progress through it).
    pub core: Arc<Core>,
    /// Reports of the trigger loop.
    pub trigger_reports: tokio::sync::watch::Receiver<crate::loops::trigger::RoundReport>,
    /// Where `/metrics` is served (`--metrics-listen`, resolved when its port was 0).
    pub metrics_addr: Option<SocketAddr>,
    /// Where the web console is served (`--console-listen`, resolved when its port was 0).
    pub console_addr: Option<SocketAddr>,
    /// The client connections (tests read how many are open).
    pub connections: Arc<Tracker>,
    cancel: CancellationToken,
    writer_cancel: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    writer: JoinHandle<()>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
}

impl Running {
    /// This axd's scheduler id.
    pub fn scheduler_id(&self) -> &str {
        &self.core.scheduler_id
    }

    /// Drains worker streams, stops serving and the loops, lets the writer finish, and leaves
    /// `ax_scheduler`, waiting at most `timeout` in all.
    pub fn shutdown(self, timeout: Duration) -> BoxFuture<'static, ()> {
        Box::pin(self.shut_down(timeout))
    }

    async fn shut_down(self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        self.cancel.cancel();
        let stop = async {
            if let Ok(Err(e)) = self.server.await {
                tracing::warn!(error = %e, "grpc server ended with an error");
            }
            for t in self.tasks {
                let _ = t.await;
            }
            // Streams are closed: whatever they handed over is written before axd leaves.
            self.writer_cancel.cancel();
            let _ = self.writer.await;
        };
        if tokio::time::timeout_at(deadline, stop).await.is_err() {
            tracing::warn!("shutdown did not finish within {timeout:?}; exiting anyway");
        }
        // Leaving is bounded by the same deadline: a call stuck on the database keeps its
        // connection, and closing the pools waits for every connection to come back. A row left in
        // ax_scheduler is forgotten by the other axd after ten missed heartbeats.
        let leave = async {
            if let Err(e) = self.core.pools.admin.delete_scheduler(&self.core.scheduler_id).await {
                tracing::warn!(error = %e, "could not remove this scheduler from ax_scheduler");
            }
            self.core.pools.close().await;
        };
        if tokio::time::timeout_at(deadline, leave).await.is_err() {
            tracing::warn!("could not leave ax_scheduler and close the database connections within {timeout:?}");
        }
        // Last, so that a collector that does not answer cannot keep axd from leaving: the spans of
        // everything above, within what is left of the same deadline and at most 2 s.
        if !tokio::time::timeout_at(deadline, self.core.traces.flush()).await.unwrap_or(false) {
            tracing::warn!("the OTLP collector did not take the last trace spans in time; they are dropped");
        }
    }
}

fn read(path: &std::path::Path) -> Result<Vec<u8>, ServerError> {
    std::fs::read(path).map_err(|e| ServerError::Tls(format!("{}: {e}", path.display())))
}

async fn pool(config: &Config, url: &str, size: u32, role: &'static str) -> Result<Arc<Store>, StoreError> {
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.max_connections = size;
    opts.role = role;
    // Only `database_url` goes through the pooler; the session URL is a session.
    opts.transaction_pooler =
        config.database_pooler == crate::config::DatabasePooler::Transaction && url == config.database_url;
    store::connect(&opts).await
}

/// Where what needs a session goes (migrations under their lock, LISTEN): `database_session_url`,
/// or `database_url`.
fn session_url(config: &Config) -> &str {
    config.database_session_url.as_deref().unwrap_or(&config.database_url)
}

/// Applies the migrations on a connection of the session URL when it is another one.
async fn migrate(config: &Config, admin: &Store) -> Result<(), StoreError> {
    let session = session_url(config);
    if session == config.database_url {
        return admin.migrate().await;
    }
    let s = pool(config, session, 1, "migrate").await?;
    let r = s.migrate().await;
    s.close().await;
    r
}

/// How long axd waits at startup for a database that does not answer yet (restarting, frozen, or
/// started after axd) before it gives up and exits.
pub const STARTUP_WAIT: Duration = Duration::from_secs(60);

/// Opens the pools, migrates and reads the database clock once, retrying while the database is
/// unavailable, for up to [`STARTUP_WAIT`]. Any other error (a bad URL, a failed migration) ends
/// the start at once.
async fn open_database(config: &Config) -> Result<Pools, StoreError> {
    let url = &config.database_url;
    let deadline = Instant::now() + STARTUP_WAIT;
    let mut pause = Duration::from_millis(200);
    loop {
        let opened = async {
            let admin = pool(config, url, config.pools.admin, "admin").await?;
            migrate(config, &admin).await?;
            let pools = Pools {
                admin: admin.clone(),
                trigger: pool(config, url, config.pools.trigger, "trigger").await?,
                dispatch: pool(config, url, config.pools.dispatch, "dispatch").await?,
                workers: pool(config, url, config.pools.workers, "workers").await?,
                sweeper: pool(config, url, config.pools.sweeper, "sweeper").await?,
                metrics: match config.metrics_listen {
                    Some(_) => pool(config, url, 1, "metrics").await?,
                    None => admin.clone(),
                },
            };
            admin.db_now().await?;
            Ok::<_, StoreError>(pools)
        };
        match opened.await {
            Ok(v) => return Ok(v),
            Err(e @ StoreError::Unavailable(_)) if Instant::now() + pause < deadline => {
                tracing::warn!(error = %e, "the database is not answering yet; trying again in {pause:?}");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(5));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Starts axd with `config`. `clock` overrides the database clock (tests).
pub fn start(config: &Config, clock: Option<Arc<dyn Clock>>) -> BoxFuture<'_, Result<Running, ServerError>> {
    Box::pin(startup::start_axd(config, clock))
}

/// `--max-connections` (one budget for the gRPC and console ports), lowered to what the
/// file-descriptor limit leaves once the database connections and axd's own files are counted:
/// past that, accepting fails and every client, authenticated or not, is kept out.
fn max_connections(config: &Config) -> usize {
    let wanted = config.limits.max_connections;
    let p = config.pools;
    // The PostgreSQL LISTEN connection is the one more, and /metrics' one.
    let db = p.admin + p.trigger + p.dispatch + p.workers + p.sweeper + 1 + u32::from(config.metrics_listen.is_some());
    let Some(nofile) = transport::open_files_limit() else { return wanted as usize };
    let room = nofile.saturating_sub(transport::reserved_fds(db)).max(16);
    if u64::from(wanted) > room {
        tracing::warn!(
            max_connections = wanted,
            nofile,
            lowered_to = room,
            "--max-connections is more than the file-descriptor limit (nofile) leaves: lowered. Raise `ulimit -n` \
             to at least the number of workers and clients + 3 per database connection + 64"
        );
        return usize::try_from(room).unwrap_or(usize::MAX);
    }
    wanted as usize
}

/// Refreshes this axd's row in `ax_scheduler` and the database clock sample.
async fn heartbeat_loop(
    core: Arc<Core>,
    db_clock: DbClock,
    mut record: SchedulerRecord,
    every: Duration,
    cancel: CancellationToken,
) {
    loop {
        let started = std::time::Instant::now();
        let ok = match db_clock.refresh(core.pools.admin.db_now()).await {
            Ok(now) => {
                record.heartbeat_at = now;
                match core.pools.admin.upsert_scheduler(&record).await {
                    Ok(()) => {
                        core.progress.tick(Loop::Heartbeat);
                        true
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "scheduler heartbeat failed");
                        false
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "reading the database clock failed");
                false
            }
        };
        crate::prometheus::loop_round("heartbeat", started.elapsed(), !ok);
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
    }
}

/// Turns notifications from other axd into local wake-ups (PostgreSQL). If the listening
/// connection fails, notifications may be missed until it is back; the loops' poll interval bounds
/// how late work is then seen.
async fn notifications(core: Arc<Core>, listen: Arc<Store>, cancel: CancellationToken) {
    let me = core.scheduler_id.clone();
    let signals = (core.signals.dispatch.clone(), core.signals.trigger.clone(), core.signals.commands.clone());
    let on = move |n: Notice| match n {
        Notice::Work => signals.0.notify_one(),
        Notice::Tasks => signals.1.notify_one(),
        Notice::Commands(target) if target == me => signals.2.notify_one(),
        Notice::Commands(_) => {}
    };
    loop {
        let listened = tokio::select! {
            () = cancel.cancelled() => return,
            r = listen.listen(&on) => r,
        };
        match listened {
            Ok(false) => return,
            Ok(true) => {}
            Err(e) => tracing::warn!(error = %e, "listening for notifications failed; retrying in 1s"),
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}
