//! One declaration per table: its columns, their types, the row reader and the columns that
//! batch writes set, all from the [`table!`] list; and the conversion between stored columns and
//! domain types.
//!
//! Adding a column to `ax_instance` means: its migration (one per backend), its line in
//! [`InstanceRaw`] (with `= expr` if the lifecycle writes it), and the code that uses it.

use std::{num::NonZeroU32, sync::LazyLock};

use super::json_columns::{corrupt, micros_duration, parse};
pub(crate) use super::json_columns::{
    decode_backoff, decode_labels, decode_list, decode_schedules, encode_backoff, encode_labels, encode_list,
    encode_schedules,
};
use super::value::{Column, Kind, Row, Value};
use crate::{
    error::StoreResult,
    model::{
        CooldownPolicy, CronDialect, Flow, Instance, InstanceEvent, InstanceRoute, Lineage, MAX_PRIORITY, Pause,
        Placement, RetryPolicy, Schedule, ScheduleKind, Task, TaskConfig, Timing, WorkerRecord, duration_micros,
        from_micros, to_micros, trail,
    },
};

/// The first of its arguments (the rest only drive a macro repetition).
macro_rules! first {
    ($a:expr, $($rest:tt)*) => {
        $a
    };
}

/// Declares a table's row type. Each field is a column, in the table's read order; a field with
/// `= expr` is also written by [`write_values`](InstanceRaw::write_values) from the source named
/// after `writes`.
macro_rules! table {
    ($(#[$m:meta])* $name:ident = $table:literal, writes |$src:ident: &$srcty:ty| {
        $($field:ident: $ty:ty $(= $w:expr)?,)*
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone)]
        pub(crate) struct $name {
            $(pub $field: $ty,)*
        }

        #[allow(dead_code)]
        impl $name {
            /// The table.
            pub const TABLE: &'static str = $table;
            /// Its columns, in read order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];
            /// Their kinds, in read order.
            pub const KINDS: &'static [Kind] = &[$(<$ty as Column>::KIND),*];
            /// The columns that batch writes set.
            pub const WRITE_NAMES: &'static [&'static str] = &[$($(first!(stringify!($field), $w),)?)*];
            /// Their kinds.
            pub const WRITE_KINDS: &'static [Kind] = &[$($(first!(<$ty as Column>::KIND, $w),)?)*];

            /// `NAMES` as a select list.
            pub fn columns() -> &'static str {
                static S: LazyLock<String> = LazyLock::new(|| $name::NAMES.join(", "));
                &S
            }

            /// Reads a row selected with [`Self::columns`].
            pub fn read(r: &mut Row<'_>) -> StoreResult<Self> {
                Ok($name { $($field: r.take()?,)* })
            }

            /// Every column's value, in read order.
            pub fn into_values(self) -> Vec<Value<'static>> {
                vec![$(Value::from(self.$field)),*]
            }

            /// The values of [`Self::WRITE_NAMES`] for one source row.
            pub fn write_values<'v>($src: &'v $srcty) -> Vec<Value<'v>> {
                vec![$($(first!(Value::from($w), $field),)?)*]
            }

            /// The values of [`Self::WRITE_NAMES`] for many source rows, one array per column
            /// (PostgreSQL's `UNNEST` parameters), built without a vector per row.
            #[allow(unused_variables)] // tables without batch-written columns
            pub fn write_columns<'v>(rows: &[&'v $srcty]) -> Vec<Value<'v>> {
                vec![$($(first!(
                    super::postgres::array_of(<$ty as Column>::KIND, rows.iter().copied().map(|$src| Value::from($w))),
                    $field
                ),)?)*]
            }
        }
    };
}

table! {
    /// `ax_task` as stored.
    TaskRaw = "ax_task", writes |_t: &TaskRaw| {
        id: i64,
        name: String,
        app: String,
        handler: String,
        description: String,
        schedule_kind: String,
        cron_expr: Option<String>,
        cron_dialect: Option<String>,
        time_zone: String,
        interval_us: Option<i64>,
        start_at: Option<i64>,
        params: String,
        enabled: bool,
        next_fire_at: Option<i64>,
        misfire_policy: String,
        misfire_threshold_us: i64,
        max_catch_up: i32,
        concurrency_policy: String,
        routing: String,
        timeout_us: Option<i64>,
        max_retries: i32,
        backoff: String,
        labels: String,
        version: i64,
        created_at: i64,
        updated_at: i64,
        selector: String,
        retry_on: String,
        shards: Option<i32>,
        hash_key: Option<String>,
        priority: i32,
        max_running: Option<i32>,
        max_pending: i32,
        cooldown_after: Option<i32>,
        cooldown_us: Option<i64>,
        coalesced_since: Option<i64>,
        coalesced_count: i64,
        active_from: Option<i64>,
        active_until: Option<i64>,
        exclude_dates: Option<String>,
        calendar: Option<String>,
        jitter_us: Option<i64>,
        on_success: Option<String>,
        on_failure: Option<String>,
        after_all: Option<String>,
        paused_at: Option<i64>,
        paused_by: Option<String>,
        pause_note: Option<String>,
        paused_until: Option<i64>,
        concurrency_key: Option<String>,
        concurrency_limit: Option<i32>,
        unique_key: Option<String>,
        unique_for_us: Option<i64>,
        must_finish_within_us: Option<i64>,
        on_event: Option<String>,
        event_filter: Option<String>,
        search_params: Option<String>,
        extra_schedules: Option<String>,
    }
}

table! {
    /// `ax_instance` as stored; `= expr` marks what the lifecycle changes (written in batches).
    InstanceRaw = "ax_instance", writes |i: &Instance| {
        id: i64,
        task_id: i64,
        task_name: String,
        app: String,
        handler: String,
        params: String,
        idempotency_key: String,
        source: String,
        fire_at: i64,
        available_at: i64 = to_micros(i.available_at),
        status: String = i.status.as_str(),
        attempt: i32 = i.attempt,
        max_retries: i32,
        failures: i32 = i.failures,
        timeout_us: Option<i64>,
        backoff: String,
        routing: String,
        worker_id: Option<String> = i.worker_id.as_deref(),
        session_id: Option<String> = i.session_id.as_deref(),
        scheduler_id: Option<String> = i.scheduler_id.as_deref(),
        lease_expires_at: Option<i64> = i.lease_expires_at.map(to_micros),
        deadline_at: Option<i64> = i.deadline_at.map(to_micros),
        started_at: Option<i64> = i.started_at.map(to_micros),
        finished_at: Option<i64> = i.finished_at.map(to_micros),
        message: String = i.message.as_str(),
        output: String = i.output.as_str(),
        progress_percent: i32,
        progress_message: String,
        created_at: i64,
        updated_at: i64 = to_micros(i.updated_at),
        trace_parent: Option<String>,
        priority: i32,
        ready_at: i64 = to_micros(i.ready_at()),
        selector: String = i.route.selector.as_str(),
        retry_on: String,
        hash_key: Option<String>,
        parent_id: Option<i64>,
        shard_index: Option<i32>,
        shard_total: Option<i32>,
        target_worker: Option<String>,
        run_id: Option<i64>,
        chained_from: Option<i64>,
        trail: i32 = i32::from(i.trail.bits),
        dispatched_at: Option<i64> = i.trail.dispatched_at.map(to_micros),
        concurrency_value: Option<String>,
    }
}

table! {
    /// `ax_instance_event` as stored.
    EventRaw = "ax_instance_event", writes |_e: &EventRaw| {
        id: i64,
        instance_id: i64,
        at: i64,
        from_status: Option<String>,
        to_status: String,
        attempt: i32,
        scheduler_id: String,
        worker_id: String,
        reason: String,
    }
}

table! {
    /// `ax_worker` (one row per live session) as stored.
    WorkerRaw = "ax_worker", writes |_w: &WorkerRaw| {
        session_id: String,
        worker_id: String,
        app: String,
        handlers: String,
        capacity: i32,
        credits: i32,
        in_flight: i32,
        labels: String,
        scheduler_id: String,
        client: String,
        connected_at: i64,
        last_seen_at: i64,
    }
}

impl WorkerRaw {
    /// The stored form of a session.
    pub fn from_record(w: &WorkerRecord) -> WorkerRaw {
        let n = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
        WorkerRaw {
            session_id: w.session_id.clone(),
            worker_id: w.worker_id.clone(),
            app: w.app.clone(),
            handlers: encode_list(&w.handlers),
            capacity: n(w.capacity),
            credits: n(w.credits),
            in_flight: n(w.in_flight),
            labels: encode_labels(&w.labels),
            scheduler_id: w.scheduler_id.clone(),
            client: w.client.clone(),
            connected_at: to_micros(w.connected_at),
            last_seen_at: to_micros(w.last_seen_at),
        }
    }

    /// The session it stores.
    pub fn into_record(self) -> StoreResult<WorkerRecord> {
        const T: &str = "ax_worker";
        let n = |v: i32| u32::try_from(v).unwrap_or(0);
        Ok(WorkerRecord {
            session_id: self.session_id,
            worker_id: self.worker_id,
            app: self.app,
            handlers: decode_list(T, &self.handlers)?,
            capacity: n(self.capacity),
            credits: n(self.credits),
            in_flight: n(self.in_flight),
            labels: decode_labels(T, &self.labels)?,
            scheduler_id: self.scheduler_id,
            client: self.client,
            connected_at: from_micros(self.connected_at),
            last_seen_at: from_micros(self.last_seen_at),
        })
    }
}

fn u32_of(table: &'static str, column: &str, v: i32) -> StoreResult<u32> {
    u32::try_from(v).map_err(|_| corrupt(table, format!("{column} = {v} is negative")))
}

impl TaskRaw {
    /// The raw columns of a configuration (for inserts and updates).
    pub fn from_config(id: i64, name: &str, c: &TaskConfig) -> TaskRaw {
        let p = &c.placement;
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
            selector: p.selector.clone(),
            retry_on: p.retry_on.as_str().to_owned(),
            shards: p.shards.map(|n| i32::try_from(n.get()).unwrap_or(i32::MAX)),
            hash_key: p.hash_key.clone(),
            priority: i32::from(p.priority),
            max_running: p.max_running.map(|n| i32::try_from(n.get()).unwrap_or(i32::MAX)),
            max_pending: i32::try_from(p.max_pending.get()).unwrap_or(i32::MAX),
            cooldown_after: p.cooldown.after.map(|n| i32::try_from(n).unwrap_or(i32::MAX)),
            cooldown_us: p.cooldown.duration.map(duration_micros),
            coalesced_since: None,
            coalesced_count: 0,
            active_from: c.timing.start.map(to_micros),
            active_until: c.timing.end.map(to_micros),
            exclude_dates: encode_names(c.timing.exclude_dates.iter().map(|d| d.format("%Y-%m-%d").to_string())),
            calendar: c.timing.calendar.clone(),
            jitter_us: c.timing.jitter.map(duration_micros),
            on_success: encode_names(c.flow.on_success.iter().cloned()),
            on_failure: encode_names(c.flow.on_failure.iter().cloned()),
            after_all: encode_names(c.flow.after_all.iter().cloned()),
            paused_at: None,
            paused_by: None,
            pause_note: None,
            paused_until: None,
            concurrency_key: p.concurrency_key.clone(),
            concurrency_limit: p.concurrency_limit.map(|n| i32::try_from(n.get()).unwrap_or(i32::MAX)),
            unique_key: p.unique_key.clone(),
            unique_for_us: p.unique_for.map(duration_micros),
            must_finish_within_us: c.flow.must_finish_within.map(duration_micros),
            on_event: c.flow.on_event.clone(),
            event_filter: c.flow.event_filter.clone(),
            search_params: encode_names(p.search_params.iter().cloned()),
            extra_schedules: encode_schedules(&c.timing.extra_schedules),
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
        let positive = |col: &str, v: i32| {
            u32::try_from(v).ok().and_then(NonZeroU32::new).ok_or_else(|| corrupt(T, format!("{col} = {v}")))
        };
        let placement = Placement {
            selector: self.selector,
            retry_on: parse(T, &self.retry_on)?,
            shards: self.shards.map(|n| positive("shards", n)).transpose()?,
            hash_key: self.hash_key,
            priority: u8::try_from(self.priority)
                .ok()
                .filter(|p| *p <= MAX_PRIORITY)
                .ok_or_else(|| corrupt(T, format!("priority = {}", self.priority)))?,
            max_running: self.max_running.map(|n| positive("max_running", n)).transpose()?,
            max_pending: positive("max_pending", self.max_pending)?,
            cooldown: CooldownPolicy {
                after: self.cooldown_after.map(|n| u32_of(T, "cooldown_after", n)).transpose()?,
                duration: self.cooldown_us.map(micros_duration),
            },
            concurrency_key: self.concurrency_key,
            concurrency_limit: self.concurrency_limit.map(|n| positive("concurrency_limit", n)).transpose()?,
            unique_key: self.unique_key,
            unique_for: self.unique_for_us.map(micros_duration),
            search_params: decode_names(self.search_params.as_deref()),
        };
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
                placement,
                timing: Timing {
                    start: self.active_from.map(from_micros),
                    end: self.active_until.map(from_micros),
                    exclude_dates: decode_dates(T, self.exclude_dates.as_deref())?,
                    calendar: self.calendar,
                    jitter: self.jitter_us.map(micros_duration),
                    extra_schedules: decode_schedules(T, self.extra_schedules.as_deref())?,
                },
                flow: Flow {
                    on_success: decode_names(self.on_success.as_deref()),
                    on_failure: decode_names(self.on_failure.as_deref()),
                    after_all: decode_names(self.after_all.as_deref()),
                    must_finish_within: self.must_finish_within_us.map(micros_duration),
                    on_event: self.on_event,
                    event_filter: self.event_filter,
                },
            },
            next_fire_at: self.next_fire_at.map(from_micros),
            created_at: from_micros(self.created_at),
            updated_at: from_micros(self.updated_at),
            version: self.version,
            coalesced: self
                .coalesced_since
                .map(|since| (from_micros(since), u64::try_from(self.coalesced_count).unwrap_or(0))),
            pause: self.paused_at.map(|at| Pause {
                at: from_micros(at),
                by: self.paused_by.unwrap_or_default(),
                note: self.pause_note.unwrap_or_default(),
                until: self.paused_until.map(from_micros),
            }),
        })
    }
}

impl InstanceRaw {
    pub fn into_instance(self) -> StoreResult<Instance> {
        const T: &str = "ax_instance";
        let bits = u8::try_from(self.trail)
            .ok()
            .filter(|b| *b & !(trail::CREATED | trail::DISPATCHED | trail::RUNNING | trail::SUCCESS) == 0)
            .ok_or_else(|| corrupt(T, format!("trail = {}", self.trail)))?;
        let mut i = Instance {
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
            trace_parent: self.trace_parent,
            route: InstanceRoute {
                priority: u8::try_from(self.priority)
                    .ok()
                    .filter(|p| *p <= MAX_PRIORITY)
                    .ok_or_else(|| corrupt(T, format!("priority = {}", self.priority)))?,
                selector: self.selector,
                retry_on: Some(parse(T, &self.retry_on)?),
                hash_key: self.hash_key,
                parent_id: self.parent_id,
                shard: match (self.shard_index, self.shard_total) {
                    (Some(i), Some(n)) => Some((u32_of(T, "shard_index", i)?, u32_of(T, "shard_total", n)?)),
                    _ => None,
                },
                children: match (self.shard_index, self.shard_total) {
                    (None, Some(n)) => Some(u32_of(T, "shard_total", n)?),
                    _ => None,
                },
                target_worker: self.target_worker,
                concurrency_value: self.concurrency_value,
            },
            lineage: Lineage { run_id: self.run_id, chained_from: self.chained_from },
            trail: trail::Trail { bits, dispatched_at: self.dispatched_at.map(from_micros), held: Vec::new() },
        };
        if bits != 0 {
            i.trail.held = trail::implied(&i, bits);
        }
        Ok(i)
    }
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

/// A comma-separated list (`None` when empty): task names and dates have no commas.
pub(crate) fn encode_names(items: impl Iterator<Item = String>) -> Option<String> {
    let v: Vec<String> = items.collect();
    (!v.is_empty()).then(|| v.join(","))
}

pub(crate) fn decode_names(s: Option<&str>) -> Vec<String> {
    s.map(|s| s.split(',').filter(|n| !n.is_empty()).map(str::to_owned).collect()).unwrap_or_default()
}

pub(crate) fn decode_dates(
    table: &'static str,
    s: Option<&str>,
) -> StoreResult<std::collections::BTreeSet<chrono::NaiveDate>> {
    decode_names(s)
        .iter()
        .map(|d| {
            chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").map_err(|e| corrupt(table, format!("date {d:?}: {e}")))
        })
        .collect()
}

table! {
    /// `ax_audit` as stored (`id` is assigned by the database).
    AuditRaw = "ax_audit", writes |_a: &AuditRaw| {
        id: i64,
        at: i64,
        actor: String,
        rpc: String,
        target: String,
        app: String,
        outcome: String,
        detail: String,
        before_json: Option<String>,
        after_json: Option<String>,
    }
}

table! {
    /// `ax_alert_rule` as stored (`events` comma-separated).
    AlertRuleRaw = "ax_alert_rule", writes |_a: &AlertRuleRaw| {
        id: i64,
        name: String,
        app: String,
        task_name: Option<String>,
        events: String,
        url: String,
        secret: String,
        no_worker_for_us: Option<i64>,
        backlog_over: Option<i64>,
        created_by: String,
        created_at: i64,
    }
}

table! {
    /// `ax_alert_delivery` as stored.
    DeliveryRaw = "ax_alert_delivery", writes |_d: &DeliveryRaw| {
        id: i64,
        rule_id: i64,
        rule_name: String,
        app: String,
        task_name: Option<String>,
        event: String,
        dedupe_key: String,
        url: String,
        body: String,
        status: String,
        attempts: i32,
        next_attempt_at: i64,
        last_error: String,
        created_at: i64,
        finished_at: Option<i64>,
    }
}
