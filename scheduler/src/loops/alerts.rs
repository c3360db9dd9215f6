//! The alert loop: evaluates condition rules (no worker for T, backlog over N) and sends the
//! outbox's due deliveries.
//!
//! Every axd runs it: the condition rules on a timer of their own, and up to [`BATCH`] sends at
//! once, each place refilled as its send ends (a send ends at its deadline, shorter than its claim:
//! see [`crate::alerts::http::Sender::send_deadline`]). Deliveries are claimed with SKIP LOCKED
//! (SQLite: its write transactions are exclusive); a claim counts an attempt and pushes the row's
//! due time past the longest a send can take, so an axd that dies mid-send leaves the row to any axd once the claim
//! lapses, and the receiver gets the same delivery id again (at least once, never lost). An outcome
//! is written only if the row is still at the attempt this axd claimed. A failed attempt is retried
//! after a doubling backoff until `alert_max_attempts`, then the delivery is marked failed.

use std::{sync::Arc, time::Duration};

use tokio_util::sync::CancellationToken;

use crate::{
    alerts::{Delivery, backoff, http::Sender, outbox},
    config::AlertSettings,
    core::Core,
    error::StoreResult,
    model::{Ts, add},
    store::{DeliveryEnd, Store},
};

/// Most sends in flight per axd.
pub const BATCH: u32 = 32;

/// Most sends of one rule in flight per axd: a rule whose webhook never answers holds these
/// places, not the others' (claims also let apps, then rules, take turns).
pub const PER_RULE: u32 = 4;

/// How long a claim lasts: a connect and a response timeout, and a margin for the database write.
pub fn claim_lease(settings: &AlertSettings) -> Duration {
    settings.timeout * 2 + Duration::from_secs(5)
}

/// What one attempt's result means for the delivery.
pub fn outcome(result: Result<u16, String>, attempts: u32, settings: &AlertSettings, now: Ts) -> DeliveryEnd {
    let error = match result {
        Ok(status) if (200..300).contains(&status) => return DeliveryEnd::Delivered,
        Ok(status) => format!("attempt {attempts}: the webhook answered HTTP {status}"),
        Err(e) => format!("attempt {attempts}: {e}"),
    };
    if attempts >= settings.max_attempts {
        DeliveryEnd::Failed { error: format!("{error}; gave up after {attempts} attempts") }
    } else {
        DeliveryEnd::Retry { error, at: add(now, backoff(settings.retry_backoff, attempts)) }
    }
}

/// A claimed delivery's send: the delivery, whether its rule still exists, and the result.
type Sent = (Delivery, bool, Result<u16, String>);

/// The sends in flight, and how many of each rule.
#[derive(Default)]
pub struct Flight {
    sends: tokio::task::JoinSet<Sent>,
    rule_of: std::collections::HashMap<tokio::task::Id, i64>,
    per_rule: std::collections::HashMap<i64, u32>,
}

impl Flight {
    /// Sends in flight.
    pub fn len(&self) -> usize {
        self.sends.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty()
    }

    /// The next send to end (`None` if it panicked); its place and its rule's are free again.
    pub async fn next(&mut self) -> Option<Option<Sent>> {
        let (id, sent) = match self.sends.join_next_with_id().await? {
            Ok((id, sent)) => (id, Some(sent)),
            Err(e) => (e.id(), None),
        };
        if let Some(rule) = self.rule_of.remove(&id)
            && let Some(n) = self.per_rule.get_mut(&rule)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_rule.remove(&rule);
            }
        }
        Some(sent)
    }
}

/// Claims up to `limit` due deliveries (at most [`PER_RULE`] of a rule with those in `flight`)
/// and starts sending each in `flight`; how many it claimed.
pub async fn claim_and_send(
    store: &Store,
    sender: &Sender,
    settings: &AlertSettings,
    now: Ts,
    limit: u32,
    flight: &mut Flight,
) -> StoreResult<usize> {
    let full: Vec<i64> = flight.per_rule.iter().filter(|(_, n)| **n >= PER_RULE).map(|(r, _)| *r).collect();
    let mut tx = store.begin().await?;
    let claimed = tx.alerts().claim_deliveries(now, add(now, claim_lease(settings)), limit, PER_RULE, &full).await?;
    tx.commit().await?;
    let n = claimed.len();
    for (d, secret) in claimed {
        let rule = d.rule_id;
        let sender = sender.clone();
        let handle = flight.sends.spawn(async move {
            let result = match &secret {
                Some(secret) => sender.send(&d, secret, chrono::Utc::now().timestamp()).await,
                None => Err("its alert rule was deleted".to_owned()),
            };
            (d, secret.is_some(), result)
        });
        flight.rule_of.insert(handle.id(), rule);
        *flight.per_rule.entry(rule).or_default() += 1;
    }
    Ok(n)
}

/// Records the outcome of one send (only if the row is still at the attempt this axd claimed).
pub async fn record(store: &Store, settings: &AlertSettings, sent: Sent, now: Ts) -> StoreResult<()> {
    let (d, has_rule, result) = sent;
    let end = if has_rule {
        outcome(result, d.attempts, settings, now)
    } else {
        DeliveryEnd::Failed { error: "its alert rule was deleted".to_owned() }
    };
    log_end(&d, &end);
    let mut conn = store.conn().await?;
    if !conn.alerts().finish_delivery(d.id, d.attempts, &end, now).await? {
        tracing::info!(delivery = d.id, "delivery outcome not recorded: its claim lapsed and another axd took it");
    }
    Ok(())
}

fn log_end(d: &Delivery, end: &DeliveryEnd) {
    match end {
        DeliveryEnd::Delivered => {
            crate::prometheus::alert_delivery("delivered");
            tracing::info!(delivery = d.id, rule = %d.rule_name, event = d.event.as_str(), attempt = d.attempts, "alert delivered");
        }
        DeliveryEnd::Retry { error, at } => {
            crate::prometheus::alert_delivery("failed");
            tracing::warn!(delivery = d.id, rule = %d.rule_name, %error, retry_at = %at, "alert delivery failed; will retry");
        }
        DeliveryEnd::Failed { error } => {
            crate::prometheus::alert_delivery("gave_up");
            tracing::warn!(delivery = d.id, rule = %d.rule_name, %error, "alert delivery failed; giving up");
        }
    }
}

/// The alert loop of one axd.
pub struct AlertLoop {
    core: Arc<Core>,
    sender: Sender,
}

impl AlertLoop {
    /// A loop over the shared core, sending with `sender`.
    pub fn new(core: Arc<Core>, sender: Sender) -> Self {
        AlertLoop { core, sender }
    }

    /// Runs until `cancel` fires. The condition rules are evaluated every poll interval on their
    /// own, so sends that take long never delay them. Up to [`BATCH`] sends are in flight; each
    /// that finishes is recorded and its place refilled with the next due delivery at once, so a
    /// slow webhook holds one place, not a round. Due deliveries are looked for every poll
    /// interval, when a send finishes, and at once when this axd queued one (`axctl alert test`).
    pub async fn run(self, cancel: CancellationToken) {
        let conditions = tokio::spawn(evaluate_conditions(self.core.clone(), cancel.clone()));
        let wake = self.core.signals.alerts.clone();
        let store = &self.core.pools.sweeper;
        let mut flight = Flight::default();
        loop {
            let free = BATCH.saturating_sub(u32::try_from(flight.len()).unwrap_or(BATCH));
            if free > 0 {
                let now = self.core.clock.now();
                let started = std::time::Instant::now();
                let claimed = claim_and_send(store, &self.sender, &self.core.alerts, now, free, &mut flight).await;
                crate::prometheus::loop_round("alerts", started.elapsed(), claimed.is_err());
                match claimed {
                    Ok(_) => self.core.progress.tick(crate::core::health::Loop::Alerts),
                    Err(e) => tracing::warn!(error = %e, "claiming alert deliveries failed"),
                }
            } else {
                // Every place is taken: the loop is busy, not stalled.
                self.core.progress.tick(crate::core::health::Loop::Alerts);
            }
            tokio::select! {
                () = cancel.cancelled() => break,
                Some(ended) = flight.next(), if !flight.is_empty() => {
                    let Some(sent) = ended else { continue };
                    if let Err(e) = record(store, &self.core.alerts, sent, self.core.clock.now()).await {
                        tracing::warn!(error = %e, "recording an alert delivery's outcome failed");
                    }
                }
                () = wake.notified() => {}
                () = tokio::time::sleep(self.core.sessions.poll_interval) => {}
            }
        }
        flight.sends.abort_all();
        let _ = conditions.await;
    }
}

/// Evaluates the condition rules (no worker for T, backlog over N) every poll interval until
/// `cancel` fires.
async fn evaluate_conditions(core: Arc<Core>, cancel: CancellationToken) {
    let mut judged = crate::alerts::deadlines::Judged::new();
    loop {
        let share = core.routing.cooldown.max_share;
        let evaluated =
            outbox::evaluate_conditions(&core.pools.sweeper, core.clock.now(), core.alive_since(), share).await;
        if let Err(e) = evaluated {
            tracing::warn!(error = %e, "evaluating alert conditions failed");
        }
        let deadlines =
            crate::alerts::deadlines::evaluate_deadlines(&core.pools.sweeper, core.clock.now(), &mut judged).await;
        if let Err(e) = deadlines {
            tracing::warn!(error = %e, "judging task deadlines failed");
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(core.sessions.poll_interval) => {}
        }
    }
}
