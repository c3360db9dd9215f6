//! Failure alerts: rules, the events they watch, and the outbox rows they become.
//!
//! A rule names an app (and optionally one task of it), the events it watches and one webhook
//! (URL and secret). What happens to instances — a final failure, a timeout, a lost worker, a skip,
//! a misfire — is decided by the lifecycle and the trigger, which hand an [`AlertCause`] to
//! [`outbox::enqueue`] inside the transaction that writes the change: the delivery row commits with
//! the change or not at all. Conditions (no worker connected for T, PENDING backlog over N) are
//! evaluated periodically by [`outbox::evaluate_conditions`]; each episode has a number, and its
//! delivery a unique key, so it alerts once however many axd evaluate it. The delivery loop
//! (`loops::alerts`) sends due rows with [`http`], signed by [`sign`].

use std::{net::IpAddr, time::Duration};

use crate::model::Ts;

pub mod http;
pub mod outbox;
pub mod sign;
#[cfg(test)]
mod tests;

/// What a rule can watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AlertEvent {
    /// An instance ended FAILED or TIMEOUT with no retry left (or not retryable).
    FinalFailure,
    /// An attempt ran past its timeout (whether or not a retry follows).
    Timeout,
    /// An attempt failed because its worker was lost (whether or not a retry follows).
    WorkerLost,
    /// A fire was recorded SKIPPED by the task's concurrency policy.
    Skipped,
    /// The trigger skipped or coalesced late fires under the misfire policy.
    Misfire,
    /// No worker of the app was connected for the rule's `no_worker_for`.
    NoWorker,
    /// More PENDING instances than the rule's `backlog_over` (of the app, or of its task).
    Backlog,
    /// Sent by `axctl alert test` (never watched by a rule).
    Test,
}

impl AlertEvent {
    /// The events a rule may watch, by name.
    pub const WATCHABLE: [AlertEvent; 7] = [
        AlertEvent::FinalFailure,
        AlertEvent::Timeout,
        AlertEvent::WorkerLost,
        AlertEvent::Skipped,
        AlertEvent::Misfire,
        AlertEvent::NoWorker,
        AlertEvent::Backlog,
    ];

    /// The name used in rules, bodies and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertEvent::FinalFailure => "final_failure",
            AlertEvent::Timeout => "timeout",
            AlertEvent::WorkerLost => "worker_lost",
            AlertEvent::Skipped => "skipped",
            AlertEvent::Misfire => "misfire",
            AlertEvent::NoWorker => "no_worker",
            AlertEvent::Backlog => "backlog",
            AlertEvent::Test => "test",
        }
    }

    /// Parses a name of [`Self::as_str`] (including `test`).
    pub fn parse(s: &str) -> Option<AlertEvent> {
        Self::WATCHABLE.into_iter().chain([AlertEvent::Test]).find(|e| e.as_str() == s)
    }

    /// Whether it is a condition evaluated periodically rather than caused by a state change.
    pub fn is_condition(self) -> bool {
        matches!(self, AlertEvent::NoWorker | AlertEvent::Backlog)
    }
}

/// A stored rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertRule {
    /// Assigned by the database (0 before insertion).
    pub id: i64,
    /// Unique name.
    pub name: String,
    /// The app watched.
    pub app: String,
    /// Only this task of the app (`None`: every task of the app).
    pub task_name: Option<String>,
    /// The events watched, sorted, without duplicates, never `Test`.
    pub events: Vec<AlertEvent>,
    /// The webhook: `http://` or `https://`.
    pub url: String,
    /// The webhook's HMAC-SHA256 key (never returned by the API).
    pub secret: String,
    /// For `no_worker`: how long the app must have had no worker connected.
    pub no_worker_for: Option<Duration>,
    /// For `backlog`: alert when more than this many instances are PENDING.
    pub backlog_over: Option<u64>,
    /// Who created it.
    pub created_by: String,
    /// When.
    pub created_at: Ts,
}

impl AlertRule {
    /// Whether the rule applies to an event of this task of its app.
    pub fn matches(&self, event: AlertEvent, app: &str, task_name: &str) -> bool {
        self.app == app && self.task_name.as_deref().is_none_or(|t| t == task_name) && self.events.contains(&event)
    }
}

/// Something that happened to an instance or a task, handed to the outbox by the code that
/// decided it (the lifecycle, the trigger).
#[derive(Debug, Clone, PartialEq)]
pub struct AlertCause {
    pub event: AlertEvent,
    pub app: String,
    pub task_name: String,
    /// The instance, if the event is about one.
    pub instance_id: Option<i64>,
    /// Its attempt (0 without an instance).
    pub attempt: u32,
    /// When it happened (database clock).
    pub at: Ts,
    /// What happened, in words (the instance's message, the misfire's reason).
    pub message: String,
    /// What makes this occurrence unique among the task's events of this kind (the instance and
    /// attempt, or a misfire's fire time): part of the delivery's unique key.
    pub occurrence: String,
}

/// Status of a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Not sent yet, or to be sent again at `next_attempt_at` (also while an axd is sending it).
    Pending,
    /// The webhook answered 2xx.
    Delivered,
    /// Every attempt failed (or its rule was deleted).
    Failed,
}

impl DeliveryStatus {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }

    /// Parses [`Self::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        [DeliveryStatus::Pending, DeliveryStatus::Delivered, DeliveryStatus::Failed]
            .into_iter()
            .find(|d| d.as_str() == s)
    }
}

/// A row of the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The delivery id: sent as `X-Ax-Delivery` and `delivery_id`, the same on every attempt.
    pub id: i64,
    pub rule_id: i64,
    pub rule_name: String,
    pub app: String,
    pub task_name: Option<String>,
    pub event: AlertEvent,
    /// Unique per rule and occurrence (or condition episode).
    pub dedupe_key: String,
    pub url: String,
    /// The event's fields as a JSON object (the body adds `delivery_id`, see [`sign::body`]).
    pub payload: String,
    pub status: DeliveryStatus,
    /// Attempts started so far.
    pub attempts: u32,
    /// When it is due (again); while an axd sends it, when that claim lapses.
    pub next_attempt_at: Ts,
    /// Why the last attempt failed (empty if none did).
    pub last_error: String,
    pub created_at: Ts,
    /// When it was delivered or given up.
    pub finished_at: Option<Ts>,
}

/// A delivery to insert: the outbox row for one rule and one cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub rule_id: i64,
    pub rule_name: String,
    pub app: String,
    pub task_name: Option<String>,
    pub event: AlertEvent,
    pub dedupe_key: String,
    pub url: String,
    pub payload: String,
    /// Due from this time.
    pub due_at: Ts,
}

/// The payload of a cause (see the README's "Alerts" section for every field).
pub fn payload(rule: &AlertRule, c: &AlertCause) -> String {
    serde_json::json!({
        "event": c.event.as_str(),
        "rule": rule.name,
        "app": c.app,
        "task": c.task_name,
        "instance_id": c.instance_id,
        "attempt": c.attempt,
        "at": c.at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "message": c.message,
    })
    .to_string()
}

/// The outbox row of `rule` for `cause`, due at once.
pub fn delivery_for(rule: &AlertRule, c: &AlertCause) -> NewDelivery {
    NewDelivery {
        rule_id: rule.id,
        rule_name: rule.name.clone(),
        app: c.app.clone(),
        task_name: (!c.task_name.is_empty()).then(|| c.task_name.clone()),
        event: c.event,
        dedupe_key: format!("r{}:{}:{}", rule.id, c.event.as_str(), c.occurrence),
        url: rule.url.clone(),
        payload: payload(rule, c),
        due_at: c.at,
    }
}

/// The shortest secret accepted (bytes).
pub const MIN_SECRET: usize = 16;
/// The longest secret accepted (bytes).
pub const MAX_SECRET: usize = 255;
/// The longest URL accepted (bytes).
pub const MAX_URL: usize = 2048;

/// A webhook URL's parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `https` or not.
    pub tls: bool,
    /// The host as written (without brackets for IPv6).
    pub host: String,
    /// The port (80 or 443 if not written).
    pub port: u16,
    /// Path and query, at least `/`.
    pub path: String,
}

impl Target {
    /// Parses an `http://` or `https://` URL; the reason if it is not one.
    pub fn parse(url: &str) -> Result<Target, String> {
        if url.len() > MAX_URL {
            return Err(format!("is {} bytes, more than {MAX_URL}", url.len()));
        }
        let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = url.strip_prefix("http://") {
            (false, r)
        } else {
            return Err("must start with http:// or https://".to_owned());
        };
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("must not contain spaces or control characters".to_owned());
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let path = tail.split('#').next().unwrap_or_default();
        let path = if path.is_empty() {
            "/".to_owned()
        } else if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_owned()
        };
        if authority.contains('@') {
            return Err("must not hold a user name or password".to_owned());
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or("has an unclosed '[' in its host")?;
            (h, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err("has no host".to_owned());
        }
        let port = match port {
            None => {
                if tls {
                    443
                } else {
                    80
                }
            }
            Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| format!("port {p:?} is not 1-65535"))?,
        };
        Ok(Target { tls, host: host.to_ascii_lowercase(), port, path })
    }

    /// The host as an IP address, if it is written as one.
    pub fn literal_ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }
}

/// Why an address is refused as a webhook target unless axd allows private targets
/// (`--alert-allow-private-targets`): loopback, private, link-local, unique-local, unspecified,
/// shared (100.64/10), multicast and broadcast ranges. `None` for a public address.
pub fn refused_range(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private() {
                Some("private")
            } else if v4.is_link_local() {
                Some("link-local")
            } else if v4.is_unspecified() || o[0] == 0 {
                Some("unspecified")
            } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
                Some("shared (carrier-grade NAT)")
            } else if v4.is_multicast() || v4.is_broadcast() {
                Some("multicast or broadcast")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return refused_range(IpAddr::V4(v4));
            }
            let s = v6.segments();
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if (s[0] & 0xffc0) == 0xfe80 {
                Some("link-local")
            } else if (s[0] & 0xfe00) == 0xfc00 {
                Some("unique-local")
            } else if v6.is_multicast() {
                Some("multicast or broadcast")
            } else {
                None
            }
        }
    }
}

/// Checks a webhook URL at create time: its form, and its host if that is a literal IP address
/// (names are checked when they are resolved, at every send).
pub fn check_url(url: &str, allow_private: bool) -> Result<Target, String> {
    let t = Target::parse(url)?;
    if !allow_private
        && let Some(ip) = t.literal_ip()
        && let Some(range) = refused_range(ip)
    {
        return Err(format!("{ip} is a {range} address: refused unless axd runs with --alert-allow-private-targets"));
    }
    if !allow_private && t.host == "localhost" {
        return Err(
            "localhost is a loopback address: refused unless axd runs with --alert-allow-private-targets".to_owned()
        );
    }
    Ok(t)
}

/// The wait after the `attempts`-th failed attempt: `base`, doubling with each failure, at most 10 min.
pub fn backoff(base: Duration, attempts: u32) -> Duration {
    let factor = 1u32.checked_shl(attempts.saturating_sub(1).min(20)).unwrap_or(u32::MAX);
    base.saturating_mul(factor).min(Duration::from_secs(600))
}
