//! Choosing a stream of this axd for a ready instance: which streams may take it (its app and
//! handler, a free credit, its selector, its pinned worker, cooldowns, its retry target, its hash
//! owner), and in what order to try them (the task's strategy, or a child's shard index).
//!
//! Every decision is explained: a choice carries a note for the DISPATCHED event when a worker was
//! passed over, and a refusal says why the instance waits.

use std::{collections::HashMap, sync::Arc};

use super::registry::{ReadyInstance, Session, SessionRef};
use crate::{
    model::{RetryOn, Routing, Ts, WorkerRecord, add},
    routing::{RETRY_ELSEWHERE_WAIT, RoutingState, hash, selector::Selector, state::CoolingNow},
};

/// What routing needs besides the streams: the time, cooldowns, the cluster's workers, and parsed
/// selectors (cached for the round).
pub struct RouteCtx<'a> {
    /// Database time of the claim.
    pub now: Ts,
    /// Cooldowns as this axd knows them.
    pub routing: &'a RoutingState,
    /// Every live worker session of the cluster (for hash owners, and "is W the only worker?").
    pub cluster: &'a [WorkerRecord],
    /// Parsed selectors by text; `None` for one that does not parse (it matches nothing).
    pub selectors: &'a mut HashMap<String, Option<Selector>>,
}

impl RouteCtx<'_> {
    fn selector(&mut self, text: &str) -> Option<&Selector> {
        self.selectors.entry(text.to_owned()).or_insert_with(|| Selector::parse(text).ok()).as_ref()
    }
}

/// A stream chosen for an instance, and what the DISPATCHED event should add to explain it.
pub struct Routed {
    pub session: Arc<Session>,
    pub r: SessionRef,
    /// Workers passed over and why, or where a retry went; empty when nothing needs saying.
    pub note: String,
}

/// Whether `worker` (of the instance's app) may run it at all, cooldowns aside.
fn eligible(
    labels: &std::collections::BTreeMap<String, String>,
    worker: &str,
    ready: &ReadyInstance,
    sel: Option<&Selector>,
) -> bool {
    ready.target_worker.as_deref().is_none_or(|t| t == worker) && sel.is_none_or(|s| s.matches(labels))
}

/// The streams that may take `ready`, with their free credits.
type Candidates = Vec<(Arc<Session>, u32)>;

/// Chooses a stream among `sessions` (this axd's) for `ready` and reserves its credit for `attempt`;
/// `Err` says why the instance waits.
pub fn route(
    sessions: Vec<Arc<Session>>,
    ready: &ReadyInstance,
    attempt: u32,
    ctx: &mut RouteCtx<'_>,
    round_robin: &std::sync::atomic::AtomicU64,
) -> Result<Routed, String> {
    let sel: Option<Selector> = if ready.selector.is_empty() {
        None
    } else {
        match ctx.selector(&ready.selector) {
            Some(s) => Some(s.clone()),
            None => return Err(format!("its selector {:?} cannot be read", ready.selector)),
        }
    };
    let mut candidates = with_credit(sessions, ready, sel.as_ref())?;
    let mut passed: Vec<String> = Vec::new();
    let mut floor = String::new();
    if ctx.routing.any_cooling(ctx.now) {
        floor = skip_cooling(&mut candidates, ctx, ready, &mut passed)?;
    }
    if ready.routing == Routing::Hash {
        keep_hash_owner(&mut candidates, ctx, ready, sel.as_ref())?;
        passed.clear();
        passed.push(format!("hash key {:?} belongs to it", ready.hash_key.clone().unwrap_or_default()));
    }
    let note = if passed.is_empty() { String::new() } else { format!("passed over {}", passed.join(", ")) };
    let note = if floor.is_empty() { note } else { join(&note, &floor) };
    let note = match &ready.failed_on {
        Some(w) => retry_target(&mut candidates, ctx, ready, sel.as_ref(), w, note)?,
        None => note,
    };
    // A stable order makes round robin and shard spreading meaningful across calls.
    candidates.sort_by(|a, b| a.0.worker_id.cmp(&b.0.worker_id).then_with(|| a.0.id.cmp(&b.0.id)));
    for i in order(&candidates, ready, round_robin) {
        let s = &candidates[i].0;
        if s.reserve((ready.id, attempt)) {
            let r = SessionRef { session_id: s.id.clone(), worker_id: s.worker_id.clone() };
            return Ok(Routed { session: s.clone(), r, note });
        }
    }
    Err("the streams that could take it used their last credits in this round".to_owned())
}

/// The streams of the instance's app serving its handler with a free credit (early ones only for
/// an instance due ahead of time) that it may run on (selector, pinned worker).
fn with_credit(
    sessions: Vec<Arc<Session>>,
    ready: &ReadyInstance,
    sel: Option<&Selector>,
) -> Result<Candidates, String> {
    let mut candidates: Candidates = sessions
        .into_iter()
        .filter(|s| s.app == ready.app && s.handlers.contains(&ready.handler) && (s.early || !ready.early))
        .map(|s| {
            let c = s.credits();
            (s, c)
        })
        .filter(|(_, c)| *c > 0)
        .collect();
    if candidates.is_empty() {
        return Err("no stream here serving the handler has a free credit".to_owned());
    }
    candidates.retain(|(s, _)| eligible(&s.labels, &s.worker_id, ready, sel));
    if candidates.is_empty() {
        return Err(match (&ready.target_worker, sel) {
            (Some(w), _) => format!("its worker {w} has no stream with a free credit here"),
            (None, Some(_)) => format!("no stream here matches selector {}", ready.selector),
            (None, None) => "no stream here can take it".to_owned(),
        });
    }
    Ok(candidates)
}

/// Leaves out the workers cooling down for the handler, each named once in `passed`; returns what
/// the trail says of cooldowns the floor did not apply (empty if none).
fn skip_cooling(
    candidates: &mut Candidates,
    ctx: &RouteCtx<'_>,
    ready: &ReadyInstance,
    passed: &mut Vec<String>,
) -> Result<String, String> {
    let now = ctx.now;
    let mut floor = String::new();
    candidates.retain(|(s, _)| match ctx.routing.cooling(&s.app, &s.worker_id, &ready.handler, now) {
        CoolingNow::Released { until, cooling, serving } => {
            if floor.is_empty() {
                floor = super::cooldown::floor_note(
                    &ready.handler,
                    &s.worker_id,
                    until,
                    cooling,
                    serving,
                    ctx.routing.cooldown.max_share,
                );
            }
            true
        }
        CoolingNow::No => true,
        CoolingNow::Until(until) => {
            let what = format!(
                "{} (cooling down for handler {} until {})",
                s.worker_id,
                ready.handler,
                until.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            );
            if !passed.contains(&what) {
                passed.push(what);
            }
            false
        }
    });
    if candidates.is_empty() {
        return Err(format!("every stream here that could take it is cooling down: {}", passed.join(", ")));
    }
    Ok(floor)
}

/// Keeps only the streams of the worker that owns the instance's hash key among every eligible,
/// not cooling worker of the cluster.
fn keep_hash_owner(
    candidates: &mut Candidates,
    ctx: &RouteCtx<'_>,
    ready: &ReadyInstance,
    sel: Option<&Selector>,
) -> Result<(), String> {
    let key = ready.hash_key.clone().unwrap_or_default();
    let mut workers: Vec<&str> = ctx
        .cluster
        .iter()
        .filter(|w| {
            w.app == ready.app
                && w.handlers.contains(&ready.handler)
                && eligible(&w.labels, &w.worker_id, ready, sel)
                && ctx.routing.cooling_until(&w.app, &w.worker_id, &ready.handler, ctx.now).is_none()
        })
        .map(|w| w.worker_id.as_str())
        .collect();
    // This axd's streams count even before the cluster view has them.
    workers.extend(candidates.iter().map(|(s, _)| s.worker_id.as_str()));
    workers.sort_unstable();
    workers.dedup();
    let Some(owner) = hash::owner(&key, workers.iter().copied()).map(str::to_owned) else {
        return Err("no worker can take it".to_owned());
    };
    candidates.retain(|(s, _)| s.worker_id == owner);
    if candidates.is_empty() {
        return Err(format!("key {key:?} belongs to worker {owner}, whose stream is not here or has no credit"));
    }
    Ok(())
}

/// Applies the task's retry-on rule to a retry whose last attempt failed on worker `w`, and
/// returns the note extended with where the retry goes.
fn retry_target(
    candidates: &mut Candidates,
    ctx: &RouteCtx<'_>,
    ready: &ReadyInstance,
    sel: Option<&Selector>,
    w: &str,
    note: String,
) -> Result<String, String> {
    match ready.retry_on {
        RetryOn::Any => Ok(note),
        RetryOn::Same => {
            candidates.retain(|(s, _)| s.worker_id == w);
            if candidates.is_empty() {
                return Err(format!("its retry waits for worker {w} (retry-on same)"));
            }
            Ok(format!("retry on the same worker {w} (retry-on same)"))
        }
        RetryOn::Other => {
            let others: Candidates = candidates.iter().filter(|(s, _)| s.worker_id != w).cloned().collect();
            if !others.is_empty() {
                *candidates = others;
                return Ok(join(&note, &format!("retry on another worker than {w}, where the last attempt failed")));
            }
            let only = !ctx.cluster.iter().any(|o| {
                o.app == ready.app
                    && o.worker_id != w
                    && o.handlers.contains(&ready.handler)
                    && eligible(&o.labels, &o.worker_id, ready, sel)
            });
            let waited = add(ready.available_at, RETRY_ELSEWHERE_WAIT) <= ctx.now;
            if !only && !waited {
                return Err(format!("its retry waits for a worker other than {w} (retry-on other)"));
            }
            Ok(join(
                &note,
                &if only {
                    format!("retry back on {w}: it is the only worker serving {}", ready.handler)
                } else {
                    format!(
                        "retry back on {w}: no other worker took it within {}",
                        crate::schedule::fmt_duration(RETRY_ELSEWHERE_WAIT)
                    )
                },
            ))
        }
    }
}

/// The order in which to try the candidates: a shard child from its shard index, else the task's
/// strategy (round robin, random, least loaded first).
fn order(candidates: &Candidates, ready: &ReadyInstance, round_robin: &std::sync::atomic::AtomicU64) -> Vec<usize> {
    let n = candidates.len();
    match (ready.shard, ready.routing) {
        (Some((index, _)), _) if ready.target_worker.is_none() => {
            let start = usize::try_from(index).unwrap_or(0) % n;
            (0..n).map(|i| (start + i) % n).collect()
        }
        (_, Routing::RoundRobin) => {
            let start = (round_robin.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % n as u64) as usize;
            (0..n).map(|i| (start + i) % n).collect()
        }
        (_, Routing::Random) => {
            let mut idx: Vec<usize> = (0..n).collect();
            fastrand::shuffle(&mut idx);
            idx
        }
        (_, Routing::LeastLoaded | Routing::Broadcast | Routing::Hash) => {
            let mut idx: Vec<usize> = (0..n).collect();
            idx.sort_by(|&a, &b| candidates[b].1.cmp(&candidates[a].1));
            idx
        }
    }
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() { b.to_owned() } else { format!("{a}; {b}") }
}

#[cfg(test)]
mod tests;
