//! The records an explanation reads ([`Inputs`]) and the answers it gives ([`Finding`]): shared by
//! the explanation of schedules and instances (`explain/`) and of routing and limits
//! (`routing/explain.rs`).

use crate::model::{FireSpan, Instance, InstanceEvent, SessionSpan, Task, TaskEvent, Ts, WorkerRecord, WorkerStreak};

/// What a finding is about (the proto's `ExplainFindingKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    Disabled,
    Manual,
    NoMoreFires,
    MisfireSkipped,
    MisfireCaughtUp,
    SkippedOverlap,
    NoWorker,
    AtCapacity,
    AttemptFailed,
    Failed,
    Canceled,
    ScheduleBroken,
    Running,
    Waiting,
    NoInstance,
    Ok,
    SelectorUnmatched,
    Cooldown,
    MaxRunning,
    RateLimited,
    Coalesced,
    Paused,
    OutsideWindow,
    ExcludedDate,
    Buffered,
    CanceledByFire,
    ConcurrencyKey,
    DeadlineMissed,
}

/// One answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    /// When it happened or began.
    pub at: Option<Ts>,
    /// The answer in one sentence.
    pub message: String,
    /// The instance it is about; 0 if none.
    pub instance_id: i64,
    /// The fires a misfire decision is about (skipped or caught up); `None` for other findings.
    pub fires: Option<FireSpan>,
}

/// What [`explain`](super::explain) reads.
#[derive(Debug, Clone)]
pub struct Inputs<'a> {
    pub task: &'a Task,
    /// The instant explained.
    pub at: Ts,
    /// The database's now.
    pub now: Ts,
    /// How many next fires (and at most how many fires without an instance) to report.
    pub limit: usize,
    /// Task events at or before `at`, newest first.
    pub events: &'a [TaskEvent],
    /// Recent instances (trigger time at or before `at`) with their trails, newest first.
    pub instances: &'a [(Instance, Vec<InstanceEvent>)],
    /// Sessions of the app open at some time since the oldest recent instance was due.
    pub sessions: &'a [SessionSpan],
    /// Live sessions of the app now.
    pub live: &'a [WorkerRecord],
    /// Fire times (from [`expected_fires`](super::expected_fires)) that have an instance, even if not among `instances`.
    pub fired: &'a [Ts],
    /// Cooldowns, the app's rate limit, the task's running instances.
    pub limits: Limits<'a>,
    /// The dates of the task's calendar (empty without one).
    pub calendar: &'a std::collections::BTreeSet<chrono::NaiveDate>,
}

/// The routing inputs an explanation reads besides the instances.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits<'a> {
    /// Failure streaks of the app's workers.
    pub streaks: &'a [WorkerStreak],
    /// The app's rate limit, if any.
    pub app_limit: Option<&'a crate::model::AppLimit>,
    /// Instances of the task DISPATCHED or RUNNING now.
    pub active: u32,
    /// Per value of the task's concurrency key (those of its recent PENDING instances), its
    /// instances DISPATCHED or RUNNING now.
    pub active_by_key: &'a [(String, u32)],
    /// `--cooldown-max-share` of the axd explaining (percent).
    pub cooldown_max_share: u8,
}

/// A time as RFC 3339 in UTC, to the millisecond.
pub(crate) fn rfc(t: Ts) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
