//! Column lists and the conversion between plain column values and domain types, shared by all
//! backends (each backend only reads columns into these raw structs).

use std::{collections::BTreeMap, num::NonZeroU32, str::FromStr, time::Duration};

use crate::{
    error::{StoreError, StoreResult},
    model::{
        Backoff, CronDialect, Instance, InstanceEvent, RetryPolicy, Schedule, ScheduleKind, Task, TaskConfig,
        duration_micros, from_micros, to_micros,
    },
};

/// Columns of `ax_task`, in the order [`TaskRaw`] reads them.
pub(crate) const TASK_COLUMNS: &str = "id, name, app, handler, description, schedule_kind, cron_expr, cron_dialect, \
    time_zone, interval_us, start_at, params, enabled, next_fire_at, misfire_policy, misfire_threshold_us, \
    max_catch_up, concurrency_policy, routing, timeout_us, max_retries, backoff, labels, version, created_at, updated_at";

/// Columns of `ax_instance`, in the order [`InstanceRaw`] reads them.
pub(crate) const INSTANCE_COLUMNS: &str = "id, task_id, task_name, app, handler, params, idempotency_key, source, \
    fire_at, available_at, status, attempt, max_retries, failures, timeout_us, backoff, routing, worker_id, session_id, \
    scheduler_id, lease_expires_at, deadline_at, started_at, finished_at, message, output, progress_percent, \
    progress_message, created_at, updated_at";

/// Columns of `ax_instance_event`.
pub(crate) const EVENT_COLUMNS: &str =
    "id, instance_id, at, from_status, to_status, attempt, scheduler_id, worker_id, reason";

fn corrupt(table: &'static str, reason: impl Into<String>) -> StoreError {
    StoreError::Corrupt { table, reason: reason.into() }
}

fn parse<T: FromStr<Err = String>>(table: &'static str, v: &str) -> StoreResult<T> {
    v.parse::<T>().map_err(|e| corrupt(table, e))
}

fn micros_duration(us: i64) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0))
}

fn u32_of(table: &'static str, column: &str, v: i32) -> StoreResult<u32> {
    u32::try_from(v).map_err(|_| corrupt(table, format!("{column} = {v} is negative")))
}

/// `ax_task` as stored.
#[derive(Debug, Clone)]
pub(crate) struct TaskRaw {
    pub id: i64,
    pub name: String,
    pub app: String,
    pub handler: String,
    pub description: String,
    pub schedule_kind: String,
    pub cron_expr: Option<String>,
    pub cron_dialect: Option<String>,
    pub time_zone: String,
    pub interval_us: Option<i64>,
    pub start_at: Option<i64>,
    pub params: String,
    pub enabled: bool,
    pub next_fire_at: Option<i64>,
    pub misfire_policy: String,
    pub misfire_threshold_us: i64,
    pub max_catch_up: i32,
    pub concurrency_policy: String,
    pub routing: String,
    pub timeout_us: Option<i64>,
    pub max_retries: i32,
    pub backoff: String,
    pub labels: String,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl TaskRaw {
    /// The raw columns of a configuration (for inserts and updates).
    pub fn from_config(id: i64, name: &str, c: &TaskConfig) -> TaskRaw {
        let (cron_expr, cron_dialect, time_zone, interval_us, start_at) = match &c.schedule {
            Schedule::Cron { expression, time_zone, dialect } => {
                (Some(expression.clone()), Some(dialect.as_str().to_owned()), time_zone.clone(), None, None)
            }
            Schedule::FixedRate { interval, start_at } | Schedule::FixedDelay { interval, start_at } => {
                (None, None, "UTC".to_owned(), Some(duration_micros(*interval)), Some(to_micros(*start_at)))
            }
            Schedule::OneTime { at } => (None, None, "UTC".to_owned(), None, Some(to_micros(*at))),
            Schedule::Manual => (None, None, "UTC".to_owned(), None, None),
        };
        TaskRaw {
            id,
            name: name.to_owned(),
            app: c.app.clone(),
            handler: c.handler.clone(),
            description: c.description.clone(),
            schedule_kind: c.schedule.kind().as_str().to_owned(),
            cron_expr,
            cron_dialect,
            time_zone,
            interval_us,
            start_at,
            params: c.params.clone(),
            enabled: c.enabled,
            next_fire_at: None,
            misfire_policy: c.misfire_policy.as_str().to_owned(),
            misfire_threshold_us: duration_micros(c.misfire_threshold),
            max_catch_up: i32::try_from(c.max_catch_up.get()).unwrap_or(i32::MAX),
            concurrency_policy: c.concurrency.as_str().to_owned(),
            routing: c.routing.as_str().to_owned(),
            timeout_us: c.timeout.map(duration_micros),
            max_retries: i32::try_from(c.retry.max_retries).unwrap_or(i32::MAX),
            backoff: encode_backoff(&c.retry.backoff),
            labels: encode_labels(&c.labels),
            version: 1,
            created_at: 0,
            updated_at: 0,
        }
    }

    pub fn into_task(self) -> StoreResult<Task> {
        const T: &str = "ax_task";
        let kind: ScheduleKind = parse(T, &self.schedule_kind)?;
        let need = |v: Option<i64>, col: &str| v.ok_or_else(|| corrupt(T, format!("{col} is NULL for {kind}")));
        let schedule = match kind {
            ScheduleKind::Cron => Schedule::Cron {
                expression: self.cron_expr.ok_or_else(|| corrupt(T, "cron_expr is NULL"))?,
                time_zone: self.time_zone,
                dialect: parse::<CronDialect>(T, self.cron_dialect.as_deref().unwrap_or(""))?,
            },
            ScheduleKind::FixedRate => Schedule::FixedRate {
                interval: micros_duration(need(self.interval_us, "interval_us")?),
                start_at: from_micros(need(self.start_at, "start_at")?),
            },
            ScheduleKind::FixedDelay => Schedule::FixedDelay {
                interval: micros_duration(need(self.interval_us, "interval_us")?),
                start_at: from_micros(need(self.start_at, "start_at")?),
            },
            ScheduleKind::OneTime => Schedule::OneTime { at: from_micros(need(self.start_at, "start_at")?) },
            ScheduleKind::Manual => Schedule::Manual,
        };
        let max_catch_up = u32::try_from(self.max_catch_up)
            .ok()
            .and_then(NonZeroU32::new)
            .ok_or_else(|| corrupt(T, format!("max_catch_up = {}", self.max_catch_up)))?;
        Ok(Task {
            id: self.id,
            name: self.name,
            config: TaskConfig {
                app: self.app,
                handler: self.handler,
                description: self.description,
                schedule,
                params: self.params,
                enabled: self.enabled,
                misfire_policy: parse(T, &self.misfire_policy)?,
                misfire_threshold: micros_duration(self.misfire_threshold_us),
                max_catch_up,
                concurrency: parse(T, &self.concurrency_policy)?,
                routing: parse(T, &self.routing)?,
                timeout: self.timeout_us.map(micros_duration),
                retry: RetryPolicy {
                    max_retries: u32_of(T, "max_retries", self.max_retries)?,
                    backoff: decode_backoff(T, &self.backoff)?,
                },
                labels: decode_labels(T, &self.labels)?,
            },
            next_fire_at: self.next_fire_at.map(from_micros),
            created_at: from_micros(self.created_at),
            updated_at: from_micros(self.updated_at),
            version: self.version,
        })
    }
}

/// `ax_instance` as stored.
#[derive(Debug, Clone)]
pub(crate) struct InstanceRaw {
    pub id: i64,
    pub task_id: i64,
    pub task_name: String,
    pub app: String,
    pub handler: String,
    pub params: String,
    pub idempotency_key: String,
    pub source: String,
    pub fire_at: i64,
    pub available_at: i64,
    pub status: String,
    pub attempt: i32,
    pub max_retries: i32,
    pub failures: i32,
    pub timeout_us: Option<i64>,
    pub backoff: String,
    pub routing: String,
    pub worker_id: Option<String>,
    pub session_id: Option<String>,
    pub scheduler_id: Option<String>,
    pub lease_expires_at: Option<i64>,
    pub deadline_at: Option<i64>,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub message: String,
    pub output: String,
    pub progress_percent: i32,
    pub progress_message: String,
    pub created_at: i64,
    pub updated_at: i64,
}

impl InstanceRaw {
    pub fn into_instance(self) -> StoreResult<Instance> {
        const T: &str = "ax_instance";
        Ok(Instance {
            id: self.id,
            task_id: self.task_id,
            task_name: self.task_name,
            app: self.app,
            handler: self.handler,
            params: self.params,
            idempotency_key: self.idempotency_key,
            source: parse(T, &self.source)?,
            fire_at: from_micros(self.fire_at),
            available_at: from_micros(self.available_at),
            status: parse(T, &self.status)?,
            attempt: u32_of(T, "attempt", self.attempt)?,
            max_retries: u32_of(T, "max_retries", self.max_retries)?,
            failures: u32_of(T, "failures", self.failures)?,
            timeout: self.timeout_us.map(micros_duration),
            backoff: decode_backoff(T, &self.backoff)?,
            routing: parse(T, &self.routing)?,
            worker_id: self.worker_id,
            session_id: self.session_id,
            scheduler_id: self.scheduler_id,
            lease_expires_at: self.lease_expires_at.map(from_micros),
            deadline_at: self.deadline_at.map(from_micros),
            started_at: self.started_at.map(from_micros),
            finished_at: self.finished_at.map(from_micros),
            message: self.message,
            output: self.output,
            progress_percent: u32_of(T, "progress_percent", self.progress_percent)?,
            progress_message: self.progress_message,
            created_at: from_micros(self.created_at),
            updated_at: from_micros(self.updated_at),
        })
    }
}

/// `ax_instance_event` as stored.
#[derive(Debug, Clone)]
pub(crate) struct EventRaw {
    pub id: i64,
    pub instance_id: i64,
    pub at: i64,
    pub from_status: Option<String>,
    pub to_status: String,
    pub attempt: i32,
    pub scheduler_id: String,
    pub worker_id: String,
    pub reason: String,
}

impl EventRaw {
    pub fn into_event(self) -> StoreResult<InstanceEvent> {
        const T: &str = "ax_instance_event";
        Ok(InstanceEvent {
            id: self.id,
            instance_id: self.instance_id,
            at: from_micros(self.at),
            from: self.from_status.as_deref().map(|s| parse(T, s)).transpose()?,
            to: parse(T, &self.to_status)?,
            attempt: u32_of(T, "attempt", self.attempt)?,
            scheduler_id: self.scheduler_id,
            worker_id: self.worker_id,
            reason: self.reason,
        })
    }
}

pub(crate) fn encode_backoff(b: &Backoff) -> String {
    serde_json::to_string(b).unwrap_or_else(|_| "{}".to_owned())
}

pub(crate) fn decode_backoff(table: &'static str, s: &str) -> StoreResult<Backoff> {
    serde_json::from_str(s).map_err(|e| corrupt(table, format!("backoff {s:?}: {e}")))
}

pub(crate) fn encode_labels(l: &BTreeMap<String, String>) -> String {
    serde_json::to_string(l).unwrap_or_else(|_| "{}".to_owned())
}

pub(crate) fn decode_labels(table: &'static str, s: &str) -> StoreResult<BTreeMap<String, String>> {
    serde_json::from_str(s).map_err(|e| corrupt(table, format!("labels {s:?}: {e}")))
}

pub(crate) fn encode_list(l: &[String]) -> String {
    serde_json::to_string(l).unwrap_or_else(|_| "[]".to_owned())
}

pub(crate) fn decode_list(table: &'static str, s: &str) -> StoreResult<Vec<String>> {
    serde_json::from_str(s).map_err(|e| corrupt(table, format!("list {s:?}: {e}")))
}
