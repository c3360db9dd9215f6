//! Where and how a task's instances run: priority, label selector, retry target, fan-out, hash
//! key, limits and cooldown (the task's [`Placement`]), and the copy each instance keeps
//! ([`InstanceRoute`]). Decisions on them are made in `routing`; these are the values.

use std::{num::NonZeroU32, time::Duration};

use super::{Instance, Ts, sub};

string_enum! {
    /// Where the retry of an attempt that failed on worker W goes.
    pub enum RetryOn {
        /// Another worker when one can take it; W only when it is the only one (or after a bounded
        /// wait, see `routing::RETRY_ELSEWHERE_WAIT`).
        Other = "OTHER",
        /// W again, and only W.
        Same = "SAME",
        /// Any worker, W included.
        Any = "ANY",
    }
}

/// Priority levels of a task: 0 (default, lowest) to this (highest).
pub const MAX_PRIORITY: u8 = 9;

/// How much earlier than its due time each priority level places an instance in its app's queue:
/// the claim orders by `available_at - priority x PRIORITY_STEP` ("aging"), so a priority-0
/// instance is passed by instances that became due at most `MAX_PRIORITY x PRIORITY_STEP` (90 s)
/// after it, however many higher-priority instances keep arriving.
pub const PRIORITY_STEP: Duration = Duration::from_secs(10);

/// Default bound of PENDING instances per task (`--max-pending`).
pub const DEFAULT_MAX_PENDING: NonZeroU32 = NonZeroU32::new(100).expect("100 is not zero");

/// Most children of one sharded fire (`--shards`).
pub const MAX_SHARDS: u32 = 10_000;

/// A task's failure cooldown settings; `None` takes axd's default (`--cooldown-after`,
/// `--cooldown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CooldownPolicy {
    /// Consecutive failures of one worker for the handler that start a cooldown; 0 = never.
    pub after: Option<u32>,
    /// First cooldown; it doubles while failures continue, up to axd's cap. Zero = never.
    pub duration: Option<Duration>,
}

/// Where and how many of a task's instances run: the routing inputs of issue "Routing and limits".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Label selector over the labels of workers' Hello, normalized (`routing::selector`); empty:
    /// any worker.
    pub selector: String,
    /// Where retries go.
    pub retry_on: RetryOn,
    /// Each fire is a parent with this many children (shard index 0..n-1); `None`: one instance.
    pub shards: Option<NonZeroU32>,
    /// HASH routing: the params field whose value is the key (`None`: the task name).
    pub hash_key: Option<String>,
    /// 0 (lowest) ..= [`MAX_PRIORITY`], within the app.
    pub priority: u8,
    /// Most instances of the task DISPATCHED or RUNNING at once across the cluster.
    pub max_running: Option<NonZeroU32>,
    /// Most PENDING instances of the task; fires beyond it are coalesced (not created, counted).
    pub max_pending: NonZeroU32,
    /// Worker cooldown after consecutive failures.
    pub cooldown: CooldownPolicy,
    /// Concurrency key: a params path (`params.customer_id`, see `routing::keypath`); with
    /// `concurrency_limit`, at most that many instances per value of it DISPATCHED or RUNNING.
    pub concurrency_key: Option<String>,
    /// Most instances per value of `concurrency_key` dispatched or running at once.
    pub concurrency_limit: Option<NonZeroU32>,
    /// Uniqueness key: a params path; with `unique_for`, a trigger whose value an instance
    /// triggered less than `unique_for` ago holds creates nothing and gets that instance.
    pub unique_key: Option<String>,
    /// How long a triggered instance holds its uniqueness key value.
    pub unique_for: Option<Duration>,
    /// Params paths whose values each instance is tagged with (`params.PATH` = value), so that it
    /// is found by them.
    pub search_params: Vec<String>,
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            selector: String::new(),
            retry_on: RetryOn::Other,
            shards: None,
            hash_key: None,
            priority: 0,
            max_running: None,
            max_pending: DEFAULT_MAX_PENDING,
            cooldown: CooldownPolicy::default(),
            concurrency_key: None,
            concurrency_limit: None,
            unique_key: None,
            unique_for: None,
            search_params: Vec::new(),
        }
    }
}

/// What the dispatcher needs to know about an instance beyond its app and handler.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstanceRoute {
    /// 0..=[`MAX_PRIORITY`].
    pub priority: u8,
    /// Normalized label selector; empty: any worker.
    pub selector: String,
    /// Where a retry goes.
    pub retry_on: Option<RetryOn>,
    /// HASH routing: the key (task name, or the params field's value).
    pub hash_key: Option<String>,
    /// The parent (broadcast or sharded fire) this instance is a child of.
    pub parent_id: Option<i64>,
    /// (index, total) of a child of a broadcast or sharded fire.
    pub shard: Option<(u32, u32)>,
    /// A broadcast or sharded fire's parent: how many children it has.
    pub children: Option<u32>,
    /// A broadcast child runs only on this worker.
    pub target_worker: Option<String>,
    /// The value of its task's concurrency key in its params (`routing::keypath::key_of`).
    pub concurrency_value: Option<String>,
}

impl Instance {
    /// The claim's order key: `available_at` moved earlier by [`PRIORITY_STEP`] per priority level.
    pub fn ready_at(&self) -> Ts {
        sub(self.available_at, PRIORITY_STEP * u32::from(self.route.priority.min(MAX_PRIORITY)))
    }

    /// Where a retry goes (OTHER unless the task said otherwise).
    pub fn retry_on(&self) -> RetryOn {
        self.route.retry_on.unwrap_or(RetryOn::Other)
    }

    /// Whether it is the parent of a broadcast or sharded fire (never dispatched itself).
    pub fn is_parent(&self) -> bool {
        self.route.children.is_some()
    }
}

/// A row of `ax_worker_streak`: consecutive failures of one worker for one handler since its last
/// success, and the cooldown they started (see `routing::cooldown`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerStreak {
    pub app: String,
    pub worker_id: String,
    pub handler: String,
    /// Failed or timed-out attempts in a row.
    pub failures: u32,
    /// No new assignment of the handler to the worker before this.
    pub cooldown_until: Option<Ts>,
    /// Length of the last cooldown of this streak.
    pub cooldown: Option<Duration>,
}

/// An app's rate limit as stored (`ax_app_limit`): a token bucket shared by every axd.
#[derive(Debug, Clone, PartialEq)]
pub struct AppLimit {
    pub app: String,
    /// Tokens added per second.
    pub per_second: f64,
    /// Most tokens held.
    pub burst: u32,
    /// Tokens at `refilled_at`.
    pub tokens: f64,
    /// When `tokens` was computed (database clock).
    pub refilled_at: Ts,
    /// Who set the limit.
    pub updated_by: String,
    /// When it was set.
    pub updated_at: Ts,
}
