//! The task flags shared by `task create` and `task update`: one definition, so that the two
//! commands cannot drift apart. Create makes `--app`, `--handler` and one schedule flag required
//! (see `TaskCommand::Create`); update sends only the fields whose flags were given.
//!
//! A routing-and-limits flag given on update is always named in the mask, also with its "clear"
//! form (`--selector ''`, `--shards 0`, `--hash-key ''`, `--max-running none`, `--max-pending
//! default`, ...): the server takes a masked field's value as sent, and unset means its default.

use std::collections::HashMap;

use ax_proto::v1::{
    Backoff, ConcurrencyPolicy, CronDialect, CronSchedule, IntervalSchedule, ManualSchedule, MisfirePolicy,
    OneTimeSchedule, RetryPolicy, RetryTarget, RoutingStrategy, Schedule, TaskSpec, one_time_schedule, schedule,
};
use clap::{ArgGroup, Args};

use crate::args::{
    Concurrency, Dialect, Misfire, RetryOn, Routing, Setting, parse_backoff, parse_count_or_default, parse_duration,
    parse_duration_or_default, parse_label, parse_max_running, parse_timestamp, parse_whole,
};

/// Help heading of the schedule flags.
const SCHEDULE: &str = "Schedule (exactly one on create)";

/// Help heading of the flags that say where instances run and how many at once.
const PLACEMENT: &str = "Routing and limits";

/// The schedule flags other than --cron.
const NOT_CRON: [&str; 5] = ["every", "fixed_delay", "at", "after", "manual"];

/// The schedule flags other than --every and --fixed-delay.
const NOT_INTERVAL: [&str; 4] = ["cron", "at", "after", "manual"];

/// Everything about a task except its name.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("schedule").args(["cron", "every", "fixed_delay", "at", "after", "manual"])))]
#[command(group(ArgGroup::new("interval").args(["every", "fixed_delay"])))]
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
    /// Anchor of --every / --fixed-delay (RFC 3339) [default: now].
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp, requires = "interval", conflicts_with_all = NOT_INTERVAL, help_heading = SCHEDULE)]
    pub start_at: Option<prost_types::Timestamp>,
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
    /// Whether instances of this task may overlap.
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
    /// A label (repeatable). On update the given labels replace all existing ones.
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
        SpecChange { spec, paths }
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
    }

    /// Whether `--retries` or `--backoff` was given.
    pub fn changes_retry_policy(&self) -> bool {
        self.retries.is_some() || self.backoff.is_some()
    }

    /// The schedule of the schedule flags, if one was given.
    fn schedule(&self) -> Option<Schedule> {
        let interval =
            |every: prost_types::Duration| IntervalSchedule { interval: Some(every), start_at: self.start_at };
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
mod tests {
    use ax_proto::v1::{ListBackoff, backoff};
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        fields: TaskFields,
    }

    fn fields(args: &[&str]) -> TaskFields {
        Cli::try_parse_from(std::iter::once("test").chain(args.iter().copied())).expect("valid flags").fields
    }

    fn parse_error(args: &[&str]) -> String {
        Cli::try_parse_from(std::iter::once("test").chain(args.iter().copied())).expect_err("invalid flags").to_string()
    }

    fn dur(seconds: i64) -> prost_types::Duration {
        prost_types::Duration { seconds, nanos: 0 }
    }

    #[test]
    fn no_flags_change_nothing() {
        let change = fields(&[]).to_change();
        assert!(change.paths.is_empty());
        assert_eq!(change.spec, TaskSpec::default());
    }

    #[test]
    fn each_flag_names_its_task_spec_field() {
        let change = fields(&[
            "--app",
            "billing",
            "--handler",
            "report",
            "--description",
            "d",
            "--cron",
            "0 2 * * *",
            "--tz",
            "Europe/London",
            "--dialect",
            "unix",
            "--params",
            "{\"a\":1}",
            "--disabled",
            "--misfire",
            "fire-all",
            "--misfire-threshold",
            "2m",
            "--max-catch-up",
            "5",
            "--concurrency",
            "forbid",
            "--routing",
            "round-robin",
            "--timeout",
            "1h30m",
            "--retries",
            "3",
            "--backoff",
            "10s,1m",
            "--label",
            "team=ops",
            "--label",
            "env=prod",
        ])
        .to_change();
        assert_eq!(
            change.paths,
            [
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
                "labels"
            ]
        );
        let spec = change.spec;
        assert_eq!(spec.app, "billing");
        assert_eq!(
            spec.schedule,
            Some(Schedule {
                kind: Some(schedule::Kind::Cron(CronSchedule {
                    expression: "0 2 * * *".into(),
                    time_zone: "Europe/London".into(),
                    dialect: CronDialect::Unix as i32,
                }))
            })
        );
        assert_eq!(spec.params, "{\"a\":1}");
        assert_eq!(spec.enabled, Some(false));
        assert_eq!(spec.misfire_policy, MisfirePolicy::FireAll as i32);
        assert_eq!(spec.misfire_threshold, Some(dur(120)));
        assert_eq!(spec.max_catch_up, 5);
        assert_eq!(spec.concurrency_policy, ConcurrencyPolicy::Forbid as i32);
        assert_eq!(spec.routing, RoutingStrategy::RoundRobin as i32);
        assert_eq!(spec.timeout, Some(dur(5400)));
        assert_eq!(
            spec.retry_policy,
            Some(RetryPolicy {
                max_retries: 3,
                backoff: Some(Backoff {
                    kind: Some(backoff::Kind::List(ListBackoff { delays: vec![dur(10), dur(60)] }))
                }),
            })
        );
        assert_eq!(spec.labels.len(), 2);
        assert_eq!(spec.labels["team"], "ops");
    }

    #[test]
    fn every_schedule_flag_builds_its_kind() {
        let kind = |args: &[&str]| fields(args).to_change().spec.schedule.and_then(|s| s.kind);
        let start = prost_types::Timestamp { seconds: 1_767_261_600, nanos: 0 };
        assert_eq!(
            kind(&["--every", "15m", "--start-at", "2026-01-01T10:00:00Z"]),
            Some(schedule::Kind::FixedRate(IntervalSchedule { interval: Some(dur(900)), start_at: Some(start) }))
        );
        assert_eq!(
            kind(&["--fixed-delay", "1h"]),
            Some(schedule::Kind::FixedDelay(IntervalSchedule { interval: Some(dur(3600)), start_at: None }))
        );
        assert_eq!(
            kind(&["--at", "2026-01-01T10:00:00Z"]),
            Some(schedule::Kind::OneTime(OneTimeSchedule { when: Some(one_time_schedule::When::At(start)) }))
        );
        assert_eq!(
            kind(&["--after", "90s"]),
            Some(schedule::Kind::OneTime(OneTimeSchedule { when: Some(one_time_schedule::When::After(dur(90))) }))
        );
        assert_eq!(kind(&["--manual"]), Some(schedule::Kind::Manual(ManualSchedule {})));
        assert_eq!(
            kind(&["--cron", "@daily"]),
            Some(schedule::Kind::Cron(CronSchedule {
                expression: "@daily".into(),
                time_zone: String::new(),
                dialect: CronDialect::Unspecified as i32,
            }))
        );
    }

    #[test]
    fn two_schedule_flags_are_refused() {
        assert!(parse_error(&["--cron", "@daily", "--every", "1h"]).contains("cannot be used with"));
        assert!(parse_error(&["--manual", "--after", "1h"]).contains("cannot be used with"));
    }

    #[test]
    fn cron_options_need_cron_and_start_at_needs_an_interval() {
        assert!(parse_error(&["--tz", "UTC"]).contains("--cron"));
        assert!(parse_error(&["--dialect", "unix"]).contains("--cron"));
        assert!(parse_error(&["--start-at", "2026-01-01T00:00:00Z"]).contains("--every"));
        assert!(parse_error(&["--every", "1h", "--tz", "UTC"]).contains("--tz"));
        assert!(parse_error(&["--manual", "--dialect", "unix"]).contains("--dialect"));
        assert!(parse_error(&["--cron", "@daily", "--start-at", "2026-01-01T00:00:00Z"]).contains("--start-at"));
        assert!(
            parse_error(&["--at", "2026-01-01T00:00:00Z", "--start-at", "2026-01-01T00:00:00Z"]).contains("--start-at")
        );
        assert!(fields(&["--fixed-delay", "1h", "--start-at", "2026-01-01T00:00:00Z"]).start_at.is_some());
    }

    #[test]
    fn invalid_values_name_the_flag_and_the_value() {
        let err = parse_error(&["--every", "10x"]);
        assert!(err.contains("--every") && err.contains("10x"), "{err}");
        let err = parse_error(&["--label", "nokey"]);
        assert!(err.contains("--label") && err.contains("nokey"), "{err}");
        let err = parse_error(&["--backoff", "exp:1s"]);
        assert!(err.contains("--backoff"), "{err}");
        let err = parse_error(&["--routing", "fastest"]);
        assert!(err.contains("least-loaded"), "{err}");
    }

    #[test]
    fn enabled_and_disabled_conflict() {
        assert!(parse_error(&["--enabled", "--disabled"]).contains("cannot be used with"));
        let change = fields(&["--enabled"]).to_change();
        assert_eq!(change.paths, ["enabled"]);
        assert_eq!(change.spec.enabled, Some(true));
    }

    #[test]
    fn retry_flags_merge_with_the_stored_policy() {
        let list = Backoff { kind: Some(backoff::Kind::List(ListBackoff { delays: vec![dur(5)] })) };
        let stored = RetryPolicy { max_retries: 2, backoff: Some(list.clone()) };
        assert_eq!(
            merge_retry_policy(Some(stored.clone()), Some(7), None),
            RetryPolicy { max_retries: 7, backoff: Some(list.clone()) }
        );
        let other = Backoff { kind: Some(backoff::Kind::List(ListBackoff { delays: vec![dur(9)] })) };
        assert_eq!(
            merge_retry_policy(Some(stored), None, Some(other.clone())),
            RetryPolicy { max_retries: 2, backoff: Some(other) }
        );
        assert_eq!(merge_retry_policy(None, Some(1), None), RetryPolicy { max_retries: 1, backoff: None });
    }

    #[test]
    fn each_routing_and_limits_flag_sets_its_field_and_names_it() {
        let spec = |f: fn(&mut TaskSpec)| {
            let mut spec = TaskSpec::default();
            f(&mut spec);
            spec
        };
        // (flags, the one mask path, the spec sent). The clear forms send the field's proto default
        // and still name it, so that an update resets a stored value.
        let cases: Vec<(&[&str], &str, TaskSpec)> = vec![
            (
                &["--selector", "region=cn,zone in (a,b)"],
                "selector",
                spec(|s| s.selector = "region=cn,zone in (a,b)".into()),
            ),
            (&["--selector", ""], "selector", TaskSpec::default()),
            (&["--retry-on", "other"], "retry_on", spec(|s| s.retry_on = RetryTarget::Other as i32)),
            (&["--retry-on", "same"], "retry_on", spec(|s| s.retry_on = RetryTarget::Same as i32)),
            (&["--retry-on", "any"], "retry_on", spec(|s| s.retry_on = RetryTarget::Any as i32)),
            (&["--shards", "8"], "shards", spec(|s| s.shards = 8)),
            (&["--shards", "0"], "shards", TaskSpec::default()),
            (&["--routing", "broadcast"], "routing", spec(|s| s.routing = RoutingStrategy::Broadcast as i32)),
            (&["--routing", "hash"], "routing", spec(|s| s.routing = RoutingStrategy::Hash as i32)),
            (&["--hash-key", "tenant"], "hash_key", spec(|s| s.hash_key = "tenant".into())),
            (&["--hash-key", ""], "hash_key", TaskSpec::default()),
            (&["--priority", "9"], "priority", spec(|s| s.priority = 9)),
            (&["--priority", "0"], "priority", TaskSpec::default()),
            (&["--max-running", "5"], "max_running", spec(|s| s.max_running = Some(5))),
            (&["--max-running", "none"], "max_running", TaskSpec::default()),
            (&["--max-pending", "10"], "max_pending", spec(|s| s.max_pending = Some(10))),
            (&["--max-pending", "default"], "max_pending", TaskSpec::default()),
            (&["--cooldown-after", "3"], "cooldown_after", spec(|s| s.cooldown_after = Some(3))),
            // 0 turns cooldowns off: sent as a value, unlike `default`.
            (&["--cooldown-after", "0"], "cooldown_after", spec(|s| s.cooldown_after = Some(0))),
            (&["--cooldown-after", "default"], "cooldown_after", TaskSpec::default()),
            (&["--cooldown", "45s"], "cooldown", spec(|s| s.cooldown = Some(dur(45)))),
            (&["--cooldown", "0s"], "cooldown", spec(|s| s.cooldown = Some(dur(0)))),
            (&["--cooldown", "default"], "cooldown", TaskSpec::default()),
        ];
        for (args, path, expected) in cases {
            let change = fields(args).to_change();
            assert_eq!(change.paths, [path], "{args:?}");
            assert_eq!(change.spec, expected, "{args:?}");
        }
    }

    #[test]
    fn routing_and_limits_flags_together_keep_the_task_spec_field_order() {
        let change = fields(&[
            "--cooldown",
            "1m",
            "--cooldown-after",
            "2",
            "--max-pending",
            "50",
            "--max-running",
            "4",
            "--priority",
            "7",
            "--hash-key",
            "tenant",
            "--shards",
            "3",
            "--retry-on",
            "any",
            "--selector",
            "gpu=true",
            "--routing",
            "hash",
        ])
        .to_change();
        assert_eq!(
            change.paths,
            [
                "routing",
                "selector",
                "retry_on",
                "shards",
                "hash_key",
                "priority",
                "max_running",
                "max_pending",
                "cooldown_after",
                "cooldown"
            ]
        );
        let spec = change.spec;
        assert_eq!(spec.routing, RoutingStrategy::Hash as i32);
        assert_eq!(spec.selector, "gpu=true");
        assert_eq!(spec.retry_on, RetryTarget::Any as i32);
        assert_eq!((spec.shards, spec.hash_key.as_str(), spec.priority), (3, "tenant", 7));
        assert_eq!((spec.max_running, spec.max_pending, spec.cooldown_after), (Some(4), Some(50), Some(2)));
        assert_eq!(spec.cooldown, Some(dur(60)));
    }

    #[test]
    fn bad_routing_and_limits_values_are_refused_naming_the_flag() {
        for (args, flag) in [
            (&["--priority", "x"][..], "--priority"),
            (&["--priority", "-1"], "--priority"),
            (&["--shards", "-1"], "--shards"),
            (&["--shards", "many"], "--shards"),
            (&["--max-running", "-1"], "--max-running"),
            (&["--max-running", "default"], "--max-running"),
            (&["--max-pending", "none"], "--max-pending"),
            (&["--max-pending", "-5"], "--max-pending"),
            (&["--cooldown-after", "-1"], "--cooldown-after"),
            (&["--cooldown-after", "off"], "--cooldown-after"),
            (&["--cooldown", "-1s"], "--cooldown"),
            (&["--cooldown", "30"], "--cooldown"),
            (&["--retry-on", "elsewhere"], "--retry-on"),
        ] {
            let err = parse_error(args);
            assert!(err.contains(&format!("invalid value '{}' for '{flag}", args[1])), "{args:?}: {err}");
        }
        assert!(parse_error(&["--max-running", "-1"]).contains("`none` for no limit"));
        assert!(parse_error(&["--priority", "x"]).contains("expected a whole number"));
        let err = parse_error(&["--routing", "fastest"]);
        assert!(err.contains("broadcast") && err.contains("hash"), "{err}");
    }
}
