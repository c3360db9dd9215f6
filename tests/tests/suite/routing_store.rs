//! Routing and limits at the store level, with an injected clock (no sleeping), on every backend:
//! priorities with aging (a low priority waits a bounded time however much higher-priority work
//! arrives), fires coalesced past max-pending, and the placement settings round-tripping.

use std::{collections::BTreeMap, num::NonZeroU32, sync::Arc, time::Duration};

use ax_scheduler::{
    loops::{
        dispatch::{Skips, claim},
        trigger::{EnginePlanner, trigger_due, trigger_manual},
    },
    model::{
        Backoff, ConcurrencyPolicy, CooldownPolicy, CronDialect, InstanceStatus, MisfirePolicy, Placement, RetryOn,
        RetryPolicy, Routing, Schedule, Task, TaskConfig, TaskEventKind, Ts, add,
    },
    routing::registry::{AppDemand, SessionRef},
    schedule::Compiled,
    store::{Actor, InstanceFilter, ManualTrigger, NewTask, Store},
    traces::Traces,
};
use ax_tests::{TestDb, on_every_backend};
use chrono::{TimeZone, Utc};

const ACTOR: Actor<'static> = Actor { scheduler_id: "axd-test", caller: "spiffe://ax/admin/test" };

fn t0() -> Ts {
    Utc.with_ymd_and_hms(2026, 6, 1, 10, 0, 0).single().expect("instant")
}

fn at(secs: u64) -> Ts {
    add(t0(), Duration::from_secs(secs))
}

fn config(schedule: Schedule, placement: Placement) -> TaskConfig {
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
        placement,
        timing: Default::default(),
        flow: Default::default(),
    }
}

async fn create(store: &Arc<Store>, name: &str, c: TaskConfig, now: Ts) -> Task {
    let next = if c.enabled { Compiled::compile(&c.schedule).expect("compile").first_fire(now) } else { None };
    store.create_task(&NewTask { name: name.into(), config: c, next_fire_at: next }, now, &ACTOR).await.expect("create")
}

async fn fire_by_hand(store: &Arc<Store>, task: &Task, key: &str, now: Ts) -> i64 {
    let trig = ManualTrigger {
        params: "{}".into(),
        key: key.into(),
        actor: "test".into(),
        run_at: None,
        tags: Default::default(),
    };
    trigger_manual(store, task, &trig, now, "axd-test", &Traces::off()).await.expect("trigger").0.id
}

/// Claims up to `limit` ready instances of app `app` at `now`, as a dispatcher whose one stream
/// takes anything would; their ids in claim order.
async fn claim_ready(store: &Arc<Store>, now: Ts, limit: u32) -> Vec<i64> {
    let demand = [AppDemand {
        app: "app".into(),
        handlers: vec!["h".into()],
        limit,
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

fn prio(priority: u8) -> Placement {
    Placement { priority, ..Placement::default() }
}

async fn higher_priority_goes_first_and_a_low_priority_waits_at_most_ninety_seconds(db: &TestDb) {
    let store = db.store().await;
    let lo = create(&store, "lo", config(Schedule::Manual, prio(0)), t0()).await;
    let hi = create(&store, "hi", config(Schedule::Manual, prio(9)), t0()).await;
    let mid = create(&store, "mid", config(Schedule::Manual, prio(4)), t0()).await;
    // Ready at once, both due: the higher priority is claimed first, whatever the creation order.
    let a = fire_by_hand(&store, &lo, "a", t0()).await;
    let b = fire_by_hand(&store, &mid, "b", t0()).await;
    let c = fire_by_hand(&store, &hi, "c", t0()).await;
    assert_eq!(claim_ready(&store, t0(), 3).await, vec![c, b, a]);
    // Sustained load: every second three priority-9 instances arrive and three are claimed. The
    // priority-0 instance due at t0 is claimed once the new ones have waited less than it,
    // counting 10 s per level: 90 s (the bound), or at the claim right after.
    let low = fire_by_hand(&store, &lo, "low", t0()).await;
    let mut claimed_at = None;
    for s in 1..=120u64 {
        for k in 0..3 {
            fire_by_hand(&store, &hi, &format!("h{s}-{k}"), at(s)).await;
        }
        if claim_ready(&store, at(s), 3).await.contains(&low) {
            claimed_at = Some(s);
            break;
        }
    }
    let s = claimed_at.expect("the low-priority instance was never claimed");
    assert!((90..=91).contains(&s), "claimed after {s} s of sustained higher-priority load; the bound is 90 s");
}

async fn fires_past_max_pending_are_coalesced_counted_and_recorded(db: &TestDb) {
    let store = db.store().await;
    let every_second =
        Schedule::Cron { expression: "* * * * * *".into(), time_zone: "UTC".into(), dialect: CronDialect::Unix };
    let p = Placement { max_pending: NonZeroU32::new(2).expect("2"), ..Placement::default() };
    let task = create(&store, "busy", config(every_second, p), t0()).await;
    let fire = |s: u64| {
        let store = store.clone();
        async move {
            let planner = EnginePlanner { now: at(s), lookahead: Duration::ZERO };
            trigger_due(&store, at(s), at(s), 500, &planner, "axd-test", &Traces::off()).await.expect("trigger")
        }
    };
    assert_eq!(fire(1).await.created.len(), 1);
    assert_eq!(fire(2).await.created.len(), 1);
    assert!(fire(3).await.created.is_empty(), "two PENDING: the fire at +3 s is coalesced");
    assert!(fire(4).await.created.is_empty());
    let t = store.get_task("busy").await.expect("get").expect("task");
    assert_eq!(t.coalesced, Some((at(3), 2)), "since the fire at +3 s, two fires");
    assert_eq!(t.next_fire_at, Some(at(5)), "the schedule moves on");
    let events = store.task_events(task.id, 10).await.expect("events");
    let coalesced: Vec<&str> =
        events.iter().filter(|e| e.kind == TaskEventKind::Coalesced).map(|e| e.message.as_str()).collect();
    assert_eq!(coalesced.len(), 1, "one event when coalescing starts: {coalesced:?}");
    assert!(coalesced[0].contains("2 instances of this task are PENDING (max-pending 2)"), "{}", coalesced[0]);
    // One runs: the next fire is created, and the run of coalesced fires is summed up.
    claim_ready(&store, at(4), 1).await;
    assert_eq!(fire(5).await.created.len(), 1);
    let t = store.get_task("busy").await.expect("get").expect("task");
    assert_eq!(t.coalesced, None);
    let events = store.task_events(task.id, 10).await.expect("events");
    let summary = events.iter().find(|e| e.kind == TaskEventKind::Coalesced).expect("summary");
    assert!(summary.message.starts_with("2 fire(s) from 2026-06-01T10:00:03+00:00"), "{}", summary.message);
    let keys: Vec<String> = store
        .list_instances(&InstanceFilter { task_name: Some("busy".into()), limit: 10, ..Default::default() })
        .await
        .expect("list")
        .into_iter()
        .map(|i| i.idempotency_key)
        .collect();
    assert_eq!(
        keys,
        ["fire:2026-06-01T10:00:05Z", "fire:2026-06-01T10:00:02Z", "fire:2026-06-01T10:00:01Z"],
        "no instance for the coalesced fires"
    );
}

async fn placement_settings_round_trip(db: &TestDb) {
    let store = db.store().await;
    let p = Placement {
        selector: "gpu=true,zone in (a,b)".into(),
        retry_on: RetryOn::Same,
        shards: NonZeroU32::new(7),
        hash_key: None,
        priority: 9,
        max_running: NonZeroU32::new(3),
        max_pending: NonZeroU32::new(5).expect("5"),
        cooldown: CooldownPolicy { after: Some(0), duration: Some(Duration::from_millis(1500)) },
        concurrency_key: Some("params.a.b".into()),
        concurrency_limit: NonZeroU32::new(4),
        unique_key: Some("params.c".into()),
        unique_for: Some(Duration::from_secs(90)),
        search_params: Vec::new(),
    };
    let created = create(&store, "placed", config(Schedule::Manual, p.clone()), t0()).await;
    assert_eq!(created.config.placement, p);
    assert_eq!(store.get_task("placed").await.expect("get").expect("task").config.placement, p);
    let mut hashed = config(Schedule::Manual, Placement { hash_key: Some("user".into()), ..Placement::default() });
    hashed.routing = Routing::Hash;
    hashed.params = r#"{"user":"u1"}"#.into();
    let h = create(&store, "hashed", hashed.clone(), t0()).await;
    assert_eq!(h.config, hashed);
    let trig = ManualTrigger {
        params: r#"{"user":"u1"}"#.into(),
        key: "k".into(),
        actor: "test".into(),
        run_at: None,
        tags: Default::default(),
    };
    let (i, _) = trigger_manual(&store, &h, &trig, t0(), "axd-test", &Traces::off()).await.expect("trigger");
    assert_eq!(i.route.hash_key.as_deref(), Some("u1"), "the key is the params field's value");
    assert_eq!(i.status, InstanceStatus::Pending);
}

/// Instance of `task` due at `run_at`, created at t0.
async fn fire_later(store: &Arc<Store>, task: &Task, key: &str, run_at: Ts) -> i64 {
    let trig = ManualTrigger {
        params: "{}".into(),
        key: key.into(),
        actor: "test".into(),
        run_at: Some(run_at),
        tags: Default::default(),
    };
    trigger_manual(store, task, &trig, t0(), "axd-test", &Traces::off()).await.expect("trigger").0.id
}

async fn next_due(store: &Arc<Store>, apps: &[&str]) -> Option<Ts> {
    let apps: Vec<String> = apps.iter().map(|a| (*a).to_owned()).collect();
    store.conn().await.expect("conn").instances().next_available(&apps).await.expect("next available")
}

async fn the_next_due_time_is_the_earliest_whatever_the_priorities(db: &TestDb) {
    let store = db.store().await;
    assert_eq!(next_due(&store, &["app"]).await, None, "nothing is PENDING");
    let lo = create(&store, "lo", config(Schedule::Manual, prio(0)), t0()).await;
    let hi = create(&store, "hi", config(Schedule::Manual, prio(9)), t0()).await;
    let mid = create(&store, "mid", config(Schedule::Manual, prio(4)), t0()).await;
    // Ties of one priority: the one time they share.
    for k in 0..5 {
        fire_later(&store, &lo, &format!("tie{k}"), at(300)).await;
    }
    assert_eq!(next_due(&store, &["app"]).await, Some(at(300)));
    // Due at +150 with priority 9, it is first in claim order (ready at +60), but a priority-0
    // instance due at +100 (ready at +100) comes due before it.
    fire_later(&store, &hi, "hi", at(150)).await;
    fire_later(&store, &lo, "lo", at(100)).await;
    assert_eq!(next_due(&store, &["app"]).await, Some(at(100)));
    // Priority 4 due at +95: ready at +55, first in claim order and the earliest due.
    fire_later(&store, &mid, "mid", at(95)).await;
    assert_eq!(next_due(&store, &["app"]).await, Some(at(95)));
    // Another app's earlier instance counts only when that app is asked for.
    let mut other = config(Schedule::Manual, prio(9));
    other.app = "other".into();
    let other = create(&store, "other", other, t0()).await;
    fire_later(&store, &other, "o", at(50)).await;
    assert_eq!(next_due(&store, &["app"]).await, Some(at(95)));
    assert_eq!(next_due(&store, &["app", "other"]).await, Some(at(50)));
    assert_eq!(next_due(&store, &["nobody"]).await, None);
    // Claimed instances are not PENDING: the earliest left is next.
    assert_eq!(claim_ready(&store, at(100), 2).await.len(), 2, "the +95 and +100 instances");
    assert_eq!(next_due(&store, &["app"]).await, Some(at(150)));
}

on_every_backend!(
    the_next_due_time_is_the_earliest_whatever_the_priorities,
    higher_priority_goes_first_and_a_low_priority_waits_at_most_ninety_seconds,
    fires_past_max_pending_are_coalesced_counted_and_recorded,
    placement_settings_round_trip,
);
