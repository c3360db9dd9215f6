//! Assembles one axd: store, clock, loops and the gRPC server, and shuts them down in order.
//!
//! Start-up: connect and migrate, sample the database clock, register in `ax_scheduler`, start the
//! loops, then serve AdminService, WorkerService, `grpc.health.v1` and reflection on one port (mTLS
//! when configured). Shutdown: stop accepting, finish in-flight calls and stop the loops within the
//! configured bound, then leave `ax_scheduler`.

use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

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
    clock::{Clock, DbClock},
    commands,
    config::Config,
    dispatch::Dispatcher,
    error::StoreError,
    lease,
    model::SchedulerRecord,
    registry::Registry,
    service::{Core, SessionSettings, Signals, admin::AdminApi, worker::WorkerApi},
    store::{self, ConnectOptions},
    sweeper::{Sweeper, SweeperConfig},
    trigger::{TriggerConfig, TriggerLoop},
};

/// Why axd could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A TLS file could not be read or used.
    #[error("tls: {0}")]
    Tls(String),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// Address.
        addr: SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
}

/// Spawns a background task whose traces carry `name`.
pub fn spawn<F>(name: &'static str, fut: F) -> JoinHandle<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    tokio::spawn(fut.instrument(tracing::info_span!("task", name)))
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
    /// The shared state (tests reach the store and signals through it).
    pub core: Arc<Core>,
    /// Reports of the trigger loop.
    pub trigger_reports: tokio::sync::watch::Receiver<crate::trigger::RoundReport>,
    cancel: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
}

impl Running {
    /// This axd's scheduler id.
    pub fn scheduler_id(&self) -> &str {
        &self.core.scheduler_id
    }

    /// Stops serving and the loops, waiting at most `timeout`, then leaves `ax_scheduler`.
    pub async fn shutdown(self, timeout: Duration) {
        self.cancel.cancel();
        let wait_all = async {
            if let Ok(Err(e)) = self.server.await {
                tracing::warn!(error = %e, "grpc server ended with an error");
            }
            for t in self.tasks {
                let _ = t.await;
            }
        };
        if tokio::time::timeout(timeout, wait_all).await.is_err() {
            tracing::warn!("shutdown did not finish within {timeout:?}; exiting anyway");
        }
        if let Err(e) = self.core.store.remove_scheduler(&self.core.scheduler_id).await {
            tracing::warn!(error = %e, "could not remove this scheduler from ax_scheduler");
        }
        self.core.store.close().await;
    }
}

fn read(path: &std::path::Path) -> Result<Vec<u8>, ServerError> {
    std::fs::read(path).map_err(|e| ServerError::Tls(format!("{}: {e}", path.display())))
}

/// Starts axd with `config`. `clock` overrides the database clock (tests).
pub async fn start(config: &Config, clock: Option<Arc<dyn Clock>>) -> Result<Running, ServerError> {
    let mut opts = ConnectOptions::new(config.database_url.clone());
    opts.max_connections = config.db_max_connections;
    let store = store::connect(&opts).await?;
    store.migrate().await?;

    let db_clock = DbClock::new(store.db_now().await?);
    let clock: Arc<dyn Clock> = clock.unwrap_or_else(|| Arc::new(db_clock.clone()));
    let host = host_name();
    let scheduler_id = format!("{host}-{}-{:04x}", std::process::id(), fastrand::u16(..));
    let auth_mode = if config.tls.is_some() { AuthMode::Mtls } else { AuthMode::Open };
    let (writer, writer_queue) = crate::writer::Writer::new();
    let core = Arc::new(Core {
        store: store.clone(),
        clock: clock.clone(),
        scheduler_id: scheduler_id.clone(),
        auth: auth_mode,
        signals: Signals::default(),
        registry: Arc::new(Registry::default()),
        writer,
        sessions: SessionSettings {
            heartbeat_interval: config.heartbeat_interval,
            ack_timeout: config.ack_timeout,
            lost_worker_grace: config.lost_worker_grace,
            poll_interval: config.poll_interval,
            drain_timeout: (config.shutdown_timeout / 2).min(Duration::from_secs(5)),
        },
        scheduler_heartbeat: config.scheduler_heartbeat,
    });

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
    store.heartbeat_scheduler(&record).await?;

    let cancel = CancellationToken::new();
    let mut tasks = Vec::new();

    let trigger = Arc::new(TriggerLoop::new(
        store.clone(),
        clock.clone(),
        scheduler_id.clone(),
        TriggerConfig {
            lookahead: config.trigger_lookahead,
            batch: config.trigger_batch,
            max_idle: config.poll_interval,
        },
        core.signals.dispatch.clone(),
    ));
    let trigger_reports = trigger.reports();
    // The admin API wakes the trigger loop through the shared signal.
    {
        let wake = trigger.waker();
        let signal = core.signals.trigger.clone();
        let c = cancel.clone();
        tasks.push(spawn("trigger-wake", async move {
            loop {
                tokio::select! {
                    () = c.cancelled() => return,
                    () = signal.notified() => wake.notify_one(),
                }
            }
        }));
    }
    tasks.push(spawn("trigger", trigger.clone().run(cancel.clone())));
    tasks.push(spawn("dispatch", Dispatcher::new(core.clone()).run(cancel.clone())));
    tasks.push(spawn("writer", crate::writer::run(core.clone(), writer_queue, cancel.clone())));
    let sweeper = Sweeper::new(
        core.clone(),
        SweeperConfig { batch: 500, retention: config.retention, housekeeping_every: Duration::from_secs(60) },
    );
    tasks.push(spawn("sweeper", sweeper.run(cancel.clone())));
    tasks.push(spawn("lease", lease::run(core.clone(), cancel.clone())));
    tasks.push(spawn("commands", commands::run(core.clone(), cancel.clone())));
    tasks.push(spawn(
        "scheduler-heartbeat",
        heartbeat_loop(core.clone(), db_clock, record, config.scheduler_heartbeat, cancel.clone()),
    ));

    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<AdminServiceServer<AdminApi>>().await;
    health.set_serving::<WorkerServiceServer<WorkerApi>>().await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(ax_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| ServerError::Tls(format!("reflection: {e}")))?;

    let mut builder = Server::builder()
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .http2_keepalive_timeout(Some(Duration::from_secs(10)));
    match &config.tls {
        Some(tls) => {
            let identity = Identity::from_pem(read(&tls.cert)?, read(&tls.key)?);
            let tls_config =
                ServerTlsConfig::new().identity(identity).client_ca_root(Certificate::from_pem(read(&tls.client_ca)?));
            builder = builder.tls_config(tls_config).map_err(|e| ServerError::Tls(e.to_string()))?;
        }
        None => {
            tracing::warn!(%addr, "TLS is off: anyone who can reach this loopback port may use every API");
        }
    }
    let router = builder
        .add_service(InterceptedService::new(health_service, auth::any_identity(auth_mode)))
        .add_service(InterceptedService::new(reflection, auth::any_identity(auth_mode)))
        .add_service(AdminServiceServer::new(AdminApi::new(core.clone())))
        .add_service(WorkerServiceServer::new(WorkerApi::new(core.clone(), cancel.clone())));
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    let shutdown = cancel.clone();
    let server = tokio::spawn(
        router
            .serve_with_incoming_shutdown(incoming, async move { shutdown.cancelled().await })
            .instrument(tracing::info_span!("task", name = "grpc")),
    );
    tracing::info!(%addr, %scheduler_id, database = %redact(&config.database_url), "axd started");
    Ok(Running { addr, core, trigger_reports, cancel, tasks, server })
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
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        let sent = Instant::now();
        match core.store.db_now().await {
            Ok(now) => {
                // The sample is taken mid-way through the round trip.
                let rtt = sent.elapsed();
                db_clock.observe(now, (sent + rtt / 2).into_std());
                record.heartbeat_at = now;
                if let Err(e) = core.store.heartbeat_scheduler(&record).await {
                    tracing::warn!(error = %e, "scheduler heartbeat failed");
                }
            }
            Err(e) => tracing::warn!(error = %e, "reading the database clock failed"),
        }
    }
}

/// The URL without its password, for logs.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}
