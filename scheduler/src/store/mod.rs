//! Persistence: a thin executor over SQLite, PostgreSQL and MySQL/MariaDB.
//!
//! The store makes no scheduling decision. [`Store`] opens a [`Tx`] (a transaction, or a plain
//! connection for reads), and `Tx` hands out one narrow handle per group of tables ([`Tasks`],
//! [`Instances`], [`Flow`], [`Calendars`], [`Cluster`], [`Limits`], [`Alerts`], [`Audit`],
//! [`Intake`]), each offering the operations on those tables, each one statement or one batch,
//! named for what it does: `tx.tasks().claim_due_tasks(..)`, `tx.instances().insert_instances(..)`,
//! `tx.instances().write_instances(..)`, `tx.instances().select_ready(..)`, … The modules that own a
//! decision — the trigger, dispatch, the transitions, the sweeper, worker sessions — compose them
//! inside their own transactions. The raw statements (`execute`, `fetch`) are the store's own.
//!
//! Dialects differ only through a [`dialect::Dialect`] value (constants and a few small functions)
//! and each backend's sqlx driver (`sqlite.rs`, `postgres.rs`, `mysql.rs`: connecting, migrating,
//! binding and decoding, LISTEN). Every time-dependent operation takes `now` from the caller (the
//! database clock in production, a manual clock in tests).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use async_trait::async_trait;

use crate::{
    error::{StoreError, StoreResult},
    model::{InstanceSource, InstanceStatus, TaskConfig, TaskEventKind, Ts},
};

mod alerts;
mod audit;
mod bulk;
mod cluster;
pub mod dialect;
pub(crate) mod exec;
mod flow;
mod history;
mod instances;
mod intake;
mod json_columns;
mod keys;
mod migrations;
pub mod mysql;
pub(crate) mod pg_hosts;
pub mod postgres;
mod ready;
mod routing;
mod sessions_log;
pub mod sqlite;
pub(crate) mod tables;
mod tags;
mod tasks;
pub(crate) mod value;

pub use alerts::{ConditionState, DeliveryEnd, DeliveryFilter};
pub use audit::{AuditEntry, AuditFilter};
pub use bulk::{Matched, Selector};
pub use flow::Edge;
pub use instances::{Expiry, InstanceRow};
pub use intake::IntakeRow;
pub use keys::UniqueHold;
pub use ready::ReadyFilter;
pub use routing::{StreakKey, TaskRoom};
pub use tags::TagFilter;
pub use tasks::NextTriggerWork;

use dialect::Dialect;
use exec::Exec;
use value::{Row, Stmt};

/// The largest batch of rows written by one multi-row statement (well under every backend's limit
/// on bound parameters).
pub(crate) const BATCH: usize = 500;

/// What each backend provides: transactions, connections, migrations, notifications.
#[async_trait]
pub(crate) trait Pool: Send + Sync + 'static {
    /// A write transaction (SQLite: `BEGIN IMMEDIATE`).
    async fn begin(&self) -> StoreResult<Box<dyn Exec>>;
    /// A connection for autocommit statements.
    async fn conn(&self) -> StoreResult<Box<dyn Exec>>;
    /// Applies the embedded migrations under a database-wide lock.
    async fn migrate(&self) -> StoreResult<()>;
    /// Receives notifications until the connection fails; `Ok(false)` at once without them.
    async fn listen(&self, on: &(dyn Fn(Notice) + Send + Sync)) -> StoreResult<bool>;
    /// Closes the pool.
    async fn close(&self);
    /// Connections open, and of those idle.
    fn usage(&self) -> (u32, usize);
}

/// A database: SQLite, PostgreSQL or MySQL/MariaDB.
pub struct Store {
    pool: Box<dyn Pool>,
    d: &'static Dialect,
    /// Which role this pool serves (the `role` label of its metrics).
    role: &'static str,
    max_connections: u32,
    /// `ax_db_pool_wait_seconds{role}`, looked up once (a no-op handle while metrics are off).
    wait: metrics::Histogram,
    /// Whether instance rows hold their happy path's trail ([`crate::model::trail`]); on unless
    /// turned off to compare trails.
    trail_in_row: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("backend", &self.d.backend).finish()
    }
}

/// Opens a store for `opts.url` (without migrating; call [`Store::migrate`]).
pub async fn connect(opts: &ConnectOptions) -> StoreResult<Arc<Store>> {
    let url = opts.url.as_str();
    let (pool, d): (Box<dyn Pool>, &'static Dialect) = if url.starts_with("sqlite:") {
        (Box::new(sqlite::SqlitePool::connect(opts).await?), &dialect::SQLITE)
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        (Box::new(postgres::PgPool::connect(opts).await?), &dialect::POSTGRES)
    } else if url.starts_with("mysql:") || url.starts_with("mariadb:") {
        (Box::new(mysql::MySqlPool::connect(opts).await?), &dialect::MYSQL)
    } else {
        // Only the scheme: the rest may hold a password.
        let scheme = url.split_once(':').map_or(url, |(s, _)| s);
        return Err(StoreError::UnsupportedUrl(scheme.chars().take(32).collect()));
    };
    let wait = metrics::histogram!(crate::prometheus::POOL_WAIT, "role" => opts.role);
    Ok(Arc::new(Store {
        pool,
        d,
        role: opts.role,
        max_connections: opts.max_connections,
        wait,
        trail_in_row: std::sync::atomic::AtomicBool::new(true),
    }))
}

impl Store {
    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        self.d.backend
    }

    /// Whether instance rows hold their happy path's trail (the default) or every event is written
    /// as a row, as before migration 10: both give readers the same trail (the trail test compares
    /// them); off costs three event rows per instance.
    pub fn set_trail_in_row(&self, on: bool) {
        self.trail_in_row.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    fn tx(&self, exec: Box<dyn Exec>) -> Tx {
        Tx { exec, d: self.d, trail_in_row: self.trail_in_row.load(std::sync::atomic::Ordering::Relaxed) }
    }

    /// Starts a write transaction.
    pub async fn begin(&self) -> StoreResult<Tx> {
        let t0 = std::time::Instant::now();
        let exec = self.pool.begin().await?;
        self.wait.record(t0.elapsed().as_secs_f64());
        Ok(self.tx(exec))
    }

    /// A connection for reads and single autocommit statements.
    pub async fn conn(&self) -> StoreResult<Tx> {
        let t0 = std::time::Instant::now();
        let exec = self.pool.conn().await?;
        self.wait.record(t0.elapsed().as_secs_f64());
        Ok(self.tx(exec))
    }

    /// The role this pool serves, its connections in use (checked out) and its limit.
    pub fn usage(&self) -> (&'static str, u32, u32) {
        let (open, idle) = self.pool.usage();
        (self.role, open.saturating_sub(u32::try_from(idle).unwrap_or(u32::MAX)), self.max_connections)
    }

    /// Applies pending migrations (safe when several axd start together: the migrator takes a
    /// database lock).
    pub async fn migrate(&self) -> StoreResult<()> {
        self.pool.migrate().await
    }

    /// Closes the pool.
    pub async fn close(&self) {
        self.pool.close().await
    }

    /// Receives notifications from other axd and calls `on` for each, until the connection fails
    /// (then it returns the error; call again). Returns `Ok(false)` at once on backends without
    /// notifications, whose loops poll instead.
    pub async fn listen(&self, on: &(dyn Fn(Notice) + Send + Sync)) -> StoreResult<bool> {
        self.pool.listen(on).await
    }
}

/// Forwards reads (and single autocommit statements) from [`Store`] to a [`Tx`] on a pooled
/// connection, so callers that need no transaction write `store.tasks().get_task(name)`.
macro_rules! on_a_connection {
    ($($(#[$m:meta])* fn $name:ident($($arg:ident: $ty:ty),*) $(in $group:ident)? -> $ret:ty;)*) => {
        impl Store {
            $(
                $(#[$m])*
                pub async fn $name(&self, $($arg: $ty),*) -> StoreResult<$ret> {
                    self.conn().await?$(.$group())?.$name($($arg),*).await
                }
            )*
        }
    };
}

on_a_connection! {
    /// The database's current time.
    fn db_now() -> Ts;
    /// The task with this name.
    fn get_task(name: &str) in tasks -> Option<crate::model::Task>;
    /// Tasks ordered by name, after `after_name`, optionally only of some apps.
    fn list_tasks(apps: Option<&[String]>, after_name: Option<&str>, limit: u32) in tasks -> Vec<crate::model::Task>;
    /// The most recent task events, newest first.
    fn task_events(task_id: i64, limit: u32) in tasks -> Vec<crate::model::TaskEvent>;
    /// One instance.
    fn get_instance(id: i64) in instances -> Option<crate::model::Instance>;
    /// Instances newest first.
    fn list_instances(filter: &InstanceFilter) in instances -> Vec<crate::model::Instance>;
    /// The event trail of an instance, oldest first.
    fn instance_events(id: i64) in instances -> Vec<crate::model::InstanceEvent>;
    /// Log lines of an instance after `after_seq`, and the count of dropped lines.
    fn instance_logs(id: i64, after_seq: i64, limit: u32) in instances -> (Vec<crate::model::LogLine>, u64);
    /// Worker sessions, optionally of one app.
    fn list_workers(app: Option<&str>) in cluster -> Vec<crate::model::WorkerRecord>;
    /// Worker sessions held by a live axd (heartbeat at or after `alive_since`).
    fn live_workers(app: Option<&str>, alive_since: Ts) in cluster -> Vec<crate::model::WorkerRecord>;
    /// Every registered axd.
    fn list_schedulers() in cluster -> Vec<crate::model::SchedulerRecord>;
    /// Counts; schedulers are live if their heartbeat is newer than `alive_since`.
    fn cluster_stats(alive_since: Ts) in cluster -> ClusterStats;
    /// PENDING instances per app.
    fn pending_by_app() in instances -> Vec<(String, u64)>;
    /// Registers (or refreshes) an axd.
    fn upsert_scheduler(record: &crate::model::SchedulerRecord) in cluster -> ();
    /// Removes an axd's registration.
    fn delete_scheduler(scheduler_id: &str) in cluster -> ();
    /// Records one audited call.
    fn insert_audit(entry: &AuditEntry) in audit -> ();
    /// Audit entries newest first.
    fn list_audit(filter: &AuditFilter) in audit -> Vec<AuditEntry>;
    /// The alert rule with this name.
    fn get_alert_rule(name: &str) in alerts -> Option<crate::model::alerts::AlertRule>;
    /// Alert rules ordered by name, optionally only of some apps.
    fn list_alert_rules(apps: Option<&[String]>) in alerts -> Vec<crate::model::alerts::AlertRule>;
    /// Alert deliveries newest first.
    fn list_deliveries(filter: &DeliveryFilter) in alerts -> Vec<crate::model::alerts::Delivery>;
    /// One alert delivery.
    fn get_delivery(id: i64) in alerts -> Option<crate::model::alerts::Delivery>;
    /// Worker failure streaks, optionally only of some apps.
    fn list_streaks(apps: Option<&[String]>) in limits -> Vec<crate::model::WorkerStreak>;
    /// App rate limits, optionally only of some apps.
    fn list_app_limits(apps: Option<&[String]>) in limits -> Vec<crate::model::AppLimit>;
    /// A parent's children by shard index.
    fn children_of(parent_id: i64, limit: u32) in instances -> Vec<crate::model::Instance>;
    /// The label selectors tasks use, per app.
    fn task_selectors() in tasks -> std::collections::HashMap<String, Vec<String>>;
}

/// One unit of work: a transaction (from [`Store::begin`], committed with [`Tx::commit`] and
/// rolled back when dropped) or a plain connection (from [`Store::conn`]).
pub struct Tx {
    exec: Box<dyn Exec>,
    d: &'static Dialect,
    trail_in_row: bool,
}

impl Tx {
    /// Whether instance rows hold their happy path's trail ([`Store::set_trail_in_row`]).
    pub fn trail_in_row(&self) -> bool {
        self.trail_in_row
    }

    /// Commits (nothing to do on a plain connection).
    pub async fn commit(self) -> StoreResult<()> {
        self.exec.commit().await
    }

    /// Rolls back and waits until the server has, so that its row locks are released when this
    /// returns. Dropping a transaction rolls it back too, but sqlx sends that ROLLBACK only when the
    /// connection goes back to the pool, in a task of its own: another transaction begun at once
    /// may still find the rows locked (SKIP LOCKED then skips them).
    pub async fn rollback(self) -> StoreResult<()> {
        self.exec.rollback().await
    }

    pub(super) async fn execute(&mut self, s: Stmt<'_>) -> StoreResult<u64> {
        self.exec.execute(s).await
    }

    /// Runs a query and reads each row with `read`.
    pub(super) async fn fetch<T: Send>(
        &mut self,
        s: Stmt<'_>,
        table: &'static str,
        mut read: impl FnMut(&mut Row<'_>) -> StoreResult<T> + Send,
    ) -> StoreResult<Vec<T>> {
        let mut out = Vec::new();
        self.exec
            .fetch(s, table, &mut |r| {
                out.push(read(r)?);
                Ok(())
            })
            .await?;
        Ok(out)
    }

    /// The single row of a query that always returns one, read with `read`.
    pub(super) async fn fetch_one<T: Send>(
        &mut self,
        s: Stmt<'_>,
        table: &'static str,
        read: impl FnMut(&mut Row<'_>) -> StoreResult<T> + Send,
    ) -> StoreResult<T> {
        self.fetch(s, table, read)
            .await?
            .pop()
            .ok_or_else(|| StoreError::Corrupt { table, reason: "the query returned no row".to_owned() })
    }

    pub(super) async fn insert_id(&mut self, s: Stmt<'_>) -> StoreResult<i64> {
        self.exec.insert_id(s).await
    }

    /// The dialect of this connection.
    pub(super) fn dialect(&self) -> &'static Dialect {
        self.d
    }

    /// Tells other axd about a change when this transaction commits (PostgreSQL NOTIFY; nothing on
    /// other backends, whose loops poll).
    pub async fn notify(&mut self, notice: Notice) -> StoreResult<()> {
        if self.d.notify {
            self.execute(Stmt::new("SELECT pg_notify(?, ?)").bind(notice.channel()).bind(notice.payload())).await?;
        }
        Ok(())
    }

    /// The database's current time.
    pub async fn db_now(&mut self) -> StoreResult<Ts> {
        let us = self.fetch_one(Stmt::new(format!("SELECT {}", self.d.now_us)), "(clock)", |r| r.take()).await?;
        Ok(crate::model::from_micros(us))
    }
}

/// Narrow handles on a [`Tx`], one per group of tables: a caller names what it touches
/// (`tx.instances().write_instances(..)`, `tx.tasks().lock_task(..)`) and sees only those
/// statements. Each borrows the transaction for as long as it is used.
macro_rules! handles {
    ($($(#[$m:meta])* $method:ident => $ty:ident;)*) => {
        $(
            $(#[$m])*
            pub struct $ty<'t> {
                tx: &'t mut Tx,
            }
        )*
        impl Tx {
            $(
                $(#[$m])*
                pub fn $method(&mut self) -> $ty<'_> {
                    $ty { tx: self }
                }
            )*
        }
    };
}

handles! {
    /// The statements on tasks, their events and their schedule (`ax_task`, `ax_task_event`).
    tasks => Tasks;
    /// The statements on calendars (`ax_calendar`).
    calendars => Calendars;
    /// The statements on chains and DAG edges, links and joins (`ax_task_edge`, `ax_instance_link`, `ax_run_join`).
    flow => Flow;
    /// The statements on instances, their keys, events, progress and logs (`ax_instance`,
    /// `ax_instance_key`, `ax_instance_event`, `ax_instance_log`).
    instances => Instances;
    /// The statements on axd registrations, worker sessions, their log and commands between axd
    /// (`ax_scheduler`, `ax_worker`, `ax_session_log`, `ax_command`).
    cluster => Cluster;
    /// The statements on worker failure streaks, task and app limits (`ax_worker_streak`,
    /// `ax_task_limit`, `ax_app_limit`).
    limits => Limits;
    /// The statements on alert rules, deliveries and conditions (`ax_alert_rule`, `ax_alert_delivery`, `ax_alert_condition`).
    alerts => Alerts;
    /// The statements on the audit log (`ax_audit`).
    audit => Audit;
    /// The statements on the intake table (`ax_intake`).
    intake => Intake;
}

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
    /// The role of the pool (admin, trigger, dispatch, workers, sweeper, metrics; `shared` by default): the
    /// `role` label of its metrics.
    pub role: &'static str,
    /// PostgreSQL behind a transaction pooler (PgBouncer `pool_mode = transaction`): no prepared
    /// statement is kept, and every statement runs in a transaction.
    pub transaction_pooler: bool,
}

impl ConnectOptions {
    /// Options for `url` with small defaults (10 connections, 5 s acquire timeout).
    pub fn new(url: impl Into<String>) -> Self {
        ConnectOptions {
            url: url.into(),
            max_connections: 10,
            acquire_timeout: Duration::from_secs(5),
            role: "shared",
            transaction_pooler: false,
        }
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

/// Filter of [`Store::list_instances`].
#[derive(Debug, Clone, Default)]
pub struct InstanceFilter {
    /// Only this task name.
    pub task_name: Option<String>,
    /// Only this status.
    pub status: Option<InstanceStatus>,
    /// Only instances of these apps (`None`: every app).
    pub apps: Option<Vec<String>>,
    /// Only instances whose fire (trigger) time is at or after this.
    pub triggered_since: Option<Ts>,
    /// Only instances whose fire (trigger) time is before this.
    pub triggered_before: Option<Ts>,
    /// Only instances matching every one of these (tags, task labels, search params).
    pub tags: Vec<TagFilter>,
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
    /// When it runs (`None`: at once).
    pub run_at: Option<Ts>,
    /// The instance's tags (name, value), checked.
    pub tags: Vec<(String, String)>,
}

/// Counts for `GetClusterStats`.
#[derive(Debug, Clone, Default)]
pub struct ClusterStats {
    pub tasks: u64,
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
pub struct NewInstance {
    pub fire_at: Ts,
    pub available_at: Ts,
    pub key: String,
    pub source: InstanceSource,
    pub status: InstanceStatus,
    pub params: String,
    pub reason: String,
    /// W3C traceparent of the instance's root span (its fire or manual trigger) when axd traces;
    /// stored so that every later span of the instance, on any axd, joins its trace.
    pub trace_parent: Option<String>,
    /// Routing inputs (priority, selector, retry target, hash key, parent and shard, pinned worker).
    pub route: crate::model::InstanceRoute,
    /// Its workflow run and the instance whose final state created it (chains and DAG edges).
    pub lineage: crate::model::Lineage,
    /// Its tags (name, value): a trigger's, and `params.PATH` ones of its task's search params.
    pub tags: Vec<(String, String)>,
}

/// A session's live numbers, written by the lease loop (a model type: the registry makes them).
pub use crate::model::SessionSync;

/// A command for the axd holding a worker's stream (a model type: the state machine decides them).
pub use crate::model::Command;

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
