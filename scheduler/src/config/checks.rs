//! The checks of a configuration, by concern, in the order [`Config::from_options`] runs them; each
//! returns the first [`ConfigError`] it finds.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use super::{AlertSettings, Config, ConfigError, Limits, OtlpConfig, TlsFiles};

/// The error for `option`, invalid because of `reason`.
fn invalid(option: &'static str, reason: &str) -> ConfigError {
    ConfigError::Invalid { option, reason: reason.to_owned() }
}

/// Checks that `option`'s value `v` is within `lo..=hi`.
pub(super) fn between(option: &'static str, v: Duration, lo: Duration, hi: Duration) -> Result<(), ConfigError> {
    if v < lo || v > hi {
        Err(ConfigError::Invalid { option, reason: format!("{v:?} is out of range {lo:?}..{hi:?}") })
    } else {
        Ok(())
    }
}

/// The TLS files: all three, or none (TLS off).
pub(super) fn tls_files(
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    client_ca: Option<PathBuf>,
) -> Result<Option<TlsFiles>, ConfigError> {
    match (cert, key, client_ca) {
        (None, None, None) => Ok(None),
        (Some(cert), Some(key), Some(client_ca)) => Ok(Some(TlsFiles { cert, key, client_ca })),
        _ => Err(invalid(
            "tls_cert",
            "TLS needs all of tls_cert, tls_key and tls_client_ca (axd requires client certificates)",
        )),
    }
}

/// Checks the trace export: a collector endpoint axd can use and a service name, given only with
/// an endpoint.
pub(super) fn check_tracing(otlp: Option<&OtlpConfig>, service_name_given: bool) -> Result<(), ConfigError> {
    if let Some(otlp) = otlp {
        ax_proto::otlp::check_endpoint(&otlp.endpoint).map_err(|e| invalid("otlp_endpoint", &e.to_string()))?;
        if otlp.service_name.trim().is_empty() {
            return Err(invalid("otlp_service_name", "must not be empty"));
        }
    } else if service_name_given {
        return Err(invalid("otlp_service_name", "is set but otlp_endpoint is not (tracing is off)"));
    }
    Ok(())
}

/// Checks the trust domain and reads the scope entries into `policy` (each name once).
pub(super) fn check_access(policy: &mut crate::auth::Policy, entries: Option<Vec<String>>) -> Result<(), ConfigError> {
    crate::auth::check_trust_domain(&policy.trust_domain)
        .map_err(|reason| ConfigError::Invalid { option: "trust_domain", reason })?;
    for entry in entries.unwrap_or_default() {
        let (name, scope) =
            crate::auth::parse_scope(&entry).map_err(|reason| ConfigError::Invalid { option: "scope", reason })?;
        if policy.scopes.insert(name.clone(), scope).is_some() {
            return Err(ConfigError::Invalid { option: "scope", reason: format!("{name:?} is given twice") });
        }
    }
    Ok(())
}

/// Checks that the database URL names a database axd supports.
pub(super) fn check_database_url(database_url: &str) -> Result<(), ConfigError> {
    if !(database_url.starts_with("sqlite:")
        || database_url.starts_with("postgres:")
        || database_url.starts_with("postgresql:")
        || database_url.starts_with("mysql:")
        || database_url.starts_with("mariadb:"))
    {
        return Err(invalid("database_url", "must start with sqlite://, postgres:// or mysql://"));
    }
    Ok(())
}

/// Checks `database_pooler` and `database_session_url`: both are PostgreSQL's, and a transaction
/// pooler needs a session URL (sqlx's migrator takes a session advisory lock and prepares named
/// statements; LISTEN lasts as long as its session: none of that survives transaction pooling).
pub(super) fn check_pooler(c: &Config) -> Result<(), ConfigError> {
    let pg = |u: &str| u.starts_with("postgres:") || u.starts_with("postgresql:");
    if let Some(s) = &c.database_session_url
        && !(pg(s) && pg(&c.database_url))
    {
        return Err(invalid("database_session_url", "is for PostgreSQL: both URLs must start with postgres://"));
    }
    if c.database_pooler == super::DatabasePooler::Transaction {
        if !pg(&c.database_url) {
            return Err(invalid("database_pooler", "transaction is for PostgreSQL (database_url postgres://...)"));
        }
        if c.database_session_url.is_none() {
            return Err(invalid(
                "database_pooler",
                "transaction needs database_session_url: migrations and LISTEN need a session (straight to \
                 PostgreSQL, or a session-mode pool)",
            ));
        }
    }
    Ok(())
}

/// Checks the addresses axd listens on: gRPC, metrics and console.
pub(super) fn check_listeners(c: &Config, metrics_tls_proxy: Option<bool>) -> Result<(), ConfigError> {
    if c.tls.is_none() && !c.listen.ip().is_loopback() {
        return Err(ConfigError::Invalid {
            option: "listen",
            reason: format!(
                "{} is not a loopback address; without TLS axd only listens on loopback. Configure \
                 tls_cert, tls_key and tls_client_ca (see `axctl certs init`)",
                c.listen
            ),
        });
    }
    if let Some(addr) = c.metrics_listen {
        crate::prometheus::check_listen(addr, metrics_tls_proxy.unwrap_or(false))
            .map_err(|reason| ConfigError::Invalid { option: "metrics_listen", reason })?;
    }
    if let Some(addr) = c.console_listen {
        check_console_listen(addr, c.tls.is_some(), c.listen, c.metrics_listen)
            .map_err(|reason| ConfigError::Invalid { option: "console_listen", reason })?;
    }
    Ok(())
}

/// Checks `console_listen`: on loopback unless TLS is on (the console then carries the same client
/// certificates as the gRPC port), and not the port of `listen` or `metrics_listen` (one port, one
/// protocol: each refuses what the other speaks).
fn check_console_listen(
    addr: SocketAddr,
    tls: bool,
    listen: SocketAddr,
    metrics_listen: Option<SocketAddr>,
) -> Result<(), String> {
    if !tls && !addr.ip().is_loopback() {
        return Err(format!(
            "{addr} is not a loopback address; without TLS the console, like the gRPC port, only listens on \
             loopback. Configure tls_cert, tls_key and tls_client_ca (see `axctl certs init`)"
        ));
    }
    // Port 0 asks for a free port: it cannot clash. The unspecified address (0.0.0.0, ::) covers
    // every address of its family, so it clashes with any address on the same port.
    let clash = |other: SocketAddr| {
        addr.port() != 0
            && addr.port() == other.port()
            && (addr.ip() == other.ip() || addr.ip().is_unspecified() || other.ip().is_unspecified())
    };
    if clash(listen) {
        return Err(format!("{addr} is the address of listen ({listen}); give the console a port of its own"));
    }
    if let Some(metrics) = metrics_listen.filter(|m| clash(*m)) {
        return Err(format!("{addr} is the address of metrics_listen ({metrics}); give the console a port of its own"));
    }
    Ok(())
}

/// Checks what axd tells and expects of workers: the heartbeat interval, lost-worker grace and ack
/// timeout (each, and how they relate) and the cooldown after failures.
pub(super) fn check_workers(c: &Config) -> Result<(), ConfigError> {
    between("heartbeat_interval", c.heartbeat_interval, Duration::from_millis(100), Duration::from_secs(60))?;
    between("lost_worker_grace", c.lost_worker_grace, Duration::ZERO, Duration::from_secs(3600))?;
    between("ack_timeout", c.ack_timeout, Duration::from_millis(100), Duration::from_secs(3600))?;
    if c.cooldown.after > 1000 {
        return Err(invalid("cooldown_after", &format!("{} is out of range 0-1000", c.cooldown.after)));
    }
    between("cooldown", c.cooldown.duration, Duration::ZERO, Duration::from_secs(86_400))?;
    between("cooldown_max", c.cooldown.max, Duration::from_secs(1), Duration::from_secs(7 * 86_400))?;
    if c.cooldown.max < c.cooldown.duration {
        return Err(invalid("cooldown_max", "is shorter than cooldown"));
    }
    if c.cooldown.max_share > 100 {
        return Err(invalid(
            "cooldown_max_share",
            &format!("{} is out of range 0-100 (percent)", c.cooldown.max_share),
        ));
    }
    if c.lost_worker_grace < c.heartbeat_interval {
        // Workers stop an attempt one heartbeat interval before its lease ends, and the lease
        // after a silent session is 3 intervals plus the grace: with less grace than one
        // interval, a worker would stop attempts at the first hiccup.
        return Err(ConfigError::Invalid {
            option: "lost_worker_grace",
            reason: format!("{:?} is less than heartbeat_interval ({:?})", c.lost_worker_grace, c.heartbeat_interval),
        });
    }
    if c.ack_timeout < c.heartbeat_interval * 2 {
        // Workers do not start an assignment within one heartbeat interval of its ack deadline
        // (Welcome.fence_margin): a shorter ack timeout would leave them no time to accept.
        return Err(ConfigError::Invalid {
            option: "ack_timeout",
            reason: format!(
                "{:?} is less than twice heartbeat_interval ({:?}); workers need that long to accept",
                c.ack_timeout, c.heartbeat_interval
            ),
        });
    }
    Ok(())
}

/// Checks the loops' timings, the retention periods and the shutdown bound.
pub(super) fn check_loop_timing(c: &Config) -> Result<(), ConfigError> {
    between("trigger_lookahead", c.trigger_lookahead, Duration::ZERO, Duration::from_secs(60))?;
    between("dispatch_ahead", c.dispatch_ahead, Duration::ZERO, Duration::from_secs(10))?;
    between("poll_interval", c.poll_interval, Duration::from_millis(10), Duration::from_secs(60))?;
    between("scheduler_heartbeat", c.scheduler_heartbeat, Duration::from_millis(100), Duration::from_secs(60))?;
    between("retention", c.retention, Duration::from_secs(60), Duration::from_secs(3650 * 86_400))?;
    between("housekeeping_interval", c.housekeeping_interval, Duration::from_secs(1), Duration::from_secs(86_400))?;
    between("shutdown_timeout", c.shutdown_timeout, Duration::ZERO, Duration::from_secs(3600))?;
    between("audit_retention", c.audit_retention, Duration::from_secs(3600), Duration::from_secs(3650 * 86_400))?;
    Ok(())
}

/// Checks how alert webhooks are delivered: timeout, backoff and attempts.
pub(super) fn check_alerts(alerts: &AlertSettings) -> Result<(), ConfigError> {
    between("alert_timeout", alerts.timeout, Duration::from_millis(100), Duration::from_secs(300))?;
    between("alert_retry_backoff", alerts.retry_backoff, Duration::from_millis(10), Duration::from_secs(3600))?;
    if !(1..=100).contains(&alerts.max_attempts) {
        return Err(invalid("alert_max_attempts", "must be 1-100"));
    }
    Ok(())
}

/// Checks the trigger batch and the database connections of each role.
pub(super) fn check_batch_and_pools(c: &Config) -> Result<(), ConfigError> {
    if !(1..=100_000).contains(&c.trigger_batch) {
        return Err(invalid("trigger_batch", "must be 1-100000"));
    }
    for (option, n) in [
        ("db_pool_admin", c.pools.admin),
        ("db_pool_trigger", c.pools.trigger),
        ("db_pool_dispatch", c.pools.dispatch),
        ("db_pool_workers", c.pools.workers),
        ("db_pool_sweeper", c.pools.sweeper),
    ] {
        if !(1..=500).contains(&n) {
            return Err(ConfigError::Invalid { option, reason: format!("{n} is out of range 1-500") });
        }
    }
    Ok(())
}

/// Checks the limits on connections and calls, and that a call may outlast the wait for Hello.
pub(super) fn check_limits(l: &Limits, heartbeat_interval: Duration) -> Result<(), ConfigError> {
    between("tls_handshake_timeout", l.tls_handshake_timeout, Duration::from_millis(100), Duration::from_secs(300))?;
    between(
        "idle_connection_timeout",
        l.idle_connection_timeout,
        Duration::from_millis(100),
        Duration::from_secs(86_400),
    )?;
    between("request_timeout", l.request_timeout, Duration::from_millis(100), Duration::from_secs(3600))?;
    for (option, n, max) in [
        ("max_connections", l.max_connections, 1_000_000),
        ("max_concurrent_streams", l.max_concurrent_streams, 100_000),
        ("max_calls_per_connection", l.max_calls_per_connection, 100_000),
        ("max_waiting_calls", l.max_waiting_calls, 100_000),
    ] {
        if !(1..=max).contains(&n) {
            return Err(ConfigError::Invalid { option, reason: format!("{n} is out of range 1-{max}") });
        }
    }
    if l.request_timeout <= heartbeat_interval * 3 {
        // A Connect call waits up to three heartbeat intervals for Hello before its Welcome:
        // a shorter timeout would cut it with CANCELLED instead of saying what was missing.
        return Err(ConfigError::Invalid {
            option: "request_timeout",
            reason: format!(
                "{:?} is not more than three heartbeat intervals ({:?}), the longest a Connect call waits for Hello",
                l.request_timeout,
                heartbeat_interval * 3
            ),
        });
    }
    Ok(())
}
