//! `axctl task explain`: why a task did, or did not, run. A pure function of what ax records — the
//! task and its events, its recent instances with their trails, the history of worker sessions of
//! its app and the live sessions — so that every answer can be tested without a database.
//!
//! What it can tell apart: disabled (and by whom), a broken schedule, a manual schedule, no more
//! fires, missed fires skipped or caught up, fires skipped by the overlap policy, fire times with no
//! instance (and why, when ax knows), instances that waited because no worker of the app serving
//! the handler was connected or because those connected were at capacity, failed attempts (worker,
//! duration, reason), instances that ended failed or canceled, and fires that missed the task's
//! deadline (`deadline`).

pub mod deadline;
pub mod findings;
mod schedules;
mod trail;

use std::time::Duration;

use findings::rfc;
pub use findings::{Finding, FindingKind, Inputs, Limits};
pub use trail::{Attempt, attempts};

use crate::{
    model::{
        Instance, InstanceEvent, InstanceSource, InstanceStatus, SessionSpan, Task, TaskEvent, TaskEventKind, Ts,
        WorkerRecord, add, sub,
    },
    schedule::{Compiled, PreviewFire, fire_key, fmt_duration, preview},
};

/// A first dispatch this long after the instance was due counts as "waited".
pub const WAIT_THRESHOLD: Duration = Duration::from_secs(1);
/// Fire times this close to now are not reported as missing (the trigger loop may not have run yet).
const SETTLE: Duration = Duration::from_secs(2);
/// At most this many fire times are enumerated when looking for fires without an instance.
const FIRE_SCAN_CAP: usize = 10_000;

/// One recent instance and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExplainedFire {
    pub instance: Instance,
    /// Due → first dispatch (negative when dispatched ahead); `None` if never dispatched.
    pub dispatch_delay: Option<chrono::Duration>,
    /// What it waited for, when it waited over [`WAIT_THRESHOLD`] or is still waiting.
    pub waited_for: String,
    pub attempts: Vec<Attempt>,
}

/// The live sessions that could run the task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkersNow {
    /// Live sessions of the app.
    pub sessions: u32,
    /// Of those, serving the handler.
    pub serving: u32,
    /// Their capacity.
    pub capacity: u32,
    /// Their unused credits.
    pub free_credits: u32,
}

/// The whole answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub findings: Vec<Finding>,
    /// The schedule's next fires after `at`.
    pub next_fires: Vec<PreviewFire>,
    /// Recent instances, newest first.
    pub recent: Vec<ExplainedFire>,
    pub workers: WorkersNow,
}

/// The fire times of the task's schedule in the window that recent instances cover, at or before
/// `at`: those after the last configuration change, the task's creation and the oldest of
/// `instances`, or in the last day if there is none; the latest `limit`. Empty for schedules that
/// do not fire by themselves or fire after completion (fixed delay).
pub fn expected_fires(
    task: &Task,
    calendar: &std::collections::BTreeSet<chrono::NaiveDate>,
    events: &[TaskEvent],
    instances: &[(Instance, Vec<InstanceEvent>)],
    at: Ts,
    now: Ts,
    limit: usize,
) -> Vec<Ts> {
    let Ok(compiled) = Compiled::for_task(&task.config, calendar) else { return Vec::new() };
    if matches!(compiled.base(), Compiled::Manual | Compiled::FixedDelay { .. }) {
        return Vec::new();
    }
    let changed = events
        .iter()
        .filter(|e| matches!(e.kind, TaskEventKind::Created | TaskEventKind::Updated))
        .map(|e| e.at)
        .max()
        .unwrap_or(task.created_at);
    let oldest = instances
        .iter()
        .filter(|(i, _)| i.source != InstanceSource::Manual)
        .map(|(i, _)| i.fire_at)
        .min()
        .unwrap_or_else(|| sub(at, Duration::from_secs(86_400)));
    let from = changed.max(task.created_at).max(oldest);
    let until = at.min(sub(now, SETTLE));
    let mut out = Vec::new();
    let mut t = compiled.first_fire(from);
    while let Some(f) = t {
        if f > until || out.len() >= FIRE_SCAN_CAP {
            break;
        }
        out.push(f);
        t = compiled.next_after(f);
    }
    let skip = out.len().saturating_sub(limit);
    out.split_off(skip)
}

/// Explains the task at `inputs.at`.
pub fn explain(inputs: &Inputs<'_>) -> Explanation {
    let task = inputs.task;
    let mut findings = Vec::new();
    state_findings(inputs, &mut findings);
    for e in inputs.events {
        let kind = match e.kind {
            TaskEventKind::MisfireSkipped => FindingKind::MisfireSkipped,
            TaskEventKind::MisfireCatchUp => FindingKind::MisfireCaughtUp,
            _ => continue,
        };
        findings.push(Finding { kind, at: Some(e.at), message: e.message.clone(), instance_id: 0, fires: e.fires });
    }
    schedules::standing(inputs, &mut findings);
    missing_fires(inputs, &mut findings);
    deadline::findings(inputs, &mut findings);
    crate::routing::explain::standing(inputs, &mut findings);
    let workers = workers_now(inputs.live, &task.config.handler);
    let mut recent = Vec::new();
    for (inst, trail) in inputs.instances {
        recent.push(explain_instance(inputs, inst, trail, &workers, &mut findings));
    }
    let problems = findings.iter().any(|f| !matches!(f.kind, FindingKind::Running | FindingKind::Manual));
    if !problems {
        let message = match inputs.instances.len() {
            0 => "no instance at or before this time yet".to_owned(),
            n => format!("the last {n} instance(s) were dispatched on time and did not fail"),
        };
        findings.push(Finding { kind: FindingKind::Ok, at: None, message, instance_id: 0, fires: None });
    }
    Explanation { findings, next_fires: next_fires(inputs), recent, workers }
}

/// Disabled, broken, manual, no more fires.
fn state_findings(inputs: &Inputs<'_>, out: &mut Vec<Finding>) {
    let task = inputs.task;
    let explaining_now = inputs.at >= sub(inputs.now, SETTLE);
    // The latest change of the enabled state at or before `at` (events are newest first).
    let switch = inputs
        .events
        .iter()
        .find(|e| matches!(e.kind, TaskEventKind::Enabled | TaskEventKind::Disabled | TaskEventKind::ScheduleBroken));
    let enabled_then = match switch {
        Some(e) if !explaining_now => e.kind == TaskEventKind::Enabled,
        _ => task.config.enabled,
    };
    if !enabled_then {
        let f = match switch {
            Some(e) if e.kind == TaskEventKind::ScheduleBroken => Finding {
                kind: FindingKind::ScheduleBroken,
                at: Some(e.at),
                message: format!("axd disabled the task at {}: {}", rfc(e.at), e.message),
                instance_id: 0,
                fires: None,
            },
            Some(e) => Finding {
                kind: FindingKind::Disabled,
                at: Some(e.at),
                message: format!(
                    "disabled by {} at {}{}; it does not fire until enabled",
                    e.actor,
                    rfc(e.at),
                    // The RPC records "disabled"; automatic disables say more.
                    if e.message.is_empty() || e.message == "disabled" {
                        String::new()
                    } else {
                        format!(" ({})", e.message)
                    }
                ),
                instance_id: 0,
                fires: None,
            },
            None => Finding {
                kind: FindingKind::Disabled,
                at: None,
                message: "disabled since it was created; it does not fire until enabled".to_owned(),
                instance_id: 0,
                fires: None,
            },
        };
        out.push(f);
    }
    match Compiled::for_task(&task.config, inputs.calendar) {
        Ok(c) if matches!(c.base(), Compiled::Manual) => out.push(Finding {
            kind: FindingKind::Manual,
            at: None,
            message: "the schedule is manual: it runs only when triggered".to_owned(),
            instance_id: 0,
            fires: None,
        }),
        Ok(c) if matches!(c.base(), Compiled::FixedDelay { .. }) => {}
        Ok(c) => {
            if enabled_then && c.first_fire(add(inputs.at, Duration::from_micros(1))).is_none() {
                out.push(Finding {
                    kind: FindingKind::NoMoreFires,
                    at: None,
                    message: format!("the schedule ({}) fires no more after {}", c.describe(), rfc(inputs.at)),
                    instance_id: 0,
                    fires: None,
                });
            }
        }
        Err(e) => out.push(Finding {
            kind: FindingKind::ScheduleBroken,
            at: None,
            message: format!("the stored schedule cannot be evaluated: {}: {}", e.field, e.reason),
            instance_id: 0,
            fires: None,
        }),
    }
}

/// Fire times without an instance, and why when ax knows.
fn missing_fires(inputs: &Inputs<'_>, out: &mut Vec<Finding>) {
    let have: std::collections::HashSet<String> = inputs
        .instances
        .iter()
        .map(|(i, _)| i.idempotency_key.clone())
        .chain(inputs.fired.iter().map(|t| fire_key(*t)))
        .collect();
    let expected = expected_fires(
        inputs.task,
        inputs.calendar,
        inputs.events,
        inputs.instances,
        inputs.at,
        inputs.now,
        inputs.limit,
    );
    // Newest first, like the rest of the findings.
    for f in expected.into_iter().rev() {
        if have.contains(&fire_key(f)) {
            continue;
        }
        // Events are newest first: the latest enable/disable before f, and the misfire decision
        // whose skipped fires hold f (or, for an event recorded without its fires, the first
        // misfire decision after f).
        let switch = inputs
            .events
            .iter()
            .find(|e| e.at <= f && matches!(e.kind, TaskEventKind::Enabled | TaskEventKind::Disabled));
        let misfires = || {
            inputs
                .events
                .iter()
                .rev()
                .filter(|e| matches!(e.kind, TaskEventKind::MisfireSkipped | TaskEventKind::MisfireCatchUp))
        };
        let misfire = misfires()
            .find(|e| e.kind == TaskEventKind::MisfireSkipped && e.fires.is_some_and(|s| s.first <= f && f <= s.last))
            .or_else(|| misfires().find(|e| e.at >= f && e.fires.is_none()));
        // Coalesced: during the current run of coalesced fires, or one that an event records.
        let coalesced = inputs.task.coalesced.is_some_and(|(since, _)| since <= f)
            || inputs
                .events
                .iter()
                .any(|e| e.kind == TaskEventKind::Coalesced && e.at >= f && e.message.contains("from"));
        // Paused then: the latest pause or resume before f was a pause (or the pause holds now).
        let paused = inputs
            .events
            .iter()
            .find(|e| e.at <= f && matches!(e.kind, TaskEventKind::Paused | TaskEventKind::Resumed))
            .filter(|e| e.kind == TaskEventKind::Paused)
            .map(|e| (e.actor.clone(), e.at, e.message.clone()))
            .or_else(|| inputs.task.pause.as_ref().filter(|p| p.at <= f).map(|p| (p.by.clone(), p.at, p.note.clone())));
        let why = match (switch, misfire) {
            (Some(e), _) if e.kind == TaskEventKind::Disabled => {
                format!("the task was disabled then (by {} at {})", e.actor, rfc(e.at))
            }
            _ if paused.is_some() => {
                let (by, at, note) = paused.unwrap_or_default();
                format!("the task was paused then (by {by} at {}: {note}); fires in a pause are not run", rfc(at))
            }
            _ if coalesced => format!(
                "coalesced: {} instances of the task were PENDING (max-pending), see its COALESCED events",
                inputs.task.config.placement.max_pending
            ),
            (_, Some(m)) => format!("missed: {} (at {})", m.message, rfc(m.at)),
            _ => "nothing is recorded for it: no axd fired it (none running, or the database unreachable) \
                  and no misfire decision names it, or its instance was purged by retention"
                .to_owned(),
        };
        out.push(Finding {
            kind: FindingKind::NoInstance,
            at: Some(f),
            message: format!("the fire at {} has no instance: {why}", rfc(f)),
            instance_id: 0,
            fires: None,
        });
    }
}

fn workers_now(live: &[WorkerRecord], handler: &str) -> WorkersNow {
    let mut w = WorkersNow { sessions: live.len() as u32, ..WorkersNow::default() };
    for s in live.iter().filter(|s| s.handlers.iter().any(|h| h == handler)) {
        w.serving += 1;
        w.capacity = w.capacity.saturating_add(s.capacity);
        w.free_credits = w.free_credits.saturating_add(s.credits);
    }
    w
}

/// One instance: its attempts, its wait, and the findings about it.
fn explain_instance(
    inputs: &Inputs<'_>,
    inst: &Instance,
    trail: &[InstanceEvent],
    now_workers: &WorkersNow,
    out: &mut Vec<Finding>,
) -> ExplainedFire {
    let attempts = attempts(trail);
    let created = trail.first().map_or(inst.created_at, |e| e.at);
    let due = inst.fire_at.max(created);
    let first_dispatch = attempts.first().map(|a| a.dispatched_at);
    let dispatch_delay = first_dispatch.map(|d| d - due);
    let id = inst.id;
    let app = &inst.app;
    let handler = &inst.handler;
    let mut waited_for = String::new();
    match first_dispatch {
        Some(d) if d - due > chrono::Duration::from_std(WAIT_THRESHOLD).unwrap_or_default() => {
            let (kind, why) = crate::routing::explain::waited(inputs.sessions, inst, due)
                .unwrap_or_else(|| waited_in_history(inputs.sessions, app, handler, due, d));
            out.push(Finding {
                kind,
                at: Some(due),
                message: format!("instance {id} waited {} before its first dispatch: {why}", took(d - due)),
                instance_id: id,
                fires: None,
            });
            waited_for = why;
        }
        None if inst.status == InstanceStatus::Pending && inst.available_at <= inputs.now => {
            let since = inst.available_at;
            let (kind, why) = crate::routing::explain::waiting(inputs, inst)
                .unwrap_or_else(|| waiting_now(inputs.live, now_workers, app, handler));
            if inputs.now - since > chrono::Duration::from_std(WAIT_THRESHOLD).unwrap_or_default() {
                out.push(Finding {
                    kind,
                    at: Some(since),
                    message: format!("instance {id} is due since {} and waits: {why}", rfc(since)),
                    instance_id: id,
                    fires: None,
                });
                waited_for = why;
            }
        }
        _ => {}
    }
    for a in &attempts {
        if matches!(a.outcome, Some(InstanceStatus::Failed | InstanceStatus::Timeout)) {
            let ran = match (a.started_at, a.ended_at) {
                (Some(s), Some(e)) => format!(" after {}", took(e - s)),
                _ => String::new(),
            };
            out.push(Finding {
                kind: FindingKind::AttemptFailed,
                at: a.ended_at,
                message: format!(
                    "instance {id} attempt {} on worker {}{ran}: {}",
                    a.attempt,
                    if a.worker_id.is_empty() { "?" } else { &a.worker_id },
                    a.reason
                ),
                instance_id: id,
                fires: None,
            });
        }
    }
    if let Some(f) = schedules::overlap(inst, trail) {
        let canceled = f.kind == FindingKind::CanceledByFire;
        out.push(f);
        if canceled {
            return ExplainedFire { instance: inst.clone(), dispatch_delay, waited_for, attempts };
        }
    }
    let (kind, message) = match inst.status {
        InstanceStatus::Failed | InstanceStatus::Timeout => (
            Some(FindingKind::Failed),
            format!("instance {id} ended {} after {} attempt(s): {}", inst.status, inst.attempt, inst.message),
        ),
        InstanceStatus::Canceled => (Some(FindingKind::Canceled), format!("instance {id} {}", inst.message)),
        InstanceStatus::Skipped => {
            let why = trail.last().map_or(inst.message.as_str(), |e| e.reason.as_str());
            (Some(FindingKind::SkippedOverlap), format!("the fire at {} was skipped: {why}", rfc(inst.fire_at)))
        }
        InstanceStatus::Dispatched | InstanceStatus::Running => (
            Some(FindingKind::Running),
            format!(
                "instance {id} is {} on worker {} (attempt {})",
                inst.status.as_str().to_lowercase(),
                inst.worker_id.as_deref().unwrap_or("?"),
                inst.attempt
            ),
        ),
        _ => (None, String::new()),
    };
    if let Some(kind) = kind {
        let at = match kind {
            FindingKind::Running => inst.started_at.or(first_dispatch),
            FindingKind::SkippedOverlap => Some(inst.fire_at),
            _ => inst.finished_at,
        };
        out.push(Finding { kind, at, message, instance_id: id, fires: None });
    }
    ExplainedFire { instance: inst.clone(), dispatch_delay, waited_for, attempts }
}

/// Why an instance due at `due` was first dispatched only at `until`, from the session history.
fn waited_in_history(sessions: &[SessionSpan], app: &str, handler: &str, due: Ts, until: Ts) -> (FindingKind, String) {
    let open: Vec<&SessionSpan> = sessions.iter().filter(|s| s.serves_at(handler, due)).collect();
    if open.is_empty() {
        let first = sessions
            .iter()
            .filter(|s| s.handlers.iter().any(|h| h == handler) && s.connected_at > due && s.connected_at <= until)
            .map(|s| (s.connected_at, s.worker_id.as_str()))
            .min();
        let then = match first {
            Some((t, w)) => format!("; worker {w} connected at {}", rfc(t)),
            None => String::new(),
        };
        return (
            FindingKind::NoWorker,
            format!("no worker of app {app} serving handler {handler} was connected when it was due{then}"),
        );
    }
    let capacity: u32 = open.iter().map(|s| s.capacity).sum();
    (
        FindingKind::AtCapacity,
        format!(
            "{} session(s) of app {app} serving handler {handler} (capacity {capacity}) were connected, but none \
             took it: all were at capacity, or their axd was not dispatching",
            open.len()
        ),
    )
}

/// Why a due PENDING instance is still waiting, from the live sessions.
fn waiting_now(live: &[WorkerRecord], w: &WorkersNow, app: &str, handler: &str) -> (FindingKind, String) {
    if w.serving == 0 {
        let others = if live.is_empty() {
            format!("no worker of app {app} is connected")
        } else {
            let mut served: Vec<&str> = live.iter().flat_map(|s| s.handlers.iter().map(String::as_str)).collect();
            served.sort_unstable();
            served.dedup();
            format!("{} session(s) of app {app} are connected but serve only {}", live.len(), served.join(", "))
        };
        return (FindingKind::NoWorker, format!("no live worker serves handler {handler}: {others}"));
    }
    if w.free_credits == 0 {
        return (
            FindingKind::AtCapacity,
            format!(
                "the {} session(s) serving handler {handler} are at capacity (all {} credits in use)",
                w.serving, w.capacity
            ),
        );
    }
    (
        FindingKind::Waiting,
        format!(
            "{} free credit(s) on {} session(s) serving handler {handler}: it is dispatched next",
            w.free_credits, w.serving
        ),
    )
}

fn next_fires(inputs: &Inputs<'_>) -> Vec<PreviewFire> {
    let Ok(c) = Compiled::for_task(&inputs.task.config, inputs.calendar) else { return Vec::new() };
    if matches!(c.base(), Compiled::Manual | Compiled::FixedDelay { .. }) {
        return Vec::new();
    }
    // At "now" the stored next fire (which a catch-up or a change may have moved) comes first.
    let from = match inputs.task.next_fire_at {
        Some(n) if inputs.at >= sub(inputs.now, SETTLE) && n > inputs.at => sub(n, Duration::from_micros(1)),
        _ => add(inputs.at, Duration::from_micros(1)),
    };
    preview(&c, from, inputs.limit).fires
}

/// A signed span for people, to the millisecond.
fn took(d: chrono::Duration) -> String {
    let ms = d.num_milliseconds();
    let text = fmt_duration(Duration::from_millis(ms.unsigned_abs()));
    if ms < 0 { format!("-{text}") } else { text }
}

#[cfg(test)]
mod tests;
