//! Persistence: one [`Store`] contract, three backends (SQLite, PostgreSQL, MySQL/MariaDB).
//!
//! The backend is chosen at startup from the database URL. Each backend lives in its own module with
//! its concrete pool type; the statements they share are written once in `sql.rs` and instantiated
//! per backend, with dialect differences (placeholders, `FOR UPDATE SKIP LOCKED`, `RETURNING`) kept
//! in the backend module. Every time-dependent operation takes `now` from the caller (the database
//! clock in production, a manual clock in tests), and every state change of an instance is a
//! conditional update that writes an event in the same transaction.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use async_trait::async_trait;

use crate::{
    error::{StoreError, StoreResult},
    model::{
        Instance, InstanceEvent, InstanceSource, InstanceStatus, LogLine, SchedulerRecord, Task, TaskConfig, TaskEvent,
        TaskEventKind, Ts, WorkerRecord,
    },
    schedule::FirePlan,
};

mod migrations;
pub mod mysql;
pub mod postgres;
mod rows;
pub(crate) mod sql;
pub mod sqlite;

/// Which database a store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite (one axd).
    Sqlite,
    /// PostgreSQL >= 12.
    Postgres,
    /// MySQL >= 8.0.1 or MariaDB >= 10.6.
    MySql,
}

/// Connection settings common to all backends.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Database URL: `sqlite://path`, `postgres://...`, `mysql://...`.
    pub url: String,
    /// Most connections in the pool.
    pub max_connections: u32,
    /// How long to wait for a connection before failing the operation.
    pub acquire_timeout: Duration,
}

impl ConnectOptions {
    /// Options for `url` with small defaults (10 connections, 5 s acquire timeout).
    pub fn new(url: impl Into<String>) -> Self {
        ConnectOptions { url: url.into(), max_connections: 10, acquire_timeout: Duration::from_secs(5) }
    }
}

/// Opens a store for `opts.url` (without migrating; call [`Store::migrate`]).
pub async fn connect(opts: &ConnectOptions) -> StoreResult<Arc<dyn Store>> {
    let url = opts.url.as_str();
    if url.starts_with("sqlite:") {
        Ok(Arc::new(sqlite::SqliteStore::connect(opts).await?))
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Ok(Arc::new(postgres::PgStore::connect(opts).await?))
    } else if url.starts_with("mysql:") || url.starts_with("mariadb:") {
        Ok(Arc::new(mysql::MySqlStore::connect(opts).await?))
    } else {
        Err(StoreError::UnsupportedUrl(url.to_owned()))
    }
}

/// A task to insert.
#[derive(Debug, Clone)]
pub struct NewTask {
    /// Unique name.
    pub name: String,
    /// Configuration.
    pub config: TaskConfig,
    /// First fire time (`None` if disabled or manual).
    pub next_fire_at: Option<Ts>,
}

/// A change to a task, applied only if its version is still `expected_version`.
#[derive(Debug, Clone)]
pub struct TaskUpdate {
    /// Task id.
    pub id: i64,
    /// Version read before computing the change.
    pub expected_version: i64,
    /// The new configuration.
    pub config: TaskConfig,
    /// `Some(x)`: set the next fire time to `x`; `None`: keep it.
    pub next_fire_at: Option<Option<Ts>>,
    /// Task event to record.
    pub event: (TaskEventKind, String),
}

/// What the trigger loop decides for one claimed task.
#[derive(Debug, Clone)]
pub enum PlanDecision {
    /// Create these instances and move the next fire time.
    Fire(FirePlan),
    /// The stored schedule cannot be evaluated: disable the task and record why.
    Broken(String),
}

/// Computes the plan of a due task (the trigger engine, injected so the store stays free of
/// scheduling policy).
pub trait Planner: Sync {
    /// The plan for `task`, whose next fire time is due.
    fn plan(&self, task: &Task) -> PlanDecision;
}

/// What one trigger round did.
#[derive(Debug, Clone, Default)]
pub struct TriggerRound {
    /// Tasks claimed.
    pub tasks: usize,
    /// Instances created: (id, app, available_at).
    pub created: Vec<(i64, String, Ts)>,
    /// Instances recorded as SKIPPED by the concurrency policy.
    pub skipped: usize,
}

/// Filter of [`Store::list_instances`].
#[derive(Debug, Clone, Default)]
pub struct InstanceFilter {
    /// Only this task name.
    pub task_name: Option<String>,
    /// Only this status.
    pub status: Option<InstanceStatus>,
    /// Only ids below this (pagination, newest first).
    pub before_id: Option<i64>,
    /// Most rows.
    pub limit: u32,
}

/// A manual trigger.
#[derive(Debug, Clone)]
pub struct ManualTrigger {
    /// JSON params for the instance.
    pub params: String,
    /// Idempotency key.
    pub key: String,
    /// Who triggered (for the event trail).
    pub actor: String,
}

/// Outcome of a cancel request.
#[derive(Debug, Clone)]
pub enum CancelOutcome {
    /// Canceled; if the attempt was held by a worker, a Cancel command was queued for its axd.
    Canceled(Instance),
    /// Already terminal; nothing changed.
    AlreadyFinal(Instance),
    /// No such instance.
    NotFound,
}

/// Outcome of a retry request.
#[derive(Debug, Clone)]
pub enum RetryOutcome {
    /// Back to PENDING.
    Retried(Instance),
    /// Not terminal; nothing changed.
    NotFinal(Instance),
    /// No such instance.
    NotFound,
}

/// Counts for `GetClusterStats`.
#[derive(Debug, Clone, Default)]
pub struct ClusterStats {
    /// Tasks.
    pub tasks: u64,
    /// Enabled tasks.
    pub enabled_tasks: u64,
    /// Instances per status.
    pub instances: BTreeMap<InstanceStatus, u64>,
    /// Worker sessions.
    pub workers: u64,
    /// Live schedulers.
    pub schedulers: u64,
}

/// Who makes a change, for event trails.
#[derive(Debug, Clone)]
pub struct Actor<'a> {
    /// The axd making the change.
    pub scheduler_id: &'a str,
    /// The caller (certificate identity, or "anonymous" without TLS).
    pub caller: &'a str,
}

/// An instance row to create (used by triggers).
#[derive(Debug, Clone)]
pub(crate) struct NewInstance {
    pub fire_at: Ts,
    pub available_at: Ts,
    pub key: String,
    pub source: InstanceSource,
    pub status: InstanceStatus,
    pub params: String,
    pub reason: String,
}

/// A PENDING instance offered to the dispatcher's routing decision.
#[derive(Debug, Clone)]
pub struct ReadyInstance {
    /// Instance id.
    pub id: i64,
    /// App.
    pub app: String,
    /// Handler.
    pub handler: String,
    /// Routing strategy copied from the task.
    pub routing: crate::model::Routing,
    /// Attempts so far (the dispatch makes it `attempt + 1`).
    pub attempt: u32,
    /// Not due yet (`available_at` is after the claim's `now`): only a stream that holds an
    /// assignment until its start time may take it.
    pub early: bool,
}

/// The stream chosen for a ready instance.
#[derive(Debug, Clone)]
pub struct SessionRef {
    /// Session id.
    pub session_id: String,
    /// Worker id of the session.
    pub worker_id: String,
}

/// Demand of one app: handlers that have streams with free credits, and how many instances at most.
#[derive(Debug, Clone)]
pub struct AppDemand {
    /// App.
    pub app: String,
    /// Handlers served by streams with free credits.
    pub handlers: Vec<String>,
    /// Free credits of those streams together.
    pub limit: u32,
    /// Claim instances available up to this time: the claim's `now`, or later when streams of the
    /// app hold early assignments until their start time (`Hello.start_after_supported`).
    pub until: Ts,
}

/// An instance marked DISPATCHED to a session: what goes into `Assign`.
#[derive(Debug, Clone)]
pub struct Assignment {
    /// The instance as it is now (DISPATCHED, new attempt).
    pub instance: Instance,
    /// The stream.
    pub session_id: String,
}

/// How an attempt ends, as reported or decided.
#[derive(Debug, Clone)]
pub enum AttemptEnd {
    /// The handler succeeded.
    Success {
        /// Summary.
        message: String,
        /// Output.
        output: String,
    },
    /// The handler failed.
    Failed {
        /// Error message.
        message: String,
        /// Whether the retry policy may run it again.
        retryable: bool,
    },
}

/// A result reported by a worker session.
#[derive(Debug, Clone)]
pub struct Completion {
    /// Instance id.
    pub instance_id: i64,
    /// Attempt.
    pub attempt: u32,
    /// Reporting session.
    pub session_id: String,
    /// Reporting worker.
    pub worker_id: String,
    /// Outcome.
    pub end: AttemptEnd,
    /// When the handler ended, on the worker's clock (for the trail of a late result).
    pub finished_at: Option<Ts>,
}

/// What happened to a reported result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompleteOutcome {
    /// The instance moved to this status (PENDING when a retry was scheduled).
    Applied(InstanceStatus),
    /// Nothing changed; why (recorded as an event when the instance exists).
    Ignored(String),
}

/// What happened to an `Accepted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcceptOutcome {
    /// DISPATCHED -> RUNNING.
    Started {
        /// The earlier of the run deadline and the lease: when the sweeper may have to act.
        wake_at: Ts,
    },
    /// Already RUNNING on this session (duplicate Accepted).
    AlreadyRunning,
    /// The attempt is not current for this session: the worker must stop it.
    NotCurrent(String),
}

/// A message from a worker that changes an instance.
#[derive(Debug, Clone)]
pub enum WorkerOp {
    /// The attempt started.
    Accepted {
        /// Instance.
        instance_id: i64,
        /// Attempt.
        attempt: u32,
        /// Session that sent it.
        session_id: String,
    },
    /// The attempt ended.
    Result(Completion),
    /// The worker will not run it (or it could not be delivered).
    Reject {
        /// Instance.
        instance_id: i64,
        /// Attempt.
        attempt: u32,
        /// Session that held it.
        session_id: String,
        /// Why, for the trail.
        reason: String,
    },
}

impl WorkerOp {
    /// The instance it is about.
    pub fn instance_id(&self) -> i64 {
        match self {
            WorkerOp::Accepted { instance_id, .. } | WorkerOp::Reject { instance_id, .. } => *instance_id,
            WorkerOp::Result(c) => c.instance_id,
        }
    }
}

/// What happened to a [`WorkerOp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerOpOutcome {
    /// For Accepted.
    Accepted(AcceptOutcome),
    /// For Result.
    Result(CompleteOutcome),
    /// For Reject: whether it went back to PENDING.
    Rejected(bool),
}

/// What [`Store::open_session`] decided about the attempts a worker re-announced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reopened {
    /// Still this worker's: they move to the new session as RUNNING with a fresh lease.
    pub adopted: Vec<(i64, u32)>,
    /// No longer this worker's, but they were assigned to it: a late Result for them is recorded
    /// on the instance's trail.
    pub released_to_worker: Vec<(i64, u32)>,
}

/// A session's live numbers, written by the lease loop.
#[derive(Debug, Clone)]
pub struct SessionSync {
    /// Session id.
    pub session_id: String,
    /// Unused credits.
    pub credits: u32,
    /// Outstanding assignments.
    pub in_flight: u32,
    /// Last message from the worker.
    pub last_seen_at: Ts,
}

/// A command for the axd holding a worker's stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The axd holding the stream.
    pub scheduler_id: String,
    /// Target session.
    pub session_id: String,
    /// Instance.
    pub instance_id: i64,
    /// Attempt to stop.
    pub attempt: u32,
    /// Why.
    pub reason: String,
}

/// What a sweep changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// DISPATCHED attempts never accepted, back to PENDING.
    pub ack_timeouts: usize,
    /// RUNNING attempts past their deadline.
    pub timeouts: usize,
    /// RUNNING attempts whose worker was lost.
    pub lost: usize,
    /// Finished instances purged by retention.
    pub purged: u64,
}

/// A change other axd should hear about at once (PostgreSQL NOTIFY; other backends rely on polling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Instances became available (or will at a known time): dispatchers look again.
    Work,
    /// A task was created or changed: trigger loops recompute their sleep.
    Tasks,
    /// A command was queued for the axd with this id.
    Commands(String),
}

impl Notice {
    /// The channel it travels on.
    pub fn channel(&self) -> &'static str {
        match self {
            Notice::Work => "ax_work",
            Notice::Tasks => "ax_tasks",
            Notice::Commands(_) => "ax_commands",
        }
    }

    /// Every channel.
    pub const CHANNELS: [&'static str; 3] = ["ax_work", "ax_tasks", "ax_commands"];

    /// Parses a received notification.
    pub fn parse(channel: &str, payload: &str) -> Option<Notice> {
        match channel {
            "ax_work" => Some(Notice::Work),
            "ax_tasks" => Some(Notice::Tasks),
            "ax_commands" => Some(Notice::Commands(payload.to_owned())),
            _ => None,
        }
    }

    /// The payload it carries.
    pub fn payload(&self) -> &str {
        match self {
            Notice::Commands(id) => id,
            Notice::Work | Notice::Tasks => "",
        }
    }
}

/// The storage contract. Written once in `sql.rs`, run against every backend by the contract tests.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Which backend this is.
    fn backend(&self) -> Backend;

    /// Applies pending migrations (safe when several axd start together: the migrator takes a
    /// database lock).
    async fn migrate(&self) -> StoreResult<()>;

    /// The database's current time.
    async fn db_now(&self) -> StoreResult<Ts>;

    /// Closes the pool.
    async fn close(&self);

    /// Receives notifications from other axd and calls `on` for each, until the connection fails
    /// (then it returns the error; call again). Returns `Ok(false)` at once on backends without
    /// notifications, whose loops poll instead.
    async fn listen(&self, on: &(dyn Fn(Notice) + Send + Sync)) -> StoreResult<bool>;

    // ----- tasks

    /// Inserts a task; [`StoreError::UniqueViolation`] if the name exists.
    async fn create_task(&self, task: &NewTask, now: Ts, actor: &Actor<'_>) -> StoreResult<Task>;

    /// The task with this name.
    async fn get_task(&self, name: &str) -> StoreResult<Option<Task>>;

    /// Tasks ordered by name, after `after_name`, optionally of one app.
    async fn list_tasks(&self, app: Option<&str>, after_name: Option<&str>, limit: u32) -> StoreResult<Vec<Task>>;

    /// Applies `update` if the task's version is unchanged; `None` if it changed (retry) or is gone.
    async fn update_task(&self, update: &TaskUpdate, now: Ts, actor: &Actor<'_>) -> StoreResult<Option<Task>>;

    /// Deletes a task and cancels its PENDING instances; `None` if there is no such task.
    async fn delete_task(&self, name: &str, now: Ts, actor: &Actor<'_>) -> StoreResult<Option<u64>>;

    /// The most recent task events, newest first.
    async fn task_events(&self, task_id: i64, limit: u32) -> StoreResult<Vec<TaskEvent>>;

    // ----- trigger

    /// When the trigger loop should next claim: the earliest next fire of tasks that allow overlap
    /// minus `lookahead`, or of FORBID tasks (claimed only once due).
    async fn next_wake_time(&self, lookahead: Duration) -> StoreResult<Option<Ts>>;

    /// Claims up to `limit` tasks due by `horizon` (FORBID tasks: due by `now`) with SKIP LOCKED
    /// where supported, creates their instances as planned, advances their next fire times, in one
    /// transaction.
    async fn trigger_due(
        &self,
        now: Ts,
        horizon: Ts,
        limit: u32,
        planner: &dyn Planner,
        scheduler_id: &str,
    ) -> StoreResult<TriggerRound>;

    /// Creates a manual instance, or returns the existing one for the same key (`false`).
    async fn trigger_manual(
        &self,
        task: &Task,
        trigger: &ManualTrigger,
        now: Ts,
        scheduler_id: &str,
    ) -> StoreResult<(Instance, bool)>;

    // ----- instances

    /// One instance.
    async fn get_instance(&self, id: i64) -> StoreResult<Option<Instance>>;

    /// Instances newest first.
    async fn list_instances(&self, filter: &InstanceFilter) -> StoreResult<Vec<Instance>>;

    /// The event trail of an instance, oldest first.
    async fn instance_events(&self, id: i64) -> StoreResult<Vec<InstanceEvent>>;

    /// Cancels an instance (see [`CancelOutcome`]).
    async fn cancel_instance(&self, id: i64, reason: &str, now: Ts, actor: &Actor<'_>) -> StoreResult<CancelOutcome>;

    /// Makes a terminal instance PENDING again.
    async fn retry_instance(&self, id: i64, now: Ts, actor: &Actor<'_>) -> StoreResult<RetryOutcome>;

    /// Log lines of an instance after `after_seq`, and the count of dropped lines.
    async fn instance_logs(&self, id: i64, after_seq: i64, limit: u32) -> StoreResult<(Vec<LogLine>, u64)>;

    // ----- cluster

    /// Registers (or refreshes) this axd.
    async fn heartbeat_scheduler(&self, record: &SchedulerRecord) -> StoreResult<()>;

    /// Removes this axd's registration.
    async fn remove_scheduler(&self, scheduler_id: &str) -> StoreResult<()>;

    /// All registered axd.
    async fn list_schedulers(&self) -> StoreResult<Vec<SchedulerRecord>>;

    /// Worker sessions, optionally of one app.
    async fn list_workers(&self, app: Option<&str>) -> StoreResult<Vec<WorkerRecord>>;

    /// Counts. Schedulers are live if their heartbeat is newer than `alive_since`.
    async fn cluster_stats(&self, alive_since: Ts) -> StoreResult<ClusterStats>;

    /// Removes schedulers whose heartbeat is older than `dead_before`, with their worker sessions
    /// and undelivered commands. Returns how many schedulers were removed.
    async fn purge_dead_schedulers(&self, dead_before: Ts) -> StoreResult<u64>;

    // ----- worker sessions

    /// Records a new session and re-adopts the attempts it lists (same worker id, still DISPATCHED
    /// or RUNNING on that attempt): they move to this session as RUNNING with a fresh lease. The
    /// others are no longer this worker's; those that were assigned to it are reported so that
    /// their late results can be recorded.
    async fn open_session(
        &self,
        worker: &WorkerRecord,
        in_flight: &[(i64, u32)],
        now: Ts,
        lease_until: Ts,
    ) -> StoreResult<Reopened>;

    /// Ends a session: its held attempts keep their state until `grace_until` (for the worker to come
    /// back and re-announce them), with an event saying why; the session row is removed.
    async fn close_session(
        &self,
        session_id: &str,
        reason: &str,
        now: Ts,
        grace_until: Ts,
        scheduler_id: &str,
    ) -> StoreResult<()>;

    /// Renews, until `lease_until`, the leases of these attempts (instance ids) of these live
    /// sessions (each still DISPATCHED or RUNNING on one of the sessions), and refreshes the
    /// sessions' rows.
    async fn sync_sessions(
        &self,
        sessions: &[SessionSync],
        renew: &[crate::registry::Renewal],
        lease_until: Ts,
    ) -> StoreResult<()>;

    // ----- dispatch

    /// Claims PENDING instances available by each app's `until` for the demanded (app, handler)
    /// pairs, at most each app's limit, oldest first (SKIP LOCKED where supported); those not
    /// available by `now` are offered as `early`. `route` picks a session for each
    /// (and reserves its credit) or declines; chosen ones become DISPATCHED with attempt + 1 and
    /// lease `lease_until`, in one transaction.
    async fn claim_ready(
        &self,
        now: Ts,
        demand: &[AppDemand],
        lease_until: Ts,
        scheduler_id: &str,
        route: &mut (dyn for<'r> FnMut(&'r ReadyInstance) -> Option<SessionRef> + Send),
    ) -> StoreResult<Vec<Assignment>>;

    /// The earliest `available_at` of PENDING instances of these apps.
    async fn next_available(&self, apps: &[String]) -> StoreResult<Option<Ts>>;

    /// Applies worker messages (Accepted, Result, Reject) in order, in one transaction (group
    /// commit across streams): the rows are locked, the state machine of `lifecycle.rs` decides, and
    /// changed rows, events, queued cancels and FIXED_DELAY next fires are written together.
    async fn apply_worker_ops(
        &self,
        ops: &[WorkerOp],
        now: Ts,
        lease_until: Ts,
        scheduler_id: &str,
    ) -> StoreResult<Vec<WorkerOpOutcome>>;

    /// Latest progress of the current attempt of the session.
    async fn record_progress(
        &self,
        id: i64,
        attempt: u32,
        session_id: &str,
        percent: u32,
        message: &str,
        now: Ts,
    ) -> StoreResult<()>;

    /// Appends a log line of an instance of `app` (at most 1000 per instance; more are counted as
    /// dropped).
    async fn append_log(&self, id: i64, attempt: u32, app: &str, level: &str, at: Ts, message: &str)
    -> StoreResult<()>;

    // ----- sweeper

    /// Expires, in bounded batches claimed with SKIP LOCKED: DISPATCHED attempts whose lease passed
    /// (back to PENDING), RUNNING attempts past their deadline (TIMEOUT, Cancel queued, retry policy)
    /// and RUNNING attempts whose lease passed (worker lost, retry policy).
    async fn sweep(&self, now: Ts, limit: u32, scheduler_id: &str) -> StoreResult<SweepReport>;

    /// The earliest lease or deadline that a sweep would act on.
    async fn next_deadline(&self) -> StoreResult<Option<Ts>>;

    /// Deletes finished instances (and their events and logs) that finished before `before`.
    async fn purge_finished(&self, before: Ts, limit: u32) -> StoreResult<u64>;

    /// Takes (and deletes) commands for this axd.
    async fn take_commands(&self, scheduler_id: &str, limit: u32) -> StoreResult<Vec<Command>>;
}
