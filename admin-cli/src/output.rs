//! What axctl prints: the JSON views of the proto messages (a contract scripts and tests parse)
//! and the plain-text tables and field lists people read.
//!
//! JSON rules: snake_case keys in proto field order; enums are their proto value names without the
//! type prefix (`PENDING`, `FIRE_ONCE`); timestamps are RFC 3339 UTC strings and durations use the
//! `--every` syntax (`1h30m`), both null when unset; params and output are embedded as JSON when
//! they parse and as strings otherwise.

use std::{
    collections::{BTreeMap, HashMap},
    io::{IsTerminal as _, Write as _},
};

use anyhow::{Context as _, Result};
use ax_proto::v1::{
    Backoff, ConcurrencyPolicy, CronDialect, Fire, Instance, InstanceEvent, InstanceSource, InstanceStatus, LogLevel,
    LogLine, MisfirePolicy, RetryPolicy, RoutingStrategy, Schedule, SchedulePreview, SchedulerNode, Task, TaskEvent,
    WorkerSession, backoff, one_time_schedule, schedule,
};
use chrono::{DateTime, SecondsFormat, Utc};
use clap::ValueEnum;
use serde::{Serialize, Serializer};
use serde_json::Value;

/// `-o/--output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned text for people.
    Table,
    /// Exactly one JSON document on stdout, for scripts.
    Json,
}

// ---------------------------------------------------------------------------------------------------
// Printing

/// Writes text to stdout, adding a final newline if missing. A closed pipe is an error like any
/// other rather than a panic (which `println!` would be).
pub fn print_text(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).context("cannot write to stdout")?;
    if !text.ends_with('\n') {
        out.write_all(b"\n").context("cannot write to stdout")?;
    }
    out.flush().context("cannot write to stdout")
}

/// Writes one pretty-printed JSON document to stdout.
pub fn print_json(value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).context("cannot encode the JSON output")?;
    print_text(&text)
}

/// Prints one page of a list: the table (or a note when it is empty), then how to get the next page.
pub fn print_page(table: &Table, what: &str, next_page_token: &str) -> Result<()> {
    let mut text = if table.is_empty() { format!("no {what}\n") } else { table.render() };
    if !next_page_token.is_empty() {
        text.push_str(&format!("more: add --page-token {next_page_token}\n"));
    }
    print_text(&text)
}

/// In table mode warnings are part of the report on stdout; when stdout is not a terminal (piped
/// into a file or another program) they are repeated on stderr so that the operator still sees them.
pub fn echo_warnings_if_piped(warnings: &[String]) {
    if !warnings.is_empty() && !std::io::stdout().is_terminal() {
        for warning in warnings {
            eprintln!("warning: {warning}");
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Scalars

/// A proto enum whose value names all start with the same type prefix.
pub trait ProtoEnum: TryFrom<i32> {
    /// The prefix every value name starts with, e.g. `INSTANCE_STATUS_`.
    const PREFIX: &'static str;
    /// The full value name, e.g. `INSTANCE_STATUS_PENDING`.
    fn full_name(&self) -> &'static str;
}

macro_rules! proto_enum {
    ($($ty:ty => $prefix:literal),* $(,)?) => {
        $(impl ProtoEnum for $ty {
            const PREFIX: &'static str = $prefix;
            fn full_name(&self) -> &'static str {
                self.as_str_name()
            }
        })*
    };
}

proto_enum! {
    InstanceStatus => "INSTANCE_STATUS_",
    InstanceSource => "INSTANCE_SOURCE_",
    MisfirePolicy => "MISFIRE_POLICY_",
    ConcurrencyPolicy => "CONCURRENCY_POLICY_",
    RoutingStrategy => "ROUTING_STRATEGY_",
    CronDialect => "CRON_DIALECT_",
    LogLevel => "LOG_LEVEL_",
}

/// The value name without its prefix (`PENDING`); a number this axctl does not know (from a newer
/// server) is printed as its decimal value.
pub fn enum_name<E: ProtoEnum>(value: i32) -> String {
    match E::try_from(value) {
        Ok(known) => {
            let full = known.full_name();
            full.strip_prefix(E::PREFIX).unwrap_or(full).to_owned()
        }
        Err(_) => value.to_string(),
    }
}

/// A protobuf timestamp as a UTC time; None when unset or out of chrono's range.
pub fn utc(timestamp: Option<&prost_types::Timestamp>) -> Option<DateTime<Utc>> {
    let t = timestamp?;
    DateTime::from_timestamp(t.seconds, u32::try_from(t.nanos).ok()?)
}

/// RFC 3339 in UTC with as many fractional digits as needed (`2026-01-01T10:00:00Z`).
pub fn time_text(timestamp: Option<&prost_types::Timestamp>) -> Option<String> {
    utc(timestamp).map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// Milliseconds of a protobuf duration, truncated toward zero (the duration syntax stops at ms).
pub fn duration_millis(duration: &prost_types::Duration) -> i64 {
    duration.seconds.saturating_mul(1000).saturating_add(i64::from(duration.nanos / 1_000_000))
}

/// A number of milliseconds in the duration syntax of the flags: `1h30m`, `250ms`, `0s`; negative
/// values get a leading `-`.
pub fn format_millis(ms: i64) -> String {
    if ms == 0 {
        return "0s".to_owned();
    }
    let mut rest = ms.unsigned_abs();
    let mut text = String::new();
    if ms < 0 {
        text.push('-');
    }
    for (unit, size) in [("d", 86_400_000u64), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)] {
        if rest >= size {
            text.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    text
}

/// A duration field in the duration syntax, None when unset.
pub fn duration_text(duration: Option<&prost_types::Duration>) -> Option<String> {
    duration.map(|d| format_millis(duration_millis(d)))
}

/// The gap between two events for people: `+1.204s`, `+2m5.300s`, `+1h0m5.000s`.
pub fn gap_text(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    let abs = ms.unsigned_abs();
    let (hours, minutes, seconds, millis) = (abs / 3_600_000, abs / 60_000 % 60, abs / 1000 % 60, abs % 1000);
    if hours > 0 {
        format!("{sign}{hours}h{minutes}m{seconds}.{millis:03}s")
    } else if minutes > 0 {
        format!("{sign}{minutes}m{seconds}.{millis:03}s")
    } else {
        format!("{sign}{seconds}.{millis:03}s")
    }
}

/// A JSON text embedded as JSON when it parses, else kept as a string (so nothing is lost).
pub fn embedded_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// An embedded JSON value for people: JSON as it came, a string without quotes, `-` when empty.
fn json_text(value: &Value) -> String {
    match value {
        Value::String(s) => or_dash(Some(s.as_str())),
        other => other.to_string(),
    }
}

/// Labels sorted by key, so output is stable.
fn sorted(labels: &HashMap<String, String>) -> BTreeMap<String, String> {
    labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// For tables: the value, or `-` when unset or empty.
pub fn or_dash(value: Option<impl Into<String>>) -> String {
    value.map(Into::into).filter(|s: &String| !s.is_empty()).unwrap_or_else(|| "-".to_owned())
}

// ---------------------------------------------------------------------------------------------------
// Tasks

/// JSON view of a Task (its spec flattened next to the stored fields).
#[derive(Debug, Serialize)]
pub struct TaskView {
    pub id: i64,
    pub name: String,
    pub app: String,
    pub handler: String,
    pub description: String,
    pub schedule: Option<ScheduleView>,
    pub params: Value,
    pub enabled: Option<bool>,
    pub misfire_policy: String,
    pub misfire_threshold: Option<String>,
    pub max_catch_up: u32,
    pub concurrency_policy: String,
    pub routing: String,
    pub timeout: Option<String>,
    pub retry_policy: Option<RetryPolicyView>,
    pub labels: BTreeMap<String, String>,
    pub next_fire_time: Option<String>,
    pub create_time: Option<String>,
    pub update_time: Option<String>,
    pub version: i64,
}

/// JSON view of a Schedule, tagged by `kind`.
#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ScheduleView {
    Cron { expression: String, time_zone: String, dialect: String },
    FixedRate { interval: Option<String>, start_at: Option<String> },
    FixedDelay { interval: Option<String>, start_at: Option<String> },
    OneTime { at: Option<String> },
    Manual,
}

/// JSON view of a RetryPolicy.
#[derive(Debug, Serialize, PartialEq)]
pub struct RetryPolicyView {
    pub max_retries: u32,
    pub backoff: Option<BackoffView>,
}

/// JSON view of a Backoff, tagged by `kind`.
#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BackoffView {
    List { delays: Vec<String> },
    Exponential { initial: Option<String>, multiplier: f64, max: Option<String>, jitter: f64 },
}

impl From<&Task> for TaskView {
    fn from(task: &Task) -> Self {
        let spec = task.spec.clone().unwrap_or_default();
        TaskView {
            id: task.id,
            name: spec.name,
            app: spec.app,
            handler: spec.handler,
            description: spec.description,
            schedule: spec.schedule.as_ref().and_then(ScheduleView::from_proto),
            params: embedded_json(&spec.params),
            enabled: spec.enabled,
            misfire_policy: enum_name::<MisfirePolicy>(spec.misfire_policy),
            misfire_threshold: duration_text(spec.misfire_threshold.as_ref()),
            max_catch_up: spec.max_catch_up,
            concurrency_policy: enum_name::<ConcurrencyPolicy>(spec.concurrency_policy),
            routing: enum_name::<RoutingStrategy>(spec.routing),
            timeout: duration_text(spec.timeout.as_ref()),
            retry_policy: spec.retry_policy.as_ref().map(RetryPolicyView::from),
            labels: sorted(&spec.labels),
            next_fire_time: time_text(task.next_fire_time.as_ref()),
            create_time: time_text(task.create_time.as_ref()),
            update_time: time_text(task.update_time.as_ref()),
            version: task.version,
        }
    }
}

impl ScheduleView {
    /// None when no kind is set.
    fn from_proto(schedule: &Schedule) -> Option<Self> {
        Some(match schedule.kind.as_ref()? {
            schedule::Kind::Cron(cron) => ScheduleView::Cron {
                expression: cron.expression.clone(),
                time_zone: cron.time_zone.clone(),
                dialect: enum_name::<CronDialect>(cron.dialect),
            },
            schedule::Kind::FixedRate(every) => ScheduleView::FixedRate {
                interval: duration_text(every.interval.as_ref()),
                start_at: time_text(every.start_at.as_ref()),
            },
            schedule::Kind::FixedDelay(every) => ScheduleView::FixedDelay {
                interval: duration_text(every.interval.as_ref()),
                start_at: time_text(every.start_at.as_ref()),
            },
            // The server stores `after` as `at` and only ever returns `at`.
            schedule::Kind::OneTime(once) => ScheduleView::OneTime {
                at: match &once.when {
                    Some(one_time_schedule::When::At(at)) => time_text(Some(at)),
                    Some(one_time_schedule::When::After(_)) | None => None,
                },
            },
            schedule::Kind::Manual(_) => ScheduleView::Manual,
        })
    }

    /// One line for people, e.g. "cron `0 2 * * *` in Europe/London (UNIX)".
    pub fn summary(&self) -> String {
        match self {
            ScheduleView::Cron { expression, time_zone, dialect } => {
                let zone = if time_zone.is_empty() { "UTC" } else { time_zone };
                format!("cron `{expression}` in {zone} ({dialect})")
            }
            ScheduleView::FixedRate { interval, start_at } => {
                format!("every {} from {}", or_dash(interval.clone()), or_dash(start_at.clone()))
            }
            ScheduleView::FixedDelay { interval, start_at } => format!(
                "{} after each run, first at {} + interval",
                or_dash(interval.clone()),
                or_dash(start_at.clone())
            ),
            ScheduleView::OneTime { at } => format!("once at {}", or_dash(at.clone())),
            ScheduleView::Manual => "manual (only when triggered)".to_owned(),
        }
    }
}

impl From<&RetryPolicy> for RetryPolicyView {
    fn from(policy: &RetryPolicy) -> Self {
        RetryPolicyView {
            max_retries: policy.max_retries,
            backoff: policy.backoff.as_ref().and_then(BackoffView::from_proto),
        }
    }
}

impl BackoffView {
    /// None when no kind is set.
    fn from_proto(backoff: &Backoff) -> Option<Self> {
        Some(match backoff.kind.as_ref()? {
            backoff::Kind::List(list) => {
                BackoffView::List { delays: list.delays.iter().map(|d| format_millis(duration_millis(d))).collect() }
            }
            backoff::Kind::Exponential(exp) => BackoffView::Exponential {
                initial: duration_text(exp.initial.as_ref()),
                multiplier: exp.multiplier,
                max: duration_text(exp.max.as_ref()),
                jitter: exp.jitter,
            },
        })
    }
}

impl RetryPolicyView {
    /// One line for people, e.g. "3 retries, exponential 10s x2 up to 5m, jitter 0.1".
    pub fn summary(&self) -> String {
        let backoff = match &self.backoff {
            None => "default backoff".to_owned(),
            Some(BackoffView::List { delays }) => format!("delays {}", delays.join(", ")),
            Some(BackoffView::Exponential { initial, multiplier, max, jitter }) => format!(
                "exponential {} x{multiplier} up to {}, jitter {jitter}",
                or_dash(initial.clone()),
                or_dash(max.clone())
            ),
        };
        match self.max_retries {
            0 => "none".to_owned(),
            1 => format!("1 retry, {backoff}"),
            n => format!("{n} retries, {backoff}"),
        }
    }
}

/// The fields of a task, one per line.
pub fn task_details(task: &TaskView) -> String {
    let labels: Vec<String> = task.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut fields = Fields::new();
    fields
        .add("name", &task.name)
        .add("id", task.id.to_string())
        .add("app", &task.app)
        .add("handler", &task.handler)
        .add("description", or_dash(Some(task.description.as_str())))
        .add("schedule", task.schedule.as_ref().map_or_else(|| "-".to_owned(), ScheduleView::summary))
        .add("enabled", task.enabled.map_or_else(|| "-".to_owned(), |e| e.to_string()))
        .add("next fire", or_dash(task.next_fire_time.clone()))
        .add("params", json_text(&task.params))
        .add(
            "misfire",
            format!(
                "{} (threshold {}, max catch-up {})",
                task.misfire_policy,
                or_dash(task.misfire_threshold.clone()),
                task.max_catch_up
            ),
        )
        .add("concurrency", &task.concurrency_policy)
        .add("routing", &task.routing)
        .add("timeout", task.timeout.clone().unwrap_or_else(|| "none".to_owned()))
        .add("retries", task.retry_policy.as_ref().map_or_else(|| "none".to_owned(), RetryPolicyView::summary))
        .add("labels", or_dash(Some(labels.join(", "))))
        .add("version", task.version.to_string())
        .add("created", or_dash(task.create_time.clone()))
        .add("updated", or_dash(task.update_time.clone()));
    fields.render()
}

/// JSON view of a TaskEvent.
#[derive(Debug, Serialize)]
pub struct TaskEventView {
    pub time: Option<String>,
    pub kind: String,
    pub actor: String,
    pub message: String,
}

impl From<&TaskEvent> for TaskEventView {
    fn from(event: &TaskEvent) -> Self {
        TaskEventView {
            time: time_text(event.time.as_ref()),
            kind: event.kind.clone(),
            actor: event.actor.clone(),
            message: event.message.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Schedule previews

/// JSON view of a SchedulePreview.
#[derive(Debug, Serialize)]
pub struct PreviewView {
    pub fires: Vec<FireView>,
    pub fires_per_day: f64,
    pub warnings: Vec<String>,
    pub description: String,
}

/// JSON view of a Fire. `local_time` is null for interval schedules, which have no wall clock.
#[derive(Debug, Serialize, PartialEq)]
pub struct FireView {
    pub time: Option<String>,
    pub local_time: Option<String>,
}

impl From<&SchedulePreview> for PreviewView {
    fn from(preview: &SchedulePreview) -> Self {
        PreviewView {
            fires: preview.fires.iter().map(FireView::from).collect(),
            fires_per_day: preview.fires_per_day,
            warnings: preview.warnings.clone(),
            description: preview.description.clone(),
        }
    }
}

impl From<&Fire> for FireView {
    fn from(fire: &Fire) -> Self {
        FireView {
            time: time_text(fire.time.as_ref()),
            local_time: Some(fire.local_time.clone()).filter(|t| !t.is_empty()),
        }
    }
}

/// The fires (UTC and on the schedule's wall clock), fires per day and warnings.
pub fn preview_details(preview: &PreviewView) -> String {
    let mut text = String::new();
    if preview.description.is_empty() {
        text.push_str("next fires:\n");
    } else {
        text.push_str(&format!("next fires ({}):\n", preview.description));
    }
    if preview.fires.is_empty() {
        text.push_str("  none\n");
    } else {
        let mut table = Table::new(["UTC", "LOCAL"]);
        for fire in &preview.fires {
            table.row([or_dash(fire.time.clone()), or_dash(fire.local_time.clone())]);
        }
        text.push_str(&indent(&table.render()));
    }
    text.push_str(&format!("fires per day: {}\n", round_rate(preview.fires_per_day)));
    for warning in &preview.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text
}

/// A rate with at most two decimals and no trailing zeros (`1440`, `0.14`).
fn round_rate(rate: f64) -> String {
    let text = format!("{rate:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

// ---------------------------------------------------------------------------------------------------
// Instances

/// JSON view of an Instance: every proto field.
#[derive(Debug, Serialize)]
pub struct InstanceView {
    pub id: i64,
    pub task_id: i64,
    pub task_name: String,
    pub app: String,
    pub handler: String,
    pub params: Value,
    pub idempotency_key: String,
    pub source: String,
    pub trigger_time: Option<String>,
    pub available_time: Option<String>,
    pub status: String,
    pub attempt: u32,
    pub max_retries: u32,
    pub failures: u32,
    pub worker_id: String,
    pub session_id: String,
    pub scheduler_id: String,
    pub start_time: Option<String>,
    pub finish_time: Option<String>,
    pub deadline: Option<String>,
    pub message: String,
    pub output: Value,
    pub progress_percent: u32,
    pub progress_message: String,
    pub create_time: Option<String>,
    pub update_time: Option<String>,
}

impl From<&Instance> for InstanceView {
    fn from(i: &Instance) -> Self {
        InstanceView {
            id: i.id,
            task_id: i.task_id,
            task_name: i.task_name.clone(),
            app: i.app.clone(),
            handler: i.handler.clone(),
            params: embedded_json(&i.params),
            idempotency_key: i.idempotency_key.clone(),
            source: enum_name::<InstanceSource>(i.source),
            trigger_time: time_text(i.trigger_time.as_ref()),
            available_time: time_text(i.available_time.as_ref()),
            status: enum_name::<InstanceStatus>(i.status),
            attempt: i.attempt,
            max_retries: i.max_retries,
            failures: i.failures,
            worker_id: i.worker_id.clone(),
            session_id: i.session_id.clone(),
            scheduler_id: i.scheduler_id.clone(),
            start_time: time_text(i.start_time.as_ref()),
            finish_time: time_text(i.finish_time.as_ref()),
            deadline: time_text(i.deadline.as_ref()),
            message: i.message.clone(),
            output: embedded_json(&i.output),
            progress_percent: i.progress_percent,
            progress_message: i.progress_message.clone(),
            create_time: time_text(i.create_time.as_ref()),
            update_time: time_text(i.update_time.as_ref()),
        }
    }
}

/// The fields of an instance, one per line.
pub fn instance_details(i: &InstanceView) -> String {
    let progress = if i.progress_percent == 0 && i.progress_message.is_empty() {
        "-".to_owned()
    } else {
        format!("{}% {}", i.progress_percent, i.progress_message).trim_end().to_owned()
    };
    let mut fields = Fields::new();
    fields
        .add("id", i.id.to_string())
        .add("task", format!("{} (id {})", i.task_name, i.task_id))
        .add("app", or_dash(Some(i.app.as_str())))
        .add("handler", or_dash(Some(i.handler.as_str())))
        .add("status", &i.status)
        .add("source", &i.source)
        .add("attempt", format!("{} (failures {}, max retries {})", i.attempt, i.failures, i.max_retries))
        .add("idempotency key", or_dash(Some(i.idempotency_key.as_str())))
        .add("params", json_text(&i.params))
        .add("trigger time", or_dash(i.trigger_time.clone()))
        .add("available", or_dash(i.available_time.clone()))
        .add("started", or_dash(i.start_time.clone()))
        .add("finished", or_dash(i.finish_time.clone()))
        .add("deadline", or_dash(i.deadline.clone()))
        .add("worker", or_dash(Some(i.worker_id.as_str())))
        .add("session", or_dash(Some(i.session_id.as_str())))
        .add("scheduler", or_dash(Some(i.scheduler_id.as_str())))
        .add("progress", progress)
        .add("message", or_dash(Some(i.message.as_str())))
        .add("output", json_text(&i.output))
        .add("created", or_dash(i.create_time.clone()))
        .add("updated", or_dash(i.update_time.clone()));
    fields.render()
}

/// The time from the previous event to each event, in milliseconds; None for the first event and
/// wherever a time is missing.
pub fn gaps_millis(events: &[InstanceEvent]) -> Vec<Option<i64>> {
    let mut previous: Option<DateTime<Utc>> = None;
    let mut first = true;
    events
        .iter()
        .map(|event| {
            let time = utc(event.time.as_ref());
            let gap = if first { None } else { previous.zip(time).map(|(a, b)| (b - a).num_milliseconds()) };
            first = false;
            previous = time;
            gap
        })
        .collect()
}

/// JSON view of an InstanceEvent, with the time since the previous event of the trail.
#[derive(Debug, Serialize, PartialEq)]
pub struct InstanceEventView {
    pub time: Option<String>,
    /// Null for the creation event (UNSPECIFIED).
    pub from_status: Option<String>,
    pub to_status: String,
    pub attempt: u32,
    pub scheduler_id: String,
    pub worker_id: String,
    pub reason: String,
    pub since_previous: Option<String>,
}

/// The JSON views of an event trail (oldest first, as the server sends it).
pub fn instance_event_views(events: &[InstanceEvent]) -> Vec<InstanceEventView> {
    events
        .iter()
        .zip(gaps_millis(events))
        .map(|(event, gap)| InstanceEventView {
            time: time_text(event.time.as_ref()),
            from_status: (event.from_status != InstanceStatus::Unspecified as i32)
                .then(|| enum_name::<InstanceStatus>(event.from_status)),
            to_status: enum_name::<InstanceStatus>(event.to_status),
            attempt: event.attempt,
            scheduler_id: event.scheduler_id.clone(),
            worker_id: event.worker_id.clone(),
            reason: event.reason.clone(),
            since_previous: gap.map(format_millis),
        })
        .collect()
}

/// JSON view of a LogLine.
#[derive(Debug, Serialize)]
pub struct LogLineView {
    pub seq: i64,
    pub attempt: u32,
    pub level: String,
    pub time: Option<String>,
    pub message: String,
}

impl From<&LogLine> for LogLineView {
    fn from(line: &LogLine) -> Self {
        LogLineView {
            seq: line.seq,
            attempt: line.attempt,
            level: enum_name::<LogLevel>(line.level),
            time: time_text(line.time.as_ref()),
            message: line.message.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Workers, schedulers, stats

/// JSON view of a WorkerSession.
#[derive(Debug, Serialize)]
pub struct WorkerView {
    pub session_id: String,
    pub worker_id: String,
    pub app: String,
    pub handlers: Vec<String>,
    pub capacity: u32,
    pub credits: u32,
    pub in_flight: u32,
    pub labels: BTreeMap<String, String>,
    pub scheduler_id: String,
    pub client: String,
    pub connect_time: Option<String>,
    pub last_seen_time: Option<String>,
}

impl From<&WorkerSession> for WorkerView {
    fn from(w: &WorkerSession) -> Self {
        WorkerView {
            session_id: w.session_id.clone(),
            worker_id: w.worker_id.clone(),
            app: w.app.clone(),
            handlers: w.handlers.clone(),
            capacity: w.capacity,
            credits: w.credits,
            in_flight: w.in_flight,
            labels: sorted(&w.labels),
            scheduler_id: w.scheduler_id.clone(),
            client: w.client.clone(),
            connect_time: time_text(w.connect_time.as_ref()),
            last_seen_time: time_text(w.last_seen_time.as_ref()),
        }
    }
}

/// JSON view of a SchedulerNode.
#[derive(Debug, Serialize)]
pub struct SchedulerView {
    pub scheduler_id: String,
    pub host: String,
    pub address: String,
    pub version: String,
    pub start_time: Option<String>,
    pub heartbeat_time: Option<String>,
    pub workers: u32,
    pub worker_ids: Vec<String>,
    pub alive: bool,
}

impl From<&SchedulerNode> for SchedulerView {
    fn from(s: &SchedulerNode) -> Self {
        SchedulerView {
            scheduler_id: s.scheduler_id.clone(),
            host: s.host.clone(),
            address: s.address.clone(),
            version: s.version.clone(),
            start_time: time_text(s.start_time.as_ref()),
            heartbeat_time: time_text(s.heartbeat_time.as_ref()),
            workers: s.workers,
            worker_ids: s.worker_ids.clone(),
            alive: s.alive,
        }
    }
}

/// Instance counts by status name, in status order, serialized as a JSON object. Every known status
/// is present (0 when the server omitted it), so scripts can read any key without a default.
#[derive(Debug, PartialEq)]
pub struct StatusCounts(pub Vec<(String, u64)>);

impl StatusCounts {
    /// From the server's (status, count) pairs.
    pub fn new(counts: impl IntoIterator<Item = (i32, u64)>) -> Self {
        // Status values are numbered 1, 2, 3, ... after UNSPECIFIED, so this lists every known one.
        let mut all: Vec<(i32, u64)> =
            (1..).map_while(|n| InstanceStatus::try_from(n).ok()).map(|status| (status as i32, 0)).collect();
        for (status, count) in counts {
            match all.iter_mut().find(|(s, _)| *s == status) {
                Some(slot) => slot.1 += count,
                None => all.push((status, count)),
            }
        }
        StatusCounts(all.into_iter().map(|(s, n)| (enum_name::<InstanceStatus>(s), n)).collect())
    }
}

impl Serialize for StatusCounts {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, count)| (name, count)))
    }
}

// ---------------------------------------------------------------------------------------------------
// Text layout

/// Columns of left-aligned text separated by two spaces. Widths count chars, which is right for
/// the ASCII ax produces and close enough for the rest.
#[derive(Debug)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with a header row.
    pub fn new<const N: usize>(headers: [&str; N]) -> Self {
        Table { rows: vec![headers.iter().map(|h| (*h).to_owned()).collect()] }
    }

    /// Appends a row.
    pub fn row<const N: usize>(&mut self, cells: [String; N]) -> &mut Self {
        self.rows.push(cells.into());
        self
    }

    /// Whether only the header is there.
    pub fn is_empty(&self) -> bool {
        self.rows.len() <= 1
    }

    /// The aligned text, one line per row, without trailing spaces.
    pub fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| self.rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
            .collect();
        let mut text = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (cell, width) in row.iter().zip(&widths) {
                // Newlines in a cell (messages) would break the columns.
                let cell = cell.replace(['\n', '\r'], " ");
                line.push_str(&format!("{cell:<width$}  "));
            }
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    }
}

/// Every line indented by two spaces, for a block under a heading.
pub fn indent(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}

/// `name: value` lines with the values aligned.
#[derive(Debug, Default)]
pub struct Fields {
    pairs: Vec<(String, String)>,
}

impl Fields {
    /// No fields yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a field.
    pub fn add(&mut self, name: &str, value: impl Into<String>) -> &mut Self {
        self.pairs.push((name.to_owned(), value.into()));
        self
    }

    /// The aligned text.
    pub fn render(&self) -> String {
        let width = self.pairs.iter().map(|(n, _)| n.chars().count() + 1).max().unwrap_or(0);
        let mut text = String::new();
        for (name, value) in &self.pairs {
            let label = format!("{name}:");
            text.push_str(format!("{label:<width$}  {value}").trim_end());
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use ax_proto::v1::{
        CronSchedule, ExponentialBackoff, IntervalSchedule, ListBackoff, ManualSchedule, OneTimeSchedule, TaskSpec,
    };
    use serde_json::json;

    use super::*;
    use crate::args::parse_duration;

    fn ts(seconds: i64, nanos: i32) -> Option<prost_types::Timestamp> {
        Some(prost_types::Timestamp { seconds, nanos })
    }

    fn dur(seconds: i64) -> Option<prost_types::Duration> {
        Some(prost_types::Duration { seconds, nanos: 0 })
    }

    #[test]
    fn enum_names_lose_their_type_prefix() {
        assert_eq!(enum_name::<InstanceStatus>(InstanceStatus::Pending as i32), "PENDING");
        assert_eq!(enum_name::<InstanceStatus>(0), "UNSPECIFIED");
        assert_eq!(enum_name::<MisfirePolicy>(MisfirePolicy::FireOnce as i32), "FIRE_ONCE");
        assert_eq!(enum_name::<RoutingStrategy>(RoutingStrategy::LeastLoaded as i32), "LEAST_LOADED");
        assert_eq!(enum_name::<ConcurrencyPolicy>(ConcurrencyPolicy::Forbid as i32), "FORBID");
        assert_eq!(enum_name::<CronDialect>(CronDialect::Unix as i32), "UNIX");
        assert_eq!(enum_name::<InstanceSource>(InstanceSource::Schedule as i32), "SCHEDULE");
        assert_eq!(enum_name::<LogLevel>(LogLevel::Warn as i32), "WARN");
        assert_eq!(enum_name::<InstanceStatus>(99), "99", "unknown values stay visible");
    }

    #[test]
    fn every_enum_prefix_matches_the_generated_names() {
        fn check<E: ProtoEnum>() {
            let unspecified = E::try_from(0).ok().expect("every ax enum has a 0 value");
            assert_eq!(unspecified.full_name(), format!("{}UNSPECIFIED", E::PREFIX));
        }
        check::<InstanceStatus>();
        check::<InstanceSource>();
        check::<MisfirePolicy>();
        check::<ConcurrencyPolicy>();
        check::<RoutingStrategy>();
        check::<CronDialect>();
        check::<LogLevel>();
    }

    #[test]
    fn durations_print_in_the_flag_syntax_and_round_trip() {
        assert_eq!(format_millis(0), "0s");
        assert_eq!(format_millis(30_000), "30s");
        assert_eq!(format_millis(5_400_000), "1h30m");
        assert_eq!(format_millis(250), "250ms");
        assert_eq!(format_millis(172_800_000), "2d");
        assert_eq!(format_millis(93_784_005), "1d2h3m4s5ms");
        assert_eq!(format_millis(-1_204), "-1s204ms");
        for text in ["250ms", "1m30s", "1h30m", "2d", "1d2h3m4s5ms", "0s"] {
            let parsed = parse_duration(text).expect("valid");
            assert_eq!(duration_text(Some(&parsed)).as_deref(), Some(text));
        }
        assert_eq!(duration_text(None), None);
        // Below a millisecond is truncated: the syntax has no smaller unit.
        assert_eq!(duration_text(Some(&prost_types::Duration { seconds: 1, nanos: 999_999 })).as_deref(), Some("1s"));
    }

    #[test]
    fn gaps_read_as_signed_seconds_with_millis() {
        assert_eq!(gap_text(1_204), "+1.204s");
        assert_eq!(gap_text(0), "+0.000s");
        assert_eq!(gap_text(125_300), "+2m5.300s");
        assert_eq!(gap_text(3_605_000), "+1h0m5.000s");
        assert_eq!(gap_text(-40), "-0.040s");
    }

    #[test]
    fn times_are_rfc3339_utc_and_null_when_unset() {
        assert_eq!(time_text(ts(1_767_261_600, 0).as_ref()).as_deref(), Some("2026-01-01T10:00:00Z"));
        assert_eq!(time_text(ts(1_767_261_600, 250_000_000).as_ref()).as_deref(), Some("2026-01-01T10:00:00.250Z"));
        assert_eq!(time_text(None), None);
    }

    #[test]
    fn params_are_embedded_as_json_when_they_parse() {
        assert_eq!(embedded_json(r#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(embedded_json("[1,2]"), json!([1, 2]));
        assert_eq!(embedded_json("not json"), json!("not json"));
        assert_eq!(embedded_json(""), json!(""));
    }

    fn cron_task() -> Task {
        Task {
            id: 7,
            spec: Some(TaskSpec {
                name: "nightly".into(),
                app: "billing".into(),
                handler: "report".into(),
                description: "the nightly report".into(),
                schedule: Some(Schedule {
                    kind: Some(schedule::Kind::Cron(CronSchedule {
                        expression: "0 2 * * *".into(),
                        time_zone: "Europe/London".into(),
                        dialect: CronDialect::Unix as i32,
                    })),
                }),
                params: r#"{"full":true}"#.into(),
                enabled: Some(true),
                misfire_policy: MisfirePolicy::FireOnce as i32,
                misfire_threshold: dur(60),
                max_catch_up: 10,
                concurrency_policy: ConcurrencyPolicy::Forbid as i32,
                routing: RoutingStrategy::LeastLoaded as i32,
                timeout: dur(5400),
                retry_policy: Some(RetryPolicy {
                    max_retries: 3,
                    backoff: Some(Backoff {
                        kind: Some(backoff::Kind::Exponential(ExponentialBackoff {
                            initial: dur(10),
                            multiplier: 2.0,
                            max: dur(300),
                            jitter: 0.1,
                        })),
                    }),
                }),
                labels: HashMap::from([("team".to_owned(), "ops".to_owned()), ("env".to_owned(), "prod".to_owned())]),
            }),
            next_fire_time: ts(1_767_232_800, 0),
            create_time: ts(1_767_225_600, 0),
            update_time: None,
            version: 2,
        }
    }

    #[test]
    fn tasks_serialize_to_the_documented_json_shape() {
        let value = serde_json::to_value(TaskView::from(&cron_task())).expect("json");
        assert_eq!(
            value,
            json!({
                "id": 7,
                "name": "nightly",
                "app": "billing",
                "handler": "report",
                "description": "the nightly report",
                "schedule": {"kind": "CRON", "expression": "0 2 * * *", "time_zone": "Europe/London", "dialect": "UNIX"},
                "params": {"full": true},
                "enabled": true,
                "misfire_policy": "FIRE_ONCE",
                "misfire_threshold": "1m",
                "max_catch_up": 10,
                "concurrency_policy": "FORBID",
                "routing": "LEAST_LOADED",
                "timeout": "1h30m",
                "retry_policy": {
                    "max_retries": 3,
                    "backoff": {"kind": "EXPONENTIAL", "initial": "10s", "multiplier": 2.0, "max": "5m", "jitter": 0.1}
                },
                "labels": {"env": "prod", "team": "ops"},
                "next_fire_time": "2026-01-01T02:00:00Z",
                "create_time": "2026-01-01T00:00:00Z",
                "update_time": null,
                "version": 2
            })
        );
    }

    #[test]
    fn task_json_keeps_the_proto_field_order() {
        let text = serde_json::to_string(&TaskView::from(&cron_task())).expect("json");
        let id = text.find("\"id\"").expect("id");
        let name = text.find("\"name\"").expect("name");
        let version = text.find("\"version\"").expect("version");
        assert!(id < name && name < version, "{text}");
    }

    #[test]
    fn every_schedule_kind_has_its_own_json_shape() {
        let view = |kind| serde_json::to_value(ScheduleView::from_proto(&Schedule { kind: Some(kind) })).expect("json");
        let interval = IntervalSchedule { interval: dur(90), start_at: ts(1_767_261_600, 0) };
        assert_eq!(
            view(schedule::Kind::FixedRate(interval)),
            json!({"kind": "FIXED_RATE", "interval": "1m30s", "start_at": "2026-01-01T10:00:00Z"})
        );
        assert_eq!(
            view(schedule::Kind::FixedDelay(IntervalSchedule { interval: dur(3600), start_at: None })),
            json!({"kind": "FIXED_DELAY", "interval": "1h", "start_at": null})
        );
        assert_eq!(
            view(schedule::Kind::OneTime(OneTimeSchedule {
                when: Some(one_time_schedule::When::At(prost_types::Timestamp { seconds: 1_767_261_600, nanos: 0 }))
            })),
            json!({"kind": "ONE_TIME", "at": "2026-01-01T10:00:00Z"})
        );
        assert_eq!(view(schedule::Kind::Manual(ManualSchedule {})), json!({"kind": "MANUAL"}));
        assert_eq!(ScheduleView::from_proto(&Schedule { kind: None }), None);
    }

    #[test]
    fn list_backoffs_and_missing_policies_serialize_too() {
        let policy = RetryPolicy {
            max_retries: 2,
            backoff: Some(Backoff {
                kind: Some(backoff::Kind::List(ListBackoff {
                    delays: vec![
                        prost_types::Duration { seconds: 10, nanos: 0 },
                        prost_types::Duration { seconds: 60, nanos: 0 },
                    ],
                })),
            }),
        };
        assert_eq!(
            serde_json::to_value(RetryPolicyView::from(&policy)).expect("json"),
            json!({"max_retries": 2, "backoff": {"kind": "LIST", "delays": ["10s", "1m"]}})
        );
        let bare = RetryPolicy { max_retries: 1, backoff: None };
        assert_eq!(
            serde_json::to_value(RetryPolicyView::from(&bare)).expect("json"),
            json!({"max_retries": 1, "backoff": null})
        );
        let empty = TaskView::from(&Task::default());
        assert_eq!(empty.schedule, None);
        assert_eq!(empty.retry_policy, None);
        assert_eq!(empty.misfire_policy, "UNSPECIFIED");
    }

    #[test]
    fn previews_have_null_local_times_for_interval_schedules() {
        let preview = SchedulePreview {
            fires: vec![
                Fire { time: ts(1_772_953_200, 0), local_time: "2026-03-08T03:00:00-04:00".into() },
                Fire { time: ts(1_773_039_600, 0), local_time: String::new() },
            ],
            fires_per_day: 1.0,
            warnings: vec!["careful".into()],
            description: "cron (unix dialect) in America/New_York".into(),
        };
        assert_eq!(
            serde_json::to_value(PreviewView::from(&preview)).expect("json"),
            json!({
                "fires": [
                    {"time": "2026-03-08T07:00:00Z", "local_time": "2026-03-08T03:00:00-04:00"},
                    {"time": "2026-03-09T07:00:00Z", "local_time": null}
                ],
                "fires_per_day": 1.0,
                "warnings": ["careful"],
                "description": "cron (unix dialect) in America/New_York"
            })
        );
        let text = preview_details(&PreviewView::from(&preview));
        assert!(text.contains("2026-03-08T07:00:00Z  2026-03-08T03:00:00-04:00"), "{text}");
        assert!(text.contains("fires per day: 1\n"), "{text}");
        assert!(text.contains("warning: careful"), "{text}");
    }

    #[test]
    fn rates_are_short() {
        assert_eq!(round_rate(1440.0), "1440");
        assert_eq!(round_rate(1.0 / 7.0), "0.14");
        assert_eq!(round_rate(0.5), "0.5");
    }

    fn event(seconds: i64, nanos: i32, from: InstanceStatus, to: InstanceStatus) -> InstanceEvent {
        InstanceEvent {
            time: ts(seconds, nanos),
            from_status: from as i32,
            to_status: to as i32,
            attempt: 1,
            scheduler_id: "axd-1".into(),
            worker_id: String::new(),
            reason: String::new(),
        }
    }

    #[test]
    fn event_trails_carry_the_time_since_the_previous_event() {
        let events = [
            event(1_767_261_600, 0, InstanceStatus::Unspecified, InstanceStatus::Pending),
            event(1_767_261_601, 204_000_000, InstanceStatus::Pending, InstanceStatus::Dispatched),
            event(1_767_261_601, 254_000_000, InstanceStatus::Dispatched, InstanceStatus::Running),
            event(1_767_261_691, 254_000_000, InstanceStatus::Running, InstanceStatus::Success),
        ];
        assert_eq!(gaps_millis(&events), vec![None, Some(1_204), Some(50), Some(90_000)]);
        let views = instance_event_views(&events);
        let gaps: Vec<Option<&str>> = views.iter().map(|v| v.since_previous.as_deref()).collect();
        assert_eq!(gaps, vec![None, Some("1s204ms"), Some("50ms"), Some("1m30s")]);
        assert_eq!(
            serde_json::to_value(&views[0]).expect("json"),
            json!({
                "time": "2026-01-01T10:00:00Z",
                "from_status": null,
                "to_status": "PENDING",
                "attempt": 1,
                "scheduler_id": "axd-1",
                "worker_id": "",
                "reason": "",
                "since_previous": null
            })
        );
        assert_eq!(views[1].from_status.as_deref(), Some("PENDING"));
        assert_eq!(views[1].to_status, "DISPATCHED");
    }

    #[test]
    fn an_event_without_a_time_breaks_only_its_own_gaps() {
        let mut events = vec![
            event(100, 0, InstanceStatus::Unspecified, InstanceStatus::Pending),
            event(101, 0, InstanceStatus::Pending, InstanceStatus::Dispatched),
            event(103, 0, InstanceStatus::Dispatched, InstanceStatus::Running),
        ];
        events[1].time = None;
        assert_eq!(gaps_millis(&events), vec![None, None, None]);
        assert_eq!(gaps_millis(&events[..1]), vec![None]);
        assert_eq!(gaps_millis(&[]), Vec::<Option<i64>>::new());
    }

    #[test]
    fn instances_serialize_every_field() {
        let instance = Instance {
            id: 42,
            task_id: 7,
            task_name: "nightly".into(),
            app: "billing".into(),
            handler: "report".into(),
            params: r#"{"full":true}"#.into(),
            idempotency_key: "fire:2026-01-01T02:00:00Z".into(),
            source: InstanceSource::Schedule as i32,
            trigger_time: ts(1_767_232_800, 0),
            available_time: ts(1_767_232_800, 0),
            status: InstanceStatus::Success as i32,
            attempt: 1,
            max_retries: 3,
            failures: 0,
            worker_id: "w1".into(),
            session_id: "s1".into(),
            scheduler_id: "axd-1".into(),
            start_time: ts(1_767_232_801, 0),
            finish_time: ts(1_767_232_802, 500_000_000),
            deadline: None,
            message: "done".into(),
            output: "plain text".into(),
            progress_percent: 100,
            progress_message: "all".into(),
            create_time: ts(1_767_232_800, 0),
            update_time: ts(1_767_232_802, 500_000_000),
        };
        let value = serde_json::to_value(InstanceView::from(&instance)).expect("json");
        assert_eq!(value["status"], "SUCCESS");
        assert_eq!(value["source"], "SCHEDULE");
        assert_eq!(value["params"], json!({"full": true}));
        assert_eq!(value["output"], "plain text");
        assert_eq!(value["deadline"], Value::Null);
        assert_eq!(value["finish_time"], "2026-01-01T02:00:02.500Z");
        let keys: Vec<&str> = value.as_object().expect("object").keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 26, "one key per Instance field: {keys:?}");
        let text = instance_details(&InstanceView::from(&instance));
        assert!(text.contains("status:") && text.contains("SUCCESS"), "{text}");
    }

    #[test]
    fn status_counts_list_every_status_in_order() {
        let counts = StatusCounts::new([(InstanceStatus::Running as i32, 2), (InstanceStatus::Pending as i32, 5)]);
        assert_eq!(
            serde_json::to_string(&counts).expect("json"),
            r#"{"PENDING":5,"DISPATCHED":0,"RUNNING":2,"SUCCESS":0,"FAILED":0,"TIMEOUT":0,"CANCELED":0,"SKIPPED":0}"#
        );
        let unknown = StatusCounts::new([(42, 1)]);
        assert_eq!(unknown.0.last(), Some(&("42".to_owned(), 1)));
    }

    #[test]
    fn tables_align_columns_and_trim_trailing_space() {
        let mut table = Table::new(["NAME", "APP", "ENABLED"]);
        table.row(["a".into(), "billing".into(), "true".into()]).row(["longer-name".into(), "x".into(), String::new()]);
        assert_eq!(table.render(), "NAME         APP      ENABLED\na            billing  true\nlonger-name  x\n");
        assert!(Table::new(["A"]).is_empty());
        let mut fields = Fields::new();
        fields.add("id", "1").add("description", "");
        assert_eq!(fields.render(), "id:           1\ndescription:\n");
    }
}
