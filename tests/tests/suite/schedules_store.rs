//! Schedules and chains at the store level, with an injected clock (no sleeping), on every backend:
//! the overlap policies (BUFFER_ONE, BUFFER_ALL, CANCEL_OTHER) through the trigger and the claim,
//! a pause with an end, jitter, active windows with excluded dates and a calendar, backfills, chains
//! and DAG joins created in the transaction of their upstream's final state, and the intake table.

use std::{collections::BTreeMap, num::NonZeroU32, sync::Arc, time::Duration};

use ax_scheduler::{
    lifecycle::{AttemptEnd, Completion, WorkerOp},
    loops::{
        backfill::{RangeError, Request, backfill, fires_between},
        dispatch::{Skips, claim},
        intake::consume_intake,
        trigger::{EnginePlanner, TriggerRound, trigger_due, trigger_manual},
    },
    model::{
        Backoff, Calendar, ConcurrencyPolicy, CronDialect, EdgeKind, Instance, InstanceSource, InstanceStatus,
        MisfirePolicy, Pause, Placement, RetryPolicy, Routing, Schedule, Task, TaskConfig, TaskEventKind, Timing, Ts,
        add, sub,
    },
    routing::RoutingState,
    routing::registry::{AppDemand, SessionRef},
    schedule::{Compiled, next_fire_from},
    store::{Actor, InstanceFilter, ManualTrigger, NewTask, Store},
    traces::Traces,
    transitions::retry_instance,
    window::jitter_offset,
};
use ax_tests::{TestDb, on_every_backend};
use chrono::{NaiveDate, TimeZone, Utc};

const ACTOR: Actor<'static> = Actor { scheduler_id: "axd-test", caller: "spiffe://ax/admin/test" };

fn t0() -> Ts {
    Utc.with_ymd_and_hms(2026, 6, 1, 10, 0, 0).single().expect("instant")
}

fn at(secs: u64) -> Ts {
    add(t0(), Duration::from_secs(secs))
}

fn cron(expr: &str, zone: &str) -> Schedule {
    Schedule::Cron { expression: expr.into(), time_zone: zone.into(), dialect: CronDialect::Unix }
}

fn config(schedule: Schedule) -> TaskConfig {
    TaskConfig {
        app: "app".into(),
        handler: "h".into(),
        description: String::new(),
        schedule,
        params: "{}".into(),
        enabled: true,
        misfire_policy: MisfirePolicy::FireOnce,
        misfire_threshold: Duration::from_secs(60),
        max_catch_up: NonZeroU32::new(10).expect("nonzero"),
        concurrency: ConcurrencyPolicy::Allow,
        routing: Routing::LeastLoaded,
        timeout: None,
        retry: RetryPolicy { max_retries: 0, backoff: Backoff::default() },
        labels: BTreeMap::new(),
        placement: Placement::default(),
        timing: Timing::default(),
        flow: Default::default(),
    }
}

async fn create(store: &Arc<Store>, name: &str, c: TaskConfig, now: Ts) -> Task {
    let calendar = match &c.timing.calendar {
        Some(name) => {
            store
                .conn()
                .await
                .expect("conn")
                .calendars()
                .get_calendar(name, false)
                .await
                .expect("get")
                .expect("cal")
                .dates
        }
        None => Default::default(),
    };
    let next = next_fire_from(&c, &calendar, None, now);
    store.create_task(&NewTask { name: name.into(), config: c, next_fire_at: next }, now, &ACTOR).await.expect("create")
}

async fn fire(store: &Arc<Store>, now: Ts) -> TriggerRound {
    let planner = EnginePlanner { now, lookahead: Duration::ZERO };
    trigger_due(store, now, now, 500, &planner, "axd-test", &Traces::off()).await.expect("trigger")
}

async fn by_hand(store: &Arc<Store>, task: &Task, key: &str, params: &str, now: Ts) -> i64 {
    let trig =
        ManualTrigger { params: params.into(), key: key.into(), actor: "test".into(), run_at: None, tags: Vec::new() };
    trigger_manual(store, task, &trig, now, "axd-test", &Traces::off()).await.expect("trigger").0.id
}

/// Claims what a stream that takes anything of app `app` would at `now` (up to 10); the ids.
async fn claim_ready(store: &Arc<Store>, now: Ts) -> Vec<i64> {
    let demand = [AppDemand {
        app: "app".into(),
        handlers: vec!["h".into()],
        limit: 10,
        until: now,
        workers: Vec::new(),
        labels: Vec::new(),
    }];
    let mut route = |_: &ax_scheduler::routing::registry::ReadyInstance| {
        Ok((SessionRef { session_id: "s1".into(), worker_id: "w1".into() }, String::new()))
    };
    let claimed =
        claim(store, now, &demand, &Skips::default(), add(now, Duration::from_secs(60)), "axd-test", &mut route)
            .await
            .expect("claim");
    claimed.assignments.iter().map(|a| a.instance.id).collect()
}

/// Ends instance `id` (claimed on session s1): SUCCESS with `output`, or FAILED with `failure`.
async fn end(store: &Arc<Store>, id: i64, now: Ts, outcome: Result<&str, &str>) {
    let i = store.get_instance(id).await.expect("get").expect("instance");
    let end = match outcome {
        Ok(output) => AttemptEnd::Success { message: String::new(), output: output.into() },
        Err(message) => AttemptEnd::Failed { message: message.into(), retryable: false },
    };
    let op = WorkerOp::Result(Completion {
        instance_id: id,
        attempt: i.attempt,
        session_id: "s1".into(),
        worker_id: "w1".into(),
        end,
        finished_at: None,
    });
    crate::store_contract::apply_at(store, &[op], now).await;
}

/// Claims what is ready (instance `id` among it, or claimed before) and ends `id`.
async fn run(store: &Arc<Store>, id: i64, now: Ts, outcome: Result<&str, &str>) {
    claim_ready(store, now).await;
    let i = store.get_instance(id).await.expect("get").expect("instance");
    assert_eq!(i.status, InstanceStatus::Dispatched, "instance {id} was claimed");
    end(store, id, now, outcome).await;
}

async fn instances(store: &Arc<Store>, task: &str) -> Vec<Instance> {
    let filter = InstanceFilter { task_name: Some(task.into()), limit: 100, ..Default::default() };
    let mut v = store.list_instances(&filter).await.expect("list");
    v.reverse();
    v
}

async fn first_reason(store: &Arc<Store>, id: i64) -> String {
    store.instance_events(id).await.expect("events").first().expect("creation").reason.clone()
}

fn every_second(policy: ConcurrencyPolicy) -> TaskConfig {
    TaskConfig { concurrency: policy, ..config(cron("* * * * * *", "UTC")) }
}

async fn buffer_one_keeps_one_waiting_starts_it_when_the_active_one_ends_and_skips_the_rest(db: &TestDb) {
    let store = db.store().await;
    create(&store, "b1", every_second(ConcurrencyPolicy::BufferOne), t0()).await;
    let a = fire(&store, at(1)).await.created[0].0;
    assert_eq!(claim_ready(&store, at(1)).await, vec![a]);
    let b = fire(&store, at(2)).await.created[0].0;
    let why = first_reason(&store, b).await;
    assert!(why.contains(&format!("buffered (BUFFER_ONE): starts when instance {a} ends")), "{why}");
    assert!(claim_ready(&store, at(2)).await.is_empty(), "b waits while a runs");
    let round = fire(&store, at(3)).await;
    assert_eq!((round.created.len(), round.skipped), (0, 1), "a third fire while one waits is skipped");
    let skipped = instances(&store, "b1").await.pop().expect("skipped instance");
    assert_eq!(skipped.status, InstanceStatus::Skipped);
    assert!(skipped.message.contains(&format!("instance {b} already waits")), "{}", skipped.message);
    end(&store, a, at(3), Ok("")).await;
    assert_eq!(claim_ready(&store, at(4)).await, vec![b], "b starts once a ended");
}

async fn buffer_all_runs_every_fire_one_at_a_time_in_fire_order(db: &TestDb) {
    let store = db.store().await;
    let mut c = every_second(ConcurrencyPolicy::BufferAll);
    c.retry = RetryPolicy { max_retries: 1, backoff: Backoff::List { delays_us: vec![10_000_000] } };
    create(&store, "ball", c, t0()).await;
    let mut ids = Vec::new();
    for s in 1..=3 {
        ids.extend(fire(&store, at(s)).await.created.iter().map(|c| c.0));
    }
    assert_eq!(ids.len(), 3, "every fire is kept");
    // The first fails and waits 10 s for its retry: the others wait behind it, though they are due.
    assert_eq!(claim_ready(&store, at(4)).await, vec![ids[0]]);
    let failed = store.get_instance(ids[0]).await.expect("get").expect("instance");
    let op = WorkerOp::Result(Completion {
        instance_id: ids[0],
        attempt: failed.attempt,
        session_id: "s1".into(),
        worker_id: "w1".into(),
        end: AttemptEnd::Failed { message: "try again".into(), retryable: true },
        finished_at: None,
    });
    crate::store_contract::apply_at(&store, &[op], at(4)).await;
    assert!(claim_ready(&store, at(5)).await.is_empty(), "the retry of the first holds the others back");
    for (n, id) in ids.iter().enumerate() {
        let now = at(14 + n as u64);
        assert_eq!(claim_ready(&store, now).await, vec![*id], "only the oldest unfinished one starts");
        assert!(claim_ready(&store, now).await.is_empty());
        end(&store, *id, now, Ok("")).await;
    }
}

async fn cancel_other_cancels_the_active_instance_and_runs_the_new_fire(db: &TestDb) {
    let store = db.store().await;
    create(&store, "co", every_second(ConcurrencyPolicy::CancelOther), t0()).await;
    let a = fire(&store, at(1)).await.created[0].0;
    assert_eq!(claim_ready(&store, at(1)).await, vec![a]);
    let round = fire(&store, at(2)).await;
    assert_eq!(round.canceled, 1);
    let b = round.created[0].0;
    let old = store.get_instance(a).await.expect("get").expect("a");
    assert_eq!(old.status, InstanceStatus::Canceled);
    assert!(old.message.contains("concurrency CANCEL_OTHER") && old.message.contains("replaces it"), "{}", old.message);
    assert_eq!(
        db.scalar(&format!("SELECT COUNT(*) FROM ax_command WHERE instance_id = {a}")).await,
        1,
        "its worker is told"
    );
    assert!(first_reason(&store, b).await.contains(&format!("canceled instance(s) {a}")));
    assert_eq!(claim_ready(&store, at(2)).await, vec![b]);
}

async fn a_pause_with_an_end_holds_fires_and_resumes_without_catching_up(db: &TestDb) {
    let store = db.store().await;
    let task = create(&store, "paused", config(cron("0 * * * * *", "UTC")), t0()).await;
    assert_eq!(task.next_fire_at, Some(at(60)));
    // What PauseTask writes: the pause, and the first fire at or after its end as the next fire.
    let p = Pause { at: t0(), by: "alice".into(), note: "db migration".into(), until: Some(at(300)) };
    let next = next_fire_from(&task.config, &Default::default(), Some(&p), t0());
    assert_eq!(next, Some(at(300)));
    // Here only the pause is written, and the next fire stays 10:01 (as when a fixed delay's run
    // ends during a pause): the trigger claims the task then, and holds it until the pause's end.
    let mut tx = store.begin().await.expect("tx");
    tx.tasks().set_pause(task.id, Some(&p)).await.expect("pause");
    tx.commit().await.expect("commit");
    for m in 1..=4 {
        assert!(fire(&store, at(60 * m)).await.created.is_empty(), "nothing fires during the pause");
        let held = store.get_task("paused").await.expect("get").expect("task");
        assert_eq!(held.next_fire_at, Some(at(300)), "held until the pause's end");
    }
    let round = fire(&store, at(300)).await;
    assert_eq!(round.created.len(), 1, "the first fire after the pause, and no catch-up");
    let t = store.get_task("paused").await.expect("get").expect("task");
    assert_eq!(t.pause, None, "the pause ended");
    assert_eq!(t.next_fire_at, Some(at(360)));
    let events = store.task_events(t.id, 10).await.expect("events");
    let resumed = events.iter().find(|e| e.kind == TaskEventKind::Resumed).expect("resumed event");
    assert!(
        resumed.message.contains("4 fires from 2026-06-01T10:01:00+00:00 to 2026-06-01T10:04:00+00:00 were not run"),
        "{}",
        resumed.message
    );
    let keys: Vec<String> = instances(&store, "paused").await.into_iter().map(|i| i.idempotency_key).collect();
    assert_eq!(keys, ["fire:2026-06-01T10:05:00Z"]);
}

async fn jitter_delays_each_fire_by_its_stable_offset(db: &TestDb) {
    let store = db.store().await;
    let jitter = Duration::from_secs(30);
    let mut c = config(cron("0 * * * * *", "UTC"));
    c.timing.jitter = Some(jitter);
    create(&store, "jittered", c, t0()).await;
    let mut offsets = Vec::new();
    for m in 1..=5 {
        let round = fire(&store, at(60 * m)).await;
        let (id, _, available) = round.created[0].clone();
        let i = store.get_instance(id).await.expect("get").expect("instance");
        assert_eq!(i.fire_at, at(60 * m), "the fire time stays as scheduled");
        assert_eq!(i.idempotency_key, format!("fire:{}", at(60 * m).format("%Y-%m-%dT%H:%M:%SZ")));
        let offset = jitter_offset("jittered", i.fire_at, jitter);
        assert_eq!(available, add(i.fire_at, offset), "the offset every axd and the preview compute");
        assert!(offset < jitter);
        offsets.push(offset);
    }
    offsets.dedup();
    assert!(offsets.len() > 1, "the offsets differ between fires: {offsets:?}");
}

async fn windows_excluded_dates_and_calendars_skip_fires_on_the_task_s_wall_clock(db: &TestDb) {
    let store = db.store().await;
    let day = |d: u32| NaiveDate::from_ymd_opt(2026, 6, d).expect("date");
    let mut tx = store.begin().await.expect("tx");
    tx.calendars()
        .insert_calendar(&Calendar {
            name: "holidays".into(),
            description: String::new(),
            dates: [day(4)].into(),
            created_by: "test".into(),
            created_at: t0(),
            updated_by: "test".into(),
            updated_at: t0(),
        })
        .await
        .expect("calendar");
    tx.commit().await.expect("commit");
    // 08:00 in Tokyo is 23:00 UTC the day before: dates are Tokyo's. The 2nd's fire (1st 23:00 UTC)
    // is before the window opens, the 3rd's is excluded, the 4th's is on the calendar, the 5th and
    // 6th fire, the 7th's (6th 23:00 UTC) is after the window closed.
    let mut c = config(cron("0 0 8 * * *", "Asia/Tokyo"));
    c.timing = Timing {
        start: Some(Utc.with_ymd_and_hms(2026, 6, 2, 0, 0, 0).single().expect("t")),
        end: Some(Utc.with_ymd_and_hms(2026, 6, 6, 0, 0, 0).single().expect("t")),
        exclude_dates: [day(3)].into(),
        calendar: Some("holidays".into()),
        jitter: None,
        extra_schedules: Vec::new(),
    };
    let task = create(&store, "tokyo", c, t0()).await;
    let tokyo =
        |d: u32| chrono_tz::Asia::Tokyo.with_ymd_and_hms(2026, 6, d, 8, 0, 0).single().expect("t").with_timezone(&Utc);
    assert_eq!(task.next_fire_at, Some(tokyo(5)), "the first fire the window and the dates keep");
    let mut fired = Vec::new();
    let mut next = task.next_fire_at;
    while let Some(n) = next {
        fired.extend(fire(&store, n).await.created.iter().map(|c| c.2));
        next = store.get_task("tokyo").await.expect("get").expect("task").next_fire_at;
    }
    assert_eq!(fired, vec![tokyo(5), tokyo(6)]);
    // A date no longer excluded comes back when the calendar changes (UpdateCalendar recomputes).
    let c = Compiled::for_task(&task.config, &[day(4)].into()).expect("compile");
    assert_eq!(c.first_fire(sub(tokyo(3), Duration::from_secs(1))), Some(tokyo(5)));
    let c = Compiled::for_task(&task.config, &Default::default()).expect("compile");
    assert_eq!(c.first_fire(sub(tokyo(3), Duration::from_secs(1))), Some(tokyo(4)));
}

async fn backfill_creates_each_missing_fire_once_in_order_and_a_dry_run_creates_nothing(db: &TestDb) {
    let store = db.store().await;
    let task = create(&store, "hourly", config(cron("0 0 * * * *", "UTC")), sub(t0(), Duration::from_secs(1))).await;
    let now = at(4 * 3600 + 60);
    // The schedule itself made the 10:00 fire.
    let by_schedule = fire(&store, t0()).await.created[0].0;
    let fires = fires_between(&task, &Default::default(), t0(), at(4 * 3600), now).expect("range");
    assert_eq!(fires, vec![t0(), at(3600), at(7200), at(3 * 3600)], "from is included, to is not");
    let dry = backfill(
        &store,
        &task,
        Request { fires: &fires, dry_run: true, now, actor: "alice" },
        "axd-test",
        &Traces::off(),
    )
    .await
    .expect("dry run");
    assert_eq!(
        dry.iter().map(|f| (f.created, f.instance_id)).collect::<Vec<_>>(),
        [(false, Some(by_schedule)), (true, None), (true, None), (true, None)]
    );
    assert_eq!(instances(&store, "hourly").await.len(), 1, "a dry run creates nothing");
    let done = backfill(
        &store,
        &task,
        Request { fires: &fires, dry_run: false, now, actor: "alice" },
        "axd-test",
        &Traces::off(),
    )
    .await
    .expect("backfill");
    assert_eq!(done.iter().filter(|f| f.created).count(), 3);
    let all = instances(&store, "hourly").await;
    let backfilled: Vec<&Instance> = all.iter().filter(|i| i.source == InstanceSource::Backfill).collect();
    assert_eq!(
        backfilled.iter().map(|i| i.fire_at).collect::<Vec<_>>(),
        vec![at(3600), at(7200), at(3 * 3600)],
        "in time order"
    );
    assert!(backfilled.windows(2).all(|w| w[0].available_at < w[1].available_at && w[0].available_at >= now));
    let again = backfill(
        &store,
        &task,
        Request { fires: &fires, dry_run: false, now, actor: "alice" },
        "axd-test",
        &Traces::off(),
    )
    .await
    .expect("again");
    assert!(again.iter().all(|f| !f.created && f.instance_id.is_some()), "a second run creates nothing");
    assert_eq!(instances(&store, "hourly").await.len(), 4);
    let events = store.task_events(task.id, 10).await.expect("events");
    assert!(events.iter().any(|e| e.kind == TaskEventKind::Backfilled && e.actor == "alice"));
    // Bad ranges.
    assert_eq!(fires_between(&task, &Default::default(), at(3600), t0(), now), Err(RangeError::Reversed));
    assert_eq!(
        fires_between(&task, &Default::default(), t0(), add(now, Duration::from_secs(1)), now),
        Err(RangeError::Future(now))
    );
    let minutely =
        create(&store, "minutely", config(cron("0 * * * * *", "UTC")), sub(t0(), Duration::from_secs(86_400))).await;
    let far = add(t0(), Duration::from_secs(3600));
    assert!(matches!(
        fires_between(&minutely, &Default::default(), sub(t0(), Duration::from_secs(86_400)), far, far),
        Err(RangeError::TooMany(_))
    ));
    let manual = create(&store, "manual", config(Schedule::Manual), t0()).await;
    assert!(matches!(fires_between(&manual, &Default::default(), t0(), now, now), Err(RangeError::Schedule(_))));
}

/// Writes the edges of task `from`'s chains (what CreateTask does after its checks).
async fn chain(store: &Arc<Store>, from: &Task, edges: &[(EdgeKind, &Task)]) {
    let mut tx = store.begin().await.expect("tx");
    let e: Vec<(i64, EdgeKind, i64)> = edges.iter().map(|(k, t)| (from.id, *k, t.id)).collect();
    tx.flow().write_edges(from.id, &e).await.expect("edges");
    tx.commit().await.expect("commit");
}

/// Writes the DAG upstreams of task `to`.
async fn after_all(store: &Arc<Store>, to: &Task, ups: &[&Task]) {
    let mut tx = store.begin().await.expect("tx");
    let e: Vec<(i64, EdgeKind, i64)> = ups.iter().map(|u| (u.id, EdgeKind::After, to.id)).collect();
    tx.flow().write_edges(to.id, &e).await.expect("edges");
    tx.commit().await.expect("commit");
}

async fn a_chain_fires_once_per_finished_instance_with_its_output_merged(db: &TestDb) {
    let store = db.store().await;
    let a = create(&store, "extract", config(Schedule::Manual), t0()).await;
    let mut load = config(Schedule::Manual);
    load.params = r#"{"dest":"s3","rows":0}"#.into();
    let b = create(&store, "load", load, t0()).await;
    let page = create(&store, "page", config(Schedule::Manual), t0()).await;
    chain(&store, &a, &[(EdgeKind::Success, &b), (EdgeKind::Failure, &page)]).await;
    let first = by_hand(&store, &a, "k1", "{}", at(1)).await;
    run(&store, first, at(1), Ok(r#"{"rows":3}"#)).await;
    let loads = instances(&store, "load").await;
    assert_eq!(loads.len(), 1, "the success created one instance of load");
    let l = &loads[0];
    assert_eq!((l.idempotency_key.as_str(), l.source), (format!("chain:{first}").as_str(), InstanceSource::Chain));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&l.params).expect("json"),
        serde_json::json!({"dest": "s3", "rows": 3})
    );
    assert_eq!((l.lineage.chained_from, l.lineage.run_id), (Some(first), Some(first)));
    assert!(instances(&store, "page").await.is_empty(), "no failure, no on-failure chain");
    let links = store.conn().await.expect("conn").flow().links_touching(&[first]).await.expect("links");
    assert_eq!(links, vec![(first, l.id, EdgeKind::Success)]);
    // Run again by an operator and succeeding again: the chain's key exists, nothing new.
    retry_instance(&store, first, at(2), &ACTOR, &RoutingState::default()).await.expect("retry");
    run(&store, first, at(2), Ok("{}")).await;
    run(&store, l.id, at(3), Ok("")).await;
    assert_eq!(instances(&store, "load").await.len(), 1, "exactly once per finished instance");
    // A failure fires the on-failure chain, with what failed.
    let second = by_hand(&store, &a, "k2", "{}", at(4)).await;
    run(&store, second, at(4), Err("disk full")).await;
    let pages = instances(&store, "page").await;
    assert_eq!(pages.len(), 1);
    let v: serde_json::Value = serde_json::from_str(&pages[0].params).expect("json");
    assert_eq!((v["failure"]["instance_id"].as_i64(), v["failure"]["status"].as_str()), (Some(second), Some("FAILED")));
    assert!(v["failure"]["message"].as_str().is_some_and(|m| m.contains("disk full")), "{v}");
}

async fn a_dag_task_runs_once_per_run_when_all_its_upstreams_succeeded(db: &TestDb) {
    let store = db.store().await;
    let s = create(&store, "start", config(Schedule::Manual), t0()).await;
    let a = create(&store, "a", config(Schedule::Manual), t0()).await;
    let b = create(&store, "b", config(Schedule::Manual), t0()).await;
    let mut join = config(Schedule::Manual);
    join.flow.after_all = vec!["a".into(), "b".into()];
    let c = create(&store, "c", join, t0()).await;
    after_all(&store, &a, &[&s]).await;
    after_all(&store, &b, &[&s]).await;
    after_all(&store, &c, &[&a, &b]).await;
    let root = by_hand(&store, &s, "r1", "{}", at(1)).await;
    run(&store, root, at(1), Ok("")).await;
    let (ia, ib) = (instances(&store, "a").await, instances(&store, "b").await);
    assert_eq!((ia.len(), ib.len()), (1, 1), "both upstreams of the join start");
    assert_eq!(ia[0].idempotency_key, format!("run:{root}"));
    run(&store, ia[0].id, at(2), Ok(r#"{"from_a":1}"#)).await;
    assert!(instances(&store, "c").await.is_empty(), "b has not succeeded yet");
    run(&store, ib[0].id, at(3), Ok(r#"{"from_b":2}"#)).await;
    let ic = instances(&store, "c").await;
    assert_eq!(ic.len(), 1, "the join fires once b succeeded too");
    assert_eq!(
        (ic[0].source, ic[0].lineage.run_id, ic[0].idempotency_key.clone()),
        (InstanceSource::Dag, Some(root), format!("run:{root}"))
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&ic[0].params).expect("json"),
        serde_json::json!({"from_a": 1, "from_b": 2})
    );
    let links = store.conn().await.expect("conn").flow().links_touching(&[ic[0].id]).await.expect("links");
    assert_eq!(links, vec![(ia[0].id, ic[0].id, EdgeKind::After), (ib[0].id, ic[0].id, EdgeKind::After)]);
    let run_of = store.conn().await.expect("conn").flow().run_instances(root, 100).await.expect("run");
    assert_eq!(run_of.iter().map(|i| i.task_name.as_str()).collect::<Vec<_>>(), ["start", "a", "b", "c"]);
    // Another run where one upstream fails: no join.
    let root2 = by_hand(&store, &s, "r2", "{}", at(4)).await;
    run(&store, root2, at(4), Ok("")).await;
    let a2 = instances(&store, "a").await.pop().expect("a2");
    let b2 = instances(&store, "b").await.pop().expect("b2");
    assert_eq!((a2.lineage.run_id, b2.lineage.run_id), (Some(root2), Some(root2)));
    run(&store, a2.id, at(5), Err("no")).await;
    run(&store, b2.id, at(6), Ok("")).await;
    assert_eq!(instances(&store, "c").await.len(), 1, "run 2 has a failed upstream: its join never fires");
}

async fn intake_rows_become_one_instance_each_and_bad_rows_keep_their_error(db: &TestDb) {
    let store = db.store().await;
    let mut c = config(Schedule::Manual);
    c.params = r#"{"n":0}"#.into();
    create(&store, "report", c, t0()).await;
    db.execute(
        "INSERT INTO ax_intake (task_name, params, idempotency_key, delay_us) VALUES \
         ('report', '{\"n\":1}', 'order-1', 600000000), ('report', NULL, 'order-1', NULL), \
         ('report', NULL, NULL, NULL), ('nope', NULL, NULL, NULL), ('report', '{oops', NULL, NULL), \
         ('report', NULL, 'fire:x', NULL)",
    )
    .await;
    let now = Utc::now();
    let round = consume_intake(&store, now, 500, "axd-test", &Traces::off()).await.expect("intake");
    assert_eq!((round.rows, round.refused), (6, 3));
    let list = instances(&store, "report").await;
    assert_eq!(list.len(), 2, "one per key: order-1 once, and the row without a key");
    let keyed = list.iter().find(|i| i.idempotency_key == "order-1").expect("order-1");
    assert_eq!((keyed.source, keyed.params.as_str()), (InstanceSource::Intake, r#"{"n":1}"#));
    let delay = (keyed.available_at - keyed.created_at).num_seconds();
    assert!((595..=605).contains(&delay), "delay_us counts from the row's insert: {delay} s");
    assert!(list.iter().any(|i| i.idempotency_key.starts_with("intake:") && i.params == r#"{"n":0}"#));
    assert_eq!(db.scalar("SELECT COUNT(*) FROM ax_intake WHERE error IS NULL").await, 0, "consumed rows are gone");
    let errors = db.scalar("SELECT COUNT(*) FROM ax_intake WHERE error LIKE 'task_name: no task named%' OR error LIKE 'params:%' OR error LIKE 'idempotency_key:%'").await;
    assert_eq!(errors, 3, "refused rows stay with their error");
    let again = consume_intake(&store, now, 500, "axd-test", &Traces::off()).await.expect("intake");
    assert_eq!(again.rows, 0, "refused rows are not read again");
}

/// A task with a cron every 2 s and a fixed rate every 3 s fires at each instant either fires, once:
/// at t0+6 both fire and one instance is made, credited to the cron (`schedule`, first); each
/// instance's tag and creation reason name the schedule that made it.
async fn several_schedules_fire_merged_once_per_instant_each_instance_naming_its_schedule(db: &TestDb) {
    let store = db.store().await;
    let mut c = config(cron("*/2 * * * * *", "UTC"));
    c.timing.extra_schedules = vec![Schedule::FixedRate { interval: Duration::from_secs(3), start_at: at(3) }];
    let task = create(&store, "merged", c, at(0)).await;
    assert_eq!(task.next_fire_at, Some(at(2)), "the cron's first fire comes first");
    for s in 1..=7 {
        fire(&store, at(s)).await;
    }
    let made = instances(&store, "merged").await;
    let fires: Vec<Ts> = made.iter().map(|i| i.fire_at).collect();
    assert_eq!(fires, [at(2), at(3), at(4), at(6)], "t0+6 (both schedules) fired once");
    let ids: Vec<i64> = made.iter().map(|i| i.id).collect();
    let tags = store.conn().await.expect("conn").instances().tags_of(&ids).await.expect("tags");
    let by: Vec<String> = ids
        .iter()
        .map(|id| tags[id].iter().find(|(k, _)| k == "ax.schedule").map(|(_, v)| v.clone()).unwrap_or_default())
        .collect();
    assert_eq!(by, ["schedule", "extra_schedules[0]", "schedule", "schedule"]);
    assert_eq!(first_reason(&store, ids[1]).await, format!("fired by extra_schedules[0] for {}", at(3).to_rfc3339()));
    // A backfilled fire says which schedule it was too.
    let mut c = config(cron("*/2 * * * * *", "UTC"));
    c.timing.extra_schedules = vec![Schedule::FixedRate { interval: Duration::from_secs(3), start_at: at(3) }];
    let late = create(&store, "merged-late", c, at(7)).await;
    let fires = [at(3), at(4)];
    let done = backfill(
        &store,
        &late,
        Request { fires: &fires, dry_run: false, now: at(8), actor: "alice" },
        "axd-test",
        &Traces::off(),
    )
    .await
    .expect("backfill");
    let ids: Vec<i64> = done.iter().filter_map(|f| f.instance_id).collect();
    let tags = store.conn().await.expect("conn").instances().tags_of(&ids).await.expect("tags");
    let by: Vec<&str> = ids.iter().map(|id| tags[id][0].1.as_str()).collect();
    assert_eq!(by, ["extra_schedules[0]", "schedule"]);
    // A task with one schedule carries no such tag.
    let plain = create(&store, "plain", config(cron("*/2 * * * * *", "UTC")), at(7)).await;
    fire(&store, at(8)).await;
    let one = instances(&store, &plain.name).await;
    let tags = store.conn().await.expect("conn").instances().tags_of(&[one[0].id]).await.expect("tags");
    assert!(tags.get(&one[0].id).is_none_or(|t| t.iter().all(|(k, _)| k != "ax.schedule")), "{tags:?}");
}

on_every_backend!(
    buffer_one_keeps_one_waiting_starts_it_when_the_active_one_ends_and_skips_the_rest,
    buffer_all_runs_every_fire_one_at_a_time_in_fire_order,
    cancel_other_cancels_the_active_instance_and_runs_the_new_fire,
    a_pause_with_an_end_holds_fires_and_resumes_without_catching_up,
    jitter_delays_each_fire_by_its_stable_offset,
    windows_excluded_dates_and_calendars_skip_fires_on_the_task_s_wall_clock,
    backfill_creates_each_missing_fire_once_in_order_and_a_dry_run_creates_nothing,
    a_chain_fires_once_per_finished_instance_with_its_output_merged,
    a_dag_task_runs_once_per_run_when_all_its_upstreams_succeeded,
    intake_rows_become_one_instance_each_and_bad_rows_keep_their_error,
    several_schedules_fire_merged_once_per_instant_each_instance_naming_its_schedule,
);
