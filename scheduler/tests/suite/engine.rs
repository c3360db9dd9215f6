//! The trigger engine with exact instants: cron dialects, DST, fixed rate drift, misfire policies.

use std::time::Duration;

use ax_scheduler::{
    cron::CronExpr,
    model::{CronDialect, FireSpan, InstanceSource, MisfirePolicy, Schedule, TaskEventKind, Ts, to_micros},
    schedule::{Compiled, MisfireRules, plan, preview},
};
use chrono::{Datelike, TimeZone, Utc, Weekday};

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> Ts {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s).single().expect("valid instant")
}

fn fires(expr: &CronExpr, from: Ts, n: usize) -> Vec<Ts> {
    let mut out = Vec::new();
    let mut t = from;
    for _ in 0..n {
        let Some(next) = expr.next_after(t) else {
            break;
        };
        out.push(next);
        t = next;
    }
    out
}

fn cron(expr: &str, tz: &str) -> CronExpr {
    CronExpr::parse(expr, tz, None).unwrap_or_else(|e| panic!("{expr}: {}: {}", e.field, e.reason))
}

#[test]
fn six_field_unix_expression_fires_on_the_second() {
    let c = cron("*/15 * * * * *", "UTC");
    assert_eq!(c.dialect(), CronDialect::Unix);
    let f = fires(&c, utc(2026, 5, 1, 12, 0, 7), 4);
    assert_eq!(
        f,
        vec![
            utc(2026, 5, 1, 12, 0, 15),
            utc(2026, 5, 1, 12, 0, 30),
            utc(2026, 5, 1, 12, 0, 45),
            utc(2026, 5, 1, 12, 1, 0)
        ]
    );
}

#[test]
fn five_field_expression_fires_on_the_minute() {
    let c = cron("30 2 * * *", "UTC");
    assert_eq!(fires(&c, utc(2026, 5, 1, 0, 0, 0), 2), vec![utc(2026, 5, 1, 2, 30, 0), utc(2026, 5, 2, 2, 30, 0)]);
}

#[test]
fn quartz_expression_from_xxl_job_fires_on_the_same_weekday_as_there() {
    // XXL-JOB / Quartz: day-of-week 2 = Monday. Unix would read 2 as Tuesday.
    let c = cron("0 0 2 ? * 2", "UTC");
    assert_eq!(c.dialect(), CronDialect::Quartz);
    for t in fires(&c, utc(2026, 1, 1, 0, 0, 0), 10) {
        assert_eq!(t.weekday(), Weekday::Mon, "{t}");
        assert_eq!((t.hour_(), t.minute_()), (2, 0));
    }
    // Quartz 1 = Sunday, 7 = Saturday; names mean the same in both dialects.
    assert!(
        fires(&cron("0 0 12 ? * 1", "UTC"), utc(2026, 1, 1, 0, 0, 0), 5).iter().all(|t| t.weekday() == Weekday::Sun)
    );
    assert!(
        fires(&cron("0 0 12 ? * 7", "UTC"), utc(2026, 1, 1, 0, 0, 0), 5).iter().all(|t| t.weekday() == Weekday::Sat)
    );
    assert!(
        fires(&cron("0 0 12 ? * MON-FRI", "UTC"), utc(2026, 1, 1, 0, 0, 0), 20)
            .iter()
            .all(|t| !matches!(t.weekday(), Weekday::Sat | Weekday::Sun))
    );
    // The unix reading of "0 2 * * 1" is Monday, and of 0 and 7 Sunday.
    assert!(fires(&cron("0 2 * * 1", "UTC"), utc(2026, 1, 1, 0, 0, 0), 5).iter().all(|t| t.weekday() == Weekday::Mon));
    assert!(fires(&cron("0 2 * * 7", "UTC"), utc(2026, 1, 1, 0, 0, 0), 5).iter().all(|t| t.weekday() == Weekday::Sun));
}

trait HourMinute {
    fn hour_(&self) -> u32;
    fn minute_(&self) -> u32;
}
impl HourMinute for Ts {
    fn hour_(&self) -> u32 {
        chrono::Timelike::hour(self)
    }
    fn minute_(&self) -> u32 {
        chrono::Timelike::minute(self)
    }
}

#[test]
fn quartz_last_day_weekday_and_nth_weekday() {
    let from = utc(2026, 1, 1, 0, 0, 0);
    // L: last day of the month.
    assert_eq!(
        fires(&cron("0 0 12 L * ?", "UTC"), from, 3),
        vec![utc(2026, 1, 31, 12, 0, 0), utc(2026, 2, 28, 12, 0, 0), utc(2026, 3, 31, 12, 0, 0)]
    );
    // LW: last weekday of the month (Jan 31 2026 is a Saturday -> Friday 30th).
    assert_eq!(
        fires(&cron("0 0 12 LW * ?", "UTC"), from, 2),
        vec![utc(2026, 1, 30, 12, 0, 0), utc(2026, 2, 27, 12, 0, 0)]
    );
    // 15W: nearest weekday to the 15th (Feb 15 2026 is a Sunday -> Monday 16th).
    assert_eq!(
        fires(&cron("0 0 12 15W * ?", "UTC"), from, 2),
        vec![utc(2026, 1, 15, 12, 0, 0), utc(2026, 2, 16, 12, 0, 0)]
    );
    // 6#3: third Friday (Quartz 6 = Friday).
    assert_eq!(
        fires(&cron("0 0 12 ? * 6#3", "UTC"), from, 2),
        vec![utc(2026, 1, 16, 12, 0, 0), utc(2026, 2, 20, 12, 0, 0)]
    );
    // 6L: last Friday.
    assert_eq!(
        fires(&cron("0 0 12 ? * 6L", "UTC"), from, 2),
        vec![utc(2026, 1, 30, 12, 0, 0), utc(2026, 2, 27, 12, 0, 0)]
    );
    // L-2: two days before the last day.
    assert_eq!(
        fires(&cron("0 0 12 L-2 * ?", "UTC"), from, 3),
        vec![utc(2026, 1, 29, 12, 0, 0), utc(2026, 2, 26, 12, 0, 0), utc(2026, 3, 29, 12, 0, 0)]
    );
    // 7 fields: year.
    assert_eq!(fires(&cron("0 0 12 1 1 ? 2027", "UTC"), from, 2), vec![utc(2027, 1, 1, 12, 0, 0)]);
    // Quartz steps like 0/15.
    assert_eq!(
        fires(&cron("0 0/15 * * * ?", "UTC"), from, 2),
        vec![utc(2026, 1, 1, 0, 15, 0), utc(2026, 1, 1, 0, 30, 0)]
    );
}

#[test]
fn unix_last_day_nearest_weekday_and_nth_weekday() {
    let from = utc(2026, 1, 1, 0, 0, 0);
    let last = cron("0 12 L * *", "UTC");
    assert_eq!(last.dialect(), CronDialect::Unix);
    assert_eq!(
        fires(&last, from, 3),
        vec![utc(2026, 1, 31, 12, 0, 0), utc(2026, 2, 28, 12, 0, 0), utc(2026, 3, 31, 12, 0, 0)]
    );
    // 15W: the weekday nearest the 15th (Feb 15 2026 is a Sunday -> Monday 16th).
    assert_eq!(
        fires(&cron("0 12 15W * *", "UTC"), from, 2),
        vec![utc(2026, 1, 15, 12, 0, 0), utc(2026, 2, 16, 12, 0, 0)]
    );
    // 5#3: the third Friday (unix 5 = Friday; Quartz would read 5 as Thursday).
    assert_eq!(
        fires(&cron("0 12 * * 5#3", "UTC"), from, 2),
        vec![utc(2026, 1, 16, 12, 0, 0), utc(2026, 2, 20, 12, 0, 0)]
    );
    // 5L: the last Friday.
    assert_eq!(
        fires(&cron("0 12 * * 5L", "UTC"), from, 2),
        vec![utc(2026, 1, 30, 12, 0, 0), utc(2026, 2, 27, 12, 0, 0)]
    );
    // The same with a leading seconds field.
    assert_eq!(fires(&cron("30 0 12 L * *", "UTC"), from, 1), vec![utc(2026, 1, 31, 12, 0, 30)]);
}

#[test]
fn unix_day_of_week_0_and_7_are_sunday_and_1_is_monday() {
    let from = utc(2026, 1, 1, 0, 0, 0);
    let sundays = fires(&cron("0 2 * * 0", "UTC"), from, 5);
    assert_eq!(sundays[0], utc(2026, 1, 4, 2, 0, 0), "the first Sunday of 2026");
    assert!(sundays.iter().all(|t| t.weekday() == Weekday::Sun), "{sundays:?}");
    assert_eq!(fires(&cron("0 2 * * 7", "UTC"), from, 5), sundays);
    assert_eq!(fires(&cron("0 2 * * SUN", "UTC"), from, 5), sundays);
    assert_eq!(fires(&cron("0 0 2 * * 0", "UTC"), from, 5), sundays, "six fields read the same");
    let mondays = fires(&cron("0 2 * * 1", "UTC"), from, 5);
    assert!(mondays.iter().all(|t| t.weekday() == Weekday::Mon), "{mondays:?}");
    // A range through the week: Friday to Sunday.
    assert!(
        fires(&cron("0 2 * * 5-7", "UTC"), from, 9)
            .iter()
            .all(|t| matches!(t.weekday(), Weekday::Fri | Weekday::Sat | Weekday::Sun))
    );
}

#[test]
fn a_six_field_unix_expression_with_a_numeric_day_of_week_says_how_it_was_read() {
    let from = utc(2026, 1, 1, 0, 0, 0);
    let warned = |e: &str, dialect: Option<CronDialect>| {
        let c = CronExpr::parse(e, "UTC", dialect).expect(e);
        let p = preview(&Compiled::Cron(Box::new(c)), from, 3);
        p.warnings.into_iter().find(|w| w.contains("read as a unix expression"))
    };
    // Pasted from Quartz without `?`: 1 meant Sunday there, and is read as Monday here.
    let w = warned("0 0 12 * * 1", None).expect("a warning");
    assert!(w.contains("1 = Monday") && w.contains("(day-of-week 1)") && w.contains("QUARTZ"), "{w}");
    assert!(fires(&cron("0 0 12 * * 1", "UTC"), from, 3).iter().all(|t| t.weekday() == Weekday::Mon));
    // No doubt: five fields, a day name, no day-of-week, or the Quartz dialect.
    for e in ["0 12 * * 1", "0 0 12 * * MON", "0 0 12 * * *", "0 0 12 ? * 2"] {
        assert_eq!(warned(e, None), None, "{e}");
    }
    // Told QUARTZ, the same expression is read the Quartz way (1 = Sunday), without a warning.
    assert_eq!(warned("0 0 12 * * 1", Some(CronDialect::Quartz)), None);
    let quartz = CronExpr::parse("0 0 12 * * 1", "UTC", Some(CronDialect::Quartz)).expect("quartz");
    assert_eq!(quartz.dialect(), CronDialect::Quartz);
    assert!(fires(&quartz, from, 3).iter().all(|t| t.weekday() == Weekday::Sun));
}

#[test]
fn bad_expressions_name_the_field_and_value() {
    let err = |e: &str| CronExpr::parse(e, "UTC", None).expect_err(e);
    let e = err("0 25 * * *");
    assert_eq!(e.field, "expression");
    assert_eq!(e.reason, "field 2 (hours) = 25 is out of range 0-23");
    assert_eq!(err("0 0 25 * * ?").reason, "field 3 (hours) = 25 is out of range 0-23");
    assert_eq!(err("0 0 12 ? * 8").reason, "field 6 (day-of-week) = 8 is out of range 1-7");
    assert!(err("*/0 * * * *").reason.contains("step must be at least 1"));
    assert!(err("* * * *").reason.contains("has 4 fields"));
    assert!(err("0 0 12 1 * 2 ?").reason.contains("day-of-month"));
    assert!(err("a b c d e").reason.contains("field 1 (minutes)"));
    assert!(err("").reason.contains("empty"));
    let tz = CronExpr::parse("* * * * *", "Mars/Olympus", None).expect_err("zone");
    assert_eq!(tz.field, "time_zone");
    assert!(tz.reason.contains("Mars/Olympus"));
}

#[test]
fn new_york_spring_forward_gap_fires_once_right_after_the_gap() {
    // 2026-03-08: clocks jump from 02:00 EST to 03:00 EDT; 02:30 does not exist.
    let c = cron("30 2 * * *", "America/New_York");
    let f = fires(&c, utc(2026, 3, 7, 12, 0, 0), 2);
    assert_eq!(f[0], utc(2026, 3, 8, 7, 0, 0), "03:00 EDT, the first instant after the gap");
    assert_eq!(f[1], utc(2026, 3, 9, 6, 30, 0), "02:30 EDT the next day");
    // Several wall times in the gap collapse into one fire.
    let c = cron("0,15,30,45 2 * * *", "America/New_York");
    let f = fires(&c, utc(2026, 3, 8, 5, 0, 0), 2);
    assert_eq!(f, vec![utc(2026, 3, 8, 7, 0, 0), utc(2026, 3, 9, 6, 0, 0)]);
}

#[test]
fn new_york_fall_back_overlap_fires_once_at_the_first_occurrence() {
    // 2026-11-01: 01:00-02:00 happens twice (EDT, then EST).
    let c = cron("30 1 * * *", "America/New_York");
    let f = fires(&c, utc(2026, 11, 1, 0, 0, 0), 2);
    assert_eq!(f[0], utc(2026, 11, 1, 5, 30, 0), "01:30 EDT, the first occurrence");
    assert_eq!(f[1], utc(2026, 11, 2, 6, 30, 0), "not 01:30 EST again; next day");
    // Every 15 minutes: the repeated hour does not fire a second time.
    let c = cron("*/15 * * * *", "America/New_York");
    let f = fires(&c, utc(2026, 11, 1, 5, 40, 0), 3);
    assert_eq!(f, vec![utc(2026, 11, 1, 5, 45, 0), utc(2026, 11, 1, 7, 0, 0), utc(2026, 11, 1, 7, 15, 0)]);
}

#[test]
fn london_gap_and_overlap() {
    // 2026-03-29: 01:00 GMT -> 02:00 BST. 01:30 does not exist.
    let c = cron("30 1 * * *", "Europe/London");
    assert_eq!(fires(&c, utc(2026, 3, 28, 12, 0, 0), 2), vec![utc(2026, 3, 29, 1, 0, 0), utc(2026, 3, 30, 0, 30, 0)]);
    // 2026-10-25: 02:00 BST -> 01:00 GMT. 01:30 happens twice; first is 00:30 UTC.
    assert_eq!(
        fires(&c, utc(2026, 10, 24, 12, 0, 0), 3),
        vec![utc(2026, 10, 25, 0, 30, 0), utc(2026, 10, 26, 1, 30, 0), utc(2026, 10, 27, 1, 30, 0)]
    );
}

#[test]
fn shanghai_has_no_dst_and_fires_at_local_wall_time() {
    let c = cron("0 0 9 * * ?", "Asia/Shanghai");
    let f = fires(&c, utc(2026, 3, 1, 0, 0, 0), 3);
    assert_eq!(f, vec![utc(2026, 3, 1, 1, 0, 0), utc(2026, 3, 2, 1, 0, 0), utc(2026, 3, 3, 1, 0, 0)]);
    assert_eq!(c.local_rfc3339(f[0]), "2026-03-01T09:00:00+08:00");
}

#[test]
fn fixed_rate_is_anchored_and_does_not_drift_over_ten_thousand_fires() {
    let anchor = utc(2026, 1, 1, 0, 0, 0) + chrono::TimeDelta::microseconds(123);
    let interval = Duration::from_micros(1_234_567);
    let s = Compiled::compile(&Schedule::FixedRate { interval, start_at: anchor }).expect("compile");
    let mut t = s.first_fire(anchor).expect("first");
    assert_eq!(t, anchor);
    for _ in 0..10_000 {
        t = s.next_after(t).expect("next");
    }
    assert_eq!(t, anchor + chrono::TimeDelta::microseconds(10_000 * 1_234_567));
    // From an arbitrary instant the next fire is on the grid.
    let mid = anchor + chrono::TimeDelta::milliseconds(5_000_000);
    let n = s.next_after(mid).expect("next");
    assert_eq!((n - anchor).num_microseconds().expect("us") % 1_234_567, 0);
    assert!(n > mid && n - mid <= chrono::TimeDelta::microseconds(1_234_567));
}

#[test]
fn interval_kinds_ignore_wall_clocks() {
    // Across the New York spring-forward, a 1-hour rate stays 3600 s apart in absolute time.
    let anchor = utc(2026, 3, 8, 5, 0, 0);
    let s = Compiled::compile(&Schedule::FixedRate { interval: Duration::from_secs(3600), start_at: anchor })
        .expect("compile");
    let a = s.next_after(anchor).expect("a");
    let b = s.next_after(a).expect("b");
    assert_eq!(b - a, chrono::TimeDelta::hours(1));
    let d = Compiled::compile(&Schedule::FixedDelay { interval: Duration::from_secs(90), start_at: anchor })
        .expect("compile");
    assert_eq!(d.next_after(anchor), None, "fixed delay waits for completion");
    assert_eq!(d.after_completion(utc(2026, 3, 8, 6, 0, 0)), Some(utc(2026, 3, 8, 6, 1, 30)));
}

fn per_minute() -> Compiled {
    Compiled::Cron(Box::new(cron("0 * * * * *", "UTC")))
}

fn outage_plan(policy: MisfirePolicy, max_catch_up: u32) -> ax_scheduler::schedule::FirePlan {
    // Due at 10:01; axd was down until 10:11:30 (a 10-minute outage of a per-minute task).
    let rules = MisfireRules { policy, threshold: Duration::from_secs(60), max_catch_up };
    let now = utc(2026, 6, 1, 10, 11, 30);
    plan(&per_minute(), utc(2026, 6, 1, 10, 1, 0), now, now, rules)
}

/// The plan's one event of `kind`, with its message and the fires it decided.
fn event(p: &ax_scheduler::schedule::FirePlan, kind: TaskEventKind) -> (&str, FireSpan) {
    let mut of_kind = p.events.iter().filter(|e| e.kind == kind);
    let e = of_kind.next().unwrap_or_else(|| panic!("no {kind:?} event in {:?}", p.events));
    assert!(of_kind.next().is_none(), "two {kind:?} events in {:?}", p.events);
    (&e.message, e.fires)
}

fn span(first: Ts, last: Ts, count: u32) -> FireSpan {
    FireSpan { first, last, count }
}

fn catch_ups(p: &ax_scheduler::schedule::FirePlan) -> Vec<Ts> {
    p.fires.iter().filter(|f| f.source == InstanceSource::CatchUp).map(|f| f.fire_at).collect()
}

#[test]
fn misfire_fire_once_creates_one_catch_up_for_the_latest_missed_fire() {
    let p = outage_plan(MisfirePolicy::FireOnce, 10);
    // 10:01..10:10 are late by more than 60 s; 10:11 is only 30 s late and simply runs late.
    assert_eq!(catch_ups(&p), vec![utc(2026, 6, 1, 10, 10, 0)]);
    assert_eq!(p.fires.iter().filter(|f| f.source == InstanceSource::Schedule).count(), 1);
    assert_eq!(p.next_fire_at, Some(utc(2026, 6, 1, 10, 12, 0)));
    let (message, fires) = event(&p, TaskEventKind::MisfireCatchUp);
    assert!(message.contains("10 fire(s) missed"), "{message}");
    // The fields name the fires each decision is about: the one caught up, the nine skipped.
    let at = |m| utc(2026, 6, 1, 10, m, 0);
    assert_eq!(fires, span(at(10), at(10), 1));
    let (message, fires) = event(&p, TaskEventKind::MisfireSkipped);
    assert!(message.contains("skipped 9 of 10"), "{message}");
    assert_eq!(fires, span(at(1), at(9), 9));
}

#[test]
fn misfire_fire_all_creates_one_per_missed_fire_capped_by_the_bound() {
    let p = outage_plan(MisfirePolicy::FireAll, 10);
    assert_eq!(catch_ups(&p).len(), 10);
    assert_eq!(catch_ups(&p)[0], utc(2026, 6, 1, 10, 1, 0));
    let at = |m| utc(2026, 6, 1, 10, m, 0);
    assert_eq!(event(&p, TaskEventKind::MisfireCatchUp).1, span(at(1), at(10), 10));
    assert!(p.events.iter().all(|e| e.kind != TaskEventKind::MisfireSkipped), "{:?}", p.events);
    let capped = outage_plan(MisfirePolicy::FireAll, 4);
    assert_eq!(
        catch_ups(&capped),
        vec![
            utc(2026, 6, 1, 10, 7, 0),
            utc(2026, 6, 1, 10, 8, 0),
            utc(2026, 6, 1, 10, 9, 0),
            utc(2026, 6, 1, 10, 10, 0)
        ]
    );
    let (message, fires) = event(&capped, TaskEventKind::MisfireSkipped);
    assert!(message.contains("skipped 6 of 10"), "{message}");
    assert_eq!(fires, span(at(1), at(6), 6));
    assert_eq!(event(&capped, TaskEventKind::MisfireCatchUp).1, span(at(7), at(10), 4));
}

#[test]
fn misfire_skip_creates_no_catch_up_and_records_the_skip() {
    let p = outage_plan(MisfirePolicy::Skip, 10);
    assert!(catch_ups(&p).is_empty());
    let (message, fires) = event(&p, TaskEventKind::MisfireSkipped);
    assert!(message.contains("skipped 10 of 10"), "{message}");
    // The message names the whole span it skipped, not only its first fire; so do the fields.
    assert!(message.contains("from 2026-06-01T10:01:00+00:00 to 2026-06-01T10:10:00+00:00"), "{message}");
    assert_eq!(fires, span(utc(2026, 6, 1, 10, 1, 0), utc(2026, 6, 1, 10, 10, 0), 10));
    assert!(p.events.iter().all(|e| e.kind != TaskEventKind::MisfireCatchUp), "{:?}", p.events);
}

#[test]
fn fires_within_the_look_ahead_are_planned_but_not_beyond() {
    let rules = MisfireRules { policy: MisfirePolicy::FireOnce, threshold: Duration::from_secs(60), max_catch_up: 10 };
    let c = Compiled::Cron(Box::new(cron("* * * * * *", "UTC")));
    let now = utc(2026, 6, 1, 10, 0, 0);
    let p = plan(&c, now, now, now + chrono::TimeDelta::seconds(2), rules);
    assert_eq!(p.fires.len(), 3);
    assert_eq!(p.next_fire_at, Some(utc(2026, 6, 1, 10, 0, 3)));
}

#[test]
fn preview_warns_about_the_every_minute_typo() {
    let p = preview(&Compiled::Cron(Box::new(cron("* * * * *", "UTC"))), utc(2026, 1, 1, 0, 0, 0), 3);
    assert_eq!(p.fires.len(), 3);
    assert!((p.fires_per_day - 1440.0).abs() < 1.0, "{}", p.fires_per_day);
    assert!(p.warnings.iter().any(|w| w.contains("1440 times a day") && w.contains("0 0 * * *")), "{:?}", p.warnings);
    let p = preview(&Compiled::Cron(Box::new(cron("* 2 * * *", "UTC"))), utc(2026, 1, 1, 0, 0, 0), 3);
    assert!(
        p.warnings.iter().any(|w| w.contains("minutes field is `*`") && w.contains("60 times")),
        "{:?}",
        p.warnings
    );
    let p = preview(&Compiled::Cron(Box::new(cron("* 0 2 * * ?", "UTC"))), utc(2026, 1, 1, 0, 0, 0), 3);
    assert!(p.warnings.iter().any(|w| w.contains("seconds field")), "{:?}", p.warnings);
    let p = preview(&Compiled::Cron(Box::new(cron("0 0 * * *", "UTC"))), utc(2026, 1, 1, 0, 0, 0), 3);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert!((p.fires_per_day - 1.0).abs() < 0.01);
}

#[test]
fn fires_per_day_is_exact_for_periodic_schedules() {
    // Seen as 43,201 / 43,202 and 8,640.17: the sample was counted from the preview's start, not
    // from its first fire.
    let from = utc(2026, 1, 1, 0, 0, 0) + chrono::TimeDelta::milliseconds(700);
    let every_2s = Compiled::FixedRate { interval_us: 2_000_000, start_us: to_micros(utc(2026, 1, 1, 0, 0, 0)) };
    let p = preview(&every_2s, from, 3);
    assert_eq!(p.fires_per_day, 43_200.0);
    assert!(p.warnings.iter().any(|w| w.contains("(43200 times a day)")), "{:?}", p.warnings);
    let p = preview(&Compiled::Cron(Box::new(cron("*/10 * * * * *", "UTC"))), from, 3);
    assert_eq!(p.fires_per_day, 8_640.0);
    let p = preview(&Compiled::Cron(Box::new(cron("0 0 * * *", "UTC"))), from, 3);
    assert_eq!(p.fires_per_day, 1.0);
}

#[test]
fn preview_shows_local_and_utc_times() {
    let p = preview(&Compiled::Cron(Box::new(cron("30 2 * * *", "America/New_York"))), utc(2026, 3, 7, 12, 0, 0), 2);
    assert_eq!(p.fires[0].at, utc(2026, 3, 8, 7, 0, 0));
    assert_eq!(p.fires[0].local, "2026-03-08T03:00:00-04:00");
}

/// A cron at 09:00 and 17:00 on weekdays (Berlin) and a fixed rate every 4 h from midnight UTC.
fn merged() -> Compiled {
    let cron = Compiled::compile(&Schedule::Cron {
        expression: "0 9,17 * * 1-5".into(),
        time_zone: "Europe/Berlin".into(),
        dialect: CronDialect::Unix,
    })
    .expect("cron");
    let rate = Compiled::compile(&Schedule::FixedRate {
        interval: Duration::from_secs(4 * 3600),
        start_at: utc(2026, 6, 1, 0, 0, 0),
    })
    .expect("rate");
    Compiled::Merged(vec![cron, rate])
}

#[test]
fn several_schedules_fire_merged_each_instant_once_credited_to_the_first_that_fires_then() {
    let m = merged();
    // Monday 2026-06-01; Berlin is UTC+2: the cron fires at 07:00 and 15:00 UTC.
    let mut got = Vec::new();
    let mut t = m.first_fire(utc(2026, 6, 1, 0, 0, 0));
    while let Some(at) = t.filter(|at| *at < utc(2026, 6, 2, 0, 0, 0)) {
        got.push((at, m.which(at)));
        t = m.next_after(at);
    }
    let (cron, rate) = (Some(0), Some(1));
    assert_eq!(
        got,
        vec![
            (utc(2026, 6, 1, 0, 0, 0), rate),
            (utc(2026, 6, 1, 4, 0, 0), rate),
            (utc(2026, 6, 1, 7, 0, 0), cron),
            (utc(2026, 6, 1, 8, 0, 0), rate),
            (utc(2026, 6, 1, 12, 0, 0), rate),
            (utc(2026, 6, 1, 15, 0, 0), cron),
            (utc(2026, 6, 1, 16, 0, 0), rate),
            (utc(2026, 6, 1, 20, 0, 0), rate),
        ]
    );
    // Both fire at 08:00 UTC when the cron runs at 10:00 Berlin: one fire, the cron's (first).
    let both = Compiled::Merged(vec![
        Compiled::compile(&Schedule::Cron {
            expression: "0 10 * * *".into(),
            time_zone: "Europe/Berlin".into(),
            dialect: CronDialect::Unix,
        })
        .expect("cron"),
        Compiled::compile(&Schedule::FixedRate {
            interval: Duration::from_secs(4 * 3600),
            start_at: utc(2026, 6, 1, 0, 0, 0),
        })
        .expect("rate"),
    ]);
    let at = utc(2026, 6, 1, 8, 0, 0);
    assert_eq!(both.next_after(utc(2026, 6, 1, 4, 0, 0)), Some(at));
    assert_eq!(both.which(at), Some(0));
    assert_eq!(both.next_after(at), Some(utc(2026, 6, 1, 12, 0, 0)), "the same instant is not fired twice");
    // The misfire plan walks the merged fires and credits each.
    let rules = MisfireRules { policy: MisfirePolicy::FireAll, threshold: Duration::from_secs(60), max_catch_up: 10 };
    let now = utc(2026, 6, 1, 12, 0, 30);
    let p = plan(&both, utc(2026, 6, 1, 4, 0, 0), now, now, rules);
    let planned: Vec<(Ts, InstanceSource, Option<usize>)> =
        p.fires.iter().map(|f| (f.fire_at, f.source, f.schedule)).collect();
    assert_eq!(
        planned,
        vec![
            (utc(2026, 6, 1, 4, 0, 0), InstanceSource::CatchUp, Some(1)),
            (utc(2026, 6, 1, 8, 0, 0), InstanceSource::CatchUp, Some(0)),
            (utc(2026, 6, 1, 12, 0, 0), InstanceSource::Schedule, Some(1)),
        ]
    );
    assert_eq!(p.next_fire_at, Some(utc(2026, 6, 1, 16, 0, 0)));
    // A preview shows the merged fires with each one's wall clock, and says how it reads them.
    let pv = preview(&m, utc(2026, 6, 1, 1, 0, 0), 2);
    assert_eq!(
        pv.fires.iter().map(|f| f.at).collect::<Vec<_>>(),
        vec![utc(2026, 6, 1, 4, 0, 0), utc(2026, 6, 1, 7, 0, 0)]
    );
    assert_eq!(pv.fires[1].local, "2026-06-01T09:00:00+02:00");
    assert!(pv.description.starts_with("fires of 2 schedules merged"), "{}", pv.description);
    assert!(pv.description.contains("extra_schedules[0]: every 4h"), "{}", pv.description);
    // One schedule alone credits none.
    assert_eq!(Compiled::compile(&Schedule::Manual).expect("manual").which(at), None);
}

#[test]
fn a_preview_of_several_schedules_warns_once_about_their_merged_frequency() {
    let every_second = |zone: &str| {
        Compiled::compile(&Schedule::Cron {
            expression: "* * * * * *".into(),
            time_zone: zone.into(),
            dialect: CronDialect::Unix,
        })
        .expect("cron")
    };
    let m = Compiled::Merged(vec![every_second("UTC"), every_second("Asia/Tokyo")]);
    let p = preview(&m, utc(2026, 6, 1, 0, 0, 0), 3);
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("86400 times a day"), "{:?}", p.warnings);
}
