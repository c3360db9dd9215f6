//! Writing the outbox: the deliveries that causes and conditions become, inside the caller's
//! transaction.
//!
//! [`enqueue`] is called by the code that writes a state change (the lifecycle's `persist`, the
//! trigger), in its transaction, so a delivery exists exactly when the change committed.
//! [`evaluate_conditions`] runs periodically on every axd: per condition rule it locks the rule's
//! state row, and when the condition has held long enough in a new episode, bumps the episode
//! number and writes one delivery keyed by it. An episode ends when an evaluation finds the
//! condition no longer holds (a worker of the app is connected again; the backlog is at or below
//! N); the next time it holds is a new episode.

use chrono::Duration as ChronoDuration;

use super::{AlertCause, AlertEvent, AlertRule, NewDelivery, delivery_for};
use crate::{
    error::StoreResult,
    model::{Ts, to_micros},
    store::{ConditionState, Store, Tx},
};

/// Writes the deliveries of every rule that matches one of `causes` (none if nothing matches);
/// how many.
pub async fn enqueue(tx: &mut Tx, causes: &[AlertCause], now: Ts) -> StoreResult<u64> {
    if causes.is_empty() {
        return Ok(0);
    }
    let mut apps: Vec<String> = causes.iter().map(|c| c.app.clone()).collect();
    apps.sort_unstable();
    apps.dedup();
    let rules = tx.alerts().list_alert_rules(Some(&apps)).await?;
    let rows: Vec<NewDelivery> = causes
        .iter()
        .flat_map(|c| {
            rules.iter().filter(|r| r.matches(c.event, &c.app, &c.task_name)).map(move |r| delivery_for(r, c))
        })
        .collect();
    if rows.is_empty() {
        return Ok(0);
    }
    tx.alerts().insert_deliveries(&rows, now).await
}

/// Writes a `test` delivery for `rule`, due at once; its id.
pub async fn enqueue_test(tx: &mut Tx, rule: &AlertRule, actor: &str, now: Ts) -> StoreResult<Option<i64>> {
    let cause = AlertCause {
        event: AlertEvent::Test,
        app: rule.app.clone(),
        task_name: rule.task_name.clone().unwrap_or_default(),
        instance_id: None,
        attempt: 0,
        at: now,
        message: format!("test delivery requested by {actor}"),
        occurrence: format!("{}-{:08x}", to_micros(now), fastrand::u32(..)),
    };
    let row = delivery_for(rule, &cause);
    let key = row.dedupe_key.clone();
    tx.alerts().insert_deliveries(&[row], now).await?;
    let found = tx
        .alerts()
        .list_deliveries(&crate::store::DeliveryFilter {
            rule_name: Some(rule.name.clone()),
            limit: 20,
            ..Default::default()
        })
        .await?;
    Ok(found.into_iter().find(|d| d.dedupe_key == key).map(|d| d.id))
}

/// What one evaluation of a condition rule found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConditionOutcome {
    /// The condition does not hold (an episode that was going on ended).
    Clear,
    /// It holds, but not for long enough yet, or this episode alerted already.
    Holding,
    /// A new episode: this delivery was written (unless another axd wrote it first).
    Alerted { episode: i64 },
}

/// The next state of a condition and whether a new episode alerts now: pure, so the episode rules
/// are tested without a database.
pub fn step(state: ConditionState, holds: bool, hold_for: std::time::Duration, now: Ts) -> (ConditionState, bool) {
    if !holds {
        return (ConditionState { since: None, firing: false, episode: state.episode }, false);
    }
    let since = state.since.unwrap_or(now);
    let long_enough = now - since >= ChronoDuration::from_std(hold_for).unwrap_or(ChronoDuration::MAX);
    if !state.firing && long_enough {
        return (ConditionState { since: Some(since), firing: true, episode: state.episode + 1 }, true);
    }
    (ConditionState { since: Some(since), ..state }, false)
}

/// Evaluates one condition rule in its own transaction (see the module doc).
/// Workers count if their axd heartbeated at or after `alive_since`.
/// `max_share` is `--cooldown-max-share` (for `handler_failing`).
pub async fn evaluate(
    store: &Store,
    rule: &AlertRule,
    now: Ts,
    alive_since: Ts,
    max_share: u8,
) -> StoreResult<ConditionOutcome> {
    let Some(condition) = rule.events.iter().copied().find(|e| e.is_condition()) else {
        return Ok(ConditionOutcome::Clear);
    };
    let mut tx = store.begin().await?;
    let state = tx.alerts().lock_condition(rule.id).await?;
    let (holds, hold_for, what) = match condition {
        AlertEvent::NoWorker => {
            let n = tx.cluster().count_workers(&rule.app, alive_since).await?;
            let t = rule.no_worker_for.unwrap_or_default();
            (n == 0, t, format!("no worker of app {} connected", rule.app))
        }
        AlertEvent::HandlerFailing => {
            let failing = failing_handlers(&mut tx, rule, now, alive_since, max_share).await?;
            let what = failing
                .iter()
                .map(|(h, cooling, serving)| format!("handler {h}: {cooling} of {serving} live workers failing it"))
                .collect::<Vec<_>>()
                .join("; ");
            let what = format!(
                "app {}: {what} (more than {max_share} % would cool down at once: cooldowns not applied)",
                rule.app
            );
            (!failing.is_empty(), std::time::Duration::ZERO, what)
        }
        _ => {
            let n = tx.instances().count_pending(&rule.app, rule.task_name.as_deref()).await?;
            let over = rule.backlog_over.unwrap_or(u64::MAX);
            let of = rule.task_name.as_deref().map_or_else(|| format!("app {}", rule.app), |t| format!("task {t}"));
            (n > over, std::time::Duration::ZERO, format!("{n} instances of {of} PENDING, more than {over}"))
        }
    };
    let (next, alert) = step(state, holds, hold_for, now);
    if next != state {
        tx.alerts().write_condition(rule.id, next).await?;
    }
    let outcome = if alert {
        let since = next.since.unwrap_or(now).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let cause = AlertCause {
            event: condition,
            app: rule.app.clone(),
            task_name: rule.task_name.clone().unwrap_or_default(),
            instance_id: None,
            attempt: 0,
            at: now,
            message: format!("{what} (since {since})"),
            occurrence: format!("episode{}", next.episode),
        };
        tx.alerts().insert_deliveries(&[delivery_for(rule, &cause)], now).await?;
        ConditionOutcome::Alerted { episode: next.episode }
    } else if holds {
        ConditionOutcome::Holding
    } else {
        ConditionOutcome::Clear
    };
    tx.commit().await?;
    Ok(outcome)
}

/// The handlers of the rule's app (its task's only, if it names one) that more of the app's live
/// workers are failing than `max_share` lets cool down at once (the floor of
/// [`crate::routing::cooldown::released`]), with how many cool and how many serve.
async fn failing_handlers(
    tx: &mut crate::store::Tx,
    rule: &AlertRule,
    now: Ts,
    alive_since: Ts,
    max_share: u8,
) -> StoreResult<Vec<(String, usize, usize)>> {
    let apps = [rule.app.clone()];
    let streaks = tx.limits().list_streaks(Some(&apps)).await?;
    let live = tx.cluster().live_workers(Some(&rule.app), alive_since).await?;
    let only = match &rule.task_name {
        Some(t) => tx.tasks().get_task(t).await?.map(|t| t.config.handler),
        None => None,
    };
    let mut handlers: Vec<&str> = streaks.iter().map(|s| s.handler.as_str()).collect();
    handlers.sort_unstable();
    handlers.dedup();
    let mut out = Vec::new();
    for h in handlers.into_iter().filter(|h| only.as_deref().is_none_or(|o| o == *h)) {
        let f = crate::routing::cooldown::floor_of(&streaks, &live, h, now, max_share);
        if !f.released.is_empty() {
            out.push((h.to_owned(), f.cooling, f.serving));
        }
    }
    Ok(out)
}

/// Evaluates every condition rule; how many alerted.
pub async fn evaluate_conditions(store: &Store, now: Ts, alive_since: Ts, max_share: u8) -> StoreResult<usize> {
    let rules = store.list_alert_rules(None).await?;
    let mut alerted = 0;
    for r in rules.iter().filter(|r| r.events.iter().any(|e| e.is_condition())) {
        if matches!(evaluate(store, r, now, alive_since, max_share).await?, ConditionOutcome::Alerted { .. }) {
            alerted += 1;
        }
    }
    Ok(alerted)
}
