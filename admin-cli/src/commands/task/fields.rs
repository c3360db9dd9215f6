//! The task flags shared by `task create` and `task update`: one definition, so that the two
//! commands cannot drift apart. Create makes `--app`, `--handler` and one schedule flag required
//! (see `TaskCommand::Create`); update sends only the fields whose flags were given.
//!
//! A routing-and-limits flag given on update is always named in the mask, also with its "clear"
//! form (`--selector ''`, `--shards 0`, `--hash-key ''`, `--max-running none`, `--max-pending
//! default`, ...): the server takes a masked field's value as sent, and unset means its default.
//! The same holds for the window, calendar, jitter and chain flags (`--end-at none`, `--exclude ''`,
//! `--calendar ''`, `--jitter none`, `--on-success ''`, ...).

use std::collections::HashMap;

use ax_proto::v1::{
    Backoff, ConcurrencyPolicy, CronDialect, CronSchedule, IntervalSchedule, ManualSchedule, MisfirePolicy,
    OneTimeSchedule, RetryPolicy, RetryTarget, RoutingStrategy, Schedule, TaskSpec, one_time_schedule, schedule,
};
use clap::{ArgGroup, Args};

use crate::args::{
    Concurrency, Dialect, List, Misfire, RetryOn, Routing, Setting, parse_also, parse_backoff, parse_count_or_default,
    parse_duration, parse_duration_or_default, parse_duration_or_none, parse_label, parse_list, parse_max_running,
    parse_timestamp, parse_timestamp_or_none, parse_whole,
};

/// Help heading of the schedule flags.
const SCHEDULE: &str = "Schedule (exactly one on create)";

/// Help heading of the flags that say where instances run and how many at once.
const PLACEMENT: &str = "Routing and limits";

/// Help heading of the flags that restrict or shift a schedule's fires.
const WINDOW: &str = "Active window, excluded dates and jitter";

/// Help heading of the flags that chain tasks.
const CHAINS: &str = "Chains and DAGs";

/// The schedule flags other than --cron.
const NOT_CRON: [&str; 5] = ["every", "fixed_delay", "at", "after", "manual"];

/// Everything about a task except its name.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("schedule").args(["cron", "every", "fixed_delay", "at", "after", "manual"])))]
pub struct TaskFields {
    /// App whose workers run the task.
    #[arg(long)]
    pub app: Option<String>,
    /// Handler the workers run.
    #[arg(long)]
    pub handler: Option<String>,
    /// Free text.
    #[arg(long, value_name = "TEXT")]
    pub description: Option<String>,

    /// A cron expression on the wall clock of --tz, e.g. "0 2 * * *".
    #[arg(long, value_name = "EXPR", help_heading = SCHEDULE)]
    pub cron: Option<String>,
    // `requires` alone is waived by clap when a conflicting schedule flag is present, hence the
    // explicit conflicts on the schedule options.
    /// IANA time zone of --cron, e.g. Europe/London [default: UTC].
    #[arg(long, value_name = "ZONE", requires = "cron", conflicts_with_all = NOT_CRON, help_heading = SCHEDULE)]
    pub tz: Option<String>,
    /// How to read --cron [default: detect from the expression].
    #[arg(long, value_enum, requires = "cron", conflicts_with_all = NOT_CRON, help_heading = SCHEDULE)]
    pub dialect: Option<Dialect>,
    /// Fire at a fixed rate, e.g. 15m (anchored at --start-at, no drift).
    #[arg(long, value_name = "DUR", value_parser = parse_duration, help_heading = SCHEDULE)]
    pub every: Option<prost_types::Duration>,
    /// Fire this long after the previous scheduled instance finished.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, help_heading = SCHEDULE)]
    pub fixed_delay: Option<prost_types::Duration>,
    /// Another schedule whose fires are merged with the task's (each instant once): 'cron EXPR [in
    /// ZONE]' or 'every DUR'; repeatable, at most 8; the task's own schedule must be --cron or
    /// --every. On update the given ones replace the stored list; '' for none.
    #[arg(long, value_name = "SCHEDULE", value_parser = parse_also, help_heading = SCHEDULE)]
    pub also: Vec<Option<Schedule>>,
    /// No fire before this instant (RFC 3339), whatever the schedule; with --every / --fixed-delay
    /// also their anchor [default: one interval from now]; `none` clears it.
    #[arg(long, value_name = "RFC3339|none", value_parser = parse_timestamp_or_none, help_heading = WINDOW)]
    pub start_at: Option<Setting<prost_types::Timestamp>>,
    /// No fire after this instant (RFC 3339); the task then fires no more; `none` clears it.
    #[arg(long, value_name = "RFC3339|none", value_parser = parse_timestamp_or_none, help_heading = WINDOW)]
    pub end_at: Option<Setting<prost_types::Timestamp>>,
    /// Dates without fires, YYYY-MM-DD,YYYY-MM-DD (on the cron's wall clock; UTC for the other
    /// schedules); '' for none. Replaces the stored list.
    #[arg(long, value_name = "DATES", value_parser = parse_list, help_heading = WINDOW)]
    pub exclude: Option<List>,
    /// A calendar (`axctl calendar create`) whose dates are excluded too; '' for none.
    #[arg(long, value_name = "NAME", help_heading = WINDOW)]
    pub calendar: Option<String>,
    /// Delay each fire by an offset below DUR derived from the task and the fire time (the same on
    /// every axd); shorter than the schedule's period; `none` clears it.
    #[arg(long, value_name = "DUR|none", value_parser = parse_duration_or_none, help_heading = WINDOW)]
    pub jitter: Option<Setting<prost_types::Duration>>,
    /// Deadline: each fire must have an instance that ended SUCCESS within DUR of it (1s-7d), else a
    /// deadline_missed alert and explain finding; `none` clears it.
    #[arg(long, value_name = "DUR|none", value_parser = parse_duration_or_none, help_heading = WINDOW)]
    pub must_finish_within: Option<Setting<prost_types::Duration>>,
    /// Events: one instance per event of this name published to the app (`axctl event publish`),
    /// the payload merged into the params; '' for none.
    #[arg(long, value_name = "NAME", help_heading = WINDOW)]
    pub on_event: Option<String>,
    /// With --on-event: conditions on the payload, all of which must hold, e.g.
    /// "payload.type=paid,payload.vip"; '' for none.
    #[arg(long, value_name = "EXPR", help_heading = WINDOW)]
    pub event_filter: Option<String>,
    /// Tasks fired once when an instance of this one succeeds, with its output merged into their
    /// params: A,B ('' for none).
    #[arg(long, value_name = "TASKS", value_parser = parse_list, help_heading = CHAINS)]
    pub on_success: Option<List>,
    /// Tasks fired once when an instance of this one ends FAILED or TIMEOUT, with a `failure` field
    /// in their params: A,B ('' for none).
    #[arg(long, value_name = "TASKS", value_parser = parse_list, help_heading = CHAINS)]
    pub on_failure: Option<List>,
    /// This task's upstreams in a DAG: it runs once per workflow run in which each of them succeeded:
    /// A,B ('' for none).
    #[arg(long, value_name = "TASKS", value_parser = parse_list, help_heading = CHAINS)]
    pub after_all: Option<List>,
    /// Fire once at this instant (RFC 3339).
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp, help_heading = SCHEDULE)]
    pub at: Option<prost_types::Timestamp>,
    /// Fire once, this long from now.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, help_heading = SCHEDULE)]
    pub after: Option<prost_types::Duration>,
    /// Never fire by itself, only when triggered.
    #[arg(long, help_heading = SCHEDULE)]
    pub manual: bool,

    /// Parameters given to every instance: a JSON document (checked by the server).
    #[arg(long, value_name = "JSON")]
    pub params: Option<String>,
    /// Run timeout, counted from the worker's accept, e.g. 30m.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<prost_types::Duration>,
    /// Retries after a failed or timed-out attempt.
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Delay between attempts: 10s,60s,300s or exp:INITIAL:MAX[:MULTIPLIER[:JITTER]].
    #[allow(rustdoc::broken_intra_doc_links)] // clap prints this comment as --help verbatim, where `\[` would show.
    #[arg(long, value_name = "SPEC", value_parser = parse_backoff)]
    pub backoff: Option<Backoff>,
    /// What to do with fires missed by more than --misfire-threshold.
    #[arg(long, value_enum)]
    pub misfire: Option<Misfire>,
    /// How late a fire may run before it counts as missed, e.g. 60s.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub misfire_threshold: Option<prost_types::Duration>,
    /// With --misfire fire-all: the most catch-up instances for one outage.
    #[arg(long, value_name = "N")]
    pub max_catch_up: Option<u32>,
    /// What a fire does while an earlier instance of the task is unfinished (the overlap policy).
    #[arg(long, value_enum)]
    pub concurrency: Option<Concurrency>,
    /// How an instance picks a worker.
    #[arg(long, value_enum, help_heading = PLACEMENT)]
    pub routing: Option<Routing>,
    /// Run only on workers whose labels match, e.g. "region=cn,gpu=true,zone in (a,b),tier!=batch"
    /// (also ==, notin); '' for any worker.
    #[arg(long, value_name = "EXPR", help_heading = PLACEMENT)]
    pub selector: Option<String>,
    /// Where the retry of an attempt that failed on a worker goes [server default: other].
    #[arg(long, value_enum, help_heading = PLACEMENT)]
    pub retry_on: Option<RetryOn>,
    /// Split each fire into N children (shard index 0..N-1) under a WAITING parent, 1-10000; 0 for
    /// one instance per fire.
    #[arg(long, value_name = "N", value_parser = parse_whole, allow_negative_numbers = true, help_heading = PLACEMENT)]
    pub shards: Option<u32>,
    /// With --routing hash: the params field whose value is the key; '' to use the task name.
    #[arg(long, value_name = "FIELD", help_heading = PLACEMENT)]
    pub hash_key: Option<String>,
    /// 0 (the default, lowest) to 9: higher runs first within the app.
    #[arg(long, value_name = "0-9", value_parser = parse_whole, allow_negative_numbers = true, help_heading = PLACEMENT)]
    pub priority: Option<u32>,
    /// Most instances DISPATCHED or RUNNING at once across the cluster; none for no limit (the
    /// default).
    #[arg(long, value_name = "N|none", value_parser = parse_max_running, allow_negative_numbers = true, help_heading = PLACEMENT)]
    pub max_running: Option<Setting<u32>>,
    /// Most PENDING instances; scheduled fires beyond are not created (coalesced); default: 100.
    #[arg(long, value_name = "N|default", value_parser = parse_count_or_default, allow_negative_numbers = true, help_heading = PLACEMENT)]
    pub max_pending: Option<Setting<u32>>,
    /// Consecutive failures of one worker that pause the handler on it; 0 turns cooldowns off;
    /// default: axd's --cooldown-after.
    #[arg(long, value_name = "K|default", value_parser = parse_count_or_default, allow_negative_numbers = true, help_heading = PLACEMENT)]
    pub cooldown_after: Option<Setting<u32>>,
    /// The first pause, doubling while failures continue; 0s turns cooldowns off; default: axd's
    /// --cooldown.
    // Hyphen values are let through so that `--cooldown -1s` is refused naming this flag, not
    // taken for an unknown `-1` flag.
    #[arg(long, value_name = "DUR|default", value_parser = parse_duration_or_default, allow_hyphen_values = true, help_heading = PLACEMENT)]
    pub cooldown: Option<Setting<prost_types::Duration>>,
    /// Concurrency key: a params field, e.g. params.customer_id (params.a.b inside objects); at most
    /// --concurrency-limit instances per value of it run at once across the cluster. '' for none
    /// (clears the limit too).
    #[arg(long, value_name = "PATH", help_heading = PLACEMENT)]
    pub concurrency_key: Option<String>,
    /// With --concurrency-key: most instances per key value DISPATCHED or RUNNING at once, 1-100000.
    #[arg(long, value_name = "N", value_parser = parse_whole, allow_negative_numbers = true, help_heading = PLACEMENT)]
    pub concurrency_limit: Option<u32>,
    /// Uniqueness key: a params field (as --concurrency-key); with --unique-for, a trigger whose
    /// value an instance triggered less than that long ago has returns that instance instead of
    /// creating one. '' for none (clears --unique-for too).
    #[arg(long, value_name = "PATH", help_heading = PLACEMENT)]
    pub unique_key: Option<String>,
    /// With --unique-key: how long a triggered instance holds its value, 1s-1d (e.g. 10m).
    // Hyphen values are let through so that `--unique-for -1s` is refused naming this flag.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true, help_heading = PLACEMENT)]
    pub unique_for: Option<prost_types::Duration>,
    /// Params fields each instance is found by (`instance list --param customer_id=42`): paths as
    /// --concurrency-key, at most 4: A,B ('' for none).
    #[arg(long, value_name = "PATHS", value_parser = parse_list, help_heading = PLACEMENT)]
    pub search_params: Option<List>,
    /// A label (repeatable). On update the given labels replace all existing ones. Instances are
    /// found by their task's labels too (`instance list --tag KEY=VALUE`).
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// The task does not fire by itself until enabled.
    #[arg(long, conflicts_with = "enabled")]
    pub disabled: bool,
    /// The task fires (the default for new tasks).
    #[arg(long)]
    pub enabled: bool,
}

/// A TaskSpec built from the flags, with the names of the TaskSpec fields the flags set (an
/// update's field mask).
#[derive(Debug)]
pub struct SpecChange {
    pub spec: TaskSpec,
    pub paths: Vec<&'static str>,
}

impl TaskFields {
    /// The spec of the given flags. Retry flags produce a policy with only those parts; updates
    /// merge it with the stored policy through [`merge_retry_policy`].
    pub fn to_change(&self) -> SpecChange {
        let mut spec = TaskSpec::default();
        let mut paths = Vec::new();
        if let Some(app) = &self.app {
            spec.app = app.clone();
            paths.push("app");
        }
        if let Some(handler) = &self.handler {
            spec.handler = handler.clone();
            paths.push("handler");
        }
        if let Some(description) = &self.description {
            spec.description = description.clone();
            paths.push("description");
        }
        if let Some(schedule) = self.schedule() {
            spec.schedule = Some(schedule);
            paths.push("schedule");
        }
        if !self.also.is_empty() {
            spec.extra_schedules = self.also.iter().flatten().cloned().collect();
            paths.push("extra_schedules");
        }
        if let Some(params) = &self.params {
            spec.params = params.clone();
            paths.push("params");
        }
        if self.enabled || self.disabled {
            spec.enabled = Some(!self.disabled);
            paths.push("enabled");
        }
        if let Some(misfire) = self.misfire {
            spec.misfire_policy = MisfirePolicy::from(misfire) as i32;
            paths.push("misfire_policy");
        }
        if let Some(threshold) = self.misfire_threshold {
            spec.misfire_threshold = Some(threshold);
            paths.push("misfire_threshold");
        }
        if let Some(max) = self.max_catch_up {
            spec.max_catch_up = max;
            paths.push("max_catch_up");
        }
        if let Some(concurrency) = self.concurrency {
            spec.concurrency_policy = ConcurrencyPolicy::from(concurrency) as i32;
            paths.push("concurrency_policy");
        }
        if let Some(routing) = self.routing {
            spec.routing = RoutingStrategy::from(routing) as i32;
            paths.push("routing");
        }
        if let Some(timeout) = self.timeout {
            spec.timeout = Some(timeout);
            paths.push("timeout");
        }
        if self.changes_retry_policy() {
            spec.retry_policy = Some(merge_retry_policy(None, self.retries, self.backoff.clone()));
            paths.push("retry_policy");
        }
        if !self.labels.is_empty() {
            spec.labels = self.labels.iter().cloned().collect::<HashMap<_, _>>();
            paths.push("labels");
        }
        self.placement_change(&mut spec, &mut paths);
        self.schedules_change(&mut spec, &mut paths);
        SpecChange { spec, paths }
    }

    /// The window, calendar, jitter and chain part of [`TaskFields::to_change`], in TaskSpec field
    /// order.
    fn schedules_change(&self, spec: &mut TaskSpec, paths: &mut Vec<&'static str>) {
        if let Some(start) = self.start_at {
            spec.start_time = start.value();
            paths.push("start_time");
        }
        if let Some(end) = self.end_at {
            spec.end_time = end.value();
            paths.push("end_time");
        }
        if let Some(List(dates)) = &self.exclude {
            spec.exclude_dates = dates.clone();
            paths.push("exclude_dates");
        }
        if let Some(calendar) = &self.calendar {
            spec.calendar = calendar.clone();
            paths.push("calendar");
        }
        if let Some(jitter) = self.jitter {
            spec.jitter = jitter.value();
            paths.push("jitter");
        }
        if let Some(within) = self.must_finish_within {
            spec.must_finish_within = within.value();
            paths.push("must_finish_within");
        }
        if let Some(name) = &self.on_event {
            spec.on_event = name.clone();
            paths.push("on_event");
        }
        if let Some(filter) = &self.event_filter {
            spec.event_filter = filter.clone();
            paths.push("event_filter");
        }
        if let Some(List(tasks)) = &self.on_success {
            spec.on_success = tasks.clone();
            paths.push("on_success");
        }
        if let Some(List(tasks)) = &self.on_failure {
            spec.on_failure = tasks.clone();
            paths.push("on_failure");
        }
        if let Some(List(tasks)) = &self.after_all {
            spec.after_all = tasks.clone();
            paths.push("after_all");
        }
    }

    /// The routing-and-limits part of [`TaskFields::to_change`], in TaskSpec field order.
    fn placement_change(&self, spec: &mut TaskSpec, paths: &mut Vec<&'static str>) {
        if let Some(selector) = &self.selector {
            spec.selector = selector.clone();
            paths.push("selector");
        }
        if let Some(retry_on) = self.retry_on {
            spec.retry_on = RetryTarget::from(retry_on) as i32;
            paths.push("retry_on");
        }
        if let Some(shards) = self.shards {
            spec.shards = shards;
            paths.push("shards");
        }
        if let Some(hash_key) = &self.hash_key {
            spec.hash_key = hash_key.clone();
            paths.push("hash_key");
        }
        if let Some(priority) = self.priority {
            spec.priority = priority;
            paths.push("priority");
        }
        if let Some(max_running) = self.max_running {
            spec.max_running = max_running.value();
            paths.push("max_running");
        }
        if let Some(max_pending) = self.max_pending {
            spec.max_pending = max_pending.value();
            paths.push("max_pending");
        }
        if let Some(cooldown_after) = self.cooldown_after {
            spec.cooldown_after = cooldown_after.value();
            paths.push("cooldown_after");
        }
        if let Some(cooldown) = self.cooldown {
            spec.cooldown = cooldown.value();
            paths.push("cooldown");
        }
        if let Some(key) = &self.concurrency_key {
            spec.concurrency_key = key.clone();
            paths.push("concurrency_key");
        }
        if let Some(limit) = self.concurrency_limit {
            spec.concurrency_limit = Some(limit);
        }
        if self.concurrency_limit.is_some() || self.concurrency_key.as_deref() == Some("") {
            paths.push("concurrency_limit");
        }
        if let Some(key) = &self.unique_key {
            spec.unique_key = key.clone();
            paths.push("unique_key");
        }
        if let Some(window) = self.unique_for {
            spec.unique_for = Some(window);
        }
        if self.unique_for.is_some() || self.unique_key.as_deref() == Some("") {
            paths.push("unique_for");
        }
        if let Some(List(search)) = &self.search_params {
            spec.search_params = search.clone();
            paths.push("search_params");
        }
    }

    /// Whether `--retries` or `--backoff` was given.
    pub fn changes_retry_policy(&self) -> bool {
        self.retries.is_some() || self.backoff.is_some()
    }

    /// The schedule of the schedule flags, if one was given.
    fn schedule(&self) -> Option<Schedule> {
        let start_at = self.start_at.and_then(Setting::value);
        let interval = |every: prost_types::Duration| IntervalSchedule { interval: Some(every), start_at };
        let kind = if let Some(expression) = &self.cron {
            cron_kind(expression, self.tz.as_deref(), self.dialect)
        } else if let Some(every) = self.every {
            schedule::Kind::FixedRate(interval(every))
        } else if let Some(delay) = self.fixed_delay {
            schedule::Kind::FixedDelay(interval(delay))
        } else if let Some(at) = self.at {
            schedule::Kind::OneTime(OneTimeSchedule { when: Some(one_time_schedule::When::At(at)) })
        } else if let Some(after) = self.after {
            schedule::Kind::OneTime(OneTimeSchedule { when: Some(one_time_schedule::When::After(after)) })
        } else if self.manual {
            schedule::Kind::Manual(ManualSchedule {})
        } else {
            return None;
        };
        Some(Schedule { kind: Some(kind) })
    }
}

/// A cron schedule; an omitted zone or dialect is left for the server's default (UTC, detect).
pub fn cron_kind(expression: &str, tz: Option<&str>, dialect: Option<Dialect>) -> schedule::Kind {
    schedule::Kind::Cron(CronSchedule {
        expression: expression.to_owned(),
        time_zone: tz.unwrap_or_default().to_owned(),
        dialect: dialect.map_or(CronDialect::Unspecified, CronDialect::from) as i32,
    })
}

/// The stored policy with the given parts replaced: `--retries` alone keeps the stored backoff,
/// `--backoff` alone keeps the stored retry count.
pub fn merge_retry_policy(current: Option<RetryPolicy>, retries: Option<u32>, backoff: Option<Backoff>) -> RetryPolicy {
    let current = current.unwrap_or_default();
    RetryPolicy { max_retries: retries.unwrap_or(current.max_retries), backoff: backoff.or(current.backoff) }
}

#[cfg(test)]
mod tests;
