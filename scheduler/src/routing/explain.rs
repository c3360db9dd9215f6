//! The routing and limit side of an explanation: which selector found no worker, which workers are
//! cooling down, a task at its running limit, an app without rate-limit tokens, and fires
//! coalesced past max-pending. Pure functions of the records in [`Inputs`].

use crate::{
    explain::findings::{Finding, FindingKind, Inputs, rfc},
    model::{Instance, SessionSpan, TaskEventKind, Ts, WorkerRecord, WorkerStreak},
    routing::{
        bucket::Bucket,
        cooldown::{Floor, floor_note, floor_of},
        selector::Selector,
    },
};

fn labels_text(w: &std::collections::BTreeMap<String, String>) -> String {
    w.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

fn cooling<'a>(inputs: &'a Inputs<'_>, worker: &str, handler: &str, now: Ts) -> Option<&'a WorkerStreak> {
    inputs
        .limits
        .streaks
        .iter()
        .find(|s| s.worker_id == worker && s.handler == handler && s.cooldown_until.is_some_and(|u| u > now))
        .filter(|_| !floor(inputs, handler, now).released.iter().any(|w| w == worker))
}

/// The cooling workers of `handler` the floor releases at `now` (see
/// [`crate::routing::cooldown::released`]), from the app's live sessions and their streaks; with the
/// number cooling and the number serving.
fn floor(inputs: &Inputs<'_>, handler: &str, now: Ts) -> Floor {
    floor_of(inputs.limits.streaks, inputs.live, handler, now, inputs.limits.cooldown_max_share)
}

/// Findings that stand whatever the instances: cooldowns of workers serving the handler, an empty
/// rate-limit bucket, and fires coalesced past max-pending.
pub fn standing(inputs: &Inputs<'_>, out: &mut Vec<Finding>) {
    let task = inputs.task;
    let handler = &task.config.handler;
    let Floor { released: freed, cooling, serving } = floor(inputs, handler, inputs.now);
    for s in inputs.limits.streaks.iter().filter(|s| &s.handler == handler) {
        if let Some(until) = s.cooldown_until.filter(|u| *u > inputs.now) {
            let began = s.cooldown.map(|d| crate::model::sub(until, d));
            if freed.contains(&s.worker_id) {
                let share = inputs.limits.cooldown_max_share;
                out.push(Finding {
                    kind: FindingKind::Cooldown,
                    at: began,
                    message: format!(
                        "{}; its assignments of the handler continue",
                        floor_note(handler, &s.worker_id, until, cooling, serving, share)
                    ),
                    instance_id: 0,
                    fires: None,
                });
                continue;
            }
            out.push(Finding {
                kind: FindingKind::Cooldown,
                at: began,
                message: format!(
                    "worker {} cools down for handler {handler} until {} after {} consecutive failure(s): its new \
                     assignments of the handler go to other workers or wait",
                    s.worker_id,
                    rfc(until),
                    s.failures
                ),
                instance_id: 0,
                fires: None,
            });
        }
    }
    if let Some(l) = inputs.limits.app_limit {
        let mut b = Bucket { per_second: l.per_second, burst: l.burst, tokens: l.tokens, refilled_at: l.refilled_at };
        b.refill(inputs.now);
        if b.available() == 0 {
            out.push(Finding {
                kind: FindingKind::RateLimited,
                at: None,
                message: format!(
                    "app {} is rate-limited to {} start(s)/s (burst {}) and has no token now; the next comes at {}",
                    l.app,
                    l.per_second,
                    l.burst,
                    rfc(b.next_token_at())
                ),
                instance_id: 0,
                fires: None,
            });
        }
    }
    if let Some((since, count)) = task.coalesced {
        out.push(Finding {
            kind: FindingKind::Coalesced,
            at: Some(since),
            message: format!(
                "since {}, {count} scheduled fire(s) were not created: {} instances were PENDING (max-pending)",
                rfc(since),
                task.config.placement.max_pending
            ),
            instance_id: 0,
            fires: None,
        });
    }
    for e in inputs.events.iter().filter(|e| e.kind == TaskEventKind::Coalesced) {
        out.push(Finding {
            kind: FindingKind::Coalesced,
            at: Some(e.at),
            message: e.message.clone(),
            instance_id: 0,
            fires: None,
        });
    }
}

/// Why a due PENDING instance waits, when routing or a limit holds it: its pinned worker is gone,
/// no connected worker matches its selector, every one that does cools down, its task is at its
/// running limit, or its app has no rate-limit token. `None` when none of these applies.
pub fn waiting(inputs: &Inputs<'_>, inst: &Instance) -> Option<(FindingKind, String)> {
    let live: Vec<&WorkerRecord> = inputs.live.iter().filter(|w| w.handlers.contains(&inst.handler)).collect();
    if live.is_empty() {
        return None;
    }
    let mut fit: Vec<&WorkerRecord> = live.clone();
    if let Some(t) = &inst.route.target_worker {
        fit.retain(|w| &w.worker_id == t);
        if fit.is_empty() {
            return Some((
                FindingKind::NoWorker,
                format!("it is a broadcast child for worker {t}, which is not connected"),
            ));
        }
    }
    if !inst.route.selector.is_empty() {
        let sel = Selector::parse(&inst.route.selector).ok();
        fit.retain(|w| sel.as_ref().is_some_and(|s| s.matches(&w.labels)));
        if fit.is_empty() {
            let seen: Vec<String> =
                live.iter().take(5).map(|w| format!("{}{{{}}}", w.worker_id, labels_text(&w.labels))).collect();
            return Some((
                FindingKind::SelectorUnmatched,
                format!(
                    "no connected worker matches selector {} (workers serving {}: {})",
                    inst.route.selector,
                    inst.handler,
                    seen.join(" ")
                ),
            ));
        }
    }
    let cold: Vec<String> = fit
        .iter()
        .filter_map(|w| {
            cooling(inputs, &w.worker_id, &inst.handler, inputs.now)
                .map(|s| format!("{} until {}", w.worker_id, s.cooldown_until.map(rfc).unwrap_or_default()))
        })
        .collect();
    if cold.len() == fit.len() {
        let mut cold = cold;
        cold.dedup();
        return Some((
            FindingKind::Cooldown,
            format!("every worker that could run it cools down for handler {}: {}", inst.handler, cold.join(", ")),
        ));
    }
    if let Some(max) = inputs.task.config.placement.max_running.filter(|m| inputs.limits.active >= m.get()) {
        return Some((
            FindingKind::MaxRunning,
            format!("its task is at max-running {max}: {} instance(s) are dispatched or running", inputs.limits.active),
        ));
    }
    if let (Some(path), Some(max), Some(value)) = (
        &inputs.task.config.placement.concurrency_key,
        inputs.task.config.placement.concurrency_limit,
        &inst.route.concurrency_value,
    ) {
        let n = inputs.limits.active_by_key.iter().find(|(v, _)| v == value).map_or(0, |(_, n)| *n);
        if n >= max.get() {
            return Some((
                FindingKind::ConcurrencyKey,
                format!(
                    "its concurrency key {path} = {} is at its limit {max}: {n} instance(s) with that value are \
                     dispatched or running",
                    crate::validate::quote(value)
                ),
            ));
        }
    }
    if let Some(l) = inputs.limits.app_limit {
        let mut b = Bucket { per_second: l.per_second, burst: l.burst, tokens: l.tokens, refilled_at: l.refilled_at };
        b.refill(inputs.now);
        if b.available() == 0 {
            return Some((
                FindingKind::RateLimited,
                format!("app {} is rate-limited to {}/s (burst {}) and has no token now", l.app, l.per_second, l.burst),
            ));
        }
    }
    None
}

/// Why an instance due at `due` waited, when the session history shows workers serving its handler
/// were connected but none matched its selector (or its pinned worker was not among them).
pub fn waited(sessions: &[SessionSpan], inst: &Instance, due: Ts) -> Option<(FindingKind, String)> {
    let open: Vec<&SessionSpan> = sessions.iter().filter(|s| s.serves_at(&inst.handler, due)).collect();
    if open.is_empty() {
        return None;
    }
    if let Some(t) = &inst.route.target_worker
        && !open.iter().any(|s| &s.worker_id == t)
    {
        return Some((
            FindingKind::NoWorker,
            format!("its worker {t} (a broadcast child) was not connected when it was due"),
        ));
    }
    if inst.route.selector.is_empty() {
        return None;
    }
    let sel = Selector::parse(&inst.route.selector).ok();
    if open.iter().any(|s| sel.as_ref().is_some_and(|sel| sel.matches(&s.labels))) {
        return None;
    }
    let seen: Vec<String> =
        open.iter().take(5).map(|s| format!("{}{{{}}}", s.worker_id, labels_text(&s.labels))).collect();
    Some((
        FindingKind::SelectorUnmatched,
        format!(
            "no connected worker matched selector {} when it was due (workers serving {}: {})",
            inst.route.selector,
            inst.handler,
            seen.join(" ")
        ),
    ))
}
