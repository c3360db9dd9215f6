//! Property tests of the wire conversion layer and the schedule arithmetic behind it: whatever a
//! request holds, validation answers (accepts or names a field) and never panics, and what it
//! accepts can be evaluated, previewed and read back.

use proptest::{prelude::*, test_runner::FileFailurePersistence};

use super::*;
use crate::{cron::CronExpr, model::latest, schedule::preview};

/// Where proptest keeps the seeds of inputs that failed (committed; replayed first on every run).
const REGRESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/grpc/convert/props.proptest-regressions");

fn config() -> ProptestConfig {
    // Modest counts: these run with every `cargo test` on two shared cores.
    ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS))),
        ..ProptestConfig::default()
    }
}

/// Seconds anywhere, with weight on the edges that matter: the wire range and chrono's ends.
fn seconds() -> impl Strategy<Value = i64> {
    let (first, last) =
        (chrono::DateTime::<chrono::Utc>::MIN_UTC.timestamp(), chrono::DateTime::<chrono::Utc>::MAX_UTC.timestamp());
    prop_oneof![
        any::<i64>(),
        MIN_WIRE_SECONDS..=MAX_WIRE_SECONDS,
        (MAX_WIRE_SECONDS - 400 * 86_400)..=(MAX_WIRE_SECONDS + 400 * 86_400),
        -86_400i64..86_400,
        prop::sample::select(vec![
            i64::MIN,
            i64::MAX,
            first,
            first + 3600,
            last,
            last - 3600,
            -8_200_000_000_000, // year -257878
            MAX_WIRE_SECONDS,
            MAX_WIRE_SECONDS + 1,
            -1,
        ]),
    ]
}

fn nanos() -> impl Strategy<Value = i32> {
    prop_oneof![
        0..1_000_000_000i32,
        any::<i32>(),
        prop::sample::select(vec![-1, 999_999_999, 1_000_000_000, 2_000_000_000])
    ]
}

fn timestamp() -> impl Strategy<Value = prost_types::Timestamp> {
    (seconds(), nanos()).prop_map(|(seconds, nanos)| prost_types::Timestamp { seconds, nanos })
}

fn duration() -> impl Strategy<Value = prost_types::Duration> {
    let secs = prop_oneof![any::<i64>(), 0i64..3 * 86_400, 0i64..400 * 86_400, Just(MAX_WIRE_DURATION_SECONDS + 1)];
    (secs, nanos()).prop_map(|(seconds, nanos)| prost_types::Duration { seconds, nanos })
}

/// An instant axd's own clock could say (the server's now).
fn now() -> impl Strategy<Value = Ts> {
    (MIN_WIRE_SECONDS..=MAX_WIRE_SECONDS).prop_map(|s| chrono::DateTime::from_timestamp(s, 0).expect("in range"))
}

/// Any instant chrono can hold.
fn any_instant() -> impl Strategy<Value = Ts> {
    seconds().prop_filter_map("outside chrono", |s| chrono::DateTime::from_timestamp(s, 0))
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..24).prop_map(|v| v.into_iter().collect())
}

/// Cron-looking text: tokens of every dialect glued together, or any characters.
fn cron_text() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "*", "?", "L", "W", "LW", "#", "-", ",", "/", " ", " ", " ", "0", "1", "2", "5", "7", "8", "12", "23", "24",
        "29", "30", "31", "59", "60", "99", "1970", "2099", "2100", "JAN", "feb", "DEC", "MON", "sun", "SAT", "@daily",
        "@hourly", "@yearly", "@bogus", "L-3", "L-31", "5#2", "6#L", "15W", "1/0", "*/15", "0/1", "5L", "+1",
    ]);
    prop_oneof![
        3 => prop::collection::vec(token, 0..16).prop_map(|v| v.concat()),
        1 => text(),
    ]
}

fn valid_cron() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "0 * * * *",
        "* * * * * *",
        "0 0 12 ? * MON-FRI",
        "0 0 0 L * ?",
        "0 0 1 1 *",
        "0 30 2 * * ?",
        "0 0 0 L-2 * ?",
        "0 0 12 ? * 6#3",
        "0 0 0 1 1 ? 2099",
    ])
    .prop_map(str::to_owned)
}

fn zone() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "UTC",
        "Pacific/Kiritimati",
        "Etc/GMT-14",
        "Etc/GMT+12",
        "Australia/Lord_Howe",
        "Asia/Kathmandu",
        "America/Sao_Paulo",
        "Europe/London",
    ])
    .prop_map(str::to_owned)
}

fn time_zone() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "UTC",
            "Europe/London",
            "America/New_York",
            "Pacific/Kiritimati",
            "Etc/GMT+12",
            "Australia/Lord_Howe",
            "Asia/Kathmandu",
            "America/Sao_Paulo",
            "Nope/Zone",
        ])
        .prop_map(str::to_owned),
        text(),
    ]
}

fn dialect() -> impl Strategy<Value = Option<CronDialect>> {
    prop::sample::select(vec![None, Some(CronDialect::Unix), Some(CronDialect::Quartz)])
}

fn interval() -> impl Strategy<Value = pb::IntervalSchedule> {
    (prop::option::of(duration()), prop::option::of(timestamp()))
        .prop_map(|(interval, start_at)| pb::IntervalSchedule { interval, start_at })
}

fn schedule() -> BoxedStrategy<pb::Schedule> {
    use pb::schedule::Kind;
    let kind = prop_oneof![
        (cron_text(), time_zone(), -1i32..4).prop_map(|(expression, time_zone, dialect)| Kind::Cron(
            pb::CronSchedule { expression, time_zone, dialect }
        )),
        interval().prop_map(Kind::FixedRate),
        interval().prop_map(Kind::FixedDelay),
        prop_oneof![
            timestamp().prop_map(pb::one_time_schedule::When::At),
            duration().prop_map(pb::one_time_schedule::When::After),
        ]
        .prop_map(|w| Kind::OneTime(pb::OneTimeSchedule { when: Some(w) })),
        Just(Kind::Manual(pb::ManualSchedule {})),
    ];
    prop::option::of(kind).prop_map(|kind| pb::Schedule { kind }).boxed()
}

fn backoff() -> BoxedStrategy<pb::Backoff> {
    use pb::backoff::Kind;
    let kind = prop_oneof![
        prop::collection::vec(duration(), 0..4).prop_map(|delays| Kind::List(pb::ListBackoff { delays })),
        (prop::option::of(duration()), any::<f64>(), prop::option::of(duration()), any::<f64>()).prop_map(
            |(initial, multiplier, max, jitter)| Kind::Exponential(pb::ExponentialBackoff {
                initial,
                multiplier,
                max,
                jitter
            })
        ),
    ];
    prop::option::of(kind).prop_map(|kind| pb::Backoff { kind }).boxed()
}

fn json_text() -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just("1".to_owned()),
        Just("null".to_owned()),
        Just(r#""\ud800""#.to_owned()),
        Just(r#""\ud83d\ude00""#.to_owned()),
        text().prop_map(|s| serde_json::Value::String(s).to_string()),
    ];
    let doc = leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(inner, 0..4).prop_map(|v| format!(
                "{{{}}}",
                v.iter().enumerate().map(|(i, x)| format!("\"k{i}\":{x}")).collect::<Vec<_>>().join(",")
            )),
        ]
    });
    prop_oneof![
        4 => doc,
        1 => (1usize..100).prop_map(|n| format!("{}{}", "[".repeat(n), "]".repeat(n))),
        1 => text(),
    ]
    .boxed()
}

fn spec() -> BoxedStrategy<pb::TaskSpec> {
    let names = prop_oneof![
        prop::sample::select(vec!["t", "nightly.report", "app", "h/x", "-x", ""]).prop_map(str::to_owned),
        text()
    ];
    let names = names.boxed();
    let labels = prop::collection::btree_map(names.clone(), text(), 0..3);
    (
        (names.clone(), names.clone(), names, text(), prop::option::of(schedule()), json_text()).boxed(),
        (prop::option::of(duration()), 0u32..1100, -1i32..4, -1i32..4, -1i32..5, prop::option::of(duration())).boxed(),
        (prop::option::of((0u32..120, prop::option::of(backoff()))), labels, prop::option::of(any::<bool>())).boxed(),
        (
            prop::sample::select(vec!["", "zone=a", "gpu in (x,y),tier!=batch", "bad", "a=1,a=2"]),
            0u32..12,
            prop::sample::select(vec![0u32, 1, 3, 10_001]),
            prop::option::of(0u32..3),
            -1i32..5,
        )
            .boxed(),
    )
        .prop_map(|(a, b, c, d)| {
            let (name, app, handler, description, schedule, params) = a;
            let (misfire_threshold, max_catch_up, misfire_policy, concurrency_policy, routing, timeout) = b;
            let (retry, labels, enabled) = c;
            let (selector, priority, shards, max_running, retry_on) = d;
            pb::TaskSpec {
                name,
                app,
                handler,
                description,
                schedule,
                params,
                enabled,
                misfire_policy,
                misfire_threshold,
                max_catch_up,
                concurrency_policy,
                routing,
                timeout,
                retry_policy: retry.map(|(max_retries, backoff)| pb::RetryPolicy { max_retries, backoff }),
                labels: labels.into_iter().collect(),
                selector: selector.to_owned(),
                priority,
                shards,
                max_running,
                retry_on,
                ..Default::default()
            }
        })
        .boxed()
}

fn in_wire_range(t: Ts) -> bool {
    t.timestamp() >= MIN_WIRE_SECONDS && t <= latest()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn timestamps_are_accepted_exactly_within_years_1970_to_9999(t in timestamp()) {
        let valid = (0..1_000_000_000).contains(&t.nanos) && (MIN_WIRE_SECONDS..=MAX_WIRE_SECONDS).contains(&t.seconds);
        match ts_from_pb("at", &t) {
            Ok(ts) => {
                prop_assert!(valid, "{t:?} accepted");
                prop_assert_eq!(ts_to_pb(ts), t);
            }
            Err(e) => {
                prop_assert!(!valid, "{t:?} refused: {e}");
                prop_assert!(e.to_string().starts_with("at: "));
            }
        }
    }

    #[test]
    fn durations_are_accepted_exactly_when_well_formed(d in duration()) {
        let valid = (0..1_000_000_000).contains(&d.nanos) && (0..=MAX_WIRE_DURATION_SECONDS).contains(&d.seconds);
        match duration_from_pb("timeout", &d) {
            Ok(std) => {
                prop_assert!(valid, "{d:?} accepted");
                prop_assert_eq!(duration_to_pb(std), d);
            }
            Err(e) => prop_assert!(!valid && e.to_string().starts_with("timeout: "), "{d:?}: {e}"),
        }
    }

    #[test]
    fn cron_parsing_and_evaluation_never_panic(expr in cron_text(), tz in time_zone(), d in dialect(), t in any_instant()) {
        let Ok(c) = CronExpr::parse(&expr, &tz, d) else { return Ok(()) };
        if let Some(next) = c.next_after(t) {
            prop_assert!(next > t && next <= latest(), "{expr:?} in {tz:?} after {t}: {next}");
            let _ = c.local_rfc3339(next);
        }
        let _ = c.local_rfc3339(t);
        let _ = c.warnings(1.0);
    }

    #[test]
    fn valid_crons_evaluate_anywhere_in_chrono_s_range(expr in valid_cron(), tz in zone(), t in any_instant()) {
        // Near chrono's ends, placing an instant in a zone ahead of UTC panicked inside chrono.
        let c = CronExpr::parse(&expr, &tz, None).expect("valid");
        if let Some(next) = c.next_after(t) {
            prop_assert!(next > t && next <= latest(), "{expr:?} in {tz:?} after {t}: {next}");
            let _ = c.local_rfc3339(next);
        }
        let _ = c.local_rfc3339(t);
        let compiled = Compiled::Cron(Box::new(c));
        let mut at = compiled.first_fire(t);
        for _ in 0..3 {
            let Some(fire) = at else { break };
            prop_assert!(fire <= latest());
            at = compiled.next_after(fire);
        }
    }

    #[test]
    fn cron_errors_name_the_field_and_quote_little(expr in cron_text(), tz in time_zone(), d in dialect()) {
        let long_tz = tz.repeat(2000);
        for (e, z) in [(&expr, &tz), (&expr.repeat(50), &tz), (&expr, &long_tz)] {
            if let Err(err) = CronExpr::parse(e, z, d) {
                prop_assert!(matches!(err.field, "expression" | "time_zone"));
                prop_assert!(err.reason.len() < 2000, "{} bytes: {}", err.reason.len(), err.reason);
                prop_assert!(!err.reason.contains('\u{1b}'), "{:?}", err.reason);
            }
        }
    }

    #[test]
    fn wire_schedules_validate_or_name_a_field_and_what_passes_previews(s in schedule(), now in now()) {
        match schedule_from_pb("schedule", &s, now) {
            Err(e) => prop_assert!(e.to_string().starts_with("schedule"), "{e}"),
            Ok(domain) => {
                let compiled = Compiled::compile(&domain);
                prop_assert!(compiled.is_ok(), "a validated schedule compiles: {domain:?}");
                let compiled = compiled.expect("checked");
                let p = preview(&compiled, now, 20);
                for f in &p.fires {
                    prop_assert!(in_wire_range(f.at), "fire {} of {domain:?}", f.at);
                }
                if let Some(first) = compiled.first_fire(now) {
                    prop_assert!(in_wire_range(first));
                    let _ = crate::schedule::plan(&compiled, first, now, add(now, Duration::from_secs(60)),
                        crate::schedule::MisfireRules { policy: MisfirePolicy::FireAll, threshold: DAY, max_catch_up: 5 });
                }
                // What axd answers with reads back as the same schedule.
                let again = schedule_from_pb("schedule", &schedule_to_pb(&domain), now);
                prop_assert_eq!(again.ok(), Some(domain));
            }
        }
    }

    #[test]
    fn previews_from_any_accepted_time_never_panic(expr in cron_text(), tz in time_zone(), from in timestamp()) {
        let Ok(from) = ts_from_pb("from", &from) else { return Ok(()) };
        let s = pb::Schedule { kind: Some(pb::schedule::Kind::Cron(pb::CronSchedule {
            expression: expr, time_zone: tz, dialect: 0,
        })) };
        if let Ok(domain) = schedule_from_pb("schedule", &s, from) {
            let p = preview(&Compiled::compile(&domain).expect("compiles"), from, 50);
            prop_assert!(p.fires.iter().all(|f| in_wire_range(f.at)));
        }
    }

    #[test]
    fn task_specs_validate_or_name_a_field_and_round_trip(s in spec(), now in now()) {
        match task_from_pb(&s, now) {
            Err(e) => prop_assert!(e.to_string().starts_with("task."), "{e}"),
            Ok((name, c)) => {
                prop_assert!(c.description.chars().all(|ch| validate::is_display_safe(ch, true)));
                prop_assert!(c.labels.values().all(|v| v.chars().all(|ch| validate::is_display_safe(ch, false))));
                prop_assert!(serde_json::from_str::<serde_json::Value>(&c.params).is_ok(), "params read back: {}", c.params);
                let back = spec_to_pb(&name, &c);
                let again = task_from_pb(&back, now);
                prop_assert_eq!(again.ok(), Some((name, c)));
            }
        }
    }

    #[test]
    fn params_that_pass_parse_anywhere(p in json_text()) {
        if let Ok(stored) = validate::params("params", &p) {
            // serde_json's own limit is 128 levels and it refuses lone surrogates into a Value, as
            // Python's json.loads does at its recursion limit.
            prop_assert!(serde_json::from_str::<serde_json::Value>(&stored).is_ok(), "{stored}");
        } else {
            let strict = serde_json::from_str::<serde_json::Value>(&p);
            let deep = p.matches('[').count() + p.matches('{').count() > validate::MAX_JSON_DEPTH;
            prop_assert!(strict.is_err() || deep, "refused although it parses: {p}");
        }
    }
}
