//! Mapping between the wire (`ax_proto::v1`) and the domain, with validation and defaults.
//!
//! Every request field is checked here and a bad one becomes `InvalidArgument` naming its dotted path
//! (e.g. `task.schedule.cron.expression`). Responses are built from domain values only.

use std::{collections::BTreeMap, num::NonZeroU32, time::Duration};

use ax_proto::v1 as pb;

use crate::{
    cron::CronExpr,
    error::{Error, Result},
    model::{
        Backoff, ConcurrencyPolicy, CronDialect, DEFAULT_MAX_CATCH_UP, DEFAULT_MISFIRE_THRESHOLD, Instance,
        InstanceEvent, InstanceSource, InstanceStatus, LogLine, MisfirePolicy, RetryPolicy, Routing, Schedule, Task,
        TaskConfig, TaskEvent, Ts, WorkerRecord, add, duration_micros,
    },
    schedule::{Compiled, Preview},
    validate,
};

const DAY: Duration = Duration::from_secs(86_400);

// ----- time

/// A proto timestamp as a domain instant.
pub fn ts_from_pb(field: &str, t: &prost_types::Timestamp) -> Result<Ts> {
    chrono::DateTime::from_timestamp(t.seconds, u32::try_from(t.nanos).unwrap_or(u32::MAX))
        .ok_or_else(|| Error::invalid(field, format!("{}s {}ns is not a valid timestamp", t.seconds, t.nanos)))
}

/// A domain instant as a proto timestamp.
pub fn ts_to_pb(t: Ts) -> prost_types::Timestamp {
    prost_types::Timestamp { seconds: t.timestamp(), nanos: i32::try_from(t.timestamp_subsec_nanos()).unwrap_or(0) }
}

fn opt_ts(t: Option<Ts>) -> Option<prost_types::Timestamp> {
    t.map(ts_to_pb)
}

/// A proto duration as a std duration (negative is an error).
pub fn duration_from_pb(field: &str, d: &prost_types::Duration) -> Result<Duration> {
    if d.seconds < 0 || d.nanos < 0 {
        return Err(Error::invalid(field, "must not be negative"));
    }
    Ok(Duration::new(u64::try_from(d.seconds).unwrap_or(0), u32::try_from(d.nanos).unwrap_or(0)))
}

/// A std duration as a proto duration.
pub fn duration_to_pb(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

fn micros_to_pb(us: i64) -> prost_types::Duration {
    duration_to_pb(Duration::from_micros(u64::try_from(us).unwrap_or(0)))
}

fn required<'a, T>(field: &str, v: &'a Option<T>) -> Result<&'a T> {
    v.as_ref().ok_or_else(|| Error::invalid(field, "is required"))
}

// ----- enums

/// A proto status filter: `None` for UNSPECIFIED.
pub fn status_from_pb(field: &str, v: i32) -> Result<Option<InstanceStatus>> {
    use pb::InstanceStatus as P;
    Ok(Some(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown status {v}")))? {
        P::Unspecified => return Ok(None),
        P::Pending => InstanceStatus::Pending,
        P::Dispatched => InstanceStatus::Dispatched,
        P::Running => InstanceStatus::Running,
        P::Success => InstanceStatus::Success,
        P::Failed => InstanceStatus::Failed,
        P::Timeout => InstanceStatus::Timeout,
        P::Canceled => InstanceStatus::Canceled,
        P::Skipped => InstanceStatus::Skipped,
    }))
}

/// A domain status as its proto value.
pub fn status_to_pb(s: InstanceStatus) -> pb::InstanceStatus {
    match s {
        InstanceStatus::Pending => pb::InstanceStatus::Pending,
        InstanceStatus::Dispatched => pb::InstanceStatus::Dispatched,
        InstanceStatus::Running => pb::InstanceStatus::Running,
        InstanceStatus::Success => pb::InstanceStatus::Success,
        InstanceStatus::Failed => pb::InstanceStatus::Failed,
        InstanceStatus::Timeout => pb::InstanceStatus::Timeout,
        InstanceStatus::Canceled => pb::InstanceStatus::Canceled,
        InstanceStatus::Skipped => pb::InstanceStatus::Skipped,
    }
}

fn misfire_from_pb(field: &str, v: i32) -> Result<MisfirePolicy> {
    use pb::MisfirePolicy as P;
    Ok(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown misfire policy {v}")))? {
        P::Unspecified | P::FireOnce => MisfirePolicy::FireOnce,
        P::FireAll => MisfirePolicy::FireAll,
        P::Skip => MisfirePolicy::Skip,
    })
}

fn misfire_to_pb(m: MisfirePolicy) -> pb::MisfirePolicy {
    match m {
        MisfirePolicy::FireOnce => pb::MisfirePolicy::FireOnce,
        MisfirePolicy::FireAll => pb::MisfirePolicy::FireAll,
        MisfirePolicy::Skip => pb::MisfirePolicy::Skip,
    }
}

fn concurrency_from_pb(field: &str, v: i32) -> Result<ConcurrencyPolicy> {
    use pb::ConcurrencyPolicy as P;
    Ok(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown concurrency policy {v}")))? {
        P::Unspecified | P::Allow => ConcurrencyPolicy::Allow,
        P::Forbid => ConcurrencyPolicy::Forbid,
    })
}

fn concurrency_to_pb(c: ConcurrencyPolicy) -> pb::ConcurrencyPolicy {
    match c {
        ConcurrencyPolicy::Allow => pb::ConcurrencyPolicy::Allow,
        ConcurrencyPolicy::Forbid => pb::ConcurrencyPolicy::Forbid,
    }
}

fn routing_from_pb(field: &str, v: i32) -> Result<Routing> {
    use pb::RoutingStrategy as P;
    Ok(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown routing strategy {v}")))? {
        P::Unspecified | P::LeastLoaded => Routing::LeastLoaded,
        P::RoundRobin => Routing::RoundRobin,
        P::Random => Routing::Random,
    })
}

fn routing_to_pb(r: Routing) -> pb::RoutingStrategy {
    match r {
        Routing::LeastLoaded => pb::RoutingStrategy::LeastLoaded,
        Routing::RoundRobin => pb::RoutingStrategy::RoundRobin,
        Routing::Random => pb::RoutingStrategy::Random,
    }
}

fn dialect_from_pb(field: &str, v: i32) -> Result<Option<CronDialect>> {
    use pb::CronDialect as P;
    Ok(match P::try_from(v).map_err(|_| Error::invalid(field, format!("unknown dialect {v}")))? {
        P::Unspecified => None,
        P::Unix => Some(CronDialect::Unix),
        P::Quartz => Some(CronDialect::Quartz),
    })
}

fn dialect_to_pb(d: CronDialect) -> pb::CronDialect {
    match d {
        CronDialect::Unix => pb::CronDialect::Unix,
        CronDialect::Quartz => pb::CronDialect::Quartz,
    }
}

fn source_to_pb(s: InstanceSource) -> pb::InstanceSource {
    match s {
        InstanceSource::Schedule => pb::InstanceSource::Schedule,
        InstanceSource::CatchUp => pb::InstanceSource::CatchUp,
        InstanceSource::Manual => pb::InstanceSource::Manual,
    }
}

// ----- schedule

/// Validates a proto schedule (at path `field`) against `now` and resolves defaults (dialect, time
/// zone, start times, `after`).
pub fn schedule_from_pb(field: &str, s: &pb::Schedule, now: Ts) -> Result<Schedule> {
    use pb::schedule::Kind;
    let kind = s
        .kind
        .as_ref()
        .ok_or_else(|| Error::invalid(field, "one of cron, fixed_rate, fixed_delay, one_time or manual is required"))?;
    let interval = |f: &str, i: &pb::IntervalSchedule| -> Result<(Duration, Ts)> {
        let d = duration_from_pb(&format!("{f}.interval"), required(&format!("{f}.interval"), &i.interval)?)?;
        validate::duration_between(&format!("{f}.interval"), d, Duration::from_secs(1), 366 * DAY)?;
        let start = match &i.start_at {
            Some(t) => ts_from_pb(&format!("{f}.start_at"), t)?,
            None => add(now, d),
        };
        Ok((d, start))
    };
    Ok(match kind {
        Kind::Cron(c) => {
            let f = format!("{field}.cron");
            let dialect = dialect_from_pb(&format!("{f}.dialect"), c.dialect)?;
            let expr = CronExpr::parse(&c.expression, &c.time_zone, dialect)
                .map_err(|e| Error::invalid(format!("{f}.{}", e.field), e.reason))?;
            let schedule = Schedule::Cron {
                expression: expr.source().to_owned(),
                time_zone: expr.time_zone().name().to_owned(),
                dialect: expr.dialect(),
            };
            if expr.next_after(now).is_none() {
                return Err(Error::invalid(
                    format!("{f}.expression"),
                    format!("`{}` never fires after {}", expr.source(), now.to_rfc3339()),
                ));
            }
            schedule
        }
        Kind::FixedRate(i) => {
            let (interval, start_at) = interval(&format!("{field}.fixed_rate"), i)?;
            Schedule::FixedRate { interval, start_at }
        }
        Kind::FixedDelay(i) => {
            let (interval, start_at) = interval(&format!("{field}.fixed_delay"), i)?;
            Schedule::FixedDelay { interval, start_at }
        }
        Kind::OneTime(o) => {
            let f = format!("{field}.one_time");
            use pb::one_time_schedule::When;
            let at = match o.when.as_ref().ok_or_else(|| Error::invalid(&f, "one of at or after is required"))? {
                When::At(t) => {
                    let at = ts_from_pb(&format!("{f}.at"), t)?;
                    if at < crate::model::sub(now, Duration::from_secs(60)) {
                        return Err(Error::invalid(
                            format!("{f}.at"),
                            format!("{} is more than a minute in the past (now {})", at.to_rfc3339(), now.to_rfc3339()),
                        ));
                    }
                    at
                }
                When::After(d) => {
                    let d = duration_from_pb(&format!("{f}.after"), d)?;
                    validate::duration_between(&format!("{f}.after"), d, Duration::ZERO, 366 * DAY)?;
                    add(now, d)
                }
            };
            Schedule::OneTime { at }
        }
        Kind::Manual(_) => Schedule::Manual,
    })
}

fn schedule_to_pb(s: &Schedule) -> pb::Schedule {
    use pb::schedule::Kind;
    let kind = match s {
        Schedule::Cron { expression, time_zone, dialect } => Kind::Cron(pb::CronSchedule {
            expression: expression.clone(),
            time_zone: time_zone.clone(),
            dialect: dialect_to_pb(*dialect).into(),
        }),
        Schedule::FixedRate { interval, start_at } => Kind::FixedRate(pb::IntervalSchedule {
            interval: Some(duration_to_pb(*interval)),
            start_at: Some(ts_to_pb(*start_at)),
        }),
        Schedule::FixedDelay { interval, start_at } => Kind::FixedDelay(pb::IntervalSchedule {
            interval: Some(duration_to_pb(*interval)),
            start_at: Some(ts_to_pb(*start_at)),
        }),
        Schedule::OneTime { at } => {
            Kind::OneTime(pb::OneTimeSchedule { when: Some(pb::one_time_schedule::When::At(ts_to_pb(*at))) })
        }
        Schedule::Manual => Kind::Manual(pb::ManualSchedule {}),
    };
    pb::Schedule { kind: Some(kind) }
}

/// The next fire time of a task whose schedule or enabled flag was just set at `now`.
pub fn initial_next_fire(config: &TaskConfig, now: Ts) -> Option<Ts> {
    if !config.enabled {
        return None;
    }
    match &config.schedule {
        // A one-time task accepted up to a minute late fires at once.
        Schedule::OneTime { at } => Some(*at),
        other => Compiled::compile(other).ok().and_then(|c| c.first_fire(now)),
    }
}

// ----- retry

fn backoff_from_pb(field: &str, b: &pb::Backoff) -> Result<Backoff> {
    use pb::backoff::Kind;
    Ok(match &b.kind {
        None => Backoff::default(),
        Some(Kind::List(l)) => {
            let f = format!("{field}.list.delays");
            if l.delays.is_empty() || l.delays.len() > 32 {
                return Err(Error::invalid(&f, format!("has {} delays; 1 to 32 allowed", l.delays.len())));
            }
            let mut delays_us = Vec::with_capacity(l.delays.len());
            for (i, d) in l.delays.iter().enumerate() {
                let fi = format!("{f}[{i}]");
                let d = duration_from_pb(&fi, d)?;
                validate::duration_between(&fi, d, Duration::ZERO, DAY)?;
                delays_us.push(duration_micros(d));
            }
            Backoff::List { delays_us }
        }
        Some(Kind::Exponential(e)) => {
            let f = format!("{field}.exponential");
            let initial = match &e.initial {
                Some(d) => duration_from_pb(&format!("{f}.initial"), d)?,
                None => Duration::from_secs(10),
            };
            validate::duration_between(&format!("{f}.initial"), initial, Duration::ZERO, DAY)?;
            let max = match &e.max {
                Some(d) => duration_from_pb(&format!("{f}.max"), d)?,
                None => Duration::from_secs(300).max(initial),
            };
            validate::duration_between(&format!("{f}.max"), max, initial, DAY)?;
            let multiplier = if e.multiplier == 0.0 { 2.0 } else { e.multiplier };
            if !(1.0..=10.0).contains(&multiplier) {
                return Err(Error::invalid(
                    format!("{f}.multiplier"),
                    format!("{multiplier} is out of range 1.0..10.0"),
                ));
            }
            if !(0.0..=1.0).contains(&e.jitter) {
                return Err(Error::invalid(format!("{f}.jitter"), format!("{} is out of range 0.0..1.0", e.jitter)));
            }
            Backoff::Exponential {
                initial_us: duration_micros(initial),
                multiplier,
                max_us: duration_micros(max),
                jitter: e.jitter,
            }
        }
    })
}

fn backoff_to_pb(b: &Backoff) -> pb::Backoff {
    use pb::backoff::Kind;
    pb::Backoff {
        kind: Some(match b {
            Backoff::List { delays_us } => {
                Kind::List(pb::ListBackoff { delays: delays_us.iter().map(|us| micros_to_pb(*us)).collect() })
            }
            Backoff::Exponential { initial_us, multiplier, max_us, jitter } => {
                Kind::Exponential(pb::ExponentialBackoff {
                    initial: Some(micros_to_pb(*initial_us)),
                    multiplier: *multiplier,
                    max: Some(micros_to_pb(*max_us)),
                    jitter: *jitter,
                })
            }
        }),
    }
}

fn retry_from_pb(field: &str, r: &pb::RetryPolicy) -> Result<RetryPolicy> {
    if r.max_retries > 100 {
        return Err(Error::invalid(format!("{field}.max_retries"), format!("{} is out of range 0-100", r.max_retries)));
    }
    let backoff = match &r.backoff {
        Some(b) => backoff_from_pb(&format!("{field}.backoff"), b)?,
        None => Backoff::default(),
    };
    Ok(RetryPolicy { max_retries: r.max_retries, backoff })
}

// ----- tasks

/// The TaskSpec fields an update mask may name.
pub const UPDATABLE_FIELDS: &[&str] = &[
    "app",
    "handler",
    "description",
    "schedule",
    "params",
    "enabled",
    "misfire_policy",
    "misfire_threshold",
    "max_catch_up",
    "concurrency_policy",
    "routing",
    "timeout",
    "retry_policy",
    "labels",
];

/// Sets one field of `c` from `spec` (field = a TaskSpec field name), validating it. `prefix` is the
/// request path of the spec (e.g. `task`).
pub fn apply_field(c: &mut TaskConfig, spec: &pb::TaskSpec, name: &str, prefix: &str, now: Ts) -> Result<()> {
    let f = format!("{prefix}.{name}");
    match name {
        "app" => {
            validate::app(&f, &spec.app)?;
            c.app = spec.app.clone();
        }
        "handler" => {
            validate::handler(&f, &spec.handler)?;
            c.handler = spec.handler.clone();
        }
        "description" => {
            validate::text(&f, &spec.description, validate::MAX_DESCRIPTION)?;
            c.description = spec.description.clone();
        }
        "schedule" => c.schedule = schedule_from_pb(&f, required(&f, &spec.schedule)?, now)?,
        "params" => c.params = validate::params(&f, &spec.params)?,
        "enabled" => c.enabled = spec.enabled.unwrap_or(true),
        "misfire_policy" => c.misfire_policy = misfire_from_pb(&f, spec.misfire_policy)?,
        "misfire_threshold" => {
            c.misfire_threshold = match &spec.misfire_threshold {
                Some(d) => duration_from_pb(&f, d)?,
                None => DEFAULT_MISFIRE_THRESHOLD,
            };
            validate::duration_between(&f, c.misfire_threshold, Duration::from_secs(1), DAY)?;
        }
        "max_catch_up" => {
            c.max_catch_up = match spec.max_catch_up {
                0 => DEFAULT_MAX_CATCH_UP,
                n if n > 1000 => {
                    return Err(Error::invalid(f, format!("{n} is out of range 1-1000")));
                }
                n => NonZeroU32::new(n).unwrap_or(DEFAULT_MAX_CATCH_UP),
            }
        }
        "concurrency_policy" => c.concurrency = concurrency_from_pb(&f, spec.concurrency_policy)?,
        "routing" => c.routing = routing_from_pb(&f, spec.routing)?,
        "timeout" => {
            c.timeout = match &spec.timeout {
                Some(d) => {
                    let d = duration_from_pb(&f, d)?;
                    validate::duration_between(&f, d, Duration::from_secs(1), 7 * DAY)?;
                    Some(d)
                }
                None => None,
            }
        }
        "retry_policy" => {
            c.retry = match &spec.retry_policy {
                Some(r) => retry_from_pb(&f, r)?,
                None => RetryPolicy::default(),
            }
        }
        "labels" => {
            let labels: BTreeMap<String, String> = spec.labels.clone().into_iter().collect();
            validate::labels(&f, &labels)?;
            c.labels = labels;
        }
        other => {
            return Err(Error::invalid(
                "update_mask",
                format!("unknown or immutable field {other:?}; updatable: {}", UPDATABLE_FIELDS.join(", ")),
            ));
        }
    }
    Ok(())
}

/// Validates a TaskSpec for creation: returns the name and the configuration with defaults.
pub fn task_from_pb(spec: &pb::TaskSpec, now: Ts) -> Result<(String, TaskConfig)> {
    validate::task_name("task.name", &spec.name)?;
    let mut c = TaskConfig {
        app: String::new(),
        handler: String::new(),
        description: String::new(),
        schedule: Schedule::Manual,
        params: "{}".to_owned(),
        enabled: true,
        misfire_policy: MisfirePolicy::FireOnce,
        misfire_threshold: DEFAULT_MISFIRE_THRESHOLD,
        max_catch_up: DEFAULT_MAX_CATCH_UP,
        concurrency: ConcurrencyPolicy::Allow,
        routing: Routing::LeastLoaded,
        timeout: None,
        retry: RetryPolicy::default(),
        labels: BTreeMap::new(),
    };
    for field in UPDATABLE_FIELDS {
        apply_field(&mut c, spec, field, "task", now)?;
    }
    Ok((spec.name.clone(), c))
}

/// The proto form of a task configuration.
pub fn spec_to_pb(name: &str, c: &TaskConfig) -> pb::TaskSpec {
    pb::TaskSpec {
        name: name.to_owned(),
        app: c.app.clone(),
        handler: c.handler.clone(),
        description: c.description.clone(),
        schedule: Some(schedule_to_pb(&c.schedule)),
        params: c.params.clone(),
        enabled: Some(c.enabled),
        misfire_policy: misfire_to_pb(c.misfire_policy).into(),
        misfire_threshold: Some(duration_to_pb(c.misfire_threshold)),
        max_catch_up: c.max_catch_up.get(),
        concurrency_policy: concurrency_to_pb(c.concurrency).into(),
        routing: routing_to_pb(c.routing).into(),
        timeout: c.timeout.map(duration_to_pb),
        retry_policy: Some(pb::RetryPolicy {
            max_retries: c.retry.max_retries,
            backoff: Some(backoff_to_pb(&c.retry.backoff)),
        }),
        labels: c.labels.clone().into_iter().collect(),
    }
}

/// The proto form of a stored task.
pub fn task_to_pb(t: &Task) -> pb::Task {
    pb::Task {
        id: t.id,
        spec: Some(spec_to_pb(&t.name, &t.config)),
        next_fire_time: opt_ts(t.next_fire_at),
        create_time: Some(ts_to_pb(t.created_at)),
        update_time: Some(ts_to_pb(t.updated_at)),
        version: t.version,
    }
}

/// The proto form of a task event.
pub fn task_event_to_pb(e: &TaskEvent) -> pb::TaskEvent {
    pb::TaskEvent {
        time: Some(ts_to_pb(e.at)),
        kind: e.kind.as_str().to_owned(),
        actor: e.actor.clone(),
        message: e.message.clone(),
    }
}

/// The proto form of a preview.
pub fn preview_to_pb(p: &Preview) -> pb::SchedulePreview {
    pb::SchedulePreview {
        fires: p.fires.iter().map(|f| pb::Fire { time: Some(ts_to_pb(f.at)), local_time: f.local.clone() }).collect(),
        fires_per_day: p.fires_per_day,
        warnings: p.warnings.clone(),
        description: p.description.clone(),
    }
}

// ----- instances, workers

/// The proto form of an instance.
pub fn instance_to_pb(i: &Instance) -> pb::Instance {
    pb::Instance {
        id: i.id,
        task_id: i.task_id,
        task_name: i.task_name.clone(),
        app: i.app.clone(),
        handler: i.handler.clone(),
        params: i.params.clone(),
        idempotency_key: i.idempotency_key.clone(),
        source: source_to_pb(i.source).into(),
        trigger_time: Some(ts_to_pb(i.fire_at)),
        available_time: Some(ts_to_pb(i.available_at)),
        status: status_to_pb(i.status).into(),
        attempt: i.attempt,
        max_retries: i.max_retries,
        failures: i.failures,
        worker_id: i.worker_id.clone().unwrap_or_default(),
        session_id: i.session_id.clone().unwrap_or_default(),
        scheduler_id: i.scheduler_id.clone().unwrap_or_default(),
        start_time: opt_ts(i.started_at),
        finish_time: opt_ts(i.finished_at),
        deadline: opt_ts(i.deadline_at),
        message: i.message.clone(),
        output: i.output.clone(),
        progress_percent: i.progress_percent,
        progress_message: i.progress_message.clone(),
        create_time: Some(ts_to_pb(i.created_at)),
        update_time: Some(ts_to_pb(i.updated_at)),
        lease_expire_time: opt_ts(i.lease_expires_at),
    }
}

/// The proto form of an instance event.
pub fn event_to_pb(e: &InstanceEvent) -> pb::InstanceEvent {
    pb::InstanceEvent {
        time: Some(ts_to_pb(e.at)),
        from_status: e.from.map(|s| status_to_pb(s).into()).unwrap_or(0),
        to_status: status_to_pb(e.to).into(),
        attempt: e.attempt,
        scheduler_id: e.scheduler_id.clone(),
        worker_id: e.worker_id.clone(),
        reason: e.reason.clone(),
    }
}

/// The proto form of a log line.
pub fn log_to_pb(l: &LogLine) -> pb::LogLine {
    let level = match l.level.as_str() {
        "DEBUG" => pb::LogLevel::Debug,
        "WARN" => pb::LogLevel::Warn,
        "ERROR" => pb::LogLevel::Error,
        _ => pb::LogLevel::Info,
    };
    pb::LogLine {
        seq: l.seq,
        attempt: l.attempt,
        level: level.into(),
        time: Some(ts_to_pb(l.at)),
        message: l.message.clone(),
    }
}

/// The proto form of a worker session.
pub fn worker_to_pb(w: &WorkerRecord) -> pb::WorkerSession {
    pb::WorkerSession {
        session_id: w.session_id.clone(),
        worker_id: w.worker_id.clone(),
        app: w.app.clone(),
        handlers: w.handlers.clone(),
        capacity: w.capacity,
        credits: w.credits,
        in_flight: w.in_flight,
        labels: w.labels.clone().into_iter().collect(),
        scheduler_id: w.scheduler_id.clone(),
        client: w.client.clone(),
        connect_time: Some(ts_to_pb(w.connected_at)),
        last_seen_time: Some(ts_to_pb(w.last_seen_at)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> Ts {
        chrono::Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).single().expect("valid")
    }

    fn cron_spec(expr: &str) -> pb::TaskSpec {
        pb::TaskSpec {
            name: "t".into(),
            app: "app".into(),
            handler: "h".into(),
            schedule: Some(pb::Schedule {
                kind: Some(pb::schedule::Kind::Cron(pb::CronSchedule {
                    expression: expr.into(),
                    ..Default::default()
                })),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_are_filled_in() {
        let (name, c) = task_from_pb(&cron_spec("0 * * * *"), now()).expect("valid");
        assert_eq!(name, "t");
        assert!(c.enabled);
        assert_eq!(c.params, "{}");
        assert_eq!(c.misfire_policy, MisfirePolicy::FireOnce);
        assert_eq!(c.max_catch_up.get(), 10);
        assert_eq!(c.retry, RetryPolicy::default());
        assert_eq!(
            c.schedule,
            Schedule::Cron { expression: "0 * * * *".into(), time_zone: "UTC".into(), dialect: CronDialect::Unix }
        );
    }

    #[test]
    fn a_fixed_rate_fires_first_at_its_start_which_defaults_to_one_interval_from_now() {
        let rate = |start_at| pb::Schedule {
            kind: Some(pb::schedule::Kind::FixedRate(pb::IntervalSchedule {
                interval: Some(duration_to_pb(Duration::from_secs(60))),
                start_at,
            })),
        };
        let s = schedule_from_pb("schedule", &rate(None), now()).expect("valid");
        let start = add(now(), Duration::from_secs(60));
        assert_eq!(s, Schedule::FixedRate { interval: Duration::from_secs(60), start_at: start });
        // Fire n is at start + n * interval with n = 0, 1, ... (as proto/ax/v1/admin.proto says).
        let c = crate::schedule::Compiled::compile(&s).expect("compile");
        assert_eq!(c.first_fire(now()), Some(start));
        let explicit = add(now(), Duration::from_secs(7));
        let s = schedule_from_pb("schedule", &rate(Some(ts_to_pb(explicit))), now()).expect("valid");
        let c = crate::schedule::Compiled::compile(&s).expect("compile");
        assert_eq!(c.first_fire(now()), Some(explicit), "an explicit start is the first fire (n = 0)");
    }

    #[test]
    fn errors_name_the_request_path() {
        let e = task_from_pb(&cron_spec("0 25 * * *"), now()).expect_err("bad");
        assert_eq!(e.to_string(), "task.schedule.cron.expression: field 2 (hours) = 25 is out of range 0-23");
        let mut s = cron_spec("0 * * * *");
        s.params = "{oops".into();
        assert!(task_from_pb(&s, now()).expect_err("bad").to_string().starts_with("task.params: is not valid JSON"));
        let mut s = cron_spec("0 * * * *");
        s.schedule = None;
        assert_eq!(task_from_pb(&s, now()).expect_err("bad").to_string(), "task.schedule: is required");
        let mut s = cron_spec("0 * * * *");
        s.retry_policy = Some(pb::RetryPolicy { max_retries: 101, backoff: None });
        assert!(task_from_pb(&s, now()).expect_err("bad").to_string().starts_with("task.retry_policy.max_retries"));
        let mut s = cron_spec("0 0 30 2 *");
        s.name = "feb30".into();
        assert!(task_from_pb(&s, now()).expect_err("never").to_string().contains("never fires"));
    }

    #[test]
    fn a_task_survives_the_round_trip_through_proto() {
        let (name, c) = task_from_pb(&cron_spec("0 0 2 ? * 2"), now()).expect("valid");
        let back = spec_to_pb(&name, &c);
        let (_, again) = task_from_pb(&back, now()).expect("valid");
        assert_eq!(c, again);
    }
}
