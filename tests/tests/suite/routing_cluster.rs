//! Limits and cooldowns hold across three axd on one PostgreSQL or MariaDB database: a task's
//! running limit and an app's rate limit are cluster-wide (row locks in the claim), and a worker's
//! cooldown applies on every axd whichever axd recorded its failures.

use std::{sync::atomic::Ordering, time::Duration};

use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_scheduler::config::HumanDuration;
use ax_tests::{
    TestDb,
    axd::Axd,
    client::{create, dur, manual, spec, trigger_with, utc, wait_status},
    eventually,
    fleet::{Fleet, connected},
    on_server_backends,
    webhook::Receiver,
};

const LONG: Duration = Duration::from_secs(60);

/// Three axd on `db`, each with one worker (`w0`, `w1`, `w2`) of app `app`.
async fn three(db: &TestDb, capacity: u32) -> (Vec<Axd>, Fleet) {
    three_with(db, capacity, Fleet::default()).await
}

async fn three_with(db: &TestDb, capacity: u32, fleet: Fleet) -> (Vec<Axd>, Fleet) {
    let mut axds = Vec::new();
    // No worker here is lost on purpose: a long grace keeps an attempt's lease (1.5 s + grace)
    // from running out while a loaded machine delays its renewal, which would hand the attempt to
    // another worker while its first handler is still held at the gate.
    for _ in 0..3 {
        axds.push(
            Axd::start(db, |o| {
                o.lost_worker_grace = Some(HumanDuration(Duration::from_secs(10)));
                // Alert webhooks go to a receiver on loopback.
                o.alert_allow_private_targets = Some(true);
            })
            .await,
        );
    }
    for (i, a) in axds.iter().enumerate() {
        fleet.start(&a.endpoint, "app", &format!("w{i}"), capacity, &[]);
    }
    connected(&axds[0].admin().await, "app", &["w0", "w1", "w2"]).await;
    (axds, fleet)
}

async fn stop(axds: Vec<Axd>, fleet: Fleet) {
    fleet.stop_all();
    for a in axds {
        a.stop().await;
    }
}

async fn a_running_limit_holds_across_three_axd(db: &TestDb) {
    // Gated: the first runs stay under way until the test has seen the cap hold.
    let (axds, fleet) = three_with(db, 6, Fleet::gated()).await;
    let mut admin = axds[0].admin().await;
    let mut s = spec("capped", "app", "run", manual());
    s.max_running = Some(3);
    create(&mut admin, s).await;
    let mut ids = Vec::new();
    for n in 0..24 {
        // Triggered through every axd in turn.
        let mut a = axds[n % 3].admin().await;
        ids.push(trigger_with(&mut a, "capped", &format!("c{n}"), r#"{"ms":150}"#).await);
    }
    fleet.hold_at_cap(&admin, "capped", 3).await;
    for id in &ids {
        wait_status(&mut admin, *id, S::Success, LONG).await;
    }
    let workers: std::collections::BTreeSet<String> =
        fleet.runs.lock().expect("lock").iter().map(|r| r.worker.clone()).collect();
    assert!(workers.len() >= 2, "the three axd shared the work: {workers:?}");
    assert_eq!(fleet.peak.load(Ordering::SeqCst), 3, "18 free slots on three axd, at most 3 at once");
    stop(axds, fleet).await;
}

async fn an_app_rate_limit_holds_across_three_axd(db: &TestDb) {
    let (axds, fleet) = three(db, 10).await;
    let mut admin = axds[1].admin().await;
    create(&mut admin, spec("paced", "app", "run", manual())).await;
    let limit = pb::AppLimit { app: "app".into(), per_second: 5.0, burst: 2, ..Default::default() };
    admin.set_app_limit(pb::SetAppLimitRequest { limit: Some(limit) }).await.expect("set");
    let mut ids = Vec::new();
    for n in 0..15 {
        let mut a = axds[n % 3].admin().await;
        ids.push(trigger_with(&mut a, "paced", &format!("p{n}"), "{}").await);
    }
    let mut starts = Vec::new();
    let mut by = std::collections::BTreeSet::new();
    for id in &ids {
        wait_status(&mut admin, *id, S::Success, LONG).await;
        let got = admin.get_instance(pb::GetInstanceRequest { id: *id }).await.expect("get").into_inner();
        let d = got.events.iter().find(|e| e.to_status == S::Dispatched as i32).expect("dispatched");
        starts.push(utc(d.time.as_ref().expect("time")));
        by.insert(d.scheduler_id.clone());
    }
    starts.sort();
    assert!(by.len() >= 2, "several axd dispatched: {by:?}");
    for i in 0..starts.len() {
        for j in i..starts.len() {
            let secs = (starts[j] - starts[i]).as_seconds_f64() + 0.05;
            let n = (j - i + 1) as f64;
            assert!(n <= 2.0 + 5.0 * secs + 1e-9, "{n} starts in {secs:.3} s exceed 5/s with a burst of 2: {starts:?}");
        }
    }
    stop(axds, fleet).await;
}

async fn a_worker_cooling_down_is_passed_over_by_every_axd(db: &TestDb) {
    let mut axds = Vec::new();
    // No worker here is lost on purpose: a long grace keeps an attempt's lease (1.5 s + grace)
    // from running out while a loaded machine delays its renewal, which would hand the attempt to
    // another worker while its first handler is still held at the gate.
    for _ in 0..3 {
        axds.push(Axd::start(db, |o| o.lost_worker_grace = Some(HumanDuration(Duration::from_secs(10)))).await);
    }
    let mut admin = axds[2].admin().await;
    let mut s = spec("slow", "app", "run", manual());
    s.timeout = Some(dur(Duration::from_secs(1)));
    s.cooldown_after = Some(2);
    s.cooldown = Some(dur(Duration::from_secs(60)));
    create(&mut admin, s).await;
    let fleet = Fleet::default();
    // w0 holds its stream on axd 0; its attempts time out, which any axd's sweeper records.
    fleet.start(&axds[0].endpoint, "app", "w0", 4, &[]);
    connected(&admin, "app", &["w0"]).await;
    for k in ["t1", "t2"] {
        let id = trigger_with(&mut admin, "slow", k, r#"{"ms":5000,"slow_on":["w0"]}"#).await;
        wait_status(&mut admin, id, S::Timeout, LONG).await;
    }
    let cooling = eventually(LONG, "w0 cooling down", || async {
        let mut admin = admin.clone();
        let w = admin.list_workers(pb::ListWorkersRequest { app: "app".into() }).await.ok()?.into_inner().workers;
        let c = w.into_iter().find(|w| w.worker_id == "w0")?.cooldowns;
        c.into_iter().find(|c| c.until.is_some())
    })
    .await;
    assert_eq!(cooling.consecutive_failures, 2);
    // Workers on the two other axd; w0 still has free credits on axd 0.
    fleet.start(&axds[1].endpoint, "app", "w1", 4, &[]);
    fleet.start(&axds[2].endpoint, "app", "w2", 4, &[]);
    connected(&admin, "app", &["w0", "w1", "w2"]).await;
    let joined = chrono::Utc::now();
    // Every axd reads cooldowns and the cluster's workers at most a refresh period old
    // (ax_scheduler::routing::state::REFRESH): wait until both the cooldown began and w1 and w2
    // joined more than that ago. An axd that still sees w0 as the app's only worker lets the
    // cooldown floor (at most half of the serving workers cool at once) release w0 — the CI of
    // 6 December 2026 saw axd 0 route the first instance to w0 that way.
    let began = utc(cooling.until.as_ref().expect("until")) - chrono::TimeDelta::seconds(60);
    let known = ax_scheduler::routing::state::REFRESH + Duration::from_millis(100);
    eventually(LONG, "a refresh period since the cooldown began and w1, w2 joined", || async {
        (chrono::Utc::now() - began.max(joined) > chrono::TimeDelta::from_std(known).expect("delta")).then_some(())
    })
    .await;
    let mut ids = Vec::new();
    for n in 0..12 {
        let mut a = axds[n % 3].admin().await;
        ids.push(trigger_with(&mut a, "slow", &format!("ok{n}"), "{}").await);
    }
    for id in ids {
        wait_status(&mut admin, id, S::Success, LONG).await;
        let runs = fleet.of(id);
        assert!(runs.iter().all(|r| r.worker != "w0"), "instance {id} ran on w0 while it cooled down: {runs:?}");
    }
    fleet.stop_all();
    for a in axds {
        a.stop().await;
    }
}

/// A handler that fails on every worker does not starve: once more of the three workers would
/// cool down for it than `--cooldown-max-share` (50 %: one of three) allows, the longest-cooling
/// are routed to again, and every instance ends (FAILED) within seconds instead of waiting out a
/// five-minute cooldown; the trail and `task explain` say why.
async fn a_handler_failing_on_every_worker_is_not_starved_by_cooldowns(db: &TestDb) {
    let (axds, fleet) = three(db, 4).await;
    let mut admin = axds[0].admin().await;
    let mut s = spec("doomed", "app", "run", manual());
    s.cooldown_after = Some(2);
    s.cooldown = Some(dur(Duration::from_secs(300)));
    create(&mut admin, s).await;
    let receiver = Receiver::start(|_| Some(200)).await;
    let rule = pb::AlertRuleSpec {
        name: "failing".into(),
        app: "app".into(),
        events: vec!["handler_failing".into()],
        url: receiver.url("/hook"),
        secret: "0123456789abcdef".into(),
        ..Default::default()
    };
    admin.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(rule) }).await.expect("rule");
    let mut ids = Vec::new();
    for n in 0..15 {
        let mut a = axds[n % 3].admin().await;
        ids.push(trigger_with(&mut a, "doomed", &format!("d{n}"), r#"{"fail":true}"#).await);
    }
    // Without the floor, six failures cool all three workers for 5 min and the rest wait.
    for id in &ids {
        wait_status(&mut admin, *id, S::Failed, Duration::from_secs(30)).await;
    }
    let mut floored = 0;
    for id in &ids {
        let got = admin.get_instance(pb::GetInstanceRequest { id: *id }).await.expect("get").into_inner();
        floored += got
            .events
            .iter()
            .filter(|e| {
                e.reason.contains("failing it: cooldown not applied")
                    || e.reason.contains("every worker failing handler run: cooldown not applied")
            })
            .count();
    }
    assert!(floored > 0, "some dispatch went to a worker whose cooldown the floor did not apply");
    let explained = admin
        .explain_task(pb::ExplainTaskRequest { name: "doomed".into(), ..Default::default() })
        .await
        .expect("explain")
        .into_inner();
    assert!(explained.findings.iter().any(|f| f.message.contains("cooldown not applied")), "{:#?}", explained.findings);
    // One alert for the episode, whichever axd evaluated it.
    let got = receiver.wait_for(1, LONG).await;
    let body: serde_json::Value = serde_json::from_slice(&got[0].body).expect("json");
    assert_eq!(body["event"], "handler_failing", "{body}");
    // Two of three failing already pass the 50 % share: the episode may begin then or at three.
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        ["handler run: 2 of 3 live workers failing it", "handler run: 3 of 3 live workers failing it"]
            .iter()
            .any(|m| message.contains(m)),
        "{body}"
    );
    stop(axds, fleet).await;
}

on_server_backends!(
    a_handler_failing_on_every_worker_is_not_starved_by_cooldowns,
    a_running_limit_holds_across_three_axd,
    an_app_rate_limit_holds_across_three_axd,
    a_worker_cooling_down_is_passed_over_by_every_axd,
);
