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

use std::time::Duration;

pub mod deadlines;
pub mod http;
pub mod outbox;
pub mod sign;
#[cfg(test)]
mod tests;

// URL parts and refused address ranges are shared with ax-runner's http executor.
pub use ax_egress::{Target, redact_url, refused_range};

pub use crate::model::alerts::{AlertCause, AlertEvent, AlertRule, Delivery, DeliveryStatus, NewDelivery};

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
