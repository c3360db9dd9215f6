//! ax-worker: write ax workers in Rust.
//!
//! A worker keeps one stream open to an axd (rotating through the endpoints it is given, with
//! backoff and jitter), says which handlers it serves and how many attempts it runs at once, and
//! runs what it is assigned. The SDK keeps the protocol's promises for you: credits follow
//! capacity, results are kept until axd acknowledges them and re-sent after a reconnect, attempts
//! still running survive a reconnect (they are re-announced), a panic becomes a FAILED result, and a
//! graceful shutdown stops taking work, lets running attempts finish up to a deadline and delivers
//! their results.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ax_worker::WorkerError> {
//! use ax_worker::{Context, HandlerError, Worker};
//!
//! #[derive(serde::Deserialize)]
//! struct Invoice { customer: String }
//!
//! Worker::builder()
//!     .endpoint("http://127.0.0.1:7070")
//!     .app("billing")
//!     .capacity(8)
//!     .handler("send-invoice", |ctx: Context| async move {
//!         let invoice: Invoice = ctx.params()?;
//!         // Use ctx.idempotency_key to make the side effect idempotent.
//!         Ok::<_, HandlerError>(format!("sent to {}", invoice.customer))
//!     })
//!     .build()?
//!     .run_until(async { let _ = tokio::signal::ctrl_c().await; })
//!     .await
//! # }
//! ```

mod context;
mod driver;
mod lease;
mod traces;

use std::{collections::HashMap, future::Future, path::Path, pin::Pin, sync::Arc, time::Duration};

pub use context::{Context, HandlerError, IntoOutput, Level};
pub use driver::{MAX_OUTPUT, Stats};
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

/// Errors that stop a worker.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The builder was given something unusable.
    #[error("invalid worker configuration: {0}")]
    Config(String),
    /// axd refused the worker for a reason retrying cannot fix (bad Hello, wrong certificate).
    #[error("axd refused this worker: {0}")]
    Refused(tonic::Status),
}

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = Result<String, HandlerError>> + Send>>;

/// A registered handler.
pub(crate) type Handler = Arc<dyn Fn(Context) -> BoxFuture + Send + Sync>;

/// Configures a [`Worker`].
pub struct WorkerBuilder {
    endpoints: Vec<String>,
    app: String,
    worker_id: Option<String>,
    capacity: u32,
    labels: HashMap<String, String>,
    tls: Option<ClientTlsConfig>,
    handlers: HashMap<String, Handler>,
    shutdown_deadline: Duration,
    remember: usize,
    reconnect_max: Duration,
    otlp_endpoint: Option<String>,
    otlp_service_name: Option<String>,
}

impl WorkerBuilder {
    /// An axd endpoint (`http://host:port`, or `https://` with [`WorkerBuilder::tls`]). Give several:
    /// the worker moves to the next one when its axd goes away.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoints.push(url.into());
        self
    }

    /// Several endpoints at once.
    pub fn endpoints<I: IntoIterator<Item = S>, S: Into<String>>(mut self, urls: I) -> Self {
        self.endpoints.extend(urls.into_iter().map(Into::into));
        self
    }

    /// The app this worker belongs to (with mTLS, the app of its certificate).
    pub fn app(mut self, app: impl Into<String>) -> Self {
        self.app = app.into();
        self
    }

    /// A stable worker id, kept across restarts of the same deployment slot if you can; it lets a
    /// reconnecting worker keep its running attempts. Default: `<host>-<pid>`.
    pub fn worker_id(mut self, id: impl Into<String>) -> Self {
        self.worker_id = Some(id.into());
        self
    }

    /// Attempts run at once (1-10000). Default 1.
    pub fn capacity(mut self, n: u32) -> Self {
        self.capacity = n;
        self
    }

    /// A label shown by `axctl worker list`.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// mTLS with PEM files: the CA that signed axd's certificate, and this worker's certificate
    /// (identity `spiffe://ax/worker/<app>`) and key.
    pub fn tls_files(
        self,
        ca: impl AsRef<Path>,
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<Self, WorkerError> {
        let read = |p: &Path| std::fs::read(p).map_err(|e| WorkerError::Config(format!("{}: {e}", p.display())));
        let (ca, cert, key) = (read(ca.as_ref())?, read(cert.as_ref())?, read(key.as_ref())?);
        Ok(self.tls(
            ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca)).identity(Identity::from_pem(cert, key)),
        ))
    }

    /// mTLS with a prepared tonic config.
    pub fn tls(mut self, config: ClientTlsConfig) -> Self {
        self.tls = Some(config);
        self
    }

    /// Registers an async handler under `name`.
    pub fn handler<F, Fut, O>(mut self, name: impl Into<String>, f: F) -> Self
    where
        F: Fn(Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
        O: IntoOutput + 'static,
    {
        let f = Arc::new(f);
        let h: Handler = Arc::new(move |ctx| {
            let fut = f(ctx);
            Box::pin(async move { fut.await.map(IntoOutput::into_output) })
        });
        self.handlers.insert(name.into(), h);
        self
    }

    /// How long a graceful shutdown waits for running attempts before canceling them. Default 30 s.
    pub fn shutdown_deadline(mut self, d: Duration) -> Self {
        self.shutdown_deadline = d;
        self
    }

    /// How many finished attempts are remembered so a repeated assignment replays the result
    /// instead of running again. Default 10000.
    pub fn remember_finished(mut self, n: usize) -> Self {
        self.remember = n;
        self
    }

    /// Longest pause between reconnect attempts. Default 5 s.
    pub fn reconnect_max(mut self, d: Duration) -> Self {
        self.reconnect_max = d;
        self
    }

    /// OpenTelemetry: export each attempt's run as an `ax.run` span over OTLP/gRPC to this collector
    /// (`http://host:port`, e.g. `http://127.0.0.1:4317`), as a child of the span axd sends in
    /// `Assign.traceparent` (axd must trace too: `axd --otlp-endpoint`). Off by default. Spans
    /// are sent in batches (within half a second) and flushed when [`Worker::run_until`] returns.
    pub fn otlp_endpoint(mut self, url: impl Into<String>) -> Self {
        self.otlp_endpoint = Some(url.into());
        self
    }

    /// `service.name` of the worker's spans. Default: the app.
    pub fn otlp_service_name(mut self, name: impl Into<String>) -> Self {
        self.otlp_service_name = Some(name.into());
        self
    }

    /// Checks the configuration.
    pub fn build(self) -> Result<Worker, WorkerError> {
        if self.endpoints.is_empty() {
            return Err(WorkerError::Config("at least one endpoint is required".into()));
        }
        if self.app.is_empty() {
            return Err(WorkerError::Config("app is required".into()));
        }
        if self.handlers.is_empty() {
            return Err(WorkerError::Config("register at least one handler".into()));
        }
        if self.capacity == 0 || self.capacity > 10_000 {
            return Err(WorkerError::Config(format!("capacity must be 1-10000, got {}", self.capacity)));
        }
        let worker_id = self.worker_id.unwrap_or_else(default_worker_id);
        let traces = match self.otlp_endpoint {
            Some(endpoint) => {
                ax_proto::otlp::check_endpoint(&endpoint)
                    .map_err(|e| WorkerError::Config(format!("otlp_endpoint: {e}")))?;
                let service = self.otlp_service_name.unwrap_or_else(|| self.app.clone());
                if service.trim().is_empty() {
                    return Err(WorkerError::Config("otlp_service_name: must not be empty".into()));
                }
                Some(traces::Tracing::new(endpoint, service, worker_id.clone()))
            }
            None if self.otlp_service_name.is_some() => {
                return Err(WorkerError::Config(
                    "otlp_service_name: is set but otlp_endpoint is not (tracing is off)".into(),
                ));
            }
            None => None,
        };
        Ok(Worker {
            config: Arc::new(driver::Config {
                endpoints: self.endpoints,
                app: self.app,
                worker_id,
                capacity: self.capacity,
                labels: self.labels,
                tls: self.tls,
                handlers: self.handlers,
                shutdown_deadline: self.shutdown_deadline,
                remember: self.remember,
                reconnect_max: self.reconnect_max,
                welcome_timeout: Duration::from_secs(10),
                traces,
            }),
            stats: Stats::default(),
        })
    }
}

/// `<host>-<pid>`.
pub fn default_worker_id() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|h| h.trim().to_owned()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".to_owned());
    let host: String =
        host.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' }).collect();
    format!("{host}-{}", std::process::id())
}

/// A configured worker; [`Worker::run_until`] runs it.
pub struct Worker {
    config: Arc<driver::Config>,
    stats: Stats,
}

impl Worker {
    /// Starts configuring a worker.
    pub fn builder() -> WorkerBuilder {
        WorkerBuilder {
            endpoints: Vec::new(),
            app: String::new(),
            worker_id: None,
            capacity: 1,
            labels: HashMap::new(),
            tls: None,
            handlers: HashMap::new(),
            shutdown_deadline: Duration::from_secs(30),
            remember: 10_000,
            reconnect_max: Duration::from_secs(5),
            otlp_endpoint: None,
            otlp_service_name: None,
        }
    }

    /// This worker's id.
    pub fn worker_id(&self) -> &str {
        &self.config.worker_id
    }

    /// Counters (connections, assignments, results), shared with the running worker.
    pub fn stats(&self) -> Stats {
        self.stats.clone()
    }

    /// Runs until `shutdown` completes, then shuts down gracefully: no new work, running attempts
    /// finish (canceled after the shutdown deadline), results are delivered, the stream closes.
    pub async fn run_until<F: Future<Output = ()> + Send>(self, shutdown: F) -> Result<(), WorkerError> {
        let config = self.config.clone();
        let ended = driver::run(self.config, self.stats, shutdown).await;
        if let Some(t) = &config.traces {
            t.flush().await;
        }
        ended
    }
}
