//! The alert loop: evaluates condition rules (no worker for T, backlog over N) and sends the
//! outbox's due deliveries.
//!
//! Every axd runs it. A round claims due deliveries with SKIP LOCKED (SQLite: its write
//! transactions are exclusive); a claim counts an attempt and pushes the row's due time past the
//! longest a send can take, so an axd that dies mid-send leaves the row to any axd once the claim
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

/// Most deliveries claimed (and sent concurrently) per round.
const BATCH: u32 = 32;

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

/// Claims due deliveries, sends them concurrently and records each outcome; how many it claimed.
pub async fn deliver_due(
    store: &Store,
    sender: &Sender,
    settings: &AlertSettings,
    now: Ts,
    clock: &dyn crate::core::clock::Clock,
) -> StoreResult<usize> {
    let mut tx = store.begin().await?;
    let claimed = tx.alerts().claim_deliveries(now, add(now, claim_lease(settings)), BATCH).await?;
    tx.commit().await?;
    let n = claimed.len();
    let mut sends = tokio::task::JoinSet::new();
    for (d, secret) in claimed {
        let sender = sender.clone();
        sends.spawn(async move {
            let result = match &secret {
                Some(secret) => sender.send(&d, secret, chrono::Utc::now().timestamp()).await,
                None => Err("its alert rule was deleted".to_owned()),
            };
            (d, secret.is_some(), result)
        });
    }
    while let Some(joined) = sends.join_next().await {
        let Ok((d, has_rule, result)) = joined else { continue };
        let now = clock.now();
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
    }
    Ok(n)
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

    /// Evaluates the condition rules, then sends due deliveries until a round finds fewer than a
    /// full batch.
    pub async fn run_round(&self) -> StoreResult<usize> {
        let store = &self.core.pools.sweeper;
        let share = self.core.routing.cooldown.max_share;
        outbox::evaluate_conditions(store, self.core.clock.now(), self.core.alive_since(), share).await?;
        let mut total = 0;
        loop {
            let n =
                deliver_due(store, &self.sender, &self.core.alerts, self.core.clock.now(), &*self.core.clock).await?;
            total += n;
            if n < BATCH as usize {
                return Ok(total);
            }
        }
    }

    /// Runs until `cancel` fires: a round every poll interval, or at once when this axd queued a
    /// delivery (`axctl alert test`).
    pub async fn run(self, cancel: CancellationToken) {
        let wake = self.core.signals.alerts.clone();
        loop {
            if let Err(e) = self.run_round().await {
                tracing::warn!(error = %e, "alert round failed");
            }
            tokio::select! {
                () = cancel.cancelled() => return,
                () = wake.notified() => {}
                () = tokio::time::sleep(self.core.sessions.poll_interval) => {}
            }
        }
    }
}
