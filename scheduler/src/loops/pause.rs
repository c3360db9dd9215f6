//! Pauses in the trigger loop: a paused task's schedule does not fire. Fires whose time falls in
//! the pause are not run — no instance, no catch-up when it ends (`axctl task backfill` creates them
//! if wanted) — and the event that ends the pause counts them.

use std::collections::BTreeSet;

use chrono::NaiveDate;

use crate::{
    model::{Pause, Task, Ts},
    schedule::Compiled,
};

/// Most fires counted for the RESUMED event (a longer pause says "at least").
const MAX_COUNTED: usize = 100_000;

/// What the trigger does with a claimed task that is paused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Still paused: nothing fires; the next fire time becomes this (the first fire after the
    /// pause's end, or none while it has no end).
    Hold(Option<Ts>),
    /// The pause is over (its end has come, or the due fire lies after it): clear it, record this
    /// message, and fire as usual.
    Resume(String),
}

/// The trigger's decision for a claimed task paused with `p`.
pub fn step(task: &Task, p: &Pause, calendar: &BTreeSet<NaiveDate>, now: Ts) -> Step {
    let Some(until) = p.until else { return Step::Hold(None) };
    if now >= until || task.next_fire_at.is_some_and(|next| next >= until) {
        return Step::Resume(format!(
            "the pause ended at {}; {}",
            until.to_rfc3339(),
            skipped(task, calendar, p, until)
        ));
    }
    // The first fire at or after the pause's end (the one that ends it).
    let next = Compiled::for_task(&task.config, calendar).ok().and_then(|c| match c.base() {
        Compiled::FixedDelay { .. } => c.settle(until),
        _ => c.first_fire(crate::model::sub(until, std::time::Duration::from_micros(1))),
    });
    Step::Hold(next)
}

/// How many fires of the schedule fell in the pause (from its start to `end`), in words.
pub fn skipped(task: &Task, calendar: &BTreeSet<NaiveDate>, p: &Pause, end: Ts) -> String {
    let Ok(c) = Compiled::for_task(&task.config, calendar) else { return "its fires were not run".to_owned() };
    if matches!(c.base(), Compiled::FixedDelay { .. }) {
        return "a fixed delay counts from the next run".to_owned();
    }
    let mut n = 0usize;
    let mut first = None;
    let mut last = None;
    let mut t = c.first_fire(p.at);
    while let Some(at) = t.filter(|at| *at < end) {
        n += 1;
        first.get_or_insert(at);
        last = Some(at);
        if n >= MAX_COUNTED {
            return format!("at least {n} fires from {} were not run", p.at.to_rfc3339());
        }
        t = c.next_after(at);
    }
    match (first, last) {
        (Some(a), Some(b)) if n > 1 => {
            format!("{n} fires from {} to {} were not run", a.to_rfc3339(), b.to_rfc3339())
        }
        (Some(a), _) => format!("1 fire at {} was not run", a.to_rfc3339()),
        _ => "no fire fell in it".to_owned(),
    }
}
