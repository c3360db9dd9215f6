//! Prometheus metrics of this axd process (`--metrics-listen`; README "Metrics").
//!
//! Code records through the `metrics` facade ([`metrics::counter!`] and friends, or the helpers
//! here); [`install`] makes [`recorder::Recorder`] the process's recorder, and [`http::serve`]
//! answers `GET /metrics` with its text. Until [`install`] runs (metrics off), the facade's calls go
//! nowhere, and the helpers here return before building any label: [`enabled`] is one atomic load.
//!
//! [`CATALOG`] lists every metric with its labels; README's table and
//! `deploy/prometheus/alerts.yml` are checked against it (`tests/tests/suite/metrics.rs`).

pub mod http;
pub mod recorder;

use std::{
    net::SocketAddr,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use metrics::Label;

/// What kind of series a metric is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (`_total`).
    Counter,
    /// A current value.
    Gauge,
    /// Observations in [`recorder::BUCKETS`] (seconds).
    Histogram,
}

/// One metric: its name, kind, label names and help text.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    pub name: &'static str,
    pub kind: Kind,
    /// Label names, in the order they are rendered.
    pub labels: &'static [&'static str],
    /// The `# HELP` text.
    pub help: &'static str,
}

/// Instances created by this axd (trigger loop and manual triggers), by app and status (PENDING,
/// or SKIPPED by the concurrency policy).
pub const INSTANCES_CREATED: &str = "ax_instances_created_total";
/// Instances that reached a final status through this axd, by app and status.
pub const INSTANCES_FINISHED: &str = "ax_instances_finished_total";
/// Failed or timed-out attempts put back to PENDING by the retry policy, by app.
pub const RETRIES: &str = "ax_instance_retries_total";
/// Attempts that ran past their timeout, by app.
pub const TIMEOUTS: &str = "ax_instance_timeouts_total";
/// Attempts failed because their worker was lost, by app.
pub const WORKERS_LOST: &str = "ax_instance_workers_lost_total";
/// Missed fires handled by the misfire policy, by app and action (catch_up, skipped).
pub const MISFIRES: &str = "ax_misfires_total";
/// Scheduled fires not created because `max_pending` instances of their task were PENDING, by app.
pub const FIRES_COALESCED: &str = "ax_fires_coalesced_total";
/// Seconds from an instance's fire time to its first attempt's start (Accepted).
pub const FIRE_LAG: &str = "ax_fire_lag_seconds";
/// Seconds a ready instance waited in PENDING before an attempt was dispatched.
pub const DISPATCH_LAG: &str = "ax_dispatch_lag_seconds";
/// PENDING instances in the database, by app.
pub const PENDING: &str = "ax_pending_instances";
/// Credits the worker streams on this axd granted (free plus in use), by app.
pub const CREDITS_GRANTED: &str = "ax_worker_credits_granted";
/// Credits in use (assignments outstanding) on the worker streams of this axd, by app.
pub const CREDITS_IN_USE: &str = "ax_worker_credits_in_use";
/// Worker streams connected to this axd, by app.
pub const WORKER_STREAMS: &str = "ax_worker_streams";
/// Duration of each loop's rounds, by loop.
pub const LOOP_ROUND: &str = "ax_loop_round_duration_seconds";
/// Failed rounds, by loop.
pub const LOOP_ERRORS: &str = "ax_loop_errors_total";
/// Database connections checked out, by pool role.
pub const POOL_IN_USE: &str = "ax_db_pool_connections_in_use";
/// Size limit of each pool, by role.
pub const POOL_MAX: &str = "ax_db_pool_connections_max";
/// Seconds waited for a connection (and its BEGIN), by pool role.
pub const POOL_WAIT: &str = "ax_db_pool_wait_seconds";
/// Alert deliveries, by result (delivered, failed, gave_up). Recorded by the alert sender through
/// [`alert_delivery`].
pub const ALERT_DELIVERIES: &str = "ax_alert_deliveries_total";

/// 1 while more of an app's live workers are failing a handler than `--cooldown-max-share` lets
/// cool down at once (the floor routes to them anyway), 0 after. Set by the dispatcher through
/// [`handler_failing`].
pub const HANDLERS_FAILING: &str = "ax_handler_failing_on_every_worker";

/// Every metric axd exposes.
pub const CATALOG: &[Metric] = &[
    Metric {
        name: INSTANCES_CREATED,
        kind: Kind::Counter,
        labels: &["app", "status"],
        help: "Instances created by this axd, by app and status (PENDING, or SKIPPED by the concurrency policy).",
    },
    Metric {
        name: INSTANCES_FINISHED,
        kind: Kind::Counter,
        labels: &["app", "status"],
        help: "Instances that reached a final status through this axd (SUCCESS, FAILED, TIMEOUT, CANCELED).",
    },
    Metric {
        name: RETRIES,
        kind: Kind::Counter,
        labels: &["app"],
        help: "Failed or timed-out attempts put back to PENDING by the retry policy.",
    },
    Metric { name: TIMEOUTS, kind: Kind::Counter, labels: &["app"], help: "Attempts that ran past their timeout." },
    Metric {
        name: WORKERS_LOST,
        kind: Kind::Counter,
        labels: &["app"],
        help: "Running attempts failed because their worker was lost (lease expired).",
    },
    Metric {
        name: MISFIRES,
        kind: Kind::Counter,
        labels: &["app", "action"],
        help: "Tasks whose missed fires the misfire policy handled (action: catch_up or skipped).",
    },
    Metric {
        name: FIRES_COALESCED,
        kind: Kind::Counter,
        labels: &["app"],
        help: "Scheduled fires not created because max-pending instances of their task were PENDING.",
    },
    Metric {
        name: FIRE_LAG,
        kind: Kind::Histogram,
        labels: &[],
        help: "Seconds from an instance's fire time to the start (Accepted) of its first attempt.",
    },
    Metric {
        name: DISPATCH_LAG,
        kind: Kind::Histogram,
        labels: &[],
        help: "Seconds a ready instance waited in PENDING before this axd dispatched an attempt.",
    },
    Metric {
        name: PENDING,
        kind: Kind::Gauge,
        labels: &["app"],
        help: "PENDING instances in the database (read at scrape time; every axd reports the same).",
    },
    Metric {
        name: CREDITS_GRANTED,
        kind: Kind::Gauge,
        labels: &["app"],
        help: "Credits granted by the worker streams on this axd (free plus in use).",
    },
    Metric {
        name: CREDITS_IN_USE,
        kind: Kind::Gauge,
        labels: &["app"],
        help: "Credits in use (outstanding assignments) on the worker streams of this axd.",
    },
    Metric { name: WORKER_STREAMS, kind: Kind::Gauge, labels: &["app"], help: "Worker streams connected to this axd." },
    Metric {
        name: LOOP_ROUND,
        kind: Kind::Histogram,
        labels: &["loop"],
        help: "Seconds each round of a loop took (trigger, dispatch, sweeper, housekeeping, heartbeat).",
    },
    Metric { name: LOOP_ERRORS, kind: Kind::Counter, labels: &["loop"], help: "Rounds of a loop that failed." },
    Metric {
        name: POOL_IN_USE,
        kind: Kind::Gauge,
        labels: &["role"],
        help: "Database connections checked out of each pool (admin, trigger, dispatch, workers, sweeper, and metrics with --metrics-listen).",
    },
    Metric { name: POOL_MAX, kind: Kind::Gauge, labels: &["role"], help: "Most connections of each pool." },
    Metric {
        name: POOL_WAIT,
        kind: Kind::Histogram,
        labels: &["role"],
        help: "Seconds waited for a pooled connection (with its BEGIN for transactions).",
    },
    Metric {
        name: ALERT_DELIVERIES,
        kind: Kind::Counter,
        labels: &["result"],
        help: "Alert deliveries to webhooks, by result (delivered, failed, gave_up).",
    },
    Metric {
        name: HANDLERS_FAILING,
        kind: Kind::Gauge,
        labels: &["app", "handler"],
        help: "1 while more of the app's live workers fail the handler than --cooldown-max-share lets cool down at once (cooldowns not applied), 0 after.",
    },
];

static ENABLED: AtomicBool = AtomicBool::new(false);
static REGISTRY: OnceLock<Arc<recorder::Registry>> = OnceLock::new();

/// Whether metrics are recorded in this process (after [`install`]).
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Makes this process record metrics and returns the registry to render; a second call returns the
/// same one. Fails only if another `metrics` recorder was installed first.
pub fn install() -> Result<Arc<recorder::Registry>, String> {
    if let Some(r) = REGISTRY.get() {
        return Ok(r.clone());
    }
    let registry = REGISTRY.get_or_init(Arc::default).clone();
    metrics::set_global_recorder(recorder::Recorder(registry.clone()))
        .map_err(|_| "another metrics recorder is installed in this process".to_owned())?;
    for m in CATALOG {
        match m.kind {
            Kind::Counter => metrics::describe_counter!(m.name, m.help),
            Kind::Gauge => metrics::describe_gauge!(m.name, m.help),
            Kind::Histogram => metrics::describe_histogram!(m.name, m.help),
        }
    }
    ENABLED.store(true, Ordering::Relaxed);
    Ok(registry)
}

/// Checks `--metrics-listen`: `/metrics` is plain HTTP without authentication, so axd serves it on
/// a loopback address only, unless `tls_proxy` (`--metrics-tls-proxy`) says that a TLS-terminating
/// proxy is what reaches it.
pub fn check_listen(addr: SocketAddr, tls_proxy: bool) -> Result<(), String> {
    if addr.ip().is_loopback() || tls_proxy {
        return Ok(());
    }
    Err(format!(
        "{addr} is not a loopback address; /metrics is plain HTTP without authentication. Listen on \
         127.0.0.1 (scrape through a TLS proxy on this host), or set metrics_tls_proxy \
         (--metrics-tls-proxy) to say that a TLS proxy in front of it is the only way in"
    ))
}

/// Records one alert delivery attempt: `result` is `delivered`, `failed` (will be retried) or
/// `gave_up`.
pub fn alert_delivery(result: &'static str) {
    if enabled() {
        metrics::counter!(ALERT_DELIVERIES, "result" => result).increment(1);
    }
}

/// Sets [`HANDLERS_FAILING`] for a handler of an app.
pub fn handler_failing(app: &str, handler: &str, on: bool) {
    if enabled() {
        metrics::gauge!(HANDLERS_FAILING, "app" => app.to_owned(), "handler" => handler.to_owned()).set(if on {
            1.0
        } else {
            0.0
        });
    }
}

/// Records one round of `loop_name` (trigger, dispatch, sweeper, housekeeping, heartbeat): its duration, and an
/// error if it failed.
pub fn loop_round(loop_name: &'static str, took: Duration, failed: bool) {
    if !enabled() {
        return;
    }
    metrics::histogram!(LOOP_ROUND, "loop" => loop_name).record(took.as_secs_f64());
    if failed {
        metrics::counter!(LOOP_ERRORS, "loop" => loop_name).increment(1);
    }
}

/// One counter series of a [`Tally`]: (metric, app, second label, count).
type Count = (&'static str, String, Option<(&'static str, &'static str)>, u64);

/// Counters of one transaction, summed per series, recorded after it committed (so a rolled-back
/// change is never counted). Empty, and free, while metrics are off.
#[derive(Debug, Default)]
pub struct Tally {
    /// (metric, app, second label, count).
    counts: Vec<Count>,
    /// (histogram, seconds).
    observed: Vec<(&'static str, f64)>,
}

impl Tally {
    /// Adds `n` to `metric{app, label}`.
    pub fn add(&mut self, metric: &'static str, app: &str, label: Option<(&'static str, &'static str)>, n: u64) {
        if !enabled() || n == 0 {
            return;
        }
        match self.counts.iter_mut().find(|(m, a, l, _)| *m == metric && a == app && *l == label) {
            Some(c) => c.3 += n,
            None => self.counts.push((metric, app.to_owned(), label, n)),
        }
    }

    /// Records `seconds` (negative: 0) into the histogram `metric`.
    pub fn observe(&mut self, metric: &'static str, seconds: f64) {
        if enabled() {
            self.observed.push((metric, seconds.max(0.0)));
        }
    }

    /// Adds another tally's counts and observations to this one.
    pub fn merge(&mut self, other: Tally) {
        for (metric, app, label, n) in other.counts {
            self.add(metric, &app, label, n);
        }
        self.observed.extend(other.observed);
    }

    /// Records what was added.
    pub fn record(self) {
        for (metric, app, label, n) in self.counts {
            let mut labels = vec![Label::new("app", app)];
            if let Some((k, v)) = label {
                labels.push(Label::new(k, v));
            }
            metrics::counter!(metric, labels).increment(n);
        }
        let mut last: Option<(&'static str, metrics::Histogram)> = None;
        for (metric, v) in self.observed {
            match &last {
                Some((m, h)) if *m == metric => h.record(v),
                _ => {
                    let h = metrics::histogram!(metric);
                    h.record(v);
                    last = Some((metric, h));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_public_metrics_address_is_refused_without_the_tls_proxy_flag() {
        let public: SocketAddr = "0.0.0.0:9100".parse().expect("addr");
        let err = check_listen(public, false).expect_err("refused");
        assert!(
            err.starts_with("0.0.0.0:9100 is not a loopback address") && err.contains("metrics_tls_proxy"),
            "{err}"
        );
        assert!(check_listen(public, true).is_ok());
        assert!(check_listen("127.0.0.1:0".parse().expect("addr"), false).is_ok());
        assert!(check_listen("[::1]:9100".parse().expect("addr"), false).is_ok());
    }

    #[test]
    fn every_metric_is_named_once_with_a_prometheus_name() {
        let mut names: Vec<&str> = CATALOG.iter().map(|m| m.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a name is listed twice");
        for m in CATALOG {
            assert!(m.name.starts_with("ax_"), "{}", m.name);
            assert_eq!(
                m.kind == Kind::Counter,
                m.name.ends_with("_total"),
                "{}: counters and only they end in _total",
                m.name
            );
            assert!(m.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{}", m.name);
        }
    }
}
