//! The store contract, written once and run on SQLite, PostgreSQL and MySQL/MariaDB.

use std::{
    collections::{BTreeMap, HashMap},
    num::NonZeroU32,
    sync::Arc,
    time::Duration,
};

use ax_scheduler::{
    error::StoreError,
    lifecycle::{AttemptEnd, Completion, WorkerOp, WorkerOpOutcome},
    loops::{
        dispatch::{Skips, claim},
        sweeper::{purge_dead_schedulers, purge_finished},
        trigger::{EnginePlanner, TriggerRound, trigger_due, trigger_manual},
    },
    model::{
        Backoff, ConcurrencyPolicy, CronDialect, InstanceSource, InstanceStatus, MisfirePolicy, RetryPolicy, Routing,
        Schedule, SchedulerRecord, TaskConfig, TaskEventKind, Ts, add,
    },
    routing::RoutingState,
    routing::registry::{AppDemand, SessionRef},
    schedule::Compiled,
    store::{Actor, InstanceFilter, ManualTrigger, NewTask, Store, TaskUpdate},
    traces::Traces,
    transitions::{
        CancelOutcome, DeleteOutcome, RetryOutcome, apply_worker_ops, cancel_instance, delete_task, retry_instance,
    },
};
use ax_tests::{Db, TestDb, on_every_backend};
use chrono::{TimeZone, Utc};

const ACTOR: Actor<'static> = Actor { scheduler_id: "axd-test", caller: "spiffe://ax/admin/test" };

fn t0() -> Ts {
    Utc.with_ymd_and_hms(2026, 6, 1, 10, 0, 0).single().expect("instant")
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

pub(crate) fn config(schedule: Schedule) -> TaskConfig {
    TaskConfig {
        app: "billing".into(),
        handler: "send-invoice".into(),
        description: "monthly invoices".into(),
        schedule,
        params: r#"{"batch": 10}"#.into(),
        enabled: true,
        misfire_policy: MisfirePolicy::FireOnce,
        misfire_threshold: secs(60),
        max_catch_up: NonZeroU32::new(10).expect("nonzero"),
        concurrency: ConcurrencyPolicy::Allow,
        routing: Routing::LeastLoaded,
        timeout: Some(secs(30)),
        retry: RetryPolicy { max_retries: 2, backoff: Backoff::List { delays_us: vec![10_000_000, 60_000_000] } },
        labels: BTreeMap::from([("team".to_owned(), "payments".to_owned())]),
        placement: Default::default(),
        timing: Default::default(),
        flow: Default::default(),
    }
}

pub(crate) fn every_second() -> Schedule {
    Schedule::Cron { expression: "* * * * * *".into(), time_zone: "UTC".into(), dialect: CronDialect::Unix }
}

/// A manual trigger by alice with `{}` as params and this idempotency key.
fn keyed(key: impl Into<String>) -> ManualTrigger {
    ManualTrigger { params: "{}".into(), key: key.into(), actor: "alice".into(), run_at: None, tags: Vec::new() }
}

pub(crate) async fn create(store: &Arc<Store>, name: &str, c: TaskConfig, now: Ts) -> ax_scheduler::model::Task {
    let next = if c.enabled { Compiled::compile(&c.schedule).expect("compile").first_fire(now) } else { None };
    store.create_task(&NewTask { name: name.into(), config: c, next_fire_at: next }, now, &ACTOR).await.expect("create")
}

pub(crate) async fn trigger(store: &Arc<Store>, now: Ts, lookahead: Duration) -> TriggerRound {
    let planner = EnginePlanner { now, lookahead };
    trigger_due(store, now, add(now, lookahead), 500, &planner, "axd-test", &Traces::off()).await.expect("trigger")
}

async fn migrations_are_idempotent_and_safe_to_run_concurrently(db: &TestDb) {
    let (a, b) = tokio::join!(db.store_with(2), db.store_with(2));
    a.migrate().await.expect("again");
    b.migrate().await.expect("again");
    assert!(a.list_tasks(None, None, 10).await.expect("list").is_empty());
}

async fn task_round_trips_every_field(db: &TestDb) {
    let store = db.store().await;
    let schedules = [
        Schedule::Cron {
            expression: "0 0 2 ? * 2".into(),
            time_zone: "Asia/Shanghai".into(),
            dialect: CronDialect::Quartz,
        },
        Schedule::FixedRate { interval: Duration::from_micros(1_500_001), start_at: t0() },
        Schedule::FixedDelay { interval: secs(90), start_at: add(t0(), secs(5)) },
        Schedule::OneTime { at: add(t0(), secs(3600)) },
        Schedule::Manual,
    ];
    for (i, s) in schedules.into_iter().enumerate() {
        let mut c = config(s);
        c.timeout = if i % 2 == 0 { None } else { Some(secs(7)) };
        c.retry.backoff = if i % 2 == 0 { Backoff::default() } else { c.retry.backoff.clone() };
        let name = format!("task-{i}");
        let created = create(&store, &name, c.clone(), t0()).await;
        assert_eq!(created.config, c, "{name}");
        assert_eq!(created.version, 1);
        assert_eq!(created.created_at, t0());
        let read = store.get_task(&name).await.expect("get").expect("exists");
        assert_eq!(read, created);
    }
    assert_eq!(store.get_task("task-4").await.expect("get").expect("manual").next_fire_at, None);
    let events = store.task_events(store.get_task("task-0").await.unwrap().unwrap().id, 10).await.expect("events");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, TaskEventKind::Created);
    assert_eq!(events[0].actor, "spiffe://ax/admin/test");
}

/// The default backoff as every axd before migration 18 stored it.
const DEFAULT_BACKOFF_JSON: &str =
    r#"{"exponential":{"initial_us":10000000,"multiplier":2.0,"max_us":300000000,"jitter":0.1}}"#;

async fn the_default_backoff_is_stored_empty_and_reads_the_same_in_either_form(db: &TestDb) {
    let store = db.store().await;
    let mut c = config(every_second());
    c.retry.backoff = Backoff::default();
    create(&store, "bo-default", c, t0()).await;
    create(&store, "bo-list", config(every_second()), t0()).await;
    assert_eq!(trigger(&store, add(t0(), secs(1)), secs(0)).await.created.len(), 2);
    let count = |sql: String| async move { db.scalar(&sql).await };
    let stored = |table: &str, task: &str, form: &str| {
        let column = if table == "ax_task" { "name" } else { "task_name" };
        format!("SELECT COUNT(*) FROM {table} WHERE {column} = '{task}' AND backoff {form}")
    };
    // The default is '' in the task and in its instance; another backoff is JSON in both.
    for table in ["ax_task", "ax_instance"] {
        assert_eq!(count(stored(table, "bo-default", "= ''")).await, 1, "{table}");
        assert_eq!(count(stored(table, "bo-list", "LIKE '{%'")).await, 1, "{table}");
    }
    // Rows written before migration 18 hold the default as JSON: they read the same.
    let old = DEFAULT_BACKOFF_JSON;
    db.execute(&format!("UPDATE ax_instance SET backoff = '{old}' WHERE task_name = 'bo-default'")).await;
    db.execute(&format!("UPDATE ax_task SET backoff = '{old}' WHERE name = 'bo-default'")).await;
    let task = store.get_task("bo-default").await.expect("get").expect("task");
    assert_eq!(task.config.retry.backoff, Backoff::default());
    let filter = InstanceFilter { task_name: Some("bo-default".into()), limit: 10, ..Default::default() };
    let instances = store.list_instances(&filter).await.expect("list");
    assert_eq!(instances.len(), 1);
    assert_eq!(instances[0].backoff, Backoff::default());
    // Migration 18 rewrites exactly that text on this backend (its quoting included), and
    // nothing else.
    let migration = match db.db {
        ax_tests::Db::Sqlite => include_str!("../../../migrations/sqlite/0018_default_backoff.sql"),
        ax_tests::Db::Postgres => include_str!("../../../migrations/postgres/0018_default_backoff.sql"),
        ax_tests::Db::MySql => include_str!("../../../migrations/mysql/0018_default_backoff.sql"),
    };
    assert_eq!(db.execute(migration).await, 1);
    assert_eq!(count(stored("ax_task", "bo-default", "= ''")).await, 1);
    assert_eq!(count(stored("ax_task", "bo-list", "LIKE '{%'")).await, 1);
}

async fn duplicate_task_name_is_a_unique_violation_and_changes_nothing(db: &TestDb) {
    let store = db.store().await;
    let first = create(&store, "dup", config(every_second()), t0()).await;
    let mut c = config(Schedule::Manual);
    c.app = "other".into();
    let err = store
        .create_task(&NewTask { name: "dup".into(), config: c, next_fire_at: None }, t0(), &ACTOR)
        .await
        .expect_err("duplicate");
    assert!(matches!(err, StoreError::UniqueViolation(_)), "{err:?}");
    assert_eq!(store.get_task("dup").await.expect("get").expect("kept"), first);
    assert_eq!(store.list_tasks(None, None, 10).await.expect("list").len(), 1);
}

async fn update_applies_only_to_the_version_it_read(db: &TestDb) {
    let store = db.store().await;
    let t = create(&store, "u", config(every_second()), t0()).await;
    let mut c = t.config.clone();
    c.description = "changed".into();
    c.enabled = false;
    let update = TaskUpdate {
        id: t.id,
        expected_version: t.version,
        config: c.clone(),
        next_fire_at: Some(None),
        event: (TaskEventKind::Disabled, "disabled".into()),
    };
    let later = add(t0(), secs(5));
    let after = store.update_task(&update, later, &ACTOR).await.expect("update").expect("applied");
    assert_eq!(after.version, 2);
    assert_eq!(after.config, c);
    assert_eq!(after.next_fire_at, None);
    assert_eq!(after.updated_at, later);
    // The same update again is stale: version 1 is gone.
    assert!(store.update_task(&update, later, &ACTOR).await.expect("update").is_none());
    // Keeping the next fire time.
    let keep = TaskUpdate { expected_version: 2, next_fire_at: None, ..update.clone() };
    assert_eq!(store.update_task(&keep, later, &ACTOR).await.expect("u").expect("applied").next_fire_at, None);
    let kinds: Vec<_> = store.task_events(t.id, 10).await.expect("ev").into_iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![TaskEventKind::Disabled, TaskEventKind::Disabled, TaskEventKind::Created]);
}

async fn list_tasks_pages_by_name_and_filters_by_app(db: &TestDb) {
    let store = db.store().await;
    for n in ["c", "a", "b", "d"] {
        let mut c = config(Schedule::Manual);
        if n == "d" {
            c.app = "ops".into();
        }
        create(&store, n, c, t0()).await;
    }
    let names = |v: Vec<ax_scheduler::model::Task>| v.into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(names(store.list_tasks(None, None, 2).await.expect("l")), ["a", "b"]);
    assert_eq!(names(store.list_tasks(None, Some("b"), 2).await.expect("l")), ["c", "d"]);
    assert_eq!(names(store.list_tasks(Some(&["ops".to_owned()]), None, 10).await.expect("l")), ["d"]);
    // App scopes: several apps, pages within them, and an empty scope that sees nothing.
    let scope = [config(Schedule::Manual).app, "ops".to_owned(), "none".to_owned()];
    assert_eq!(names(store.list_tasks(Some(&scope), Some("b"), 10).await.expect("l")), ["c", "d"]);
    assert!(store.list_tasks(Some(&[]), None, 10).await.expect("l").is_empty());
}

async fn trigger_creates_one_instance_per_fire_and_advances_the_schedule(db: &TestDb) {
    let store = db.store().await;
    let t = create(&store, "sec", config(every_second()), t0()).await;
    assert_eq!(t.next_fire_at, Some(add(t0(), secs(1))));
    let now = add(t0(), secs(1));
    let round = trigger(&store, now, secs(2)).await;
    assert_eq!(round.tasks, 1);
    assert_eq!(round.created.len(), 3, "fires at +1, +2, +3 s are within the look-ahead");
    assert!(round.created.iter().all(|(_, app, _)| app == "billing"));
    // Running the same round again creates nothing new.
    let again = trigger(&store, now, secs(2)).await;
    assert_eq!(again.tasks, 0);
    assert_eq!(store.get_task("sec").await.unwrap().unwrap().next_fire_at, Some(add(t0(), secs(4))));
    let list = store
        .list_instances(&InstanceFilter { task_name: Some("sec".into()), limit: 10, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(list.len(), 3);
    let newest = &list[0];
    assert_eq!(newest.fire_at, add(t0(), secs(3)));
    assert_eq!(newest.available_at, newest.fire_at, "dispatch waits for the exact fire time");
    assert_eq!(newest.idempotency_key, "fire:2026-06-01T10:00:03Z");
    assert_eq!(newest.status, InstanceStatus::Pending);
    assert_eq!(newest.source, InstanceSource::Schedule);
    assert_eq!((newest.max_retries, newest.timeout, newest.routing), (2, Some(secs(30)), Routing::LeastLoaded));
    assert_eq!(newest.params, r#"{"batch": 10}"#);
    let events = store.instance_events(newest.id).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!((events[0].from, events[0].to), (None, InstanceStatus::Pending));
    assert!(events[0].reason.contains("fired on schedule"), "{}", events[0].reason);
    assert_eq!(events[0].scheduler_id, "axd-test");
}

async fn a_rescheduled_fire_that_already_has_an_instance_is_not_duplicated(db: &TestDb) {
    let store = db.store().await;
    let t = create(&store, "resched", config(every_second()), t0()).await;
    let now = add(t0(), secs(1));
    assert_eq!(trigger(&store, now, secs(2)).await.created.len(), 3);
    // An update moves the next fire back to +2 s (e.g. the schedule was re-applied).
    let u = TaskUpdate {
        id: t.id,
        expected_version: 1,
        config: t.config.clone(),
        next_fire_at: Some(Some(add(t0(), secs(2)))),
        event: (TaskEventKind::Updated, "re-applied".into()),
    };
    store.update_task(&u, now, &ACTOR).await.unwrap().unwrap();
    let round = trigger(&store, now, secs(4)).await;
    assert_eq!(round.created.len(), 2, "only +4 and +5 are new; +2 and +3 exist");
    assert_eq!(store.list_instances(&InstanceFilter { limit: 100, ..Default::default() }).await.unwrap().len(), 5);
}

async fn manual_trigger_with_the_same_key_creates_one_instance(db: &TestDb) {
    let store = db.store().await;
    let t = create(&store, "m", config(Schedule::Manual), t0()).await;
    let trig = ManualTrigger {
        params: r#"{"x":1}"#.into(),
        key: "order-42".into(),
        actor: "alice".into(),
        run_at: None,
        tags: Vec::new(),
    };
    let (a, created_a) = trigger_manual(&store, &t, &trig, t0(), "axd-test", &Traces::off()).await.expect("first");
    let (b, created_b) =
        trigger_manual(&store, &t, &trig, add(t0(), secs(1)), "axd-test", &Traces::off()).await.expect("second");
    assert!(created_a && !created_b);
    assert_eq!(a.id, b.id);
    assert_eq!(a.source, InstanceSource::Manual);
    assert_eq!(a.params, r#"{"x":1}"#);
    assert_eq!(a.fire_at, t0());
    let other = ManualTrigger { key: "order-43".into(), ..trig };
    let (c, created_c) = trigger_manual(&store, &t, &other, t0(), "axd-test", &Traces::off()).await.expect("third");
    assert!(created_c && c.id != a.id);
    let ev = store.instance_events(a.id).await.unwrap();
    assert_eq!(ev.len(), 1);
    assert!(ev[0].reason.contains("triggered by alice"));
}

async fn forbid_concurrency_records_a_skipped_instance(db: &TestDb) {
    let store = db.store().await;
    let mut c = config(every_second());
    c.concurrency = ConcurrencyPolicy::Forbid;
    create(&store, "forbid", c, t0()).await;
    // FORBID is decided at the fire time, never ahead of it.
    assert_eq!(trigger(&store, t0(), secs(2)).await.created.len(), 0);
    let r1 = trigger(&store, add(t0(), secs(1)), secs(2)).await;
    assert_eq!((r1.created.len(), r1.skipped), (1, 0));
    // The first instance is still PENDING at +2 s: the fire is recorded, not run.
    let r2 = trigger(&store, add(t0(), secs(2)), secs(2)).await;
    assert_eq!((r2.created.len(), r2.skipped), (0, 1));
    let skipped = store
        .list_instances(&InstanceFilter { status: Some(InstanceStatus::Skipped), limit: 10, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].finished_at.is_some());
    assert!(skipped[0].message.contains("still active"), "{}", skipped[0].message);
    // Once the first is finished (canceled here), the next fire runs.
    cancel_instance(&store, r1.created[0].0, "", add(t0(), secs(2)), &ACTOR, &RoutingState::default()).await.unwrap();
    let r3 = trigger(&store, add(t0(), secs(3)), secs(2)).await;
    assert_eq!((r3.created.len(), r3.skipped), (1, 0));
}

async fn cancel_and_retry_follow_the_state_rules(db: &TestDb) {
    let store = db.store().await;
    let t = create(&store, "cr", config(Schedule::Manual), t0()).await;
    let trig = keyed("k1");
    let (inst, _) = trigger_manual(&store, &t, &trig, t0(), "axd-test", &Traces::off()).await.unwrap();
    let CancelOutcome::Canceled(c) =
        cancel_instance(&store, inst.id, "not needed", add(t0(), secs(1)), &ACTOR, &RoutingState::default())
            .await
            .unwrap()
    else {
        panic!("expected cancel")
    };
    assert_eq!(c.status, InstanceStatus::Canceled);
    assert_eq!(c.finished_at, Some(add(t0(), secs(1))));
    assert!(c.message.contains("not needed"));
    assert!(matches!(
        cancel_instance(&store, inst.id, "", t0(), &ACTOR, &RoutingState::default()).await.unwrap(),
        CancelOutcome::AlreadyFinal(_)
    ));
    assert!(matches!(
        cancel_instance(&store, 999_999, "", t0(), &ACTOR, &RoutingState::default()).await.unwrap(),
        CancelOutcome::NotFound
    ));
    let RetryOutcome::Retried(r) =
        retry_instance(&store, inst.id, add(t0(), secs(2)), &ACTOR, &RoutingState::default()).await.unwrap()
    else {
        panic!("expected retry")
    };
    assert_eq!((r.status, r.available_at, r.finished_at), (InstanceStatus::Pending, add(t0(), secs(2)), None));
    assert!(matches!(
        retry_instance(&store, inst.id, t0(), &ACTOR, &RoutingState::default()).await.unwrap(),
        RetryOutcome::NotFinal(_)
    ));
    let trail: Vec<_> = store.instance_events(inst.id).await.unwrap().into_iter().map(|e| (e.from, e.to)).collect();
    assert_eq!(
        trail,
        vec![
            (None, InstanceStatus::Pending),
            (Some(InstanceStatus::Pending), InstanceStatus::Canceled),
            (Some(InstanceStatus::Canceled), InstanceStatus::Pending),
        ]
    );
}

async fn delete_task_cancels_pending_instances_and_keeps_history(db: &TestDb) {
    let store = db.store().await;
    create(&store, "del", config(every_second()), t0()).await;
    let round = trigger(&store, add(t0(), secs(1)), secs(1)).await;
    assert_eq!(round.created.len(), 2);
    assert_eq!(
        delete_task(&store, "del", add(t0(), secs(1)), &ACTOR, &RoutingState::default()).await.unwrap(),
        DeleteOutcome::Deleted(2)
    );
    assert!(store.get_task("del").await.unwrap().is_none());
    assert_eq!(
        delete_task(&store, "del", t0(), &ACTOR, &RoutingState::default()).await.unwrap(),
        DeleteOutcome::NotFound
    );
    let list = store
        .list_instances(&InstanceFilter { task_name: Some("del".into()), limit: 10, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(list.len(), 2);
    assert!(list.iter().all(|i| i.status == InstanceStatus::Canceled && i.message.contains("task deleted")));
    // The name can be used again.
    create(&store, "del", config(Schedule::Manual), t0()).await;
}

async fn fixed_delay_fires_again_only_after_completion(db: &TestDb) {
    let store = db.store().await;
    let c = config(Schedule::FixedDelay { interval: secs(30), start_at: add(t0(), secs(1)) });
    create(&store, "fd", c, t0()).await;
    let round = trigger(&store, add(t0(), secs(1)), secs(1)).await;
    assert_eq!(round.created.len(), 1);
    assert_eq!(store.get_task("fd").await.unwrap().unwrap().next_fire_at, None, "waits for completion");
    let finished_at = add(t0(), secs(12));
    cancel_instance(&store, round.created[0].0, "", finished_at, &ACTOR, &RoutingState::default()).await.unwrap();
    assert_eq!(store.get_task("fd").await.unwrap().unwrap().next_fire_at, Some(add(finished_at, secs(30))));
}

async fn instances_list_by_a_trigger_time_window_with_and_without_a_task(db: &TestDb) {
    let store = db.store().await;
    let t = create(&store, "window", config(Schedule::Manual), t0()).await;
    let mut ids = Vec::new();
    // Instances fired at t0, t0+10s, ..., t0+40s.
    for i in 0..5u64 {
        let trig = keyed(format!("w{i}"));
        let at = add(t0(), secs(10 * i));
        ids.push(trigger_manual(&store, &t, &trig, at, "axd-test", &Traces::off()).await.unwrap().0.id);
    }
    let window = |task: Option<&str>, since: Option<u64>, before: Option<u64>, limit: u32| InstanceFilter {
        task_name: task.map(str::to_owned),
        triggered_since: since.map(|s| add(t0(), secs(s))),
        triggered_before: before.map(|s| add(t0(), secs(s))),
        limit,
        ..Default::default()
    };
    for task in [None, Some("window")] {
        let got = |f: InstanceFilter| {
            let store = store.clone();
            async move { store.list_instances(&f).await.unwrap().iter().map(|i| i.id).collect::<Vec<_>>() }
        };
        // At or after the start, before the end: fires at 10, 20 and 30 s.
        assert_eq!(got(window(task, Some(10), Some(40), 10)).await, vec![ids[3], ids[2], ids[1]], "{task:?}");
        assert_eq!(got(window(task, Some(25), None, 10)).await, vec![ids[4], ids[3]], "{task:?}");
        assert_eq!(got(window(task, None, Some(10), 10)).await, vec![ids[0]], "{task:?}");
        // The limit counts matching rows only.
        assert_eq!(got(window(task, None, Some(40), 2)).await, vec![ids[3], ids[2]], "{task:?}");
        assert!(got(window(task, Some(41), None, 10)).await.is_empty(), "{task:?}");
    }
}

async fn instances_list_newest_first_with_filters_and_pages(db: &TestDb) {
    let store = db.store().await;
    let t = create(&store, "pages", config(Schedule::Manual), t0()).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let trig = keyed(format!("k{i}"));
        ids.push(trigger_manual(&store, &t, &trig, t0(), "axd-test", &Traces::off()).await.unwrap().0.id);
    }
    cancel_instance(&store, ids[1], "", t0(), &ACTOR, &RoutingState::default()).await.unwrap();
    let page1 = store.list_instances(&InstanceFilter { limit: 2, ..Default::default() }).await.unwrap();
    assert_eq!(page1.iter().map(|i| i.id).collect::<Vec<_>>(), vec![ids[4], ids[3]]);
    let page2 = store
        .list_instances(&InstanceFilter { limit: 2, before_id: Some(ids[3]), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(page2.iter().map(|i| i.id).collect::<Vec<_>>(), vec![ids[2], ids[1]]);
    let canceled = store
        .list_instances(&InstanceFilter { status: Some(InstanceStatus::Canceled), limit: 10, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(canceled.iter().map(|i| i.id).collect::<Vec<_>>(), vec![ids[1]]);
    // By task: another task's instances are not listed; status and pages apply within the task.
    let other = create(&store, "other", config(Schedule::Manual), t0()).await;
    let trig = keyed("k0");
    let foreign = trigger_manual(&store, &other, &trig, t0(), "axd-test", &Traces::off()).await.unwrap().0.id;
    let by_task = |name: &str, status: Option<InstanceStatus>, before_id: Option<i64>, limit: u32| InstanceFilter {
        task_name: Some(name.into()),
        status,
        before_id,
        limit,
        ..Default::default()
    };
    let ids_of = |v: Vec<ax_scheduler::model::Instance>| v.into_iter().map(|i| i.id).collect::<Vec<_>>();
    assert_eq!(
        ids_of(store.list_instances(&by_task("pages", None, None, 3)).await.unwrap()),
        vec![ids[4], ids[3], ids[2]]
    );
    assert_eq!(
        ids_of(store.list_instances(&by_task("pages", None, Some(ids[2]), 10)).await.unwrap()),
        vec![ids[1], ids[0]]
    );
    assert_eq!(
        ids_of(store.list_instances(&by_task("pages", Some(InstanceStatus::Pending), None, 10)).await.unwrap()),
        vec![ids[4], ids[3], ids[2], ids[0]]
    );
    assert_eq!(
        ids_of(store.list_instances(&by_task("pages", Some(InstanceStatus::Canceled), None, 10)).await.unwrap()),
        vec![ids[1]]
    );
    assert_eq!(ids_of(store.list_instances(&by_task("other", None, None, 10)).await.unwrap()), vec![foreign]);
    assert!(store.list_instances(&by_task("nope", None, None, 10)).await.unwrap().is_empty());
    // App scopes, with and without a task name (the two queries differ).
    let app = other.config.app.clone();
    let scoped = |task: Option<&str>, apps: Vec<String>| InstanceFilter {
        task_name: task.map(str::to_owned),
        apps: Some(apps),
        limit: 100,
        ..Default::default()
    };
    let mine = store.list_instances(&scoped(Some("pages"), vec![app.clone(), "x".into()])).await.unwrap();
    assert_eq!(ids_of(mine), vec![ids[4], ids[3], ids[2], ids[1], ids[0]]);
    assert!(store.list_instances(&scoped(Some("pages"), vec!["x".into()])).await.unwrap().is_empty());
    assert!(store.list_instances(&scoped(None, vec![])).await.unwrap().is_empty());
    assert!(store.list_instances(&scoped(None, vec![app])).await.unwrap().len() >= 6);
}

async fn racing_manual_triggers_with_one_key_create_one_instance(db: &TestDb) {
    let store = db.store().await;
    let t = create(&store, "race", config(Schedule::Manual), t0()).await;
    let mut joins = Vec::new();
    for i in 0..8 {
        let (store, t) = (store.clone(), t.clone());
        joins.push(tokio::spawn(async move {
            let trig = ManualTrigger {
                params: format!("{{\"n\":{i}}}"),
                key: "once".into(),
                actor: "a".into(),
                run_at: None,
                tags: Vec::new(),
            };
            trigger_manual(&store, &t, &trig, t0(), "axd-test", &Traces::off()).await
        }));
    }
    let mut created = 0;
    let mut ids = std::collections::BTreeSet::new();
    for j in joins {
        let (inst, fresh) = j.await.unwrap().expect("every racer gets the instance");
        created += usize::from(fresh);
        ids.insert(inst.id);
    }
    assert_eq!(created, 1, "exactly one racer created it");
    assert_eq!(ids.len(), 1, "every racer sees the same instance");
    let all = store.list_instances(&InstanceFilter { limit: 100, ..Default::default() }).await.unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(store.instance_events(all[0].id).await.unwrap().len(), 1);
}

async fn retention_purges_finished_instances_with_their_trails_and_keys(db: &TestDb) {
    let store = db.store().await;
    let t = create(&store, "old", config(Schedule::Manual), t0()).await;
    let (done, _) = trigger_manual(&store, &t, &keyed("a"), t0(), "axd-test", &Traces::off()).await.unwrap();
    let (late, _) = trigger_manual(&store, &t, &keyed("b"), t0(), "axd-test", &Traces::off()).await.unwrap();
    let (open, _) = trigger_manual(&store, &t, &keyed("c"), t0(), "axd-test", &Traces::off()).await.unwrap();
    cancel_instance(&store, done.id, "", add(t0(), secs(10)), &ACTOR, &RoutingState::default()).await.unwrap();
    cancel_instance(&store, late.id, "", add(t0(), secs(100)), &ACTOR, &RoutingState::default()).await.unwrap();
    // Finished before the cutoff: gone, with its events; later or unfinished ones stay.
    assert_eq!(purge_finished(&store, add(t0(), secs(50)), 100).await.unwrap(), 1);
    assert!(store.get_instance(done.id).await.unwrap().is_none());
    assert!(store.instance_events(done.id).await.unwrap().is_empty());
    assert!(store.get_instance(late.id).await.unwrap().is_some());
    assert!(store.get_instance(open.id).await.unwrap().is_some());
    assert_eq!(purge_finished(&store, add(t0(), secs(50)), 100).await.unwrap(), 0);
    // The purged instance's key is free again; the kept ones still deduplicate.
    let (again, created) =
        trigger_manual(&store, &t, &keyed("a"), add(t0(), secs(60)), "axd-test", &Traces::off()).await.unwrap();
    assert!(created && again.id != done.id);
    let (same, created) =
        trigger_manual(&store, &t, &keyed("b"), add(t0(), secs(60)), "axd-test", &Traces::off()).await.unwrap();
    assert!(!created && same.id == late.id);
    let listed: Vec<i64> = store
        .list_instances(&InstanceFilter { task_name: Some("old".into()), limit: 10, ..Default::default() })
        .await
        .unwrap()
        .into_iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(listed, vec![again.id, open.id, late.id]);
}

async fn schedulers_register_refresh_and_leave(db: &TestDb) {
    let store = db.store().await;
    let mut rec = SchedulerRecord {
        scheduler_id: "axd-1".into(),
        host: "h1".into(),
        address: "127.0.0.1:7070".into(),
        version: "0.1.0".into(),
        started_at: t0(),
        heartbeat_at: t0(),
    };
    store.upsert_scheduler(&rec).await.unwrap();
    rec.heartbeat_at = add(t0(), secs(5));
    store.upsert_scheduler(&rec).await.unwrap();
    let list = store.list_schedulers().await.unwrap();
    assert_eq!(list, vec![rec.clone()]);
    let stats = store.cluster_stats(add(t0(), secs(1))).await.unwrap();
    assert_eq!(stats.schedulers, 1);
    store.delete_scheduler("axd-1").await.unwrap();
    assert!(store.list_schedulers().await.unwrap().is_empty());
    // A scheduler that stopped heartbeating is forgotten by housekeeping.
    let stale = SchedulerRecord { scheduler_id: "axd-gone".into(), heartbeat_at: t0(), ..rec.clone() };
    store.upsert_scheduler(&stale).await.unwrap();
    let fresh = SchedulerRecord { scheduler_id: "axd-alive".into(), heartbeat_at: add(t0(), secs(60)), ..rec };
    store.upsert_scheduler(&fresh).await.unwrap();
    assert_eq!(purge_dead_schedulers(&store, add(t0(), secs(30))).await.unwrap(), 1);
    let left: Vec<String> = store.list_schedulers().await.unwrap().into_iter().map(|s| s.scheduler_id).collect();
    assert_eq!(left, vec!["axd-alive".to_owned()]);
}

async fn session_history_records_opens_closes_and_forgotten_axd(db: &TestDb) {
    use ax_scheduler::{
        model::WorkerRecord,
        worker::sessions::{close_session, open_session},
    };
    let store = db.store().await;
    let session = |id: &str, scheduler: &str, at: Ts| WorkerRecord {
        session_id: id.into(),
        worker_id: format!("w-{id}"),
        app: "billing".into(),
        handlers: vec!["send-invoice".into()],
        capacity: 4,
        credits: 4,
        in_flight: 0,
        labels: BTreeMap::new(),
        scheduler_id: scheduler.into(),
        client: "test".into(),
        connected_at: at,
        last_seen_at: at,
    };
    // axd-1 stays alive; axd-gone's last heartbeat is at +10 s.
    for (id, scheduler, at, beat) in
        [("s1", "axd-1", t0(), add(t0(), secs(60))), ("s2", "axd-gone", add(t0(), secs(10)), add(t0(), secs(10)))]
    {
        let rec = SchedulerRecord {
            scheduler_id: scheduler.into(),
            host: "h".into(),
            address: "127.0.0.1:7070".into(),
            version: "0".into(),
            started_at: t0(),
            heartbeat_at: beat,
        };
        store.upsert_scheduler(&rec).await.unwrap();
        open_session(&store, &session(id, scheduler, at), &[], at, add(at, secs(5)), &RoutingState::default())
            .await
            .unwrap();
    }
    // Both open now; s1 ends at +20 s with its reason.
    let spans = store
        .conn()
        .await
        .unwrap()
        .cluster()
        .session_spans("billing", add(t0(), secs(15)), add(t0(), secs(15)))
        .await
        .unwrap();
    assert_eq!(spans.iter().map(|s| s.session_id.as_str()).collect::<Vec<_>>(), ["s1", "s2"]);
    assert!(spans.iter().all(|s| s.closed_at.is_none() && s.capacity == 4 && s.handlers == ["send-invoice"]));
    close_session(
        &store,
        "s1",
        "stream closed",
        add(t0(), secs(20)),
        add(t0(), secs(21)),
        "axd-1",
        false,
        &RoutingState::default(),
    )
    .await
    .unwrap();
    // axd-gone stops heartbeating: when it is forgotten, its session ends at its last sign of life.
    let mut tx = store.begin().await.unwrap();
    tx.cluster()
        .update_workers(&[ax_scheduler::store::SessionSync {
            session_id: "s2".into(),
            credits: 4,
            in_flight: 0,
            last_seen_at: add(t0(), secs(25)),
        }])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(purge_dead_schedulers(&store, add(t0(), secs(30))).await.unwrap(), 1);
    let spans =
        store.conn().await.unwrap().cluster().session_spans("billing", t0(), add(t0(), secs(60))).await.unwrap();
    let ends: Vec<(Option<Ts>, &str)> = spans.iter().map(|s| (s.closed_at, s.close_reason.as_str())).collect();
    assert_eq!(
        ends,
        [
            (Some(add(t0(), secs(20))), "stream closed"),
            (Some(add(t0(), secs(25))), "axd axd-gone stopped heartbeating")
        ]
    );
    assert!(
        spans[0].serves_at("send-invoice", add(t0(), secs(20)))
            && !spans[0].serves_at("send-invoice", add(t0(), secs(21)))
    );
    // Only sessions open at some instant of the window are returned.
    assert!(
        store
            .conn()
            .await
            .unwrap()
            .cluster()
            .session_spans("billing", add(t0(), secs(26)), add(t0(), secs(60)))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .conn()
            .await
            .unwrap()
            .cluster()
            .session_spans("other", t0(), add(t0(), secs(60)))
            .await
            .unwrap()
            .is_empty()
    );
    // Retention removes ended sessions only.
    let mut tx = store.begin().await.unwrap();
    assert_eq!(tx.cluster().purge_session_log(add(t0(), secs(22))).await.unwrap(), 1);
    tx.commit().await.unwrap();
    let left = store.conn().await.unwrap().cluster().session_spans("billing", t0(), add(t0(), secs(60))).await.unwrap();
    assert_eq!(left.iter().map(|s| s.session_id.as_str()).collect::<Vec<_>>(), ["s2"]);
}

async fn database_clock_is_close_to_real_time(db: &TestDb) {
    let store = db.store().await;
    let db_now = store.db_now().await.unwrap();
    let skew = (db_now - Utc::now()).num_milliseconds().abs();
    assert!(skew < 5_000, "database clock is {skew} ms away from this host's");
}

async fn racing_trigger_loops_create_exactly_one_instance_per_fire(db: &TestDb) {
    // Two trigger loops with their own pools (as two axd would have) race over 1,000 due tasks for
    // ten seconds of fires. Every fire must end up with exactly one instance.
    let a = db.store_with(4).await;
    let b = db.store_with(4).await;
    let c = config(Schedule::FixedRate { interval: secs(1), start_at: add(t0(), secs(1)) });
    for i in 0..1000 {
        create(&a, &format!("race-{i:04}"), c.clone(), t0()).await;
    }
    let mut created = 0usize;
    for step in 1..=10u64 {
        let now = add(t0(), secs(step));
        let planner = EnginePlanner { now, lookahead: Duration::ZERO };
        let (ra, rb) = tokio::join!(
            async {
                let mut n = 0;
                loop {
                    let r = trigger_due(&a, now, now, 100, &planner, "axd-a", &Traces::off()).await.expect("trigger a");
                    n += r.created.len();
                    if r.tasks < 100 {
                        return n;
                    }
                }
            },
            async {
                let mut n = 0;
                loop {
                    let r = trigger_due(&b, now, now, 100, &planner, "axd-b", &Traces::off()).await.expect("trigger b");
                    n += r.created.len();
                    if r.tasks < 100 {
                        return n;
                    }
                }
            }
        );
        created += ra + rb;
    }
    assert_eq!(created, 10_000);
    let stats = a.cluster_stats(t0()).await.unwrap();
    assert_eq!(stats.instances.get(&InstanceStatus::Pending).copied(), Some(10_000));
    for i in [0, 499, 999] {
        let list = a
            .list_instances(&InstanceFilter {
                task_name: Some(format!("race-{i:04}")),
                limit: 100,
                ..Default::default()
            })
            .await
            .unwrap();
        let mut fires: Vec<_> = list.iter().map(|i| i.fire_at).collect();
        fires.sort();
        fires.dedup();
        assert_eq!(fires.len(), 10);
        assert_eq!(list.len(), 10);
    }
}

/// `n` manual instances of a new task `name`, PENDING (idempotency keys k0, k1, …).
pub(crate) async fn pending_instances(store: &Arc<Store>, name: &str, n: usize) -> Vec<ax_scheduler::model::Instance> {
    let t = create(store, name, config(Schedule::Manual), t0()).await;
    let mut out = Vec::new();
    for i in 0..n {
        let trig = keyed(format!("k{i}"));
        out.push(trigger_manual(store, &t, &trig, t0(), "axd-test", &Traces::off()).await.unwrap().0);
    }
    out
}

/// Claims up to `limit` ready instances of app billing at t0 + 1 s for session s1 of worker w1;
/// the ids claimed.
pub(crate) async fn claim_for_s1(store: &Arc<Store>, limit: u32) -> Vec<i64> {
    claim_rows_for_s1(store, limit).await.iter().map(|a| a.instance.id).collect()
}

/// [`claim_for_s1`], the assignments as the claim made them.
pub(crate) async fn claim_rows_for_s1(
    store: &Arc<Store>,
    limit: u32,
) -> Vec<ax_scheduler::loops::dispatch::Assignment> {
    let demand = [AppDemand {
        app: "billing".into(),
        handlers: vec!["send-invoice".into()],
        limit,
        until: t0(),
        workers: Vec::new(),
        labels: Vec::new(),
    }];
    let mut route = |_: &ax_scheduler::routing::registry::ReadyInstance| {
        Ok((SessionRef { session_id: "s1".into(), worker_id: "w1".into() }, String::new()))
    };
    let lease = add(t0(), secs(60));
    let claimed =
        claim(store, add(t0(), secs(1)), &demand, &Skips::default(), lease, "axd-test", &mut route).await.unwrap();
    claimed.assignments
}

/// A manual instance of a new task `name`, claimed at t0 + 1 s by session s1 of worker w1 (attempt 1).
pub(crate) async fn claimed_instance(store: &Arc<Store>, name: &str) -> ax_scheduler::model::Instance {
    let inst = pending_instances(store, name, 1).await.remove(0);
    assert_eq!(claim_for_s1(store, 10).await, vec![inst.id]);
    inst
}

/// Session s1's successful result of attempt 1 with output "done" (see [`claimed_instance`]).
pub(crate) fn success_of_s1(instance_id: i64) -> WorkerOp {
    WorkerOp::Result(Completion {
        instance_id,
        attempt: 1,
        session_id: "s1".into(),
        worker_id: "w1".into(),
        end: AttemptEnd::Success { message: String::new(), output: "done".into() },
        finished_at: None,
    })
}

/// Applies worker messages as axd's group commit does at `now` (leases until `now` + 60 s).
pub(crate) async fn apply_at(store: &Arc<Store>, ops: &[WorkerOp], now: Ts) -> Vec<WorkerOpOutcome> {
    apply_kept(store, ops, Default::default(), now).await
}

/// [`apply_at`] with the rows the claims kept (see `Session::keep_row`).
pub(crate) async fn apply_kept(
    store: &Arc<Store>,
    ops: &[WorkerOp],
    kept: HashMap<i64, (ax_scheduler::model::Instance, i64)>,
    now: Ts,
) -> Vec<WorkerOpOutcome> {
    apply_worker_ops(store, ops, kept, now, add(now, secs(60)), "axd-test", &Traces::off(), &RoutingState::default())
        .await
        .unwrap()
}

/// The writer holds an Accepted back for its Result (worker::writer::HOLD_ACCEPTED), so both may
/// be applied in one transaction, long after the Accepted arrived: the attempt starts when axd
/// received the Accepted, the trail keeps both steps in order, and the row ends final. An Accepted
/// sent twice changes nothing the second time.
async fn an_accepted_and_its_result_applied_together_keep_the_start_and_both_steps(db: &TestDb) {
    let store = db.store().await;
    let inst = claimed_instance(&store, "held").await;
    let received = add(t0(), secs(2));
    let ops = [
        WorkerOp::Accepted { instance_id: inst.id, attempt: 1, session_id: "s1".into(), received_at: received },
        WorkerOp::Accepted {
            instance_id: inst.id,
            attempt: 1,
            session_id: "s1".into(),
            received_at: add(received, secs(1)),
        },
        success_of_s1(inst.id),
    ];
    let now = add(t0(), secs(5));
    let out = apply_at(&store, &ops, now).await;
    assert!(matches!(out[2], WorkerOpOutcome::Result(_)), "{out:?}");
    let i = store.get_instance(inst.id).await.unwrap().unwrap();
    assert_eq!((i.status, i.started_at, i.finished_at), (InstanceStatus::Success, Some(received), Some(now)));
    let trail: Vec<_> =
        store.instance_events(inst.id).await.unwrap().into_iter().map(|e| (e.from, e.to, e.at)).collect();
    assert_eq!(
        trail[1..],
        [
            (Some(InstanceStatus::Pending), InstanceStatus::Dispatched, add(t0(), secs(1))),
            (Some(InstanceStatus::Dispatched), InstanceStatus::Running, received),
            (Some(InstanceStatus::Running), InstanceStatus::Success, now),
        ]
    );
}

/// A timed attempt's run deadline is set while it runs and cleared when it ends, so the deadline
/// index holds only running timed attempts. On MySQL/MariaDB that index is the deadline alone
/// (migration 21: no partial indexes there), which an instance without a timeout never changes.
async fn a_run_deadline_is_held_only_while_its_attempt_runs(db: &TestDb) {
    let store = db.store().await;
    let inst = claimed_instance(&store, "timed").await;
    assert_eq!(inst.timeout, Some(secs(30)), "the task's timeout");
    let received = add(t0(), secs(2));
    let accepted =
        WorkerOp::Accepted { instance_id: inst.id, attempt: 1, session_id: "s1".into(), received_at: received };
    apply_at(&store, &[accepted], received).await;
    let running = store.get_instance(inst.id).await.unwrap().unwrap();
    assert_eq!((running.status, running.deadline_at), (InstanceStatus::Running, Some(add(received, secs(30)))));
    apply_at(&store, &[success_of_s1(inst.id)], add(t0(), secs(5))).await;
    let done = store.get_instance(inst.id).await.unwrap().unwrap();
    assert_eq!((done.status, done.deadline_at), (InstanceStatus::Success, None), "cleared when the attempt ends");
    let stale =
        db.scalar("SELECT COUNT(*) FROM ax_instance WHERE deadline_at IS NOT NULL AND status <> 'RUNNING'").await;
    assert_eq!(stale, 0, "no deadline outside a running attempt");
    if db.db == Db::MySql {
        let columns = db
            .scalar(
                "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() \
                 AND table_name = 'ax_instance' AND index_name = 'ax_instance_deadline'",
            )
            .await;
        assert_eq!(columns, 1, "the deadline index holds the deadline alone");
    }
}

on_every_backend!(
    a_run_deadline_is_held_only_while_its_attempt_runs,
    an_accepted_and_its_result_applied_together_keep_the_start_and_both_steps,
    migrations_are_idempotent_and_safe_to_run_concurrently,
    task_round_trips_every_field,
    the_default_backoff_is_stored_empty_and_reads_the_same_in_either_form,
    duplicate_task_name_is_a_unique_violation_and_changes_nothing,
    update_applies_only_to_the_version_it_read,
    list_tasks_pages_by_name_and_filters_by_app,
    trigger_creates_one_instance_per_fire_and_advances_the_schedule,
    a_rescheduled_fire_that_already_has_an_instance_is_not_duplicated,
    manual_trigger_with_the_same_key_creates_one_instance,
    forbid_concurrency_records_a_skipped_instance,
    cancel_and_retry_follow_the_state_rules,
    delete_task_cancels_pending_instances_and_keeps_history,
    fixed_delay_fires_again_only_after_completion,
    instances_list_newest_first_with_filters_and_pages,
    instances_list_by_a_trigger_time_window_with_and_without_a_task,
    schedulers_register_refresh_and_leave,
    session_history_records_opens_closes_and_forgotten_axd,
    database_clock_is_close_to_real_time,
    racing_trigger_loops_create_exactly_one_instance_per_fire,
    racing_manual_triggers_with_one_key_create_one_instance,
    retention_purges_finished_instances_with_their_trails_and_keys,
);
