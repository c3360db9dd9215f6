//! Unit tests of the shared task flags: each flag names its TaskSpec field, and bad values are
//! refused naming the flag.

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
            backoff: Some(Backoff { kind: Some(backoff::Kind::List(ListBackoff { delays: vec![dur(10), dur(60)] })) }),
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
fn cron_options_need_cron_and_start_at_bounds_any_schedule() {
    assert!(parse_error(&["--tz", "UTC"]).contains("--cron"));
    assert!(parse_error(&["--dialect", "unix"]).contains("--cron"));
    assert!(parse_error(&["--every", "1h", "--tz", "UTC"]).contains("--tz"));
    assert!(parse_error(&["--manual", "--dialect", "unix"]).contains("--dialect"));
    let t = prost_types::Timestamp { seconds: 1_767_225_600, nanos: 0 };
    // With a cron (or no schedule flag, on update) --start-at is the window's start alone.
    let change = fields(&["--cron", "@daily", "--start-at", "2026-01-01T00:00:00Z"]).to_change();
    assert_eq!(change.paths, ["schedule", "start_time"]);
    assert_eq!(change.spec.start_time, Some(t));
    let change = fields(&["--start-at", "2026-01-01T00:00:00Z"]).to_change();
    assert_eq!((change.paths, change.spec.schedule), (vec!["start_time"], None));
    // With an interval it is also the anchor.
    let change = fields(&["--fixed-delay", "1h", "--start-at", "2026-01-01T00:00:00Z"]).to_change();
    assert_eq!(
        change.spec.schedule.and_then(|s| s.kind),
        Some(schedule::Kind::FixedDelay(IntervalSchedule { interval: Some(dur(3600)), start_at: Some(t) }))
    );
    assert_eq!(change.spec.start_time, Some(t));
}

#[test]
fn each_window_and_chain_flag_sets_its_field_and_names_it() {
    let spec = |f: fn(&mut TaskSpec)| {
        let mut spec = TaskSpec::default();
        f(&mut spec);
        spec
    };
    let t = prost_types::Timestamp { seconds: 1_798_761_600, nanos: 0 };
    let cases: Vec<(&[&str], &str, TaskSpec)> = vec![
        (
            &["--start-at", "2027-01-01T00:00:00Z"],
            "start_time",
            spec(|s| s.start_time = Some(prost_types::Timestamp { seconds: 1_798_761_600, nanos: 0 })),
        ),
        (&["--start-at", "none"], "start_time", TaskSpec::default()),
        (
            &["--end-at", "2027-01-01T00:00:00Z"],
            "end_time",
            spec(|s| s.end_time = Some(prost_types::Timestamp { seconds: 1_798_761_600, nanos: 0 })),
        ),
        (&["--end-at", "none"], "end_time", TaskSpec::default()),
        (
            &["--exclude", "2026-12-25, 2027-01-01"],
            "exclude_dates",
            spec(|s| s.exclude_dates = vec!["2026-12-25".into(), "2027-01-01".into()]),
        ),
        (&["--exclude", ""], "exclude_dates", TaskSpec::default()),
        (&["--calendar", "holidays"], "calendar", spec(|s| s.calendar = "holidays".into())),
        (&["--calendar", ""], "calendar", TaskSpec::default()),
        (&["--jitter", "30s"], "jitter", spec(|s| s.jitter = Some(prost_types::Duration { seconds: 30, nanos: 0 }))),
        (&["--jitter", "none"], "jitter", TaskSpec::default()),
        (
            &["--must-finish-within", "30m"],
            "must_finish_within",
            spec(|s| s.must_finish_within = Some(prost_types::Duration { seconds: 1800, nanos: 0 })),
        ),
        (&["--must-finish-within", "none"], "must_finish_within", TaskSpec::default()),
        (&["--on-success", "load,notify"], "on_success", spec(|s| s.on_success = vec!["load".into(), "notify".into()])),
        (&["--on-success", ""], "on_success", TaskSpec::default()),
        (&["--on-failure", "page"], "on_failure", spec(|s| s.on_failure = vec!["page".into()])),
        (&["--after-all", "a,b"], "after_all", spec(|s| s.after_all = vec!["a".into(), "b".into()])),
        (&["--after-all", ""], "after_all", TaskSpec::default()),
    ];
    for (args, path, expected) in cases {
        let change = fields(args).to_change();
        assert_eq!(change.paths, [path], "{args:?}");
        assert_eq!(change.spec, expected, "{args:?}");
    }
    assert_eq!(fields(&["--end-at", "2027-01-01T00:00:00Z"]).to_change().spec.end_time, Some(t));
}

#[test]
fn every_overlap_policy_has_a_flag_value() {
    let policy = |v: &str| fields(&["--concurrency", v]).to_change().spec.concurrency_policy;
    assert_eq!(policy("allow"), ConcurrencyPolicy::Allow as i32);
    assert_eq!(policy("skip"), ConcurrencyPolicy::Forbid as i32);
    assert_eq!(policy("forbid"), ConcurrencyPolicy::Forbid as i32, "the old name still works");
    assert_eq!(policy("buffer-one"), ConcurrencyPolicy::BufferOne as i32);
    assert_eq!(policy("buffer-all"), ConcurrencyPolicy::BufferAll as i32);
    assert_eq!(policy("cancel-other"), ConcurrencyPolicy::CancelOther as i32);
    let err = parse_error(&["--concurrency", "queue"]);
    assert!(err.contains("buffer-one") && err.contains("cancel-other"), "{err}");
}

#[test]
fn bad_window_values_are_refused_naming_the_flag() {
    for (args, flag) in [
        (&["--start-at", "tomorrow"][..], "--start-at"),
        (&["--end-at", "2026-13-01"], "--end-at"),
        (&["--jitter", "5"], "--jitter"),
        (&["--must-finish-within", "soon"], "--must-finish-within"),
        (&["--exclude", "2026-12-25,,2027-01-01"], "--exclude"),
        (&["--on-success", "a,,b"], "--on-success"),
    ] {
        let err = parse_error(args);
        assert!(err.contains(&format!("for '{flag}")), "{args:?}: {err}");
    }
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
fn key_flags_set_their_fields_and_clearing_a_key_clears_its_partner() {
    let change = fields(&["--concurrency-key", "params.customer_id", "--concurrency-limit", "2"]).to_change();
    assert_eq!(change.paths, ["concurrency_key", "concurrency_limit"]);
    assert_eq!((change.spec.concurrency_key.as_str(), change.spec.concurrency_limit), ("params.customer_id", Some(2)));
    let change = fields(&["--unique-key", "params.order.id", "--unique-for", "10m"]).to_change();
    assert_eq!(change.paths, ["unique_key", "unique_for"]);
    assert_eq!((change.spec.unique_key.as_str(), change.spec.unique_for), ("params.order.id", Some(dur(600))));
    // '' clears the key and, with no value given, its limit or window.
    let change = fields(&["--concurrency-key", "", "--unique-key", ""]).to_change();
    assert_eq!(change.paths, ["concurrency_key", "concurrency_limit", "unique_key", "unique_for"]);
    assert_eq!(change.spec, TaskSpec::default());
    // Changing only the limit or the window names only it.
    assert_eq!(fields(&["--concurrency-limit", "5"]).to_change().paths, ["concurrency_limit"]);
    assert_eq!(fields(&["--unique-for", "1h"]).to_change().paths, ["unique_for"]);
    // Search params: a list; '' clears it.
    let change = fields(&["--search-params", "params.customer_id, params.order.region"]).to_change();
    assert_eq!(change.paths, ["search_params"]);
    assert_eq!(change.spec.search_params, ["params.customer_id", "params.order.region"]);
    assert_eq!(fields(&["--search-params", ""]).to_change().spec.search_params, Vec::<String>::new());
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

#[test]
fn also_flags_are_the_extra_schedules_and_an_empty_one_clears_them() {
    use ax_proto::v1::{CronSchedule, IntervalSchedule, Schedule, schedule::Kind};
    let change = fields(&["--also", "cron 0 9 * * 1-5 in Europe/Berlin", "--also", "every 4h"]).to_change();
    assert_eq!(change.paths, ["extra_schedules"]);
    let cron = CronSchedule { expression: "0 9 * * 1-5".into(), time_zone: "Europe/Berlin".into(), dialect: 0 };
    let every =
        IntervalSchedule { interval: Some(prost_types::Duration { seconds: 14_400, nanos: 0 }), start_at: None };
    assert_eq!(
        change.spec.extra_schedules,
        [Schedule { kind: Some(Kind::Cron(cron)) }, Schedule { kind: Some(Kind::FixedRate(every)) }]
    );
    let utc = fields(&["--also", "cron */5 * * * *"]).to_change();
    assert!(matches!(&utc.spec.extra_schedules[0].kind, Some(Kind::Cron(c)) if c.time_zone.is_empty()));
    let cleared = fields(&["--also", ""]).to_change();
    assert_eq!((cleared.paths, cleared.spec.extra_schedules), (vec!["extra_schedules"], Vec::new()));
    assert!(parse_error(&["--also", "hourly"]).contains("expected 'cron EXPR [in ZONE]' or 'every DUR'"));
    assert!(parse_error(&["--also", "every soon"]).contains("--also"));
}
