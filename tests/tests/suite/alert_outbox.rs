//! The alert outbox on SQLite, PostgreSQL and MySQL/MariaDB: deliveries written by the
//! transactions that change instances, claims that another axd skips and takes over once they
//! lapse, fenced outcomes, and condition episodes that alert once however many axd evaluate them.

use std::{collections::BTreeMap, num::NonZeroU32, sync::Arc, time::Duration};

use ax_scheduler::{
    alerts::{
        AlertCause, AlertEvent, AlertRule, DeliveryStatus,
        outbox::{self, ConditionOutcome},
    },
    loops::{
        sweeper::{purge_deliveries, sweep},
        trigger::{EnginePlanner, trigger_due, trigger_manual},
    },
    model::{
        Backoff, ConcurrencyPolicy, CronDialect, MisfirePolicy, RetryPolicy, Routing, Schedule, Task, TaskConfig, Ts,
        add, to_micros,
    },
    routing::RoutingState,
    schedule::Compiled,
    store::{Actor, DeliveryEnd, DeliveryFilter, ManualTrigger, NewTask, Store},
    traces::Traces,
    transitions::cancel_instance,
};
use ax_tests::{TestDb, on_every_backend};
use chrono::{TimeZone, Utc};

const ACTOR: Actor<'static> = Actor { scheduler_id: "axd-test", caller: "spiffe://ax/admin/test" };

fn t0() -> Ts {
    Utc.with_ymd_and_hms(2026, 6, 1, 10, 0, 0).single().expect("instant")
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn config(schedule: Schedule, max_retries: u32) -> TaskConfig {
    TaskConfig {
        app: "billing".into(),
        handler: "send-invoice".into(),
        description: String::new(),
        schedule,
        params: "{}".into(),
        enabled: true,
        misfire_policy: MisfirePolicy::FireOnce,
        misfire_threshold: secs(60),
        max_catch_up: NonZeroU32::new(10).expect("nonzero"),
        concurrency: ConcurrencyPolicy::Allow,
        routing: Routing::LeastLoaded,
        timeout: Some(secs(30)),
        retry: RetryPolicy { max_retries, backoff: Backoff::List { delays_us: vec![1_000_000] } },
        labels: BTreeMap::new(),
        placement: Default::default(),
        timing: Default::default(),
        flow: Default::default(),
    }
}

async fn create(store: &Arc<Store>, name: &str, c: TaskConfig, now: Ts) -> Task {
    let next = if c.enabled { Compiled::compile(&c.schedule).expect("compile").first_fire(now) } else { None };
    store.create_task(&NewTask { name: name.into(), config: c, next_fire_at: next }, now, &ACTOR).await.expect("create")
}

async fn rule(store: &Arc<Store>, name: &str, task: Option<&str>, events: &[AlertEvent]) -> AlertRule {
    let mut r = AlertRule {
        id: 0,
        name: name.into(),
        app: "billing".into(),
        task_name: task.map(str::to_owned),
        events: events.to_vec(),
        url: format!("http://127.0.0.1:9/{name}"),
        secret: "0123456789abcdef".into(),
        no_worker_for: events.contains(&AlertEvent::NoWorker).then(|| secs(10)),
        backlog_over: events.contains(&AlertEvent::Backlog).then_some(1),
        created_by: "test".into(),
        created_at: t0(),
    };
    let mut tx = store.begin().await.expect("begin");
    r.id = tx.alerts().insert_alert_rule(&r).await.expect("insert rule");
    tx.commit().await.expect("commit");
    r
}

async fn deliveries(store: &Arc<Store>, rule: &str) -> Vec<ax_scheduler::alerts::Delivery> {
    let f = DeliveryFilter { rule_name: Some(rule.into()), limit: 100, ..Default::default() };
    store.list_deliveries(&f).await.expect("list deliveries")
}

/// A manual instance of `task`, made RUNNING on worker w1 with the given deadline and lease.
async fn running(db: &TestDb, store: &Arc<Store>, task: &Task, key: &str, deadline: Ts, lease: Ts) -> i64 {
    let trig = ManualTrigger {
        params: "{}".into(),
        key: key.into(),
        actor: "alice".into(),
        run_at: None,
        tags: Default::default(),
    };
    let (inst, _) = trigger_manual(store, task, &trig, t0(), "axd-test", &Traces::off()).await.expect("trigger");
    db.execute(&format!(
        "UPDATE ax_instance SET status = 'RUNNING', attempt = 1, worker_id = 'w1', session_id = 's1', \
         scheduler_id = 'axd-gone', started_at = {s}, deadline_at = {d}, lease_expires_at = {l} WHERE id = {id}",
        s = to_micros(t0()),
        d = to_micros(deadline),
        l = to_micros(lease),
        id = inst.id
    ))
    .await;
    inst.id
}

async fn final_failures_timeouts_and_lost_workers_are_written_by_the_sweep(db: &TestDb) {
    let store = db.store().await;
    let task = create(&store, "nightly", config(Schedule::Manual, 0), t0()).await;
    create(&store, "other", config(Schedule::Manual, 0), t0()).await;
    let app_wide = rule(&store, "app-wide", None, &[AlertEvent::FinalFailure, AlertEvent::WorkerLost]).await;
    rule(&store, "only-other", Some("other"), &[AlertEvent::FinalFailure, AlertEvent::Timeout]).await;
    rule(&store, "timeouts", Some("nightly"), &[AlertEvent::Timeout]).await;
    let far = add(t0(), secs(3600));
    let timed_out = running(db, &store, &task, "a", add(t0(), secs(5)), far).await;
    let lost = running(db, &store, &task, "b", far, add(t0(), secs(5))).await;
    let report = sweep(&store, add(t0(), secs(6)), 100, "axd-test", &Traces::off(), &RoutingState::default(), secs(10))
        .await
        .expect("sweep");
    assert_eq!((report.timeouts, report.lost), (1, 1));

    let mut got: Vec<(String, Option<String>, Option<i64>)> = deliveries(&store, "app-wide")
        .await
        .into_iter()
        .map(|d| {
            let body: serde_json::Value = serde_json::from_str(&d.payload).expect("json");
            (d.event.as_str().to_owned(), d.task_name, body["instance_id"].as_i64())
        })
        .collect();
    got.sort();
    let mut want = vec![
        ("final_failure".to_owned(), Some("nightly".to_owned()), Some(lost)),
        ("final_failure".to_owned(), Some("nightly".to_owned()), Some(timed_out)),
        ("worker_lost".to_owned(), Some("nightly".to_owned()), Some(lost)),
    ];
    want.sort();
    assert_eq!(got, want, "the app-wide rule hears about every task of the app, only for the events it watches");
    let t = deliveries(&store, "timeouts").await;
    assert_eq!(t.len(), 1);
    assert_eq!((t[0].event, t[0].status, t[0].attempts), (AlertEvent::Timeout, DeliveryStatus::Pending, 0));
    assert!(deliveries(&store, "only-other").await.is_empty(), "a task rule ignores other tasks");
    assert_eq!(app_wide.url, deliveries(&store, "app-wide").await[0].url);
}

async fn a_rolled_back_change_leaves_no_delivery(db: &TestDb) {
    let store = db.store().await;
    rule(&store, "r", None, &[AlertEvent::FinalFailure]).await;
    let cause = AlertCause {
        event: AlertEvent::FinalFailure,
        app: "billing".into(),
        task_name: "nightly".into(),
        instance_id: Some(1),
        attempt: 1,
        at: t0(),
        message: "handler failed".into(),
        occurrence: "i1:a1".into(),
    };
    let mut tx = store.begin().await.expect("begin");
    assert_eq!(outbox::enqueue(&mut tx, std::slice::from_ref(&cause), t0()).await.expect("enqueue"), 1);
    drop(tx);
    assert!(deliveries(&store, "r").await.is_empty(), "the delivery belongs to the transaction");
    let mut tx = store.begin().await.expect("begin");
    outbox::enqueue(&mut tx, &[cause.clone(), cause], t0()).await.expect("enqueue");
    tx.commit().await.expect("commit");
    assert_eq!(deliveries(&store, "r").await.len(), 1, "one delivery per rule and occurrence");
}

async fn skips_and_misfires_are_written_by_the_trigger(db: &TestDb) {
    let store = db.store().await;
    let mut c = config(
        Schedule::Cron { expression: "* * * * * *".into(), time_zone: "UTC".into(), dialect: CronDialect::Unix },
        0,
    );
    c.concurrency = ConcurrencyPolicy::Forbid;
    c.misfire_policy = MisfirePolicy::Skip;
    create(&store, "forbid", c, t0()).await;
    rule(&store, "skips", Some("forbid"), &[AlertEvent::Skipped, AlertEvent::Misfire]).await;
    let planner = |now| EnginePlanner { now, lookahead: secs(2) };
    let at = |s| add(t0(), secs(s));
    trigger_due(&store, at(1), at(3), 500, &planner(at(1)), "axd-test", &Traces::off()).await.expect("trigger");
    let r = trigger_due(&store, at(2), at(4), 500, &planner(at(2)), "axd-test", &Traces::off()).await.expect("trigger");
    assert_eq!(r.skipped, 1);
    let d = deliveries(&store, "skips").await;
    assert_eq!(d.iter().map(|d| d.event).collect::<Vec<_>>(), vec![AlertEvent::Skipped]);
    // Ten minutes late: the SKIP misfire policy drops the missed fires, and says so.
    trigger_due(&store, at(600), at(602), 500, &planner(at(600)), "axd-test", &Traces::off()).await.expect("trigger");
    let events: Vec<AlertEvent> = deliveries(&store, "skips").await.iter().map(|d| d.event).collect();
    assert!(events.contains(&AlertEvent::Misfire), "{events:?}");
}

async fn claims_are_exclusive_lapse_and_fence_outcomes(db: &TestDb) {
    let a = db.store().await;
    let b = db.store_with(2).await;
    rule(&a, "r", None, &[AlertEvent::FinalFailure]).await;
    let causes: Vec<AlertCause> = (0..20)
        .map(|i| AlertCause {
            event: AlertEvent::FinalFailure,
            app: "billing".into(),
            task_name: "nightly".into(),
            instance_id: Some(i),
            attempt: 1,
            at: t0(),
            message: String::new(),
            occurrence: format!("i{i}:a1"),
        })
        .collect();
    let mut tx = a.begin().await.expect("begin");
    outbox::enqueue(&mut tx, &causes, t0()).await.expect("enqueue");
    tx.commit().await.expect("commit");
    let lease = add(t0(), secs(30));
    let claim = |s: &Arc<Store>, now: Ts, until: Ts| {
        let s = s.clone();
        async move {
            let mut tx = s.begin().await.expect("begin");
            let got = tx.alerts().claim_deliveries(now, until, 12, 12, &[]).await.expect("claim");
            // Hold the rows until the other claim has run.
            tokio::time::sleep(Duration::from_millis(50)).await;
            tx.commit().await.expect("commit");
            got
        }
    };
    let (ca, cb) = tokio::join!(claim(&a, t0(), lease), claim(&b, t0(), lease));
    let mut ids: Vec<i64> = ca.iter().chain(cb.iter()).map(|(d, _)| d.id).collect();
    assert_eq!(ids.len(), 20, "both axd claimed, 12 at most each: {} + {}", ca.len(), cb.len());
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 20, "no delivery was claimed twice");
    assert!(ca.iter().chain(cb.iter()).all(|(d, s)| d.attempts == 1 && s.as_deref() == Some("0123456789abcdef")));
    assert!(claim(&a, add(t0(), secs(29)), lease).await.is_empty(), "claimed rows are not due before the lease");

    // The claim lapses (its axd died mid-send): another axd takes the same delivery again.
    // Every row is due at the same time again: the next claim takes them in id order.
    let first = ca.iter().chain(cb.iter()).min_by_key(|(d, _)| d.id).expect("claimed").0.clone();
    let again = claim(&b, lease, add(lease, secs(30))).await;
    let retaken = again.iter().find(|(d, _)| d.id == first.id).expect("taken again").0.clone();
    assert_eq!((retaken.attempts, retaken.dedupe_key.as_str()), (2, first.dedupe_key.as_str()));
    let mut c = a.conn().await.expect("conn");
    assert!(
        !c.alerts().finish_delivery(first.id, 1, &DeliveryEnd::Delivered, lease).await.unwrap(),
        "attempt 1 is stale"
    );
    assert!(c.alerts().finish_delivery(first.id, 2, &DeliveryEnd::Delivered, lease).await.unwrap());
    let d = a.get_delivery(first.id).await.unwrap().expect("row");
    assert_eq!((d.status, d.attempts, d.finished_at), (DeliveryStatus::Delivered, 2, Some(lease)));

    // A retry is due at its backoff; a failure for good is final and keeps its error.
    let (other, _) = again.iter().find(|(d, _)| d.id != first.id).expect("another").clone();
    let retry_at = add(lease, secs(4));
    let end = DeliveryEnd::Retry { error: "HTTP 503".into(), at: retry_at };
    assert!(c.alerts().finish_delivery(other.id, 2, &end, lease).await.unwrap());
    assert!(claim(&a, add(lease, secs(3)), add(lease, secs(60))).await.iter().all(|(d, _)| d.id != other.id));
    let third = claim(&a, retry_at, add(retry_at, secs(60))).await;
    assert!(third.iter().any(|(d, _)| d.id == other.id && d.attempts == 3));
    let end = DeliveryEnd::Failed { error: "HTTP 503; gave up".into() };
    assert!(c.alerts().finish_delivery(other.id, 3, &end, retry_at).await.unwrap());
    let d = a.get_delivery(other.id).await.unwrap().expect("row");
    assert_eq!((d.status, d.last_error.as_str()), (DeliveryStatus::Failed, "HTTP 503; gave up"));

    // Retention removes finished deliveries only: the delivered and the failed one.
    assert_eq!(purge_deliveries(&a, retry_at).await.unwrap(), 1, "finished before retry_at: the delivered one");
    assert_eq!(purge_deliveries(&a, add(retry_at, secs(1))).await.unwrap(), 1);
    assert!(a.get_delivery(other.id).await.unwrap().is_none());
    assert_eq!(deliveries(&a, "r").await.len(), 18, "pending deliveries stay");
    b.close().await;
}

async fn a_condition_episode_alerts_once_across_axd(db: &TestDb) {
    let a = db.store().await;
    let b = db.store_with(2).await;
    let task = create(&a, "nightly", config(Schedule::Manual, 0), t0()).await;
    let backlog = rule(&a, "backlog", None, &[AlertEvent::Backlog]).await;
    let no_worker = rule(&a, "no-worker", None, &[AlertEvent::NoWorker]).await;
    let alive = t0();
    let trig = |k: &str| ManualTrigger {
        params: "{}".into(),
        key: k.into(),
        actor: "alice".into(),
        run_at: None,
        tags: Default::default(),
    };
    let i1 = trigger_manual(&a, &task, &trig("1"), t0(), "axd-test", &Traces::off()).await.expect("trigger").0;
    assert_eq!(
        outbox::evaluate(&a, &backlog, t0(), alive, 50).await.unwrap(),
        ConditionOutcome::Clear,
        "1 is not over 1"
    );
    trigger_manual(&a, &task, &trig("2"), t0(), "axd-test", &Traces::off()).await.expect("trigger");
    let at = |s| add(t0(), secs(s));
    let (ra, rb) = tokio::join!(
        outbox::evaluate(&a, &backlog, at(1), alive, 50),
        outbox::evaluate(&b, &backlog, at(1), alive, 50)
    );
    let mut outcomes = vec![ra.unwrap(), rb.unwrap()];
    outcomes.sort_by_key(|o| format!("{o:?}"));
    assert_eq!(outcomes, vec![ConditionOutcome::Alerted { episode: 1 }, ConditionOutcome::Holding]);
    assert_eq!(outbox::evaluate(&b, &backlog, at(2), alive, 50).await.unwrap(), ConditionOutcome::Holding);
    assert_eq!(deliveries(&a, "backlog").await.len(), 1, "one delivery per episode");
    cancel_instance(&a, i1.id, "", at(3), &ACTOR, &RoutingState::default()).await.unwrap();
    assert_eq!(
        outbox::evaluate(&a, &backlog, at(3), alive, 50).await.unwrap(),
        ConditionOutcome::Clear,
        "episode over"
    );
    trigger_manual(&a, &task, &trig("3"), at(4), "axd-test", &Traces::off()).await.expect("trigger");
    assert_eq!(
        outbox::evaluate(&b, &backlog, at(4), alive, 50).await.unwrap(),
        ConditionOutcome::Alerted { episode: 2 }
    );
    let d = deliveries(&a, "backlog").await;
    assert_eq!(d.len(), 2);
    assert!(d[0].payload.contains("2 instances of app billing PENDING, more than 1"), "{}", d[0].payload);

    // No worker of the app: alerts once the condition has held for no_worker_for (10 s).
    assert_eq!(outbox::evaluate(&a, &no_worker, t0(), alive, 50).await.unwrap(), ConditionOutcome::Holding);
    assert_eq!(outbox::evaluate(&b, &no_worker, at(9), alive, 50).await.unwrap(), ConditionOutcome::Holding);
    assert_eq!(
        outbox::evaluate(&b, &no_worker, at(10), alive, 50).await.unwrap(),
        ConditionOutcome::Alerted { episode: 1 }
    );
    assert_eq!(outbox::evaluate(&a, &no_worker, at(60), alive, 50).await.unwrap(), ConditionOutcome::Holding);
    assert_eq!(deliveries(&a, "no-worker").await.len(), 1);
    b.close().await;
}

/// Claims are fair (issue 33, item 3): apps take turns, then rules within an app, each rule's
/// deliveries in due order; a rule gets at most `per_rule` places and none when it is full.
async fn claims_let_apps_and_rules_take_turns(db: &TestDb) {
    let store = db.store().await;
    let mut rules = Vec::new();
    for (name, app) in [("a-busy", "app-a"), ("a-quiet", "app-a"), ("b-quiet", "app-b")] {
        let mut r = rule(&store, name, None, &[AlertEvent::FinalFailure]).await;
        let mut tx = store.begin().await.expect("begin");
        r.app = app.into();
        tx.alerts().delete_alert_rule(r.id).await.expect("delete");
        r.id = tx.alerts().insert_alert_rule(&r).await.expect("insert");
        tx.commit().await.expect("commit");
        rules.push(r);
    }
    // a-busy: 10 deliveries due first; then a-quiet's one; b-quiet's last.
    let new = |r: &AlertRule, n: u64| ax_scheduler::alerts::NewDelivery {
        rule_id: r.id,
        rule_name: r.name.clone(),
        app: r.app.clone(),
        task_name: None,
        event: AlertEvent::FinalFailure,
        dedupe_key: format!("{}-{n}", r.name),
        url: r.url.clone(),
        payload: "{}".into(),
        due_at: add(t0(), secs(n)),
    };
    let mut rows: Vec<_> = (0..10).map(|n| new(&rules[0], n)).collect();
    rows.push(new(&rules[1], 20));
    rows.push(new(&rules[2], 30));
    let mut tx = store.begin().await.expect("begin");
    tx.alerts().insert_deliveries(&rows, t0()).await.expect("insert deliveries");
    tx.commit().await.expect("commit");
    let now = add(t0(), secs(60));
    let claim = |limit: u32, per_rule: u32, full: Vec<i64>| {
        let store = store.clone();
        async move {
            let mut tx = store.begin().await.expect("begin");
            let got =
                tx.alerts().claim_deliveries(now, add(now, secs(30)), limit, per_rule, &full).await.expect("claim");
            // Rolled back, and done before the next claim begins: every claim sees the same rows.
            tx.rollback().await.expect("rollback");
            got.into_iter().map(|(d, _)| d.dedupe_key).collect::<Vec<_>>()
        }
    };
    // Apps first, then rules: the first turn of each app, then app-a's other rule.
    assert_eq!(claim(3, 4, vec![]).await, ["a-busy-0", "b-quiet-30", "a-quiet-20"]);
    // A rule's share.
    let all = claim(20, 4, vec![]).await;
    assert_eq!(all.iter().filter(|k| k.starts_with("a-busy")).count(), 4, "{all:?}");
    assert_eq!(all.len(), 6, "{all:?}");
    // A full rule gets none.
    assert_eq!(claim(20, 4, vec![rules[0].id]).await, ["a-quiet-20", "b-quiet-30"]);
}

on_every_backend!(
    final_failures_timeouts_and_lost_workers_are_written_by_the_sweep,
    a_rolled_back_change_leaves_no_delivery,
    skips_and_misfires_are_written_by_the_trigger,
    claims_are_exclusive_lapse_and_fence_outcomes,
    a_condition_episode_alerts_once_across_axd,
    claims_let_apps_and_rules_take_turns,
);
