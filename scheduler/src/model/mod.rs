//! Domain types: tasks, instances and their states, as axd reasons about them.
//!
//! These are independent of both the wire (`ax_proto`) and the database; `grpc/convert` maps them to
//! the proto and each store backend maps them to rows. Times are UTC; durations are
//! `std::time::Duration` and are stored as whole microseconds.

use std::{collections::BTreeMap, num::NonZeroU32, time::Duration};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A point in time, UTC.
pub type Ts = DateTime<Utc>;

/// Microseconds since the Unix epoch, as stored in every table.
pub fn to_micros(t: Ts) -> i64 {
    t.timestamp_micros()
}

/// The instant `us` microseconds after the Unix epoch (saturating at the representable range).
pub fn from_micros(us: i64) -> Ts {
    DateTime::from_timestamp_micros(us).unwrap_or(if us < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    })
}

/// A duration in whole microseconds, saturating.
pub fn duration_micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// The last instant ax schedules anything at or takes from the wire, in seconds since the epoch:
/// 9999-12-31T23:59:59Z. Later instants cannot be written in RFC 3339 or held by most clients' date
/// types, and nothing after them reaches chrono's limits (where its time zone arithmetic panics).
pub const LATEST_SECONDS: i64 = 253_402_300_799;

/// 9999-12-31T23:59:59.999999999Z, the end of [`LATEST_SECONDS`].
pub fn latest() -> Ts {
    DateTime::from_timestamp(LATEST_SECONDS, 999_999_999).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// `t + d`, saturating at the end of time.
pub fn add(t: Ts, d: Duration) -> Ts {
    chrono::TimeDelta::from_std(d).ok().and_then(|d| t.checked_add_signed(d)).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// `t - d`, saturating at the start of time.
pub fn sub(t: Ts, d: Duration) -> Ts {
    chrono::TimeDelta::from_std(d).ok().and_then(|d| t.checked_sub_signed(d)).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// Defines a closed string enum stored as its upper-case name.
macro_rules! string_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vmeta])* $variant,)+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The stored (and JSON) name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(format!("unknown {} {other:?}", stringify!($name))),
                }
            }
        }
    };
}

pub mod alerts;
mod cluster;
mod flow;
mod placement;
#[cfg(test)]
pub(crate) mod testing;
pub mod trail;
pub use cluster::{Command, SchedulerRecord, SessionSpan, SessionSync, WorkerRecord};
pub use flow::{
    Calendar, EdgeKind, Flow, Lineage, MAX_BACKFILL, MAX_DATES, MAX_EXTRA_SCHEDULES, MAX_JITTER, MAX_LINKS, Pause,
    Timing,
};
pub use placement::{
    AppLimit, CooldownPolicy, DEFAULT_MAX_PENDING, InstanceRoute, MAX_PRIORITY, MAX_SHARDS, PRIORITY_STEP, Placement,
    RetryOn, WorkerStreak,
};

string_enum! {
    /// State of an instance. Each variant says who moves an instance out of it.
    pub enum InstanceStatus {
        /// Waiting for `available_at` and a worker credit. Left by dispatch or cancel.
        Pending = "PENDING",
        /// Sent to a worker session. Left by Accepted, Reject, ack timeout, a result, or cancel.
        Dispatched = "DISPATCHED",
        /// Running on a worker. Left by a result, the run timeout, the lost-worker rule, or cancel.
        Running = "RUNNING",
        /// Terminal: succeeded.
        Success = "SUCCESS",
        /// Terminal unless an operator retries it: failed with no retry budget left.
        Failed = "FAILED",
        /// Terminal unless an operator retries it: timed out with no retry budget left.
        Timeout = "TIMEOUT",
        /// Terminal: canceled.
        Canceled = "CANCELED",
        /// Terminal: not run because of the concurrency policy.
        Skipped = "SKIPPED",
        /// A broadcast or sharded fire's parent, waiting for its children (never dispatched itself).
        /// Left when its last child reaches a final state (SUCCESS if every child succeeded, FAILED
        /// otherwise), or by cancel (its children are canceled with it).
        Waiting = "WAITING",
    }
}

/// Who moves an instance from one state to another: each row of [`TRANSITIONS`] names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The dispatcher assigned it to a worker session.
    Dispatch,
    /// The worker's Accepted, or its re-announce after reconnecting.
    Accept,
    /// The worker's Reject, an assignment that could not be delivered, or the ack timeout.
    Requeue,
    /// The worker's Result.
    Result,
    /// The sweeper: the run deadline passed.
    Timeout,
    /// The sweeper: the lease ran out and the worker did not come back ("worker lost").
    Lost,
    /// The retry policy, after the backoff of a failed or timed-out attempt.
    Retry,
    /// An operator's cancel, or the deletion of the task.
    Cancel,
    /// An operator's retry of a final instance (or of a child of a final parent, which waits again).
    OperatorRetry,
    /// The last child of a parent reached a final state: the parent ends with their verdict.
    Children,
    /// The sweeper: a broadcast child's worker has been gone past the grace period.
    Unreachable,
}

/// Every legal change of an instance's state, with what makes it. An event whose state does not
/// change (a session that ended, a late result, a re-announce) is always legal; creation is
/// [`InstanceStatus::can_start_as`].
pub const TRANSITIONS: &[(InstanceStatus, InstanceStatus, Cause)] = {
    use Cause as C;
    use InstanceStatus as S;
    &[
        (S::Pending, S::Dispatched, C::Dispatch),
        (S::Pending, S::Canceled, C::Cancel),
        (S::Dispatched, S::Running, C::Accept),
        (S::Dispatched, S::Pending, C::Requeue),
        (S::Dispatched, S::Success, C::Result),
        (S::Dispatched, S::Failed, C::Result),
        (S::Dispatched, S::Canceled, C::Cancel),
        (S::Running, S::Success, C::Result),
        (S::Running, S::Failed, C::Result),
        (S::Running, S::Failed, C::Lost),
        (S::Running, S::Timeout, C::Timeout),
        (S::Running, S::Canceled, C::Cancel),
        (S::Failed, S::Pending, C::Retry),
        (S::Timeout, S::Pending, C::Retry),
        (S::Success, S::Pending, C::OperatorRetry),
        (S::Failed, S::Pending, C::OperatorRetry),
        (S::Timeout, S::Pending, C::OperatorRetry),
        (S::Canceled, S::Pending, C::OperatorRetry),
        (S::Skipped, S::Pending, C::OperatorRetry),
        (S::Pending, S::Failed, C::Unreachable),
        (S::Waiting, S::Success, C::Children),
        (S::Waiting, S::Failed, C::Children),
        (S::Waiting, S::Canceled, C::Cancel),
        (S::Success, S::Waiting, C::OperatorRetry),
        (S::Failed, S::Waiting, C::OperatorRetry),
        (S::Canceled, S::Waiting, C::OperatorRetry),
    ]
};

impl InstanceStatus {
    /// True for states no automatic process leaves.
    pub fn is_terminal(self) -> bool {
        match self {
            InstanceStatus::Pending
            | InstanceStatus::Dispatched
            | InstanceStatus::Running
            | InstanceStatus::Waiting => false,
            InstanceStatus::Success
            | InstanceStatus::Failed
            | InstanceStatus::Timeout
            | InstanceStatus::Canceled
            | InstanceStatus::Skipped => true,
        }
    }

    /// Whether an instance may move from this state to `to` (see [`TRANSITIONS`]); staying in
    /// the same state (an event that records something without changing it) is always allowed.
    pub fn can_move_to(self, to: InstanceStatus) -> bool {
        self == to || TRANSITIONS.iter().any(|(f, t, _)| *f == self && *t == to)
    }

    /// What may make this move (empty when it is not legal; a move to the same state has none).
    pub fn causes(self, to: InstanceStatus) -> Vec<Cause> {
        TRANSITIONS.iter().filter(|(f, t, _)| *f == self && *t == to).map(|(_, _, c)| *c).collect()
    }

    /// Whether an instance may be created in this state: PENDING, SKIPPED by the concurrency
    /// policy, or WAITING (the parent of a broadcast or sharded fire).
    pub fn can_start_as(self) -> bool {
        matches!(self, InstanceStatus::Pending | InstanceStatus::Skipped | InstanceStatus::Waiting)
    }

    /// True for states held by a worker session (an attempt is out).
    pub fn is_held(self) -> bool {
        match self {
            InstanceStatus::Dispatched | InstanceStatus::Running => true,
            InstanceStatus::Pending
            | InstanceStatus::Success
            | InstanceStatus::Failed
            | InstanceStatus::Timeout
            | InstanceStatus::Canceled
            | InstanceStatus::Skipped
            | InstanceStatus::Waiting => false,
        }
    }
}

string_enum! {
    /// Why an instance exists.
    pub enum InstanceSource {
        /// The schedule fired on time.
        Schedule = "SCHEDULE",
        /// A misfire catch-up.
        CatchUp = "CATCH_UP",
        /// Triggered by hand (TriggerTask, now or at a later time).
        Manual = "MANUAL",
        /// Created by a backfill of past fire times.
        Backfill = "BACKFILL",
        /// Created by the final state of an instance of a task that chains to this one.
        Chain = "CHAIN",
        /// Created when every upstream of this DAG task succeeded in one workflow run.
        Dag = "DAG",
        /// Created from a row an application inserted into `ax_intake`.
        Intake = "INTAKE",
    }
}

string_enum! {
    /// What to do with missed fires.
    pub enum MisfirePolicy {
        /// One catch-up instance for the latest missed fire.
        FireOnce = "FIRE_ONCE",
        /// One instance per missed fire, up to the task's bound.
        FireAll = "FIRE_ALL",
        /// No catch-up.
        Skip = "SKIP",
    }
}

string_enum! {
    /// What a scheduled fire does while an earlier instance of its task is not final (the overlap
    /// policy; decided at the fire time).
    pub enum ConcurrencyPolicy {
        /// Instances may overlap.
        Allow = "ALLOW",
        /// SKIP: a fire while an earlier instance is active is recorded as SKIPPED.
        Forbid = "FORBID",
        /// At most one instance waits behind the active one and starts when it ends; a fire while
        /// one already waits is SKIPPED.
        BufferOne = "BUFFER_ONE",
        /// Every fire waits its turn (up to `max_pending` waiting; beyond, fires are coalesced).
        BufferAll = "BUFFER_ALL",
        /// A fire cancels the active instances of the task and starts.
        CancelOther = "CANCEL_OTHER",
    }
}

impl ConcurrencyPolicy {
    /// Whether the task's instances run one at a time in creation order (the claim holds an
    /// instance while an earlier one of its task is not final).
    pub fn buffers(self) -> bool {
        matches!(self, ConcurrencyPolicy::BufferOne | ConcurrencyPolicy::BufferAll)
    }

    /// Whether a fire is decided only when it is due (not created ahead by the look-ahead): every
    /// policy that looks at the task's other instances.
    pub fn decides_at_fire_time(self) -> bool {
        self != ConcurrencyPolicy::Allow
    }
}

string_enum! {
    /// How the dispatcher picks a stream among eligible ones.
    pub enum Routing {
        /// Most free credits.
        LeastLoaded = "LEAST_LOADED",
        /// In turn.
        RoundRobin = "ROUND_ROBIN",
        /// At random.
        Random = "RANDOM",
        /// Each fire is a parent with one child per live worker matching the selector, pinned to it.
        Broadcast = "BROADCAST",
        /// Instances with the same key go to the same live worker (rendezvous hashing over the
        /// workers serving the handler).
        Hash = "HASH",
    }
}

string_enum! {
    /// How a cron expression is read.
    pub enum CronDialect {
        /// Unix/Vixie: 5 fields, or 6 with leading seconds; Sunday = 0 or 7.
        Unix = "UNIX",
        /// Quartz/XXL-JOB: 6 fields with seconds, or 7 with year; Sunday = 1.
        Quartz = "QUARTZ",
    }
}

string_enum! {
    /// Kind of a task's schedule, as stored.
    pub enum ScheduleKind {
        /// Cron expression.
        Cron = "CRON",
        /// Anchored fixed rate.
        FixedRate = "FIXED_RATE",
        /// Fixed delay after completion.
        FixedDelay = "FIXED_DELAY",
        /// Fires once.
        OneTime = "ONE_TIME",
        /// Only triggered by hand.
        Manual = "MANUAL",
    }
}

/// When a task fires (validated; the cron expression is compiled on use by `schedule.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// A cron expression on the wall clock of `time_zone`.
    Cron {
        /// The expression as written.
        expression: String,
        /// IANA zone name.
        time_zone: String,
        /// How it is read (resolved at validation; never "detect" once stored).
        dialect: CronDialect,
    },
    /// Fire n at `start_at + n * interval`, n = 0, 1, ...
    FixedRate {
        interval: Duration,
        /// Anchor: the first fire.
        start_at: Ts,
    },
    /// First fire at `start_at`, then `interval` after each scheduled instance finishes.
    FixedDelay {
        /// Delay after completion.
        interval: Duration,
        /// First fire.
        start_at: Ts,
    },
    /// Once, at `at`.
    OneTime {
        /// The instant.
        at: Ts,
    },
    /// Never by itself.
    Manual,
}

impl Schedule {
    /// Its stored kind.
    pub fn kind(&self) -> ScheduleKind {
        match self {
            Schedule::Cron { .. } => ScheduleKind::Cron,
            Schedule::FixedRate { .. } => ScheduleKind::FixedRate,
            Schedule::FixedDelay { .. } => ScheduleKind::FixedDelay,
            Schedule::OneTime { .. } => ScheduleKind::OneTime,
            Schedule::Manual => ScheduleKind::Manual,
        }
    }
}

/// Delay before each retry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Backoff {
    /// Retry n waits `delays[n-1]`, the last one repeating.
    List {
        /// Delays in microseconds.
        delays_us: Vec<i64>,
    },
    /// Retry n waits `min(max, initial * multiplier^(n-1))` with +/- jitter.
    Exponential {
        /// First delay in microseconds.
        initial_us: i64,
        /// Growth factor.
        multiplier: f64,
        /// Cap in microseconds.
        max_us: i64,
        /// Random spread as a fraction of the delay.
        jitter: f64,
    },
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::Exponential { initial_us: 10_000_000, multiplier: 2.0, max_us: 300_000_000, jitter: 0.1 }
    }
}

impl Backoff {
    /// The delay before retry `n` (1-based). `unit_random` is a number in [0, 1) used for jitter.
    pub fn delay(&self, n: u32, unit_random: f64) -> Duration {
        let n = n.max(1);
        let us = match self {
            Backoff::List { delays_us } => {
                let i = usize::try_from(n - 1).unwrap_or(usize::MAX).min(delays_us.len().saturating_sub(1));
                delays_us.get(i).copied().unwrap_or(0) as f64
            }
            Backoff::Exponential { initial_us, multiplier, max_us, jitter } => {
                let exp = i32::try_from(n - 1).unwrap_or(i32::MAX).min(1000);
                let base = (*initial_us as f64 * multiplier.powi(exp)).min(*max_us as f64);
                let spread = base * jitter * (2.0 * unit_random - 1.0);
                (base + spread).max(0.0)
            }
        };
        Duration::from_micros(us as u64)
    }
}

/// Retry policy of a task, copied into each instance when it is created.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Delay before each retry.
    pub backoff: Backoff,
}

/// The configuration of a task (everything an operator sets).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskConfig {
    /// App whose workers run it.
    pub app: String,
    /// Handler name.
    pub handler: String,
    /// Free text.
    pub description: String,
    /// When it fires.
    pub schedule: Schedule,
    /// JSON parameters.
    pub params: String,
    /// Whether it fires.
    pub enabled: bool,
    /// Missed fires.
    pub misfire_policy: MisfirePolicy,
    /// Later than this is "missed".
    pub misfire_threshold: Duration,
    /// FIRE_ALL bound.
    pub max_catch_up: NonZeroU32,
    /// Overlap policy.
    pub concurrency: ConcurrencyPolicy,
    /// Stream choice.
    pub routing: Routing,
    /// Run timeout; `None` = no timeout.
    pub timeout: Option<Duration>,
    /// Retries.
    pub retry: RetryPolicy,
    pub labels: BTreeMap<String, String>,
    /// Selector, retry target, fan-out, hash key, priority, limits and cooldown.
    pub placement: Placement,
    /// Active window, excluded dates, calendar and jitter.
    pub timing: Timing,
    /// Chains and DAG edges.
    pub flow: Flow,
}

/// Default misfire threshold.
pub const DEFAULT_MISFIRE_THRESHOLD: Duration = Duration::from_secs(60);
/// Default FIRE_ALL bound.
pub const DEFAULT_MAX_CATCH_UP: NonZeroU32 = NonZeroU32::new(10).expect("10 is not zero");

/// A stored task.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Database id.
    pub id: i64,
    /// Unique name.
    pub name: String,
    /// Configuration.
    pub config: TaskConfig,
    /// Next fire time, if it fires by itself.
    pub next_fire_at: Option<Ts>,
    /// Creation time.
    pub created_at: Ts,
    /// Last change.
    pub updated_at: Ts,
    /// Configuration version, incremented by each change.
    pub version: i64,
    /// Fires not run since this time because `max_pending` instances were PENDING, and how many
    /// (`None` when the last fire ran).
    pub coalesced: Option<(Ts, u64)>,
    /// Paused: who, why, since and until when.
    pub pause: Option<Pause>,
}

/// A stored instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// Database id.
    pub id: i64,
    pub task_id: i64,
    /// Task name at creation.
    pub task_name: String,
    pub app: String,
    pub handler: String,
    /// JSON params.
    pub params: String,
    /// Unique per task.
    pub idempotency_key: String,
    /// Why it exists.
    pub source: InstanceSource,
    /// Fire (or trigger) time.
    pub fire_at: Ts,
    /// Not dispatched before.
    pub available_at: Ts,
    /// State.
    pub status: InstanceStatus,
    /// Dispatch count.
    pub attempt: u32,
    /// Retry budget.
    pub max_retries: u32,
    /// Failed or timed-out attempts so far.
    pub failures: u32,
    /// Run timeout.
    pub timeout: Option<Duration>,
    pub backoff: Backoff,
    pub routing: Routing,
    /// Worker of the current/last attempt.
    pub worker_id: Option<String>,
    /// Session of the current/last attempt.
    pub session_id: Option<String>,
    /// axd that dispatched the current/last attempt.
    pub scheduler_id: Option<String>,
    /// Until when the held attempt is its worker's (README "Leases"); renewed while the worker heartbeats.
    /// On an instance no longer held: until when its last attempt, taken from its worker, may still
    /// run (see [`crate::lifecycle::stopped_by`]).
    pub lease_expires_at: Option<Ts>,
    /// Run deadline.
    pub deadline_at: Option<Ts>,
    /// Started (Accepted).
    pub started_at: Option<Ts>,
    /// Reached a final state.
    pub finished_at: Option<Ts>,
    /// Last result message or reason.
    pub message: String,
    /// Output of the successful attempt.
    pub output: String,
    /// Latest progress.
    pub progress_percent: u32,
    /// Latest progress message.
    pub progress_message: String,
    pub created_at: Ts,
    /// Last change.
    pub updated_at: Ts,
    /// W3C traceparent of the instance's root span (its fire or manual trigger), when the axd that
    /// created it traced (README "Tracing"); every later span of the instance is its child.
    pub trace_parent: Option<String>,
    /// Routing inputs copied from the task when the instance was created.
    pub route: InstanceRoute,
    /// Its workflow run and the instance that created it.
    pub lineage: Lineage,
    /// What of its trail the row holds (see [`trail`]).
    pub trail: trail::Trail,
}

impl Instance {
    /// The id of its workflow run: the run's first instance (itself, when no chain or DAG edge
    /// created it).
    pub fn run(&self) -> i64 {
        self.lineage.run_id.unwrap_or(self.id)
    }
}

/// One state change of an instance (a row of `ax_instance_event`; written with id 0, the database
/// gives it its id).
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceEvent {
    /// Event id (orders events of one instance); 0 before it is written.
    pub id: i64,
    pub instance_id: i64,
    /// When.
    pub at: Ts,
    /// State before; `None` when the event records the instance's creation.
    pub from: Option<InstanceStatus>,
    /// State after.
    pub to: InstanceStatus,
    pub attempt: u32,
    /// axd that made the change.
    pub scheduler_id: String,
    /// Worker involved.
    pub worker_id: String,
    /// Why.
    pub reason: String,
}

string_enum! {
    /// Kinds of task-level events.
    pub enum TaskEventKind {
        /// Created.
        Created = "CREATED",
        /// Configuration changed.
        Updated = "UPDATED",
        /// Enabled.
        Enabled = "ENABLED",
        /// Disabled.
        Disabled = "DISABLED",
        /// Deleted.
        Deleted = "DELETED",
        /// Catch-up instances for missed fires.
        MisfireCatchUp = "MISFIRE_CATCH_UP",
        /// Missed fires skipped.
        MisfireSkipped = "MISFIRE_SKIPPED",
        /// The stored schedule could not be evaluated; the task was disabled.
        ScheduleBroken = "SCHEDULE_BROKEN",
        /// Fires were not run because `max_pending` instances of the task were PENDING: written when
        /// the first such fire is coalesced, and with the count when a fire runs again.
        Coalesced = "COALESCED",
        /// Paused, with the operator's note.
        Paused = "PAUSED",
        /// The pause ended (by an operator, or its `until` passed), with the fires it skipped.
        Resumed = "RESUMED",
        /// Past fire times were backfilled.
        Backfilled = "BACKFILLED",
    }
}

/// A task-level event.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEvent {
    pub task_id: i64,
    /// When.
    pub at: Ts,
    /// What.
    pub kind: TaskEventKind,
    /// Who.
    pub actor: String,
    /// Details.
    pub message: String,
    /// The fires a misfire decision is about (the ones it skipped, or caught up); `None` for others.
    pub fires: Option<FireSpan>,
}

/// A run of fire times of one schedule: the first, the last and how many (first == last when one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FireSpan {
    pub first: Ts,
    pub last: Ts,
    pub count: u32,
}

/// One stored log line.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// Sequence number.
    pub seq: i64,
    pub attempt: u32,
    /// Level: DEBUG, INFO, WARN, ERROR.
    pub level: String,
    /// When.
    pub at: Ts,
    /// Text.
    pub message: String,
}
