//! The steps of [`super::start`], in the order axd takes them: what must fail the start before the
//! database is touched (the metrics and console listeners, the alert client), the database and its
//! clock, the shared [`Core`], the gRPC port and this axd's row in `ax_scheduler`, the loops, the
//! health service, then the gRPC services, the console and the server. Each step keeps the order of
//! its statements: listeners are bound and tasks spawned before "axd started" is logged.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use ax_proto::v1::{admin_service_server::AdminServiceServer, worker_service_server::WorkerServiceServer};
use tokio::{net::TcpListener, sync::watch, task::JoinHandle};
use tokio_util::sync::CancellationToken;
use tonic::{
    service::interceptor::InterceptedService,
    transport::{Certificate, Identity, Server, ServerTlsConfig, server::Router},
};
use tonic_health::pb::health_server::{Health, HealthServer};
use tracing::Instrument;

use super::{
    Running, STARTUP_WAIT, ServerError, heartbeat_loop, host_name, max_connections, notifications, open_database, pool,
    read, redact, session_url,
};
use crate::{
    auth::{self, AuthMode},
    config::Config,
    core::{
        Core, Pools, SessionSettings, Signals,
        clock::{Clock, DbClock},
        health::{self, Progress},
        spawn,
    },
    framing::FramingLayer,
    grpc::admin::AdminApi,
    loops::{
        alerts::AlertLoop,
        dispatch::Dispatcher,
        sweeper::{Sweeper, SweeperConfig},
        trigger::{RoundReport, TriggerConfig, TriggerLoop},
    },
    model::SchedulerRecord,
    routing::registry::Registry,
    store::{self, Store},
    traces::Traces,
    transport::{self, TrackLayer, Tracker},
    worker::{
        commands, lease,
        stream::WorkerApi,
        writer::{self, Writer, WriterQueue},
    },
};

/// The gRPC port's router: every service, behind the layer that counts the calls of a connection
/// and the one that checks the gRPC framing of requests.
type GrpcRouter = Router<tower_layer::Stack<FramingLayer, tower_layer::Stack<TrackLayer, tower_layer::Identity>>>;

/// What start-up sets up before it touches the database, so that a fault in any of it fails the
/// start at once.
struct Early {
    /// The metrics registry and the `/metrics` listener (`--metrics-listen`).
    metrics: Option<(Arc<crate::prometheus::recorder::Registry>, TcpListener)>,
    /// The web console's listener (`--console-listen`).
    console_listener: Option<TcpListener>,
    /// The client of the alert webhooks.
    alert_sender: crate::alerts::http::Sender,
}

/// The tasks start-up spawns, and the tokens that stop them.
struct Tasks {
    /// Stops every task but the writer.
    cancel: CancellationToken,
    /// Stops the writer (last, once the streams are closed).
    writer_cancel: CancellationToken,
    /// Every task but the writer and the gRPC server.
    handles: Vec<JoinHandle<()>>,
}

/// The gRPC server before it serves: its router, its connections and the TLS it uses.
struct Grpc {
    /// Every service of the gRPC port.
    router: GrpcRouter,
    /// The gRPC port's client connections.
    connections: Arc<Tracker>,
    /// The gRPC port's TLS, which the console shares.
    tls_config: Option<ServerTlsConfig>,
}

/// Starts axd with `config`: each step in turn, then the "axd started" line.
pub(super) async fn start_axd(config: &Config, clock: Option<Arc<dyn Clock>>) -> Result<Running, ServerError> {
    let early = prepare(config).await?;
    let pools = open_database(config).await?;
    let db_clock = sample_clock(config, &pools.admin).await?;
    let (core, writer_queue, host) = build_core(config, pools, clock, &db_clock)?;
    warn_short_grace(config);
    let (listener, addr) = bind_grpc(config).await?;
    let record = register(&core, host, addr).await?;

    let mut tasks =
        Tasks { cancel: CancellationToken::new(), writer_cancel: CancellationToken::new(), handles: Vec::new() };
    let (trigger_reports, writer) =
        spawn_loops(config, &core, writer_queue, early.alert_sender, db_clock, record, &mut tasks);
    let metrics_addr = serve_metrics(early.metrics, &core, &mut tasks);
    listen_for_notifications(config, &core, &mut tasks).await?;

    let health_service = start_health(config, &core, &mut tasks).await;
    let Grpc { router, connections, tls_config } = grpc_router(config, &core, addr, health_service, &tasks.cancel)?;
    let console_addr =
        serve_console(config, early.console_listener, addr, &core, tls_config, &connections, &mut tasks)?;
    let server = serve_grpc(router, listener, &connections, &tasks.cancel);
    tracing::info!(%addr, scheduler_id = %core.scheduler_id, database = %redact(&config.database_url), "axd started");
    let Tasks { cancel, writer_cancel, handles: tasks } = tasks;
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

/// Sets up the metrics registry and listener, the console listener and the alert client.
async fn prepare(config: &Config) -> Result<Early, ServerError> {
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
    Ok(Early { metrics, console_listener, alert_sender })
}

/// Samples the database clock to within a quarter of the heartbeat interval, or fails the start.
async fn sample_clock(config: &Config, admin: &Arc<Store>) -> Result<DbClock, ServerError> {
    // Workers' clocks are set from this one: start it from a sample known to within a quarter of
    // the fence margin (one heartbeat interval), so that no Welcome or Assign lags the database by
    // more than that (see `DbClock::from_tight_sample`).
    let tight = config.heartbeat_interval / 4;
    let (db_clock, round_trip) =
        DbClock::from_tight_sample(|| admin.db_now(), tight, std::time::Instant::now() + STARTUP_WAIT).await?;
    if round_trip > tight {
        return Err(ServerError::ClockUnknown { wanted: tight, got: round_trip });
    }
    Ok(db_clock)
}

/// Builds the shared [`Core`]; returns it with the writer's queue and this host's name.
fn build_core(
    config: &Config,
    pools: Pools,
    clock: Option<Arc<dyn Clock>>,
    db_clock: &DbClock,
) -> Result<(Arc<Core>, WriterQueue, String), ServerError> {
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
        pools,
        clock,
        scheduler_id,
        auth: auth_mode,
        signals: Signals::default(),
        registry: Arc::new(Registry::default()),
        writer,
        progress,
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
        waits: Arc::new(tokio::sync::Semaphore::new(config.limits.max_waiting_calls as usize)),
        request_timeout: config.limits.request_timeout,
    });
    Ok((core, writer_queue, host))
}

/// Warns when `lost_worker_grace` is too short for a stalled axd's workers to move elsewhere.
fn warn_short_grace(config: &Config) {
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
}

/// Binds the gRPC port (`--listen`); returns its listener and the address it is bound to.
async fn bind_grpc(config: &Config) -> Result<(TcpListener, SocketAddr), ServerError> {
    let listener =
        TcpListener::bind(config.listen).await.map_err(|source| ServerError::Bind { addr: config.listen, source })?;
    let addr = listener.local_addr().map_err(|source| ServerError::Bind { addr: config.listen, source })?;
    Ok((listener, addr))
}

/// Registers this axd in `ax_scheduler`; returns the row, which the heartbeat loop refreshes.
async fn register(core: &Core, host: String, addr: SocketAddr) -> Result<SchedulerRecord, ServerError> {
    let started_at = core.clock.now();
    let record = SchedulerRecord {
        scheduler_id: core.scheduler_id.clone(),
        host,
        address: addr.to_string(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        started_at,
        heartbeat_at: started_at,
    };
    core.pools.admin.upsert_scheduler(&record).await?;
    Ok(record)
}

/// Spawns the loops, the writer and the heartbeat; returns the trigger's reports and the writer's task.
fn spawn_loops(
    config: &Config,
    core: &Arc<Core>,
    writer_queue: WriterQueue,
    alert_sender: crate::alerts::http::Sender,
    db_clock: DbClock,
    record: SchedulerRecord,
    tasks: &mut Tasks,
) -> (watch::Receiver<RoundReport>, JoinHandle<()>) {
    let Tasks { cancel, writer_cancel, handles: tasks } = tasks;
    let trigger = Arc::new(
        TriggerLoop::new(
            core.pools.trigger.clone(),
            core.clock.clone(),
            core.scheduler_id.clone(),
            TriggerConfig {
                lookahead: config.trigger_lookahead,
                batch: config.trigger_batch,
                max_idle: config.poll_interval,
            },
            core.signals.dispatch.clone(),
            core.signals.trigger.clone(),
            core.progress.clone(),
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
            housekeeping_every: config.housekeeping_interval,
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
    (trigger_reports, writer)
}

/// Serves `/metrics` when `--metrics-listen` is given; returns the address it is served at.
fn serve_metrics(
    metrics: Option<(Arc<crate::prometheus::recorder::Registry>, TcpListener)>,
    core: &Arc<Core>,
    tasks: &mut Tasks,
) -> Option<SocketAddr> {
    let mut metrics_addr = None;
    if let Some((registry, listener)) = metrics {
        metrics_addr = listener.local_addr().ok();
        tracing::info!(addr = ?metrics_addr, "serving Prometheus metrics at /metrics");
        let scrape = crate::scrape::scrape(core.clone(), registry);
        tasks.handles.push(spawn("metrics", crate::prometheus::http::serve(listener, scrape, tasks.cancel.clone())));
    }
    metrics_addr
}

/// Listens for other axd's notifications (PostgreSQL only), on a connection of its own.
async fn listen_for_notifications(config: &Config, core: &Arc<Core>, tasks: &mut Tasks) -> Result<(), ServerError> {
    if core.pools.admin.backend() == store::Backend::Postgres {
        // LISTEN holds its connection for good: it gets a pool of its own, on a session.
        let listen = pool(config, session_url(config), 1, "listen").await?;
        tasks.handles.push(spawn("notifications", notifications(core.clone(), listen, tasks.cancel.clone())));
    }
    Ok(())
}

/// Reports every service serving, spawns the monitor of stalled loops; returns `grpc.health.v1`.
async fn start_health(config: &Config, core: &Arc<Core>, tasks: &mut Tasks) -> HealthServer<impl Health> {
    let (health, health_service) = tonic_health::server::health_reporter();
    let services = vec!["", "ax.v1.AdminService", "ax.v1.WorkerService"];
    for s in &services {
        health.set_service_status(*s, tonic_health::ServingStatus::Serving).await;
    }
    {
        let registry = core.registry.clone();
        tasks.handles.push(spawn(
            "health",
            health::monitor(
                core.progress.clone(),
                health,
                services,
                config.health_stall_after,
                move || {
                    for s in registry.all() {
                        s.request_drain();
                    }
                },
                tasks.cancel.clone(),
            ),
        ));
    }
    health_service
}

/// Builds the gRPC port's router (health, reflection, Admin and Worker services), its limits and TLS.
fn grpc_router(
    config: &Config,
    core: &Arc<Core>,
    addr: SocketAddr,
    health_service: HealthServer<impl Health>,
    cancel: &CancellationToken,
) -> Result<Grpc, ServerError> {
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
    let tls_config = tls_config(config, addr)?;
    if let Some(tls) = tls_config.clone() {
        builder = builder.tls_config(tls).map_err(|e| ServerError::Tls(e.to_string()))?;
    }
    let router = builder
        .layer(TrackLayer(connections.clone()))
        .layer(FramingLayer)
        .add_service(InterceptedService::new(health_service, auth::any_identity(core.auth.clone())))
        .add_service(InterceptedService::new(reflection, auth::any_identity(core.auth.clone())))
        .add_service(InterceptedService::new(reflection_v1alpha, auth::any_identity(core.auth.clone())))
        .add_service(AdminServiceServer::new(AdminApi::new(core.clone())))
        .add_service(
            WorkerServiceServer::new(WorkerApi::new(core.clone(), cancel.clone()))
                .max_decoding_message_size(crate::worker::stream::MAX_WORKER_MESSAGE),
        );
    Ok(Grpc { router, connections, tls_config })
}

/// The TLS of the gRPC port, read from the configured files; `None` (with a warning) when TLS is off.
fn tls_config(config: &Config, addr: SocketAddr) -> Result<Option<ServerTlsConfig>, ServerError> {
    Ok(match &config.tls {
        Some(tls) => {
            let identity = Identity::from_pem(read(&tls.cert)?, read(&tls.key)?);
            Some(
                ServerTlsConfig::new()
                    .identity(identity)
                    .client_ca_root(Certificate::from_pem(read(&tls.client_ca)?))
                    .timeout(config.limits.tls_handshake_timeout),
            )
        }
        None => {
            tracing::warn!(%addr, "TLS is off: anyone who can reach this loopback port may use every API");
            None
        }
    })
}

/// Serves the web console when `--console-listen` is given; returns the address it is served at.
fn serve_console(
    config: &Config,
    console_listener: Option<TcpListener>,
    addr: SocketAddr,
    core: &Arc<Core>,
    tls_config: Option<ServerTlsConfig>,
    connections: &Arc<Tracker>,
    tasks: &mut Tasks,
) -> Result<Option<SocketAddr>, ServerError> {
    let limits = config.limits;
    let mut console_addr = None;
    if let Some(listener) = console_listener {
        let wanted = config.console_listen.unwrap_or(addr);
        let bound = listener.local_addr().map_err(|e| ServerError::Console { addr: wanted, reason: e.to_string() })?;
        console_addr = Some(bound);
        // The gRPC port's tracker: one budget of connections (and file descriptors) for both
        // ports, so that idle connections to the console cannot take what the workers need; at the
        // cap, the connections idle longest make room, whichever port they came to.
        let tracker = connections.clone();
        let console = crate::console::serve(listener, core.clone(), tls_config, limits, tracker, tasks.cancel.clone())
            .map_err(|e| ServerError::Console { addr: bound, reason: e.to_string() })?;
        tracing::info!(addr = %bound, "serving the web console");
        tasks.handles.push(spawn("console", console));
    }
    Ok(console_addr)
}

/// Spawns the gRPC server on `listener`, accepting within the connection cap until `cancel`.
fn serve_grpc(
    router: GrpcRouter,
    listener: TcpListener,
    connections: &Arc<Tracker>,
    cancel: &CancellationToken,
) -> JoinHandle<Result<(), tonic::transport::Error>> {
    // Accepted within the connection cap; each socket gets TCP_NODELAY (see `transport`).
    let incoming = transport::incoming(listener, connections.clone(), cancel.clone());
    let shutdown = cancel.clone();
    tokio::spawn(
        router
            .serve_with_incoming_shutdown(incoming, async move { shutdown.cancelled().await })
            .instrument(tracing::info_span!("axd", part = "grpc")),
    )
}
