//! The task flags shared by `task create` and `task update`: one definition, so that the two
//! commands cannot drift apart. Create makes `--app`, `--handler` and one schedule flag required
//! (see `TaskCommand::Create`); update sends only the fields whose flags were given.

use std::collections::HashMap;

use ax_proto::v1::{
    Backoff, ConcurrencyPolicy, CronDialect, CronSchedule, IntervalSchedule, ManualSchedule, MisfirePolicy,
    OneTimeSchedule, RetryPolicy, RoutingStrategy, Schedule, TaskSpec, one_time_schedule, schedule,
};
use clap::{ArgGroup, Args};

use crate::args::{
    Concurrency, Dialect, Misfire, Routing, parse_backoff, parse_duration, parse_label, parse_timestamp,
};

/// Help heading of the schedule flags.
const SCHEDULE: &str = "Schedule (exactly one on create)";

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
    #[arg(long, value_enum)]
    pub routing: Option<Routing>,
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
        SpecChange { spec, paths }
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
}
