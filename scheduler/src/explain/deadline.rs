//! Deadlines (`TaskSpec.must_finish_within`): which fires had no instance that ended SUCCESS within
//! the deadline, and what their instance was doing instead. A pure function of the task, its
//! schedule and its instances, used by the alert loop (a `deadline_missed` delivery per fire) and by
//! `explain` (a DEADLINE_MISSED finding).
//!
//! The fires owed are the schedule's (after the task's last creation, change or resume, not during
//! its current pause, none while it is disabled) and the fire time of every top-level instance (a
//! trigger's time, a backfill's fire): each must have an instance with that fire time that ended
//! SUCCESS at or before fire + deadline.

use std::{collections::BTreeSet, time::Duration};

use chrono::NaiveDate;

use super::findings::{Finding, FindingKind, Inputs, rfc};
use crate::{
    model::{Instance, InstanceStatus, Task, TaskEvent, TaskEventKind, Ts, add, sub},
    schedule::{Compiled, fmt_duration},
};

/// Most fires of one schedule looked at in one call.
const FIRE_CAP: usize = 10_000;

/// A fire that missed its deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    /// The fire time.
    pub fire: Ts,
    /// fire + must_finish_within.
    pub deadline: Ts,
    /// The fire's instance, if it made one.
    pub instance: Option<i64>,
    /// What happened instead, in words.
    pub what: String,
}

/// Since when the task's schedule owes fires: its creation, last change or last resume (events
/// newest first or in any order).
pub fn owed_since(task: &Task, events: &[TaskEvent]) -> Ts {
    events
        .iter()
        .filter(|e| matches!(e.kind, TaskEventKind::Created | TaskEventKind::Updated | TaskEventKind::Resumed))
        .map(|e| e.at)
        .max()
        .unwrap_or(task.created_at)
        .max(task.created_at)
}

/// The fires of `task` in (`after`, `until`] — fire times, not deadlines — that missed the task's
/// deadline, judged by `instances` (the task's top-level instances with a fire time in that span,
/// as they are now). `since`: from [`owed_since`]. Only fires whose deadline has passed by `now`
/// are judged. Empty without a deadline.
pub fn missed(
    task: &Task,
    calendar: &BTreeSet<NaiveDate>,
    since: Ts,
    instances: &[Instance],
    after: Ts,
    until: Ts,
    now: Ts,
) -> Vec<Miss> {
    let Some(within) = task.config.flow.must_finish_within else { return Vec::new() };
    let until = until.min(sub(now, within));
    if until <= after {
        return Vec::new();
    }
    let mut fires: BTreeSet<Ts> = scheduled(task, calendar, since.max(after), until);
    fires.extend(
        instances
            .iter()
            .filter(|i| i.route.parent_id.is_none() && i.fire_at > after && i.fire_at <= until)
            .map(|i| i.fire_at),
    );
    let mut out = Vec::new();
    for fire in fires {
        let deadline = add(fire, within);
        let mine: Vec<&Instance> =
            instances.iter().filter(|i| i.route.parent_id.is_none() && i.fire_at == fire).collect();
        if mine.iter().any(|i| i.status == InstanceStatus::Success && i.finished_at.is_some_and(|f| f <= deadline)) {
            continue;
        }
        let (instance, what) = match mine.iter().max_by_key(|i| i.id) {
            None => (
                None,
                "it made no instance (axd was not running, a misfire decision skipped it, or it was coalesced)"
                    .to_owned(),
            ),
            Some(i) => (Some(i.id), doing(i, deadline, within)),
        };
        out.push(Miss { fire, deadline, instance, what });
    }
    out
}

/// The scheduled fires in (`after`, `until`], none while the task is disabled or (from its start)
/// paused.
fn scheduled(task: &Task, calendar: &BTreeSet<NaiveDate>, after: Ts, until: Ts) -> BTreeSet<Ts> {
    let mut out = BTreeSet::new();
    if !task.config.enabled {
        return out;
    }
    let Ok(compiled) = Compiled::for_task(&task.config, calendar) else { return out };
    let mut t = compiled.first_fire(after);
    while let Some(f) = t {
        if f > until || out.len() >= FIRE_CAP {
            break;
        }
        let paused = task.pause.as_ref().is_some_and(|p| f >= p.at && p.until.is_none_or(|u| f < u));
        if f > after && !paused {
            out.insert(f);
        }
        t = compiled.next_after(f);
    }
    out
}

/// What an instance that did not succeed in time was doing, as of its deadline or since.
fn doing(i: &Instance, deadline: Ts, within: Duration) -> String {
    let id = i.id;
    match (i.status, i.finished_at) {
        (InstanceStatus::Success, Some(at)) => format!(
            "instance {id} succeeded at {}, {} after its deadline",
            rfc(at),
            fmt_duration((at - deadline).to_std().unwrap_or_default())
        ),
        (s, Some(at)) => format!(
            "instance {id} ended {s} at {}{}",
            rfc(at),
            if at > deadline { " (after its deadline)" } else { "" }
        ),
        (InstanceStatus::Pending, None) if i.attempt > 0 => {
            format!(
                "instance {id} was waiting to retry (attempt {} failed) {} after its fire",
                i.attempt,
                fmt_duration(within)
            )
        }
        (InstanceStatus::Pending, None) => {
            format!("instance {id} was still waiting to be dispatched {} after its fire", fmt_duration(within))
        }
        (s, None) => {
            format!("instance {id} was still {s} (attempt {}) {} after its fire", i.attempt, fmt_duration(within))
        }
    }
}

/// DEADLINE_MISSED findings for the explained span: fires after the oldest recent instance (or
/// the last day) up to the instant explained.
pub fn findings(inputs: &Inputs<'_>, out: &mut Vec<Finding>) {
    let task = inputs.task;
    let Some(within) = task.config.flow.must_finish_within else { return };
    let instances: Vec<Instance> = inputs.instances.iter().map(|(i, _)| i.clone()).collect();
    let after = instances
        .iter()
        .map(|i| i.fire_at)
        .min()
        .map_or_else(|| sub(inputs.at, Duration::from_secs(86_400)), |t| sub(t, Duration::from_micros(1)));
    let since = owed_since(task, inputs.events);
    for m in missed(task, inputs.calendar, since, &instances, after, inputs.at, inputs.now) {
        out.push(Finding {
            kind: FindingKind::DeadlineMissed,
            at: Some(m.deadline),
            message: format!(
                "the fire at {} missed its deadline of {} ({}): {}",
                rfc(m.fire),
                fmt_duration(within),
                rfc(m.deadline),
                m.what
            ),
            instance_id: m.instance.unwrap_or(0),
            fires: None,
        });
    }
}
