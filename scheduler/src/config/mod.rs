//! axd configuration: flags, `AX_*` environment variables and an optional TOML file.
//!
//! Precedence: a flag beats its environment variable, which beats the file, which beats the
//! default. Every option's help text states its default and unit; unknown keys in the file are
//! rejected so a typo never silently falls back to a default.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use serde::Deserialize;

mod checks;
mod duration;

pub use duration::{HumanDuration, parse_duration};

/// Command line of axd.
#[derive(Debug, clap::Parser)]
#[command(name = "axd", version, about = "ax scheduler daemon: fires tasks and hands them to workers")]
pub struct Args {
    /// TOML file with any of the options below (same names, snake_case). Flags and AX_* variables
    /// override it.
    #[arg(long, env = "AX_CONFIG")]
    pub config: Option<PathBuf>,
    /// The options.
    #[command(flatten)]
    pub options: Options,
}

/// Every option of axd. `None` means "not given here".
#[derive(Debug, Default, Clone, clap::Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// Database URL: sqlite://PATH (one axd), postgres://... or mysql://... [default: sqlite://./ax-data/ax.db]
    #[arg(long, env = "AX_DATABASE_URL")]
    pub database_url: Option<String>,
    /// What stands between axd and PostgreSQL: none, or transaction (PgBouncer pool_mode =
    /// transaction: no prepared statement is kept, every statement runs in a transaction; needs
    /// --database-session-url) [default: none]
    #[arg(long, env = "AX_DATABASE_POOLER", value_enum)]
    pub database_pooler: Option<DatabasePooler>,
    /// A URL of the same PostgreSQL database on which a session lasts (straight to the server, or a
    /// session-mode pool), for what needs one: migrations under their advisory lock and LISTEN
    /// [default: --database-url]
    #[arg(long, env = "AX_DATABASE_SESSION_URL")]
    pub database_session_url: Option<String>,
    /// gRPC listen address for AdminService, WorkerService, health and reflection [default: 127.0.0.1:7070]
    #[arg(long, env = "AX_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// PEM certificate of this axd (enables TLS; needs --tls-key and --tls-client-ca) [default: none]
    #[arg(long, env = "AX_TLS_CERT")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert [default: none]
    #[arg(long, env = "AX_TLS_KEY")]
    pub tls_key: Option<PathBuf>,
    /// PEM CA that signs client certificates; every client must present one (mTLS) [default: none]
    #[arg(long, env = "AX_TLS_CLIENT_CA")]
    pub tls_client_ca: Option<PathBuf>,
    /// Database connections for AdminService calls (axd keeps a separate pool per role so that no
    /// role can starve another) [default: 4]
    #[arg(long, env = "AX_DB_POOL_ADMIN")]
    pub db_pool_admin: Option<u32>,
    /// Database connections for the trigger loop [default: 2]
    #[arg(long, env = "AX_DB_POOL_TRIGGER")]
    pub db_pool_trigger: Option<u32>,
    /// Database connections for the dispatch loop's claims [default: 2]
    #[arg(long, env = "AX_DB_POOL_DISPATCH")]
    pub db_pool_dispatch: Option<u32>,
    /// Database connections for worker sessions (results, leases, commands) [default: 4]
    #[arg(long, env = "AX_DB_POOL_WORKERS")]
    pub db_pool_workers: Option<u32>,
    /// Database connections for the sweeper and retention [default: 2]
    #[arg(long, env = "AX_DB_POOL_SWEEPER")]
    pub db_pool_sweeper: Option<u32>,
    /// A loop that has not completed a round for this long makes health NOT_SERVING (and drains
    /// the worker streams) [default: 10s]
    #[arg(long, env = "AX_HEALTH_STALL_AFTER")]
    pub health_stall_after: Option<HumanDuration>,
    /// How often workers must send a message (told to them in Welcome) [default: 2s]
    #[arg(long, env = "AX_HEARTBEAT_INTERVAL")]
    pub heartbeat_interval: Option<HumanDuration>,
    /// How long a lost worker's running instances wait for it to reconnect before failing [default: 10s]
    #[arg(long, env = "AX_LOST_WORKER_GRACE")]
    pub lost_worker_grace: Option<HumanDuration>,
    /// How long a dispatched instance waits for the worker's Accepted before it is re-queued [default: 10s]
    #[arg(long, env = "AX_ACK_TIMEOUT")]
    pub ack_timeout: Option<HumanDuration>,
    /// How far ahead of their fire time instances are created (dispatch still waits for the fire
    /// time, less --dispatch-ahead for workers that hold assignments) [default: 2500ms]
    #[arg(long, env = "AX_TRIGGER_LOOKAHEAD")]
    pub trigger_lookahead: Option<HumanDuration>,
    /// How long before an instance's time it may be assigned to a worker that holds assignments
    /// until their start time (Hello.start_after_supported), so that the run starts on time; 0
    /// assigns only due instances [default: 200ms]
    #[arg(long, env = "AX_DISPATCH_AHEAD")]
    pub dispatch_ahead: Option<HumanDuration>,
    /// Most tasks claimed per trigger transaction [default: 500]
    #[arg(long, env = "AX_TRIGGER_BATCH")]
    pub trigger_batch: Option<u32>,
    /// Longest sleep of the loops when nothing is due; bounds how late a change made on another axd
    /// is seen (MySQL has no notifications) [default: 1s]
    #[arg(long, env = "AX_POLL_INTERVAL")]
    pub poll_interval: Option<HumanDuration>,
    /// How often this axd records its heartbeat in ax_scheduler and re-reads the database clock [default: 2s]
    #[arg(long, env = "AX_SCHEDULER_HEARTBEAT")]
    pub scheduler_heartbeat: Option<HumanDuration>,
    /// How long finished instances (and their events and logs) are kept [default: 30d]
    #[arg(long, env = "AX_RETENTION")]
    pub retention: Option<HumanDuration>,
    /// How often axd's housekeeping runs (purges finished instances past --retention, audit entries
    /// past --audit-retention, ended uniqueness windows and long-silent axd); the first round comes
    /// this long after axd starts [default: 60s]
    #[arg(long, env = "AX_HOUSEKEEPING_INTERVAL")]
    pub housekeeping_interval: Option<HumanDuration>,
    /// Longest graceful shutdown after SIGTERM/SIGINT before axd exits anyway [default: 10s]
    #[arg(long, env = "AX_SHUTDOWN_TIMEOUT")]
    pub shutdown_timeout: Option<HumanDuration>,
    /// Log filter, e.g. info or ax_scheduler=debug [default: info]
    #[arg(long, env = "AX_LOG")]
    pub log: Option<String>,
    /// Log format on stderr: text, or json (one object per line with instance_id, attempt, task,
    /// app and worker as fields where they apply) [default: text]
    #[arg(long, env = "AX_LOG_FORMAT", value_enum)]
    pub log_format: Option<crate::logging::LogFormat>,
    /// OpenTelemetry: send trace spans over OTLP/gRPC to this collector, e.g. http://127.0.0.1:4317
    /// (README "Tracing") [default: off]
    #[arg(long, env = "AX_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// service.name of axd's spans [default: axd]
    #[arg(long, env = "AX_OTLP_SERVICE_NAME")]
    pub otlp_service_name: Option<String>,
    /// Serve Prometheus metrics at http://ADDR/metrics (plain HTTP; a loopback address unless
    /// --metrics-tls-proxy) [default: off]
    #[arg(long, env = "AX_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// --metrics-listen may be a non-loopback address: a TLS-terminating proxy in front of it is the
    /// only way in [default: false]
    #[arg(long, env = "AX_METRICS_TLS_PROXY", num_args = 0..=1, default_missing_value = "true")]
    pub metrics_tls_proxy: Option<bool>,
    /// Serve the web console (its page and AdminService over gRPC-Web) on this address, with the
    /// same TLS, client certificates and authorization as --listen; a loopback address unless TLS
    /// is configured, and not the address of --listen or --metrics-listen [default: off]
    #[arg(long, env = "AX_CONSOLE_LISTEN")]
    pub console_listen: Option<SocketAddr>,

    // Access control and audit.
    /// SPIFFE trust domain of client certificates: identities are spiffe://THIS/ROLE/NAME
    /// [default: ax]
    #[arg(long, env = "AX_TRUST_DOMAIN")]
    pub trust_domain: Option<String>,
    /// Apps an identity name (of a viewer, operator or admin certificate) may act on:
    /// NAME=APP[,APP...] or NAME=* for every app; repeat the flag (in AX_SCOPE separate entries with
    /// `;`, in the file `scope = ["alice=*", "bob=billing"]`). A name without a scope may act on no
    /// app (deny by default). Ignored without TLS [default: none]
    #[arg(long, env = "AX_SCOPE", value_delimiter = ';')]
    pub scope: Option<Vec<String>>,
    /// How long entries of the audit table (ax_audit) are kept [default: 90d]
    #[arg(long, env = "AX_AUDIT_RETENTION")]
    pub audit_retention: Option<HumanDuration>,
    // Limits enforced on every connection before its client is authenticated.
    /// Longest a new connection may take to finish its TLS handshake before it is closed [default: 10s]
    #[arg(long, env = "AX_TLS_HANDSHAKE_TIMEOUT")]
    pub tls_handshake_timeout: Option<HumanDuration>,
    /// Most client connections open at once, over the gRPC and console ports together; each worker
    /// process holds one, each axctl run one. At the cap, the connection idle longest is closed to
    /// make room (first one that never carried a call, such as an unfinished TLS handshake); a new
    /// connection is refused only when every connection has a call open. Lowered at start-up to
    /// what the file-descriptor limit (nofile) allows, less 3 per database connection and 64
    /// [default: 4096]
    #[arg(long, env = "AX_MAX_CONNECTIONS")]
    pub max_connections: Option<u32>,
    /// A connection with no call open for this long is closed (clients reconnect when they need
    /// to); a worker's Connect stream keeps its connection open [default: 5m]
    #[arg(long, env = "AX_IDLE_CONNECTION_TIMEOUT")]
    pub idle_connection_timeout: Option<HumanDuration>,
    /// Most calls (HTTP/2 streams) open at once on one connection, Connect streams included
    /// (SETTINGS_MAX_CONCURRENT_STREAMS); a client waits before opening more [default: 256]
    #[arg(long, env = "AX_MAX_CONCURRENT_STREAMS")]
    pub max_concurrent_streams: Option<u32>,
    /// Most calls of one connection that axd works on at once, until each answers (a Connect
    /// stream until its Welcome); the others wait their turn [default: 64]
    #[arg(long, env = "AX_MAX_CALLS_PER_CONNECTION")]
    pub max_calls_per_connection: Option<u32>,
    /// Longest a unary call (AdminService, health) may take before it fails with CANCELLED; for a
    /// Connect stream it bounds only the wait for its Welcome, not the stream. More than three
    /// heartbeat intervals [default: 30s]
    #[arg(long, env = "AX_REQUEST_TIMEOUT")]
    pub request_timeout: Option<HumanDuration>,
    /// Most calls waiting on one axd at once for an instance to end: TriggerTask with a wait and
    /// WatchInstance together; past it such a call is RESOURCE_EXHAUSTED and creates nothing,
    /// 1-100000 [default: 1000]
    #[arg(long, env = "AX_MAX_WAITING_CALLS")]
    pub max_waiting_calls: Option<u32>,
    // Alert webhooks.
    /// Allow alert webhooks in loopback, private, link-local, unique-local and unspecified ranges
    /// (checked when a rule is created and at every send, on the addresses the host resolves to)
    /// [default: false]
    #[arg(long, env = "AX_ALERT_ALLOW_PRIVATE_TARGETS", num_args = 0..=1, default_missing_value = "true")]
    pub alert_allow_private_targets: Option<bool>,
    /// PEM file of CA certificates trusted for https:// webhooks, besides the Mozilla roots
    /// [default: none]
    #[arg(long, env = "AX_ALERT_CA_FILE")]
    pub alert_ca_file: Option<PathBuf>,
    /// Longest wait to connect to a webhook, and again for its response [default: 10s]
    #[arg(long, env = "AX_ALERT_TIMEOUT")]
    pub alert_timeout: Option<HumanDuration>,
    /// Attempts per alert delivery before it is marked failed [default: 8]
    #[arg(long, env = "AX_ALERT_MAX_ATTEMPTS")]
    pub alert_max_attempts: Option<u32>,
    /// Wait after the first failed delivery attempt, doubling after each further one, at most 10m
    /// [default: 1s]
    #[arg(long, env = "AX_ALERT_RETRY_BACKOFF")]
    pub alert_retry_backoff: Option<HumanDuration>,
    // Routing.
    /// Consecutive failures (FAILED or TIMEOUT) of one worker for one handler that start a cooldown
    /// of that worker for the handler, for tasks that do not set --cooldown-after; 0 turns it off
    /// (README "Routing and limits") [default: 5]
    #[arg(long, env = "AX_COOLDOWN_AFTER")]
    pub cooldown_after: Option<u32>,
    /// The first cooldown, for tasks that do not set --cooldown; it doubles while failures continue;
    /// 0 turns it off [default: 30s]
    #[arg(long, env = "AX_COOLDOWN")]
    pub cooldown: Option<HumanDuration>,
    /// The longest a cooldown grows to by doubling [default: 10m]
    #[arg(long, env = "AX_COOLDOWN_MAX")]
    pub cooldown_max: Option<HumanDuration>,
    /// The largest share, in percent, of the live workers serving a handler (of one app) that may
    /// cool down for it at once; past it the longest-cooling are routed to again, since a handler
    /// failing on every worker is the handler's failure, not the workers' (README "Routing and
    /// limits") [default: 50]
    #[arg(long, env = "AX_COOLDOWN_MAX_SHARE")]
    pub cooldown_max_share: Option<u8>,
}

impl Options {
    /// Fills every option not set here from `other`.
    fn or(self, other: Options) -> Options {
        Options {
            database_url: self.database_url.or(other.database_url),
            database_pooler: self.database_pooler.or(other.database_pooler),
            database_session_url: self.database_session_url.or(other.database_session_url),
            listen: self.listen.or(other.listen),
            tls_cert: self.tls_cert.or(other.tls_cert),
            tls_key: self.tls_key.or(other.tls_key),
            tls_client_ca: self.tls_client_ca.or(other.tls_client_ca),
            db_pool_admin: self.db_pool_admin.or(other.db_pool_admin),
            db_pool_trigger: self.db_pool_trigger.or(other.db_pool_trigger),
            db_pool_dispatch: self.db_pool_dispatch.or(other.db_pool_dispatch),
            db_pool_workers: self.db_pool_workers.or(other.db_pool_workers),
            db_pool_sweeper: self.db_pool_sweeper.or(other.db_pool_sweeper),
            health_stall_after: self.health_stall_after.or(other.health_stall_after),
            heartbeat_interval: self.heartbeat_interval.or(other.heartbeat_interval),
            lost_worker_grace: self.lost_worker_grace.or(other.lost_worker_grace),
            ack_timeout: self.ack_timeout.or(other.ack_timeout),
            trigger_lookahead: self.trigger_lookahead.or(other.trigger_lookahead),
            dispatch_ahead: self.dispatch_ahead.or(other.dispatch_ahead),
            trigger_batch: self.trigger_batch.or(other.trigger_batch),
            poll_interval: self.poll_interval.or(other.poll_interval),
            scheduler_heartbeat: self.scheduler_heartbeat.or(other.scheduler_heartbeat),
            retention: self.retention.or(other.retention),
            housekeeping_interval: self.housekeeping_interval.or(other.housekeeping_interval),
            shutdown_timeout: self.shutdown_timeout.or(other.shutdown_timeout),
            log: self.log.or(other.log),
            log_format: self.log_format.or(other.log_format),
            otlp_endpoint: self.otlp_endpoint.or(other.otlp_endpoint),
            otlp_service_name: self.otlp_service_name.or(other.otlp_service_name),
            metrics_listen: self.metrics_listen.or(other.metrics_listen),
            metrics_tls_proxy: self.metrics_tls_proxy.or(other.metrics_tls_proxy),
            console_listen: self.console_listen.or(other.console_listen),
            trust_domain: self.trust_domain.or(other.trust_domain),
            scope: self.scope.or(other.scope),
            audit_retention: self.audit_retention.or(other.audit_retention),
            tls_handshake_timeout: self.tls_handshake_timeout.or(other.tls_handshake_timeout),
            max_connections: self.max_connections.or(other.max_connections),
            idle_connection_timeout: self.idle_connection_timeout.or(other.idle_connection_timeout),
            max_concurrent_streams: self.max_concurrent_streams.or(other.max_concurrent_streams),
            max_calls_per_connection: self.max_calls_per_connection.or(other.max_calls_per_connection),
            request_timeout: self.request_timeout.or(other.request_timeout),
            max_waiting_calls: self.max_waiting_calls.or(other.max_waiting_calls),
            alert_allow_private_targets: self.alert_allow_private_targets.or(other.alert_allow_private_targets),
            alert_ca_file: self.alert_ca_file.or(other.alert_ca_file),
            alert_timeout: self.alert_timeout.or(other.alert_timeout),
            alert_max_attempts: self.alert_max_attempts.or(other.alert_max_attempts),
            alert_retry_backoff: self.alert_retry_backoff.or(other.alert_retry_backoff),
            cooldown_after: self.cooldown_after.or(other.cooldown_after),
            cooldown: self.cooldown.or(other.cooldown),
            cooldown_max: self.cooldown_max.or(other.cooldown_max),
            cooldown_max_share: self.cooldown_max_share.or(other.cooldown_max_share),
        }
    }
}

/// TLS files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// Server certificate.
    pub cert: PathBuf,
    pub key: PathBuf,
    /// CA of client certificates.
    pub client_ca: PathBuf,
}

/// Where axd sends its trace spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpConfig {
    /// OTLP/gRPC collector, `http://host:port`.
    pub endpoint: String,
    /// `service.name` resource attribute (default `axd`).
    pub service_name: String,
}

/// Database connections per role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSizes {
    /// AdminService.
    pub admin: u32,
    /// Trigger loop.
    pub trigger: u32,
    /// Dispatch claims.
    pub dispatch: u32,
    /// Worker sessions.
    pub workers: u32,
    pub sweeper: u32,
}

/// `--database-pooler`: what stands between axd and PostgreSQL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DatabasePooler {
    /// Nothing, or a pooler in session mode: a connection is one server session.
    #[default]
    None,
    /// A pooler in transaction mode (PgBouncer `pool_mode = transaction`).
    Transaction,
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: String,
    /// What stands between axd and PostgreSQL.
    pub database_pooler: DatabasePooler,
    /// Where migrations and LISTEN go, if not to `database_url`.
    pub database_session_url: Option<String>,
    /// Listen address.
    pub listen: SocketAddr,
    /// mTLS, if enabled.
    pub tls: Option<TlsFiles>,
    /// Pool sizes per role.
    pub pools: PoolSizes,
    /// Stall bound of health.
    pub health_stall_after: Duration,
    /// Worker heartbeat interval.
    pub heartbeat_interval: Duration,
    pub lost_worker_grace: Duration,
    pub ack_timeout: Duration,
    /// Trigger look-ahead.
    pub trigger_lookahead: Duration,
    /// How early an instance may be assigned to a stream that holds it until its time.
    pub dispatch_ahead: Duration,
    pub trigger_batch: u32,
    /// Longest idle sleep.
    pub poll_interval: Duration,
    pub scheduler_heartbeat: Duration,
    /// Retention of finished instances.
    pub retention: Duration,
    /// Period of the housekeeping round (the purges of `retention` and `audit_retention`).
    pub housekeeping_interval: Duration,
    /// Shutdown bound.
    pub shutdown_timeout: Duration,
    /// Log filter.
    pub log: String,
    /// Log output format.
    pub log_format: crate::logging::LogFormat,
    /// OTLP trace export, if configured.
    pub otlp: Option<OtlpConfig>,
    /// Where `/metrics` is served, if at all.
    pub metrics_listen: Option<SocketAddr>,
    /// Where the web console is served, if at all (default off).
    pub console_listen: Option<SocketAddr>,

    // Access control and audit.
    /// Trust domain and app scopes (used with mTLS).
    pub policy: crate::auth::Policy,
    /// Retention of audit entries.
    pub audit_retention: Duration,
    /// Limits on connections, enforced before authentication.
    pub limits: Limits,
    /// How alert webhooks are delivered.
    pub alerts: AlertSettings,
    /// Worker cooldown defaults and cap.
    pub cooldown: crate::routing::cooldown::CooldownDefaults,
}

pub use crate::model::alerts::AlertSettings;

/// Limits on connections and calls, enforced before any client is authenticated (see the flags'
/// help in [`Options`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest TLS handshake.
    pub tls_handshake_timeout: Duration,
    /// Most connections open at once (before the file-descriptor limit lowers it).
    pub max_connections: u32,
    /// A connection without a call for this long is closed.
    pub idle_connection_timeout: Duration,
    /// HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS.
    pub max_concurrent_streams: u32,
    /// Calls of one connection handled at once.
    pub max_calls_per_connection: u32,
    /// Longest unary call.
    pub request_timeout: Duration,
    /// Calls waiting for an instance at once (TriggerTask waits and WatchInstance).
    pub max_waiting_calls: u32,
}

/// A configuration error, naming the option.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("config file {path}: {source}")]
    Read {
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown keys.
    #[error("config file {path}: {message}")]
    Parse {
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An option has an invalid value.
    #[error("{option}: {reason}")]
    Invalid {
        /// Option name.
        option: &'static str,
        /// Why.
        reason: String,
    },
}

fn d(v: Option<HumanDuration>, default: Duration) -> Duration {
    v.map_or(default, |h| h.0)
}

impl Config {
    /// Resolves flags/env over the file over defaults, and checks the result.
    pub fn resolve(args: Args) -> Result<Config, ConfigError> {
        let file = match &args.config {
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.clone(), source })?;
                toml::from_str::<Options>(&text)
                    .map_err(|e| ConfigError::Parse { path: path.clone(), message: e.to_string() })?
            }
            None => Options::default(),
        };
        Self::from_options(args.options.or(file))
    }

    /// Applies defaults to `o` and checks the result.
    pub fn from_options(mut o: Options) -> Result<Config, ConfigError> {
        let tls = checks::tls_files(o.tls_cert.take(), o.tls_key.take(), o.tls_client_ca.take())?;
        // What the checks need of `o` that the configuration does not keep as given.
        let (otlp_service_name_given, scope, metrics_tls_proxy) =
            (o.otlp_service_name.is_some(), o.scope.take(), o.metrics_tls_proxy);
        let mut c = Config::with_defaults(o, tls);
        checks::check_tracing(c.otlp.as_ref(), otlp_service_name_given)?;
        checks::check_access(&mut c.policy, scope)?;
        checks::check_database_url(&c.database_url)?;
        checks::check_pooler(&c)?;
        checks::check_listeners(&c, metrics_tls_proxy)?;
        checks::check_workers(&c)?;
        checks::check_loop_timing(&c)?;
        checks::check_alerts(&c.alerts)?;
        checks::check_batch_and_pools(&c)?;
        checks::between(
            "health_stall_after",
            c.health_stall_after,
            Duration::from_millis(500),
            Duration::from_secs(3600),
        )?;
        checks::check_limits(&c.limits, c.heartbeat_interval)?;
        Ok(c)
    }

    /// `o` with defaults applied and with `tls`, the TLS files it named; nothing is checked yet.
    fn with_defaults(o: Options, tls: Option<TlsFiles>) -> Config {
        Config {
            database_url: o.database_url.unwrap_or_else(|| "sqlite://./ax-data/ax.db".to_owned()),
            database_pooler: o.database_pooler.unwrap_or_default(),
            database_session_url: o.database_session_url,
            listen: o.listen.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 7070))),
            tls,
            pools: PoolSizes {
                admin: o.db_pool_admin.unwrap_or(4),
                trigger: o.db_pool_trigger.unwrap_or(2),
                dispatch: o.db_pool_dispatch.unwrap_or(2),
                workers: o.db_pool_workers.unwrap_or(4),
                sweeper: o.db_pool_sweeper.unwrap_or(2),
            },
            health_stall_after: d(o.health_stall_after, Duration::from_secs(10)),
            heartbeat_interval: d(o.heartbeat_interval, Duration::from_secs(2)),
            lost_worker_grace: d(o.lost_worker_grace, Duration::from_secs(10)),
            ack_timeout: d(o.ack_timeout, Duration::from_secs(10)),
            trigger_lookahead: d(o.trigger_lookahead, Duration::from_millis(2500)),
            dispatch_ahead: d(o.dispatch_ahead, Duration::from_millis(200)),
            trigger_batch: o.trigger_batch.unwrap_or(500),
            poll_interval: d(o.poll_interval, Duration::from_secs(1)),
            scheduler_heartbeat: d(o.scheduler_heartbeat, Duration::from_secs(2)),
            retention: d(o.retention, Duration::from_secs(30 * 86_400)),
            housekeeping_interval: d(o.housekeeping_interval, Duration::from_secs(60)),
            shutdown_timeout: d(o.shutdown_timeout, Duration::from_secs(10)),
            log: o.log.unwrap_or_else(|| "info".to_owned()),
            log_format: o.log_format.unwrap_or_default(),
            otlp: o.otlp_endpoint.map(|endpoint| OtlpConfig {
                endpoint,
                service_name: o.otlp_service_name.unwrap_or_else(|| "axd".to_owned()),
            }),
            metrics_listen: o.metrics_listen,
            console_listen: o.console_listen,
            policy: crate::auth::Policy {
                trust_domain: o.trust_domain.unwrap_or_else(|| "ax".to_owned()),
                scopes: Default::default(),
            },
            audit_retention: d(o.audit_retention, Duration::from_secs(90 * 86_400)),
            limits: Limits {
                tls_handshake_timeout: d(o.tls_handshake_timeout, Duration::from_secs(10)),
                max_connections: o.max_connections.unwrap_or(4096),
                idle_connection_timeout: d(o.idle_connection_timeout, Duration::from_secs(300)),
                max_concurrent_streams: o.max_concurrent_streams.unwrap_or(256),
                max_calls_per_connection: o.max_calls_per_connection.unwrap_or(64),
                request_timeout: d(o.request_timeout, Duration::from_secs(30)),
                max_waiting_calls: o.max_waiting_calls.unwrap_or(crate::core::MAX_WAITS),
            },
            alerts: AlertSettings {
                allow_private_targets: o.alert_allow_private_targets.unwrap_or(false),
                ca_file: o.alert_ca_file,
                timeout: d(o.alert_timeout, Duration::from_secs(10)),
                max_attempts: o.alert_max_attempts.unwrap_or(8),
                retry_backoff: d(o.alert_retry_backoff, Duration::from_secs(1)),
            },
            cooldown: crate::routing::cooldown::CooldownDefaults {
                after: o.cooldown_after.unwrap_or(5),
                duration: d(o.cooldown, Duration::from_secs(30)),
                max: d(o.cooldown_max, Duration::from_secs(600)),
                max_share: o.cooldown_max_share.unwrap_or(50),
            },
        }
    }
}

#[cfg(test)]
mod tests;
