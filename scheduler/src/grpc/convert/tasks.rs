//! Tasks, task specs, their events and schedule previews.

use super::*;

/// The TaskSpec fields an update mask may name.
pub use ax_proto::TASK_SPEC_UPDATABLE_FIELDS as UPDATABLE_FIELDS;

/// Largest `max_running` / `max_pending`.
pub const MAX_TASK_LIMIT: u32 = 100_000;

fn limit(field: &str, v: u32) -> Result<NonZeroU32> {
    match NonZeroU32::new(v) {
        Some(n) if v <= MAX_TASK_LIMIT => Ok(n),
        _ => Err(Error::invalid(field, format!("{v} is out of range 1-{MAX_TASK_LIMIT}"))),
    }
}

/// Checks what no single field can: routing BROADCAST with shards, a hash key without routing HASH
/// or that names no field of the params. Called after every field of a create or update is set;
/// `prefix` is the request path of the spec.
pub fn check_placement(c: &TaskConfig, task_name: &str, prefix: &str) -> Result<()> {
    let p = &c.placement;
    if p.shards.is_some() && c.routing == Routing::Broadcast {
        return Err(Error::invalid(
            format!("{prefix}.shards"),
            "cannot be combined with routing BROADCAST (a broadcast has one child per worker)",
        ));
    }
    if let Some(field) = &p.hash_key {
        if c.routing != Routing::Hash {
            return Err(Error::invalid(format!("{prefix}.hash_key"), "is only used with routing HASH"));
        }
        crate::routing::hash::key_of(&c.params, Some(field), task_name)
            .map_err(|why| Error::invalid(format!("{prefix}.hash_key"), why))?;
    }
    if c.flow.event_filter.is_some() && c.flow.on_event.is_none() {
        return Err(Error::invalid(format!("{prefix}.event_filter"), "is only used with on_event"));
    }
    let pairs = [
        ("concurrency_key", p.concurrency_key.as_deref(), "concurrency_limit", p.concurrency_limit.is_some()),
        ("unique_key", p.unique_key.as_deref(), "unique_for", p.unique_for.is_some()),
    ];
    for (key_field, key, with_field, with) in pairs {
        match (key, with) {
            (Some(path), true) => {
                crate::routing::keypath::key_of(&c.params, path)
                    .map_err(|why| Error::invalid(format!("{prefix}.{key_field}"), why))?;
            }
            (Some(_), false) => {
                return Err(Error::invalid(format!("{prefix}.{with_field}"), format!("is required with {key_field}")));
            }
            (None, true) => {
                return Err(Error::invalid(format!("{prefix}.{with_field}"), format!("is only used with {key_field}")));
            }
            (None, false) => {}
        }
    }
    Ok(())
}

/// An optional duration field, within `min ..= max`.
fn opt_duration(
    field: &str,
    v: Option<&prost_types::Duration>,
    min: Duration,
    max: Duration,
) -> Result<Option<Duration>> {
    v.map(|d| {
        let d = duration_from_pb(field, d)?;
        validate::duration_between(field, d, min, max)?;
        Ok(d)
    })
    .transpose()
}

/// Most `search_params` of a task.
pub const MAX_SEARCH_PARAMS: usize = 4;

/// `search_params`: at most [`MAX_SEARCH_PARAMS`] params paths, no two alike.
fn search_params(field: &str, v: &[String]) -> Result<Vec<String>> {
    if v.len() > MAX_SEARCH_PARAMS {
        return Err(Error::invalid(field, format!("has {} paths, at most {MAX_SEARCH_PARAMS}", v.len())));
    }
    for (i, path) in v.iter().enumerate() {
        let f = format!("{field}[{i}]");
        crate::routing::keypath::parse(path).map_err(|why| Error::invalid(&f, why))?;
        if v[..i].contains(path) {
            return Err(Error::invalid(f, format!("{path:?} is listed twice")));
        }
    }
    Ok(v.to_vec())
}

/// A params path of `concurrency_key` or `unique_key`: empty is none.
fn key_path(field: &str, v: &str) -> Result<Option<String>> {
    if v.is_empty() {
        return Ok(None);
    }
    crate::routing::keypath::parse(v).map_err(|why| Error::invalid(field, why))?;
    Ok(Some(v.to_owned()))
}

/// Checks what no single field of the schedule's extras can: a window that ends before it starts,
/// jitter on a manual schedule or not shorter than the schedule's period, an overlap policy that
/// holds or cancels instances with a broadcast or sharded task, a task that chains to itself, a
/// window and excluded dates that leave no fire. `prefix` is the request path of the spec.
pub fn check_timing(c: &TaskConfig, task_name: &str, prefix: &str, now: Ts) -> Result<()> {
    let t = &c.timing;
    if let (Some(start), Some(end)) = (t.start, t.end)
        && end < start
    {
        return Err(Error::invalid(
            format!("{prefix}.end_time"),
            format!("{} is before start_time {}", end.to_rfc3339(), start.to_rfc3339()),
        ));
    }
    if !t.extra_schedules.is_empty() {
        if !matches!(c.schedule, Schedule::Cron { .. } | Schedule::FixedRate { .. }) {
            return Err(Error::invalid(
                format!("{prefix}.schedule"),
                "must be a cron or fixed_rate schedule when extra_schedules are set (their fires are merged)",
            ));
        }
        if let Some(i) = t.extra_schedules.iter().position(|s| *s == c.schedule) {
            return Err(Error::invalid(format!("{prefix}.extra_schedules[{i}]"), "is the same as schedule"));
        }
    }
    if let Some(j) = t.jitter {
        // The period of every schedule's fires merged (the window aside).
        let compiled = Compiled::for_task(c, &Default::default())
            .map_err(|e| Error::invalid(format!("{prefix}.schedule.{}", e.field), &e.reason))?;
        if c.schedule == Schedule::Manual {
            return Err(Error::invalid(format!("{prefix}.jitter"), "a manual schedule has no fires to delay"));
        }
        if let Some(period) = compiled.shortest_period(now, 1000).filter(|p| j >= *p) {
            return Err(Error::invalid(
                format!("{prefix}.jitter"),
                format!(
                    "{} is not shorter than the schedule's period {} (fires would change order)",
                    crate::schedule::fmt_duration(j),
                    crate::schedule::fmt_duration(period)
                ),
            ));
        }
    }
    let fans_out = c.routing == Routing::Broadcast || c.placement.shards.is_some();
    if fans_out && c.concurrency != ConcurrencyPolicy::Allow && c.concurrency != ConcurrencyPolicy::Forbid {
        return Err(Error::invalid(
            format!("{prefix}.concurrency_policy"),
            format!(
                "{} cannot be combined with routing BROADCAST or shards (a fire is a parent of several instances)",
                c.concurrency
            ),
        ));
    }
    for (field, list) in
        [("on_success", &c.flow.on_success), ("on_failure", &c.flow.on_failure), ("after_all", &c.flow.after_all)]
    {
        if list.iter().any(|n| n == task_name) {
            return Err(Error::invalid(
                format!("{prefix}.{field}"),
                format!("names the task itself ({task_name} -> {task_name} is a cycle)"),
            ));
        }
    }
    if !t.is_empty() && c.enabled && c.schedule != Schedule::Manual {
        let compiled = Compiled::for_task(c, &Default::default())
            .map_err(|e| Error::invalid(format!("{prefix}.schedule.{}", e.field), &e.reason))?;
        if compiled.first_fire(now).is_none()
            && Compiled::compile(&c.schedule).ok().and_then(|b| b.first_fire(now)).is_some()
        {
            let field = if t.end.is_some() {
                "end_time"
            } else if t.start.is_some() {
                "start_time"
            } else {
                "exclude_dates"
            };
            return Err(Error::invalid(format!("{prefix}.{field}"), "leaves the schedule no fire after now"));
        }
    }
    Ok(())
}

/// A list of task names at `field` (chains, DAG upstreams): each valid, at most
/// [`crate::model::MAX_LINKS`], without duplicates (the first of each kept, in order).
fn task_names(field: &str, names: &[String]) -> Result<Vec<String>> {
    if names.len() > crate::model::MAX_LINKS {
        return Err(Error::invalid(field, format!("{} tasks; at most {}", names.len(), crate::model::MAX_LINKS)));
    }
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        validate::task_name(&format!("{field}[{i}]"), n)?;
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    Ok(out)
}

/// Dates `YYYY-MM-DD` at `field`: at most [`crate::model::MAX_DATES`], as a sorted set.
pub fn dates_from_pb(field: &str, dates: &[String]) -> Result<std::collections::BTreeSet<chrono::NaiveDate>> {
    if dates.len() > crate::model::MAX_DATES {
        return Err(Error::invalid(field, format!("{} dates; at most {}", dates.len(), crate::model::MAX_DATES)));
    }
    dates
        .iter()
        .enumerate()
        .map(|(i, d)| {
            crate::window::parse_date(d).ok_or_else(|| {
                Error::invalid(format!("{field}[{i}]"), format!("{} is not a date (YYYY-MM-DD)", validate::quote(d)))
            })
        })
        .collect()
}

/// The proto form of a date set.
pub fn dates_to_pb(dates: &std::collections::BTreeSet<chrono::NaiveDate>) -> Vec<String> {
    dates.iter().map(|d| d.format("%Y-%m-%d").to_string()).collect()
}

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
        "extra_schedules" => {
            c.timing.extra_schedules = super::schedule::extra_schedules_from_pb(&f, &spec.extra_schedules, now)?
        }
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
        "timeout" => c.timeout = opt_duration(&f, spec.timeout.as_ref(), Duration::from_secs(1), 7 * DAY)?,
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
        "selector" => {
            let parsed = crate::routing::selector::Selector::parse(&spec.selector)
                .map_err(|why| Error::invalid(&f, format!("{} {why}", validate::quote(&spec.selector))))?;
            c.placement.selector = parsed.to_string();
        }
        "retry_on" => c.placement.retry_on = retry_on_from_pb(&f, spec.retry_on)?,
        "shards" => {
            c.placement.shards = match spec.shards {
                0 => None,
                n if n > MAX_SHARDS => return Err(Error::invalid(f, format!("{n} is out of range 1-{MAX_SHARDS}"))),
                n => NonZeroU32::new(n),
            }
        }
        "hash_key" => {
            c.placement.hash_key = if spec.hash_key.is_empty() {
                None
            } else {
                validate::hash_key(&f, &spec.hash_key)?;
                Some(spec.hash_key.clone())
            }
        }
        "priority" => {
            c.placement.priority = u8::try_from(spec.priority)
                .ok()
                .filter(|p| *p <= MAX_PRIORITY)
                .ok_or_else(|| Error::invalid(&f, format!("{} is out of range 0-{MAX_PRIORITY}", spec.priority)))?;
        }
        "max_running" => c.placement.max_running = spec.max_running.map(|v| limit(&f, v)).transpose()?,
        "max_pending" => {
            c.placement.max_pending = spec.max_pending.map(|v| limit(&f, v)).transpose()?.unwrap_or(DEFAULT_MAX_PENDING)
        }
        "cooldown_after" => {
            c.placement.cooldown.after = match spec.cooldown_after {
                Some(n) if n > 1000 => return Err(Error::invalid(f, format!("{n} is out of range 0-1000"))),
                other => other,
            }
        }
        "cooldown" => c.placement.cooldown.duration = opt_duration(&f, spec.cooldown.as_ref(), Duration::ZERO, DAY)?,
        "start_time" => c.timing.start = spec.start_time.as_ref().map(|t| ts_from_pb(&f, t)).transpose()?,
        "end_time" => {
            c.timing.end = spec.end_time.as_ref().map(|t| ts_from_pb(&f, t)).transpose()?;
            if let Some(end) = c.timing.end.filter(|e| *e < now) {
                return Err(Error::invalid(
                    f,
                    format!("{} is in the past (now {})", end.to_rfc3339(), now.to_rfc3339()),
                ));
            }
        }
        "exclude_dates" => c.timing.exclude_dates = dates_from_pb(&f, &spec.exclude_dates)?,
        "calendar" => {
            c.timing.calendar = if spec.calendar.is_empty() {
                None
            } else {
                validate::task_name(&f, &spec.calendar)?;
                Some(spec.calendar.clone())
            }
        }
        "jitter" => {
            let (min, max) = (Duration::from_millis(1), crate::model::MAX_JITTER);
            c.timing.jitter = opt_duration(&f, spec.jitter.as_ref(), min, max)?;
        }
        "concurrency_key" => c.placement.concurrency_key = key_path(&f, &spec.concurrency_key)?,
        "concurrency_limit" => {
            c.placement.concurrency_limit = spec.concurrency_limit.map(|v| limit(&f, v)).transpose()?
        }
        "unique_key" => c.placement.unique_key = key_path(&f, &spec.unique_key)?,
        "search_params" => c.placement.search_params = search_params(&f, &spec.search_params)?,
        "unique_for" => {
            c.placement.unique_for = opt_duration(&f, spec.unique_for.as_ref(), Duration::from_secs(1), DAY)?
        }
        "must_finish_within" => {
            let within = spec.must_finish_within.as_ref();
            c.flow.must_finish_within = opt_duration(&f, within, Duration::from_secs(1), 7 * DAY)?;
        }
        "on_event" => {
            c.flow.on_event = if spec.on_event.is_empty() {
                None
            } else {
                validate::event_name(&f, &spec.on_event)?;
                Some(spec.on_event.clone())
            }
        }
        "event_filter" => {
            c.flow.event_filter = if spec.event_filter.is_empty() {
                None
            } else {
                crate::birth::events::Filter::parse(&spec.event_filter).map_err(|why| Error::invalid(&f, why))?;
                Some(spec.event_filter.clone())
            }
        }
        "on_success" => c.flow.on_success = task_names(&f, &spec.on_success)?,
        "on_failure" => c.flow.on_failure = task_names(&f, &spec.on_failure)?,
        "after_all" => c.flow.after_all = task_names(&f, &spec.after_all)?,
        other => {
            return Err(Error::invalid(
                "update_mask",
                format!(
                    "unknown or immutable field {}; updatable: {}",
                    validate::quote(other),
                    UPDATABLE_FIELDS.join(", ")
                ),
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
        placement: Placement::default(),
        timing: Default::default(),
        flow: Default::default(),
    };
    for field in UPDATABLE_FIELDS {
        apply_field(&mut c, spec, field, "task", now)?;
    }
    check_placement(&c, &spec.name, "task")?;
    check_timing(&c, &spec.name, "task", now)?;
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
        selector: c.placement.selector.clone(),
        retry_on: retry_on_to_pb(c.placement.retry_on).into(),
        shards: c.placement.shards.map_or(0, NonZeroU32::get),
        hash_key: c.placement.hash_key.clone().unwrap_or_default(),
        priority: u32::from(c.placement.priority),
        max_running: c.placement.max_running.map(NonZeroU32::get),
        max_pending: Some(c.placement.max_pending.get()),
        cooldown_after: c.placement.cooldown.after,
        cooldown: c.placement.cooldown.duration.map(duration_to_pb),
        start_time: opt_ts(c.timing.start),
        end_time: opt_ts(c.timing.end),
        exclude_dates: dates_to_pb(&c.timing.exclude_dates),
        calendar: c.timing.calendar.clone().unwrap_or_default(),
        jitter: c.timing.jitter.map(duration_to_pb),
        on_success: c.flow.on_success.clone(),
        on_failure: c.flow.on_failure.clone(),
        after_all: c.flow.after_all.clone(),
        concurrency_key: c.placement.concurrency_key.clone().unwrap_or_default(),
        concurrency_limit: c.placement.concurrency_limit.map(NonZeroU32::get),
        unique_key: c.placement.unique_key.clone().unwrap_or_default(),
        unique_for: c.placement.unique_for.map(duration_to_pb),
        must_finish_within: c.flow.must_finish_within.map(duration_to_pb),
        on_event: c.flow.on_event.clone().unwrap_or_default(),
        event_filter: c.flow.event_filter.clone().unwrap_or_default(),
        search_params: c.placement.search_params.clone(),
        extra_schedules: c.timing.extra_schedules.iter().map(schedule_to_pb).collect(),
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
        coalesced_fires: t.coalesced.map_or(0, |(_, n)| n),
        coalesce_start_time: t.coalesced.map(|(since, _)| ts_to_pb(since)),
        pause: t.pause.as_ref().map(|p| pb::TaskPause {
            actor: p.by.clone(),
            note: p.note.clone(),
            pause_time: Some(ts_to_pb(p.at)),
            until: opt_ts(p.until),
        }),
    }
}

/// The proto form of a task event.
pub fn task_event_to_pb(e: &TaskEvent) -> pb::TaskEvent {
    pb::TaskEvent {
        time: Some(ts_to_pb(e.at)),
        kind: e.kind.as_str().to_owned(),
        actor: e.actor.clone(),
        message: e.message.clone(),
        fires: e.fires.as_ref().map(fire_span_to_pb),
    }
}

/// The proto form of a run of fires.
pub fn fire_span_to_pb(s: &FireSpan) -> pb::FireSpan {
    pb::FireSpan { first_time: Some(ts_to_pb(s.first)), last_time: Some(ts_to_pb(s.last)), count: s.count }
}

/// The proto form of a preview; with `jitter` (the task name and the jitter), each fire's run time
/// carries its offset.
pub fn preview_to_pb(p: &Preview, jitter: Option<(&str, Duration)>) -> pb::SchedulePreview {
    let run = |at: Ts| crate::window::run_time(jitter.map_or("", |(n, _)| n), at, jitter.map(|(_, j)| j));
    pb::SchedulePreview {
        fires: p
            .fires
            .iter()
            .map(|f| pb::Fire {
                time: Some(ts_to_pb(f.at)),
                local_time: f.local.clone(),
                run_time: Some(ts_to_pb(run(f.at))),
            })
            .collect(),
        fires_per_day: p.fires_per_day,
        warnings: p.warnings.clone(),
        description: p.description.clone(),
    }
}
