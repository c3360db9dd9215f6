//! Tasks, task specs, their events and schedule previews.

use super::*;

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
