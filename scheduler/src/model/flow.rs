//! What shapes a task's fires beyond its schedule — an active window, excluded dates and a shared
//! calendar, jitter, a pause — and what follows its instances: chains and DAG edges, and the run
//! that ties one workflow's instances together. Decisions on them are made in `window`, the trigger
//! and `lifecycle::successors`; these are the values.

use std::{collections::BTreeSet, time::Duration};

use chrono::NaiveDate;

use super::Ts;

/// Most dates a task or a calendar excludes.
pub const MAX_DATES: usize = 1000;

/// Most tasks one chain or DAG list names.
pub const MAX_LINKS: usize = 32;

/// Longest jitter (and it must also be shorter than the schedule's period).
pub const MAX_JITTER: Duration = Duration::from_secs(86_400);
/// The most `extra_schedules` a task may have.
pub const MAX_EXTRA_SCHEDULES: usize = 8;

/// Most fires one backfill creates (a longer range is refused: split it).
pub const MAX_BACKFILL: usize = 1000;

/// When a task may fire besides what its schedule says: the window it is active in, the dates it
/// skips, and how much each fire is delayed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Timing {
    /// No fire before this instant.
    pub start: Option<Ts>,
    /// No fire after this instant.
    pub end: Option<Ts>,
    /// Dates (on the schedule's wall clock: the cron's zone, UTC for the other kinds) without fires.
    pub exclude_dates: BTreeSet<NaiveDate>,
    /// A named calendar whose dates are excluded too (`ax_calendar`).
    pub calendar: Option<String>,
    /// Each fire runs up to this much later, by an offset derived from the task name and the fire
    /// time (the same on every axd); shorter than the schedule's period.
    pub jitter: Option<Duration>,
    /// More cron and fixed-rate schedules beside the task's own (which is then cron or fixed rate
    /// too): the task fires at each instant any of them fires, once.
    pub extra_schedules: Vec<super::Schedule>,
}

impl Timing {
    /// Whether anything restricts or shifts the fires.
    pub fn is_empty(&self) -> bool {
        *self == Timing::default()
    }
}

/// What follows a task's instances.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Flow {
    /// Tasks fired once when an instance of this task ends SUCCESS.
    pub on_success: Vec<String>,
    /// Tasks fired once when an instance of this task ends FAILED or TIMEOUT.
    pub on_failure: Vec<String>,
    /// This task's upstreams in a DAG: it fires once per workflow run in which an instance of each
    /// of them succeeded.
    pub after_all: Vec<String>,
    /// Deadline: each fire must have an instance that ended SUCCESS within this long of it
    /// (`explain::deadline`).
    pub must_finish_within: Option<Duration>,
    /// Events: the name of the events (PublishEvent) that create an instance of the task.
    pub on_event: Option<String>,
    /// With `on_event`: conditions on the payload (`birth::events::Filter`), as given.
    pub event_filter: Option<String>,
}

impl Flow {
    /// Every edge this task's configuration declares, as (from task name, kind, to task name), with
    /// `name` the task's own name.
    pub fn edges<'a>(&'a self, name: &'a str) -> Vec<(&'a str, EdgeKind, &'a str)> {
        let mut out = Vec::new();
        out.extend(self.on_success.iter().map(|t| (name, EdgeKind::Success, t.as_str())));
        out.extend(self.on_failure.iter().map(|t| (name, EdgeKind::Failure, t.as_str())));
        out.extend(self.after_all.iter().map(|t| (t.as_str(), EdgeKind::After, name)));
        out
    }

    /// Every task it names.
    pub fn names(&self) -> BTreeSet<&str> {
        self.on_success.iter().chain(&self.on_failure).chain(&self.after_all).map(String::as_str).collect()
    }
}

string_enum! {
    /// Why one task's instance creates an instance of another.
    pub enum EdgeKind {
        /// `--on-success`: the upstream instance ended SUCCESS.
        Success = "SUCCESS",
        /// `--on-failure`: the upstream instance ended FAILED or TIMEOUT.
        Failure = "FAILURE",
        /// `--after-all`: every upstream of a DAG task succeeded in one run.
        After = "AFTER",
    }
}

/// A task's pause: its schedule does not fire until it is resumed (or `until` passes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pause {
    /// When it was paused.
    pub at: Ts,
    /// Who paused it.
    pub by: String,
    /// Why, in the operator's words.
    pub note: String,
    /// When the pause ends by itself; `None`: until resumed.
    pub until: Option<Ts>,
}

/// A named set of dates that tasks exclude (`axctl calendar create holidays --dates ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calendar {
    /// Unique name.
    pub name: String,
    /// Free text.
    pub description: String,
    /// The dates.
    pub dates: BTreeSet<NaiveDate>,
    pub created_by: String,
    pub created_at: Ts,
    pub updated_by: String,
    pub updated_at: Ts,
}

/// How an instance is tied to others by chains and DAG edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lineage {
    /// The first instance of the workflow run it belongs to; `None` when no chain or DAG edge
    /// created it (it is the first of its own run).
    pub run_id: Option<i64>,
    /// The instance whose final state created it.
    pub chained_from: Option<i64>,
}
