//! Unit tests of the explanations: each answer from hand-built records, at injected instants.
use super::*;
use crate::model::{
    AppLimit, Backoff, ConcurrencyPolicy, DEFAULT_MAX_CATCH_UP, FireSpan, MisfirePolicy, RetryPolicy, Routing,
    Schedule, TaskConfig, WorkerStreak, add,
};
use chrono::TimeZone;

fn t0() -> Ts {
    chrono::Utc.with_ymd_and_hms(2026, 1, 1, 10, 0, 0).single().expect("t")
}

fn secs(s: u64) -> Ts {
    add(t0(), Duration::from_secs(s))
}

/// A task firing every minute since `t0 - 1h`, created then.
fn task(enabled: bool) -> Task {
    let created = sub(t0(), Duration::from_secs(3600));
    Task {
        id: 1,
        name: "report".into(),
        config: TaskConfig {
            app: "billing".into(),
            handler: "invoice".into(),
            description: String::new(),
            schedule: Schedule::FixedRate { interval: Duration::from_secs(60), start_at: created },
            params: "{}".into(),
            enabled,
            misfire_policy: MisfirePolicy::FireOnce,
            misfire_threshold: Duration::from_secs(60),
            max_catch_up: DEFAULT_MAX_CATCH_UP,
            concurrency: ConcurrencyPolicy::Allow,
            routing: Routing::LeastLoaded,
            timeout: None,
            retry: RetryPolicy { max_retries: 1, backoff: Backoff::List { delays_us: vec![1_000_000] } },
            labels: Default::default(),
            placement: Default::default(),
            timing: Default::default(),
            flow: Default::default(),
        },
        next_fire_at: enabled.then(|| secs(60)),
        created_at: created,
        updated_at: created,
        version: 1,
        coalesced: None,
        pause: None,
    }
}

/// An instance of the fire at `fire_at` (keyed as the trigger keys it).
fn instance(id: i64, fire_at: Ts, status: InstanceStatus) -> Instance {
    Instance { idempotency_key: fire_key(fire_at), ..crate::model::testing::instance(id, fire_at, status) }
}

fn ev(
    at: Ts,
    from: Option<InstanceStatus>,
    to: InstanceStatus,
    attempt: u32,
    worker: &str,
    reason: &str,
) -> InstanceEvent {
    InstanceEvent {
        id: 0,
        instance_id: 0,
        at,
        from,
        to,
        attempt,
        scheduler_id: "axd-1".into(),
        worker_id: worker.into(),
        reason: reason.into(),
    }
}

fn task_event(at: Ts, kind: TaskEventKind, actor: &str, message: &str) -> TaskEvent {
    TaskEvent { task_id: 1, at, kind, actor: actor.into(), message: message.into(), fires: None }
}

fn span(worker: &str, from: Ts, to: Option<Ts>) -> SessionSpan {
    SessionSpan {
        session_id: format!("s-{worker}"),
        worker_id: worker.into(),
        app: "billing".into(),
        handlers: vec!["invoice".into()],
        labels: Default::default(),
        capacity: 4,
        scheduler_id: "axd-1".into(),
        connected_at: from,
        closed_at: to,
        close_reason: String::new(),
    }
}

fn live(credits: u32) -> WorkerRecord {
    WorkerRecord {
        session_id: "s-live".into(),
        worker_id: "w-live".into(),
        app: "billing".into(),
        handlers: vec!["invoice".into()],
        capacity: 4,
        credits,
        in_flight: 4 - credits,
        labels: Default::default(),
        scheduler_id: "axd-1".into(),
        client: String::new(),
        connected_at: t0(),
        last_seen_at: t0(),
    }
}

/// A successful run on `worker`, dispatched `delay` seconds after its fire.
fn succeeded(id: i64, fire: Ts, delay: u64, worker: &str) -> (Instance, Vec<InstanceEvent>) {
    let mut i = instance(id, fire, InstanceStatus::Success);
    i.attempt = 1;
    i.worker_id = Some(worker.into());
    let d = add(fire, Duration::from_secs(delay));
    i.finished_at = Some(add(d, Duration::from_secs(1)));
    let trail = vec![
        ev(fire, None, InstanceStatus::Pending, 0, "", "fired"),
        ev(d, Some(InstanceStatus::Pending), InstanceStatus::Dispatched, 1, worker, "assigned"),
        ev(d, Some(InstanceStatus::Dispatched), InstanceStatus::Running, 1, worker, "accepted"),
        ev(
            add(d, Duration::from_secs(1)),
            Some(InstanceStatus::Running),
            InstanceStatus::Success,
            1,
            worker,
            "succeeded",
        ),
    ];
    (i, trail)
}

fn kinds(e: &Explanation) -> Vec<FindingKind> {
    e.findings.iter().map(|f| f.kind).collect()
}

fn run(
    task: &Task,
    at: Ts,
    events: &[TaskEvent],
    instances: &[(Instance, Vec<InstanceEvent>)],
    sessions: &[SessionSpan],
    live: &[WorkerRecord],
) -> Explanation {
    explain(&Inputs {
        task,
        at,
        now: at,
        limit: 10,
        events,
        instances,
        sessions,
        live,
        fired: &[],
        limits: Limits::default(),
        calendar: &Default::default(),
    })
}

#[test]
fn a_disabled_task_names_who_disabled_it_and_when() {
    let t = task(false);
    let events =
        [task_event(sub(t0(), Duration::from_secs(30)), TaskEventKind::Disabled, "spiffe://ax/admin/alice", "")];
    let e = run(&t, secs(30), &events, &[], &[], &[]);
    let f = &e.findings[0];
    assert_eq!(f.kind, FindingKind::Disabled, "{e:#?}");
    assert!(f.message.contains("disabled by spiffe://ax/admin/alice at 2026-01-01T09:59:30.000Z"), "{}", f.message);
    // What it would do if enabled is still shown.
    assert_eq!(e.next_fires.first().map(|f| f.at), Some(secs(60)));
    // The fire at 10:00, while disabled, has no instance, and the answer says why; the one at
    // 09:59, before, has nothing recorded.
    let missing: Vec<&Finding> = e.findings.iter().filter(|f| f.kind == FindingKind::NoInstance).collect();
    assert!(!missing.is_empty(), "{e:#?}");
    assert!(
        missing[0].message.contains("the task was disabled then (by spiffe://ax/admin/alice"),
        "{}",
        missing[0].message
    );
}

#[test]
fn an_instance_that_waited_for_a_worker_says_none_was_connected_and_when_one_came() {
    let t = task(true);
    let fire = t0();
    let inst = succeeded(5, fire, 200, "w-2");
    let sessions = [
        span("w-1", sub(fire, Duration::from_secs(600)), Some(sub(fire, Duration::from_secs(10)))),
        span("w-2", secs(200), None),
    ];
    let e = run(&t, secs(300), &[], std::slice::from_ref(&inst), &sessions, &[]);
    let f = e.findings.iter().find(|f| f.instance_id == 5).expect("a finding about instance 5");
    assert_eq!(f.kind, FindingKind::NoWorker, "{e:#?}");
    assert!(f.message.contains("waited 3m20s before its first dispatch"), "{}", f.message);
    assert!(f.message.contains("worker w-2 connected at 2026-01-01T10:03:20.000Z"), "{}", f.message);
    assert_eq!(e.recent[0].dispatch_delay, Some(chrono::Duration::seconds(200)));
    // With a worker connected at the fire time, the same wait is "at capacity".
    let sessions = [span("w-1", sub(fire, Duration::from_secs(600)), None)];
    let e = run(&t, secs(300), &[], &[inst], &sessions, &[]);
    assert_eq!(e.findings.iter().find(|f| f.instance_id == 5).map(|f| f.kind), Some(FindingKind::AtCapacity));
}

#[test]
fn a_due_pending_instance_says_what_it_waits_for_now() {
    let t = task(true);
    let inst =
        (instance(6, t0(), InstanceStatus::Pending), vec![ev(t0(), None, InstanceStatus::Pending, 0, "", "fired")]);
    let at = secs(30);
    let e = run(&t, at, &[], std::slice::from_ref(&inst), &[], &[]);
    let f = e.findings.iter().find(|f| f.instance_id == 6).expect("finding");
    assert_eq!(f.kind, FindingKind::NoWorker);
    assert!(f.message.contains("no worker of app billing is connected"), "{}", f.message);
    let e = run(&t, at, &[], std::slice::from_ref(&inst), &[], &[live(0)]);
    assert_eq!(e.findings.iter().find(|f| f.instance_id == 6).map(|f| f.kind), Some(FindingKind::AtCapacity));
    assert_eq!(e.workers, WorkersNow { sessions: 1, serving: 1, capacity: 4, free_credits: 0 });
    let e = run(&t, at, &[], &[inst], &[], &[live(2)]);
    assert_eq!(e.findings.iter().find(|f| f.instance_id == 6).map(|f| f.kind), Some(FindingKind::Waiting));
}

#[test]
fn a_misfired_task_reports_the_decision_and_the_fires_it_skipped() {
    let t = task(true);
    // axd was down from 10:00 to 10:05; on its return it skipped the missed fires.
    let decided = secs(300);
    let events = [task_event(
        decided,
        TaskEventKind::MisfireSkipped,
        "axd-1",
        "skipped 5 missed fires from 2026-01-01T10:00:00Z to 2026-01-01T10:04:00Z",
    )];
    let before = succeeded(3, sub(t0(), Duration::from_secs(60)), 0, "w-1");
    let after = succeeded(4, decided, 0, "w-1");
    let e = run(&t, secs(310), &events, &[after, before], &[], &[]);
    assert!(kinds(&e).contains(&FindingKind::MisfireSkipped), "{e:#?}");
    let missing: Vec<&Finding> = e.findings.iter().filter(|f| f.kind == FindingKind::NoInstance).collect();
    assert_eq!(missing.len(), 5, "{e:#?}");
    assert!(missing.iter().all(|f| f.message.contains("missed: skipped 5 missed fires")), "{missing:#?}");
    assert_eq!(missing.last().and_then(|f| f.at), Some(t0()));
}

#[test]
fn a_fire_without_instance_names_the_decision_whose_skipped_fires_hold_it() {
    let t = task(true);
    let minute = |m: u64| secs(60 * m);
    let skipped = |at, first, last, count, message: &str| TaskEvent {
        fires: Some(FireSpan { first, last, count }),
        ..task_event(at, TaskEventKind::MisfireSkipped, "axd-1", message)
    };
    // Two outages: the fires of 10:00-10:01 skipped at 10:02:10, those of 10:02-10:04 at 10:05.
    // The first decision comes after 10:02 too, but only the second one skipped it.
    let events = [
        skipped(minute(5), minute(2), minute(4), 3, "second outage"),
        skipped(add(minute(2), Duration::from_secs(10)), minute(0), minute(1), 2, "first outage"),
    ];
    let before = succeeded(3, sub(t0(), Duration::from_secs(60)), 0, "w-1");
    let after = succeeded(4, minute(5), 0, "w-1");
    let e = run(&t, add(minute(5), Duration::from_secs(10)), &events, &[after, before], &[], &[]);
    let missing = |at: Ts| {
        let f = e.findings.iter().find(|f| f.kind == FindingKind::NoInstance && f.at == Some(at));
        f.unwrap_or_else(|| panic!("no finding for {at}: {e:#?}")).message.clone()
    };
    assert!(missing(minute(1)).contains("missed: first outage"), "{e:#?}");
    assert!(missing(minute(2)).contains("missed: second outage"), "{e:#?}");
    // The decision's own finding carries the fires it skipped.
    let decisions: Vec<Option<FireSpan>> =
        e.findings.iter().filter(|f| f.kind == FindingKind::MisfireSkipped).map(|f| f.fires).collect();
    assert!(decisions.contains(&Some(FireSpan { first: minute(2), last: minute(4), count: 3 })), "{decisions:?}");
}

#[test]
fn a_failing_task_lists_each_failed_attempt_with_worker_and_duration() {
    let t = task(true);
    let fire = t0();
    let mut i = instance(9, fire, InstanceStatus::Failed);
    i.attempt = 2;
    i.failures = 2;
    i.message = "handler failed: boom (all 1 retries used)".into();
    i.finished_at = Some(secs(8));
    let trail = vec![
        ev(fire, None, InstanceStatus::Pending, 0, "", "fired"),
        ev(fire, Some(InstanceStatus::Pending), InstanceStatus::Dispatched, 1, "w-1", "assigned"),
        ev(secs(1), Some(InstanceStatus::Dispatched), InstanceStatus::Running, 1, "w-1", "accepted"),
        ev(secs(3), Some(InstanceStatus::Running), InstanceStatus::Failed, 1, "w-1", "handler failed: boom"),
        ev(secs(3), Some(InstanceStatus::Failed), InstanceStatus::Pending, 1, "", "retry 1/1 in 1s"),
        ev(secs(4), Some(InstanceStatus::Pending), InstanceStatus::Dispatched, 2, "w-2", "assigned"),
        ev(secs(4), Some(InstanceStatus::Dispatched), InstanceStatus::Running, 2, "w-2", "accepted"),
        ev(
            secs(8),
            Some(InstanceStatus::Running),
            InstanceStatus::Failed,
            2,
            "w-2",
            "handler failed: boom (all 1 retries used)",
        ),
    ];
    let e = run(&t, secs(10), &[], &[(i, trail)], &[], &[]);
    let failed: Vec<&Finding> = e.findings.iter().filter(|f| f.kind == FindingKind::AttemptFailed).collect();
    assert_eq!(failed.len(), 2, "{e:#?}");
    assert!(
        failed[0].message.contains("attempt 1 on worker w-1 after 2s: handler failed: boom"),
        "{}",
        failed[0].message
    );
    assert!(failed[1].message.contains("attempt 2 on worker w-2 after 4s"), "{}", failed[1].message);
    assert!(kinds(&e).contains(&FindingKind::Failed));
    assert!(!kinds(&e).contains(&FindingKind::Ok));
    let a = &e.recent[0].attempts;
    assert_eq!(a.len(), 2);
    assert_eq!(
        (a[0].started_at, a[0].ended_at, a[0].outcome),
        (Some(secs(1)), Some(secs(3)), Some(InstanceStatus::Failed))
    );
    assert_eq!((a[1].worker_id.as_str(), a[1].dispatched_at), ("w-2", secs(4)));
}

#[test]
fn on_time_successes_are_ok_and_a_manual_schedule_says_so() {
    let t = task(true);
    let recent = [succeeded(2, t0(), 0, "w-1"), succeeded(1, sub(t0(), Duration::from_secs(60)), 0, "w-1")];
    let e = run(&t, add(t0(), Duration::from_secs(5)), &[], &recent, &[], &[]);
    assert_eq!(kinds(&e), vec![FindingKind::Ok], "{e:#?}");
    let mut m = task(true);
    m.config.schedule = Schedule::Manual;
    m.next_fire_at = None;
    let e = run(&m, t0(), &[], &[], &[], &[]);
    assert_eq!(kinds(&e), vec![FindingKind::Manual, FindingKind::Ok]);
    assert!(e.next_fires.is_empty());
}

#[test]
fn attempts_end_at_the_first_event_out_of_the_held_states() {
    let trail = [
        ev(t0(), None, InstanceStatus::Pending, 0, "", "triggered"),
        ev(secs(1), Some(InstanceStatus::Pending), InstanceStatus::Dispatched, 1, "w-1", "assigned"),
        ev(secs(11), Some(InstanceStatus::Dispatched), InstanceStatus::Pending, 1, "w-1", "ack timeout"),
        ev(secs(12), Some(InstanceStatus::Pending), InstanceStatus::Dispatched, 2, "w-2", "assigned"),
        ev(secs(12), Some(InstanceStatus::Dispatched), InstanceStatus::Running, 2, "w-2", "accepted"),
        ev(secs(13), Some(InstanceStatus::Running), InstanceStatus::Running, 2, "w-2", "re-announced"),
    ];
    let a = attempts(&trail);
    assert_eq!(a.len(), 2);
    assert_eq!(
        (a[0].outcome, a[0].ended_at, a[0].reason.as_str()),
        (Some(InstanceStatus::Pending), Some(secs(11)), "ack timeout")
    );
    assert_eq!((a[1].started_at, a[1].outcome), (Some(secs(12)), None));
}

/// A PENDING instance of the task, due at `fire` and never dispatched.
fn pending(id: i64, fire: Ts) -> (Instance, Vec<InstanceEvent>) {
    (instance(id, fire, InstanceStatus::Pending), vec![ev(fire, None, InstanceStatus::Pending, 0, "", "fired")])
}

fn labeled(worker: &str, labels: &[(&str, &str)]) -> WorkerRecord {
    let mut w = live(4);
    w.worker_id = worker.into();
    w.session_id = format!("s-{worker}");
    w.labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    w
}

fn run_limited(
    task: &Task,
    at: Ts,
    instances: &[(Instance, Vec<InstanceEvent>)],
    live: &[WorkerRecord],
    limits: Limits<'_>,
) -> Explanation {
    let calendar = Default::default();
    explain(&Inputs {
        task,
        at,
        now: at,
        limit: 10,
        events: &[],
        instances,
        sessions: &[],
        live,
        fired: &[],
        limits,
        calendar: &calendar,
    })
}

#[test]
fn a_waiting_instance_names_the_selector_that_found_no_worker() {
    let mut t = task(true);
    t.config.placement.selector = "gpu=true".into();
    let (mut i, trail) = pending(5, secs(0));
    i.route.selector = "gpu=true".into();
    let e = run_limited(&t, secs(30), &[(i, trail)], &[labeled("cpu-1", &[("zone", "a")])], Limits::default());
    let f = e.findings.iter().find(|f| f.instance_id == 5).expect("finding");
    assert_eq!(f.kind, FindingKind::SelectorUnmatched, "{e:#?}");
    assert!(
        f.message.contains("no connected worker matches selector gpu=true (workers serving invoice: cpu-1{zone=a})"),
        "{}",
        f.message
    );
    // In the past: the session history's labels decide.
    let (mut done, mut trail) = succeeded(6, secs(0), 20, "gpu-1");
    done.route.selector = "gpu=true".into();
    trail.truncate(trail.len());
    let mut cpu = span("cpu-1", sub(secs(0), Duration::from_secs(60)), None);
    cpu.labels = [("zone".to_owned(), "a".to_owned())].into();
    let e = run(&t, secs(60), &[], &[(done, trail)], &[cpu], &[]);
    let f = e.findings.iter().find(|f| f.instance_id == 6).expect("finding");
    assert_eq!(f.kind, FindingKind::SelectorUnmatched, "{e:#?}");
    assert!(f.message.contains("no connected worker matched selector gpu=true when it was due"), "{}", f.message);
}

/// Worker w-live cooling down for handler invoice from 30 s to 90 s, after 5 failures.
fn cooling_live() -> WorkerStreak {
    WorkerStreak {
        app: "billing".into(),
        worker_id: "w-live".into(),
        handler: "invoice".into(),
        failures: 5,
        cooldown_until: Some(secs(90)),
        cooldown: Some(Duration::from_secs(60)),
    }
}

#[test]
fn a_cooldown_the_floor_does_not_apply_is_named_as_such() {
    let t = task(true);
    let streaks = [cooling_live()];
    // The only worker serving the handler: 50 % of one may not cool, so it keeps getting work.
    let limits = Limits { streaks: &streaks, app_limit: None, active: 0, cooldown_max_share: 50, ..Limits::default() };
    let e = run_limited(&t, secs(45), &[pending(7, secs(0))], &[live(4)], limits);
    let standing = e.findings.iter().find(|f| f.kind == FindingKind::Cooldown && f.instance_id == 0).expect("standing");
    assert!(
        standing.message.starts_with("every worker failing handler invoice: cooldown not applied to w-live"),
        "{}",
        standing.message
    );
    assert!(
        !e.findings.iter().any(|f| f.instance_id == 7 && f.kind == FindingKind::Cooldown),
        "the instance does not wait for a cooldown that is not applied: {e:#?}"
    );
}

#[test]
fn cooldowns_limits_and_coalesced_fires_are_named() {
    let mut t = task(true);
    let streaks = [cooling_live()];
    let limits = Limits { streaks: &streaks, app_limit: None, active: 0, cooldown_max_share: 100, ..Limits::default() };
    let e = run_limited(&t, secs(45), &[pending(7, secs(0))], &[live(4)], limits);
    assert!(kinds(&e).contains(&FindingKind::Cooldown), "{e:#?}");
    let f = e.findings.iter().find(|f| f.instance_id == 7).expect("finding");
    assert_eq!(f.kind, FindingKind::Cooldown);
    assert!(f.message.contains("w-live until 2026-01-01T10:01:30.000Z"), "{}", f.message);
    let standing = e.findings.iter().find(|f| f.kind == FindingKind::Cooldown && f.instance_id == 0).expect("standing");
    assert!(standing.message.contains("after 5 consecutive failure(s)"), "{}", standing.message);
    assert_eq!(standing.at, Some(secs(30)), "it began 60 s before it ends");
    // After it ends, the worker is not named.
    let e = run_limited(&t, secs(100), &[pending(7, secs(0))], &[live(4)], limits);
    assert!(!kinds(&e).contains(&FindingKind::Cooldown), "{e:#?}");

    t.config.placement.max_running = std::num::NonZeroU32::new(2);
    let e = run_limited(&t, secs(45), &[pending(8, secs(0))], &[live(4)], Limits { active: 2, ..Limits::default() });
    let f = e.findings.iter().find(|f| f.instance_id == 8).expect("finding");
    assert_eq!(f.kind, FindingKind::MaxRunning, "{e:#?}");

    let limit = AppLimit {
        app: "billing".into(),
        per_second: 0.5,
        burst: 1,
        tokens: 0.0,
        refilled_at: secs(44),
        updated_by: "alice".into(),
        updated_at: t0(),
    };
    t.config.placement.max_running = None;
    let e = run_limited(
        &t,
        secs(45),
        &[pending(9, secs(0))],
        &[live(4)],
        Limits { app_limit: Some(&limit), ..Limits::default() },
    );
    let f = e.findings.iter().find(|f| f.instance_id == 9).expect("finding");
    assert_eq!(f.kind, FindingKind::RateLimited, "{e:#?}");
    assert!(kinds(&e).iter().filter(|k| **k == FindingKind::RateLimited).count() == 2, "standing and per instance");

    t.coalesced = Some((secs(10), 3));
    let e = run_limited(&t, secs(45), &[], &[live(4)], Limits::default());
    let f = e.findings.iter().find(|f| f.kind == FindingKind::Coalesced).expect("coalesced");
    assert!(f.message.contains("3 scheduled fire(s) were not created"), "{}", f.message);
    let missing = e.findings.iter().find(|f| f.kind == FindingKind::NoInstance && f.at == Some(secs(0)));
    assert!(missing.is_none_or(|m| !m.message.contains("coalesced")), "the fire before the run is not coalesced");
}

fn ago(s: u64) -> Ts {
    sub(t0(), Duration::from_secs(s))
}

#[test]
fn a_paused_task_names_who_paused_it_why_and_until_when_and_its_missing_fires_say_so() {
    let mut t = task(true);
    t.pause = Some(crate::model::Pause {
        at: ago(600),
        by: "spiffe://ax/admin/alice".into(),
        note: "db migration".into(),
        until: Some(secs(3600)),
    });
    let e = run(&t, t0(), &[], &[], &[], &[]);
    let paused = e.findings.iter().find(|f| f.kind == FindingKind::Paused).expect("paused finding");
    assert!(paused.message.contains("alice") && paused.message.contains("db migration"), "{}", paused.message);
    assert!(paused.message.contains(&rfc(secs(3600))), "{}", paused.message);
    let missing = e.findings.iter().find(|f| f.kind == FindingKind::NoInstance).expect("a fire without instance");
    assert!(missing.message.contains("paused then"), "{}", missing.message);
}

#[test]
fn fires_on_excluded_dates_and_outside_the_window_are_named() {
    let mut t = task(true);
    let today = t0().date_naive();
    t.config.timing.exclude_dates = [today].into();
    t.config.timing.end = Some(ago(1800));
    let e = run(&t, t0(), &[], &[], &[], &[]);
    let excluded = e.findings.iter().find(|f| f.kind == FindingKind::ExcludedDate).expect("excluded");
    assert!(
        excluded.message.contains(&today.to_string()) && excluded.message.contains("--exclude"),
        "{}",
        excluded.message
    );
    let window = e.findings.iter().find(|f| f.kind == FindingKind::OutsideWindow).expect("window");
    assert!(window.message.contains("closed"), "{}", window.message);
    assert!(!e.findings.iter().any(|f| f.kind == FindingKind::NoInstance), "skipped fires are not missing");
    let mut cal = task(true);
    cal.config.timing.calendar = Some("holidays".into());
    let dates = [today].into();
    let e = explain(&Inputs {
        task: &cal,
        at: t0(),
        now: t0(),
        limit: 10,
        events: &[],
        instances: &[],
        sessions: &[],
        live: &[],
        fired: &[],
        limits: Limits::default(),
        calendar: &dates,
    });
    let excluded = e.findings.iter().find(|f| f.kind == FindingKind::ExcludedDate).expect("excluded");
    assert!(excluded.message.contains("calendar holidays"), "{}", excluded.message);
}

#[test]
fn overlap_decisions_on_trails_are_named() {
    let t = task(true);
    let mut waiting = instance(5, ago(5), InstanceStatus::Pending);
    waiting.available_at = ago(5);
    let created = InstanceEvent {
        id: 1,
        instance_id: 5,
        at: ago(5),
        from: None,
        to: InstanceStatus::Pending,
        attempt: 0,
        scheduler_id: "axd".into(),
        worker_id: String::new(),
        reason: "fired on schedule for x; buffered (BUFFER_ONE): starts when instance 4 ends".into(),
    };
    let mut canceled = instance(4, ago(65), InstanceStatus::Canceled);
    canceled.message = "canceled by concurrency CANCEL_OTHER: the fire at x of the same task replaces it".into();
    let e = run(&t, t0(), &[], &[(waiting, vec![created]), (canceled, vec![])], &[], &[]);
    let b = e.findings.iter().find(|f| f.kind == FindingKind::Buffered).expect("buffered");
    assert!(b.message.contains("starts when instance 4 ends"), "{}", b.message);
    let c = e.findings.iter().find(|f| f.kind == FindingKind::CanceledByFire).expect("canceled by fire");
    assert_eq!(c.instance_id, 4);
    assert!(!e.findings.iter().any(|f| f.kind == FindingKind::Canceled), "not reported as an operator's cancel");
}

#[test]
fn deadlines_judge_every_fire_by_its_instance_and_name_what_it_did_instead() {
    // Fires every minute; 30 s to succeed. Judged at t0 + 5 min: fires t0 .. t0 + 4m30s are due.
    let mut t = task(true);
    t.config.flow.must_finish_within = Some(Duration::from_secs(30));
    let on_time = succeeded(1, secs(0), 5, "w1").0;
    let late = succeeded(2, secs(60), 40, "w1").0;
    let mut failed = instance(3, secs(120), InstanceStatus::Failed);
    failed.finished_at = Some(secs(130));
    let mut running = instance(4, secs(180), InstanceStatus::Running);
    running.attempt = 2;
    // No instance for the fire at t0 + 4 min; a trigger at t0 + 4m10s still waits.
    let mut manual = instance(5, secs(250), InstanceStatus::Pending);
    manual.source = InstanceSource::Manual;
    let all = [on_time, late, failed, running, manual];
    let misses = deadline::missed(&t, &Default::default(), t.created_at, &all, ago(1), secs(600), secs(300));
    let got: Vec<(Ts, Option<i64>)> = misses.iter().map(|m| (m.fire, m.instance)).collect();
    assert_eq!(
        got,
        [(secs(60), Some(2)), (secs(120), Some(3)), (secs(180), Some(4)), (secs(240), None), (secs(250), Some(5))],
        "{misses:#?}"
    );
    assert!(
        misses[0].what.contains("succeeded at") && misses[0].what.contains("11s after its deadline"),
        "{}",
        misses[0].what
    );
    assert!(misses[1].what.contains("ended FAILED at"), "{}", misses[1].what);
    assert!(misses[2].what.contains("still RUNNING (attempt 2)"), "{}", misses[2].what);
    assert!(misses[3].what.contains("made no instance"), "{}", misses[3].what);
    assert!(misses[4].what.contains("waiting to be dispatched"), "{}", misses[4].what);
    assert_eq!(misses[0].deadline, secs(90));
    // The fire at t0 + 5 min is not due until t0 + 5m30s; fires up to `after` were judged before.
    assert!(deadline::missed(&t, &Default::default(), t.created_at, &all, secs(240), secs(600), secs(300)).len() == 1);
    // Paused since t0 + 2 min: its fires are owed nothing; a disabled task's schedule neither.
    t.pause = Some(crate::model::Pause { at: secs(120), by: "a".into(), note: String::new(), until: None });
    let paused = deadline::missed(&t, &Default::default(), t.created_at, &[], ago(1), secs(600), secs(300));
    assert_eq!(paused.iter().map(|m| m.fire).collect::<Vec<_>>(), [secs(0), secs(60)]);
    t.pause = None;
    t.config.enabled = false;
    assert!(deadline::missed(&t, &Default::default(), t.created_at, &[], ago(1), secs(600), secs(300)).is_empty());
    // Fires before the task's last change are not owed; without a deadline nothing is judged.
    t.config.enabled = true;
    let since = deadline::owed_since(&t, &[task_event(secs(150), TaskEventKind::Updated, "a", "updated")]);
    let after_change = deadline::missed(&t, &Default::default(), since, &[], ago(1), secs(600), secs(300));
    assert_eq!(after_change.iter().map(|m| m.fire).collect::<Vec<_>>(), [secs(180), secs(240)]);
    t.config.flow.must_finish_within = None;
    assert!(deadline::missed(&t, &Default::default(), t.created_at, &all, ago(1), secs(600), secs(300)).is_empty());
}

#[test]
fn explain_reports_a_missed_deadline_with_its_instance() {
    let mut t = task(true);
    t.config.flow.must_finish_within = Some(Duration::from_secs(30));
    let mut stuck = pending(7, secs(0));
    stuck.0.status = InstanceStatus::Running;
    let e = run(&t, secs(45), &[], &[stuck], &[], &[]);
    let f = e.findings.iter().find(|f| f.kind == FindingKind::DeadlineMissed).expect("a DEADLINE_MISSED finding");
    assert_eq!((f.instance_id, f.at), (7, Some(secs(30))));
    assert!(f.message.contains("missed its deadline of 30s") && f.message.contains("still RUNNING"), "{}", f.message);
}
