//! Assembles one axd: pools, clock, loops and the gRPC server, and shuts them down in order.
//!
//! Start-up: connect one pool per role and migrate, sample the database clock, register in
//! `ax_scheduler`, start the loops, then serve AdminService, WorkerService, `grpc.health.v1` and
//! reflection on one port (mTLS when configured), and with `--console-listen` the web console on
//! another (see [`crate::console`]). Shutdown: worker streams are sent Drain (their
//! workers move to another axd), in-flight calls finish, the loops stop, the writer applies what the
//! streams handed over, and axd leaves `ax_scheduler` — all within the configured bound.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use ax_proto::v1::{admin_service_server::AdminServiceServer, worker_service_server::WorkerServiceServer};
use tokio::{net::TcpListener, task::JoinHandle, time::Instant};
use tokio_util::sync::CancellationToken;
use tonic::{
    service::interceptor::InterceptedService,
    transport::{Certificate, Identity, Server, ServerTlsConfig},
};
use tracing::Instrument;

use crate::{
    auth::{self, AuthMode},
    config::Config,
    core::{
        Core, Pools, SessionSettings, Signals,
        clock::{Clock, DbClock},
        health::{self, Loop, Progress},
        spawn,
    },
    error::StoreError,
    grpc::admin::AdminApi,
    loops::{
        alerts::AlertLoop,
        dispatch::Dispatcher,
        sweeper::{Sweeper, SweeperConfig},
        trigger::{TriggerConfig, TriggerLoop},
    },
    model::SchedulerRecord,
    routing::registry::Registry,
    store::{self, ConnectOptions, Notice, Store},
    traces::Traces,
    transport::{self, TrackLayer, Tracker},
    worker::{
        commands, lease,
        stream::WorkerApi,
        writer::{self, Writer},
    },
};

mod redact;
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

async fn pool(url: &str, size: u32, role: &'static str) -> Result<Arc<Store>, StoreError> {
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.max_connections = size;
    opts.role = role;
    store::connect(&opts).await
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
            let admin = pool(url, config.pools.admin, "admin").await?;
            admin.migrate().await?;
            let pools = Pools {
                admin: admin.clone(),
                trigger: pool(url, config.pools.trigger, "trigger").await?,
                dispatch: pool(url, config.pools.dispatch, "dispatch").await?,
                workers: pool(url, config.pools.workers, "workers").await?,
                sweeper: pool(url, config.pools.sweeper, "sweeper").await?,
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
    Box::pin(start_axd(config, clock))
}

async fn start_axd(config: &Config, clock: Option<Arc<dyn Clock>>) -> Result<Running, ServerError> {
    let url = &config.database_url;
    // Before the pools open: each looks up its wait histogram once.
    let metrics = match config.metrics_listen {
        Some(addr) => {
            let registry = crate::prometheus::install().map_err(|reason| ServerError::Metrics { addr, reason })?;
            let listener = TcpListener::bind(addr)
                .await
                .map_err(|e| ServerError::Metrics { addr, reason: format!("cannot listen: {e}") })?;
            Some((registry, listener))
        }
        None => None,
    };
    // Bound before anything starts, so that a taken port fails the start, as --listen does.
    let console_listener = match config.console_listen {
        Some(addr) => Some(
            TcpListener::bind(addr)
                .await
                .map_err(|e| ServerError::Console { addr, reason: format!("cannot listen: {e}") })?,
        ),
        None => None,
    };
    let alert_sender = crate::alerts::http::Sender::new(
        config.alerts.allow_private_targets,
        config.alerts.timeout,
        config.alerts.timeout,
        config.alerts.ca_file.as_deref(),
    )
    .map_err(ServerError::Alerts)?;
    let pools = open_database(config).await?;
    let admin = pools.admin.clone();

    // Workers' clocks are set from this one: start it from a sample known to within a quarter of
    // the fence margin (one heartbeat interval), so that no Welcome or Assign lags the database by
    // more than that (see `DbClock::from_tight_sample`).
    let tight = config.heartbeat_interval / 4;
    let (db_clock, round_trip) =
        DbClock::from_tight_sample(|| admin.db_now(), tight, std::time::Instant::now() + STARTUP_WAIT).await?;
    if round_trip > tight {
        return Err(ServerError::ClockUnknown { wanted: tight, got: round_trip });
    }
    let clock: Arc<dyn Clock> = clock.unwrap_or_else(|| Arc::new(db_clock.clone()));
    let host = host_name();
    let scheduler_id = format!("{host}-{}-{:04x}", std::process::id(), fastrand::u16(..));
    let traces = match &config.otlp {
        Some(o) => Traces::start(&o.endpoint, &o.service_name, &scheduler_id)?,
        None => Traces::off(),
    };
    let auth_mode = if config.tls.is_some() { AuthMode::Mtls(Arc::new(config.policy.clone())) } else { AuthMode::Open };
    let (writer, writer_queue) = Writer::new();
    let progress = Arc::new(Progress::default());
    let core = Arc::new(Core {
        pools: pools.clone(),
        clock: clock.clone(),
        scheduler_id: scheduler_id.clone(),
        auth: auth_mode.clone(),
        signals: Signals::default(),
        registry: Arc::new(Registry::default()),
        writer,
        progress: progress.clone(),
        health_stall_after: config.health_stall_after,
        sessions: SessionSettings {
            heartbeat_interval: config.heartbeat_interval,
            ack_timeout: config.ack_timeout,
            dispatch_ahead: config.dispatch_ahead,
            lost_worker_grace: config.lost_worker_grace,
            poll_interval: config.poll_interval,
            drain_timeout: (config.shutdown_timeout / 2).min(Duration::from_secs(5)),
        },
        scheduler_heartbeat: config.scheduler_heartbeat,
        traces,
        alerts: config.alerts.clone(),
        routing: Arc::new(crate::routing::RoutingState::new(config.cooldown)),
    });

    if config.lost_worker_grace < config.heartbeat_interval * 5 {
        // A worker notices a stalled axd after 3 silent intervals; the heartbeat its last renewal
        // answered may be 3 intervals older than that, and it stops attempts one interval before
        // their lease (3 intervals + grace) ends. Less grace than 5 intervals lets a stalled axd's
        // workers stop attempts they could have kept by moving to another axd.
        tracing::warn!(
            grace = ?config.lost_worker_grace,
            heartbeat = ?config.heartbeat_interval,
            "lost_worker_grace is less than 5 heartbeat intervals: workers of a stalled axd may stop their \
             attempts before they can move to another axd"
        );
    }
    let listener =
        TcpListener::bind(config.listen).await.map_err(|source| ServerError::Bind { addr: config.listen, source })?;
    let addr = listener.local_addr().map_err(|source| ServerError::Bind { addr: config.listen, source })?;

    let started_at = clock.now();
    let record = SchedulerRecord {
        scheduler_id: scheduler_id.clone(),
        host,
        address: addr.to_string(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        started_at,
        heartbeat_at: started_at,
    };
    admin.upsert_scheduler(&record).await?;

    let cancel = CancellationToken::new();
    let writer_cancel = CancellationToken::new();
    let mut tasks = Vec::new();

    let trigger = Arc::new(
        TriggerLoop::new(
            pools.trigger.clone(),
            clock.clone(),
            scheduler_id.clone(),
            TriggerConfig {
                lookahead: config.trigger_lookahead,
                batch: config.trigger_batch,
                max_idle: config.poll_interval,
            },
            core.signals.dispatch.clone(),
            core.signals.trigger.clone(),
            progress.clone(),
        )
        .with_traces(core.traces.clone()),
    );
    let trigger_reports = trigger.reports();
    tasks.push(spawn("trigger", trigger.clone().run(cancel.clone())));
    tasks.push(spawn("dispatch", Dispatcher::new(core.clone()).run(cancel.clone())));
    let writer = spawn("writer", writer::run(core.clone(), writer_queue, writer_cancel.clone()));
    let sweeper = Sweeper::new(
        core.clone(),
        SweeperConfig {
            batch: 500,
            retention: config.retention,
            housekeeping_every: Duration::from_secs(60),
            audit_retention: config.audit_retention,
        },
    );
    tasks.push(spawn("sweeper", sweeper.run(cancel.clone())));
    tasks.push(spawn("lease", lease::run(core.clone(), cancel.clone())));
    tasks.push(spawn("alerts", AlertLoop::new(core.clone(), alert_sender).run(cancel.clone())));
    tasks.push(spawn("commands", commands::run(core.clone(), cancel.clone())));
    tasks.push(spawn(
        "scheduler-heartbeat",
        heartbeat_loop(core.clone(), db_clock, record, config.scheduler_heartbeat, cancel.clone()),
    ));
    let mut metrics_addr = None;
    if let Some((registry, listener)) = metrics {
        metrics_addr = listener.local_addr().ok();
        tracing::info!(addr = ?metrics_addr, "serving Prometheus metrics at /metrics");
        let scrape = crate::scrape::scrape(core.clone(), registry);
        tasks.push(spawn("metrics", crate::prometheus::http::serve(listener, scrape, cancel.clone())));
    }
    if admin.backend() == store::Backend::Postgres {
        // LISTEN holds its connection for good: it gets a pool of its own.
        let listen = pool(url, 1, "listen").await?;
        tasks.push(spawn("notifications", notifications(core.clone(), listen, cancel.clone())));
    }

    let (health, health_service) = tonic_health::server::health_reporter();
    let services = vec!["", "ax.v1.AdminService", "ax.v1.WorkerService"];
    for s in &services {
        health.set_service_status(*s, tonic_health::ServingStatus::Serving).await;
    }
    {
        let registry = core.registry.clone();
        tasks.push(spawn(
            "health",
            health::monitor(
                progress.clone(),
                health,
                services,
                config.health_stall_after,
                move || {
                    for s in registry.all() {
                        s.request_drain();
                    }
                },
                cancel.clone(),
            ),
        ));
    }
    // Reflection in both versions: v1, and v1alpha for the clients that only speak that one (the
    // stock Python grpcio-reflection client, older grpcurl).
    let reflection_builder = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(ax_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection = reflection_builder().build_v1().map_err(|e| ServerError::Tls(format!("reflection: {e}")))?;
    let reflection_v1alpha =
        reflection_builder().build_v1alpha().map_err(|e| ServerError::Tls(format!("reflection: {e}")))?;

    let limits = config.limits;
    let connections = Tracker::new(max_connections(config), limits.idle_connection_timeout);
    let mut builder = Server::builder()
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .http2_keepalive_timeout(Some(Duration::from_secs(10)))
        .max_concurrent_streams(limits.max_concurrent_streams)
        .concurrency_limit_per_connection(limits.max_calls_per_connection as usize)
        // Bounds a unary call; a streaming call only until it answers (Connect: its Welcome).
        .timeout(limits.request_timeout);
    let tls_config = match &config.tls {
        Some(tls) => {
            let identity = Identity::from_pem(read(&tls.cert)?, read(&tls.key)?);
            Some(
                ServerTlsConfig::new()
                    .identity(identity)
                    .client_ca_root(Certificate::from_pem(read(&tls.client_ca)?))
                    .timeout(limits.tls_handshake_timeout),
            )
        }
        None => {
            tracing::warn!(%addr, "TLS is off: anyone who can reach this loopback port may use every API");
            None
        }
    };
    if let Some(tls) = tls_config.clone() {
        builder = builder.tls_config(tls).map_err(|e| ServerError::Tls(e.to_string()))?;
    }
    let router = builder
        .layer(TrackLayer(connections.clone()))
        .add_service(InterceptedService::new(health_service, auth::any_identity(auth_mode.clone())))
        .add_service(InterceptedService::new(reflection, auth::any_identity(auth_mode.clone())))
        .add_service(InterceptedService::new(reflection_v1alpha, auth::any_identity(auth_mode)))
        .add_service(AdminServiceServer::new(AdminApi::new(core.clone())))
        .add_service(
            WorkerServiceServer::new(WorkerApi::new(core.clone(), cancel.clone()))
                .max_decoding_message_size(crate::worker::stream::MAX_WORKER_MESSAGE),
        );
    let mut console_addr = None;
    if let Some(listener) = console_listener {
        let wanted = config.console_listen.unwrap_or(addr);
        let bound = listener.local_addr().map_err(|e| ServerError::Console { addr: wanted, reason: e.to_string() })?;
        console_addr = Some(bound);
        // A tracker of its own: the same limits, counted apart from the gRPC port's clients.
        let tracker = Tracker::new(max_connections(config), limits.idle_connection_timeout);
        let console = crate::console::serve(listener, core.clone(), tls_config, limits, tracker, cancel.clone())
            .map_err(|e| ServerError::Console { addr: bound, reason: e.to_string() })?;
        tracing::info!(addr = %bound, "serving the web console");
        tasks.push(spawn("console", console));
    }
    // Accepted within the connection cap; each socket gets TCP_NODELAY (see `transport`).
    let incoming = transport::incoming(listener, connections.clone(), cancel.clone());
    let shutdown = cancel.clone();
    let server = tokio::spawn(
        router
            .serve_with_incoming_shutdown(incoming, async move { shutdown.cancelled().await })
            .instrument(tracing::info_span!("axd", part = "grpc")),
    );
    tracing::info!(%addr, %scheduler_id, database = %redact(&config.database_url), "axd started");
    Ok(Running {
        addr,
        metrics_addr,
        console_addr,
        core,
        trigger_reports,
        connections,
        cancel,
        writer_cancel,
        tasks,
        writer,
        server,
    })
}

/// `--max-connections`, lowered to what the file-descriptor limit leaves once the database
/// connections and axd's own files are counted: past that, accepting fails and every client,
/// authenticated or not, is kept out.
fn max_connections(config: &Config) -> usize {
    let wanted = config.limits.max_connections;
    let p = config.pools;
    // The PostgreSQL LISTEN connection is the one more.
    let db = p.admin + p.trigger + p.dispatch + p.workers + p.sweeper + 1;
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
