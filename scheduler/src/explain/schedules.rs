//! The schedule side of an explanation: a pause (who, why, until when), an instant outside the
//! active window, fire times on excluded dates, and the overlap decisions recorded on instances
//! (buffered behind an earlier one, canceled by a later fire). Pure functions of [`Inputs`].

use super::{Finding, FindingKind, Inputs, SETTLE, rfc, sub};
use crate::{
    model::{Instance, InstanceEvent, InstanceStatus, TaskEventKind},
    schedule::Compiled,
    window::Verdict,
};

/// Most excluded fire dates reported.
const EXCLUDED_SHOWN: usize = 5;

/// Findings about the task's pause, window and excluded dates around `inputs.at`.
pub fn standing(inputs: &Inputs<'_>, out: &mut Vec<Finding>) {
    let task = inputs.task;
    let explaining_now = inputs.at >= sub(inputs.now, SETTLE);
    if explaining_now && let Some(p) = &task.pause {
        let until = p.until.map_or("until resumed".to_owned(), |u| format!("until {}", rfc(u)));
        out.push(Finding {
            kind: FindingKind::Paused,
            at: Some(p.at),
            message: format!(
                "paused by {} at {} {until}: {:?}; its fires meanwhile do not run (nor are caught up)",
                p.by,
                rfc(p.at),
                p.note
            ),
            instance_id: 0,
            fires: None,
        });
    } else if !explaining_now {
        // Events are newest first: the latest pause or resume at or before the instant.
        let last = inputs.events.iter().find(|e| matches!(e.kind, TaskEventKind::Paused | TaskEventKind::Resumed));
        if let Some(e) = last.filter(|e| e.kind == TaskEventKind::Paused) {
            out.push(Finding {
                kind: FindingKind::Paused,
                at: Some(e.at),
                message: format!("paused by {} at {}: {}", e.actor, rfc(e.at), e.message),
                instance_id: 0,
                fires: None,
            });
        }
    }
    let t = &task.config.timing;
    if let Some(start) = t.start.filter(|s| inputs.at < *s) {
        out.push(Finding {
            kind: FindingKind::OutsideWindow,
            at: None,
            message: format!("the active window opens at {}: the task does not fire before", rfc(start)),
            instance_id: 0,
            fires: None,
        });
    }
    if let Some(end) = t.end.filter(|e| inputs.at > *e) {
        out.push(Finding {
            kind: FindingKind::OutsideWindow,
            at: Some(end),
            message: format!("the active window closed at {}: the task fires no more", rfc(end)),
            instance_id: 0,
            fires: None,
        });
    }
    excluded_dates(inputs, out);
}

/// Fire times of the schedule in the day before the instant that fell on excluded dates.
fn excluded_dates(inputs: &Inputs<'_>, out: &mut Vec<Finding>) {
    let Ok(c) = Compiled::for_task(&inputs.task.config, inputs.calendar) else { return };
    let Some(window) = c.window().filter(|w| !w.excluded.is_empty()) else { return };
    let base = c.base();
    let from = sub(inputs.at, std::time::Duration::from_secs(86_400)).max(inputs.task.created_at);
    let mut dates = std::collections::BTreeMap::new();
    let mut t = base.first_fire(from);
    let mut walked = 0;
    while let Some(f) = t.filter(|f| *f <= inputs.at) {
        walked += 1;
        if walked > 10_000 {
            break;
        }
        if let Verdict::Excluded(d) = window.verdict(f) {
            dates.entry(d).or_insert((f, 0u64)).1 += 1;
        }
        t = base.next_after(f);
    }
    let own = &inputs.task.config.timing.exclude_dates;
    for (d, (first, n)) in dates.into_iter().rev().take(EXCLUDED_SHOWN) {
        let whose = match &inputs.task.config.timing.calendar {
            _ if own.contains(&d) => "the task's --exclude".to_owned(),
            Some(cal) => format!("calendar {cal}"),
            None => "the task's --exclude".to_owned(),
        };
        out.push(Finding {
            kind: FindingKind::ExcludedDate,
            at: Some(first),
            message: format!("{n} fire(s) on {d} ({}) were skipped: an excluded date ({whose})", window.tz.name()),
            instance_id: 0,
            fires: None,
        });
    }
}

/// An overlap decision on an instance's trail: waiting behind an earlier instance (BUFFER_ONE,
/// BUFFER_ALL), or canceled by a later fire (CANCEL_OTHER).
pub fn overlap(inst: &Instance, trail: &[InstanceEvent]) -> Option<Finding> {
    let id = inst.id;
    match inst.status {
        InstanceStatus::Pending if inst.attempt == 0 => {
            let created = trail.first()?;
            let note = created.reason.split("; ").find(|p| p.starts_with("buffered ("))?;
            Some(Finding {
                kind: FindingKind::Buffered,
                at: Some(created.at),
                message: format!("instance {id} waits its turn: {note}"),
                instance_id: id,
                fires: None,
            })
        }
        InstanceStatus::Canceled if inst.message.contains("concurrency CANCEL_OTHER") => Some(Finding {
            kind: FindingKind::CanceledByFire,
            at: inst.finished_at,
            message: format!("instance {id} {}", inst.message),
            instance_id: id,
            fires: None,
        }),
        _ => None,
    }
}
