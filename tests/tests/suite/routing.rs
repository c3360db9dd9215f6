//! Routing and limits against a running axd, on every backend: cooldowns, retries elsewhere, label
//! selectors, broadcast and sharded fires, consistent hashing, running limits, app rate limits, and
//! the refusal of bad input. Priorities with aging and coalesced fires are checked at the store
//! level with an injected clock (tests/tests/suite/routing_store.rs); limits and cooldowns with three
//! axd on PostgreSQL and MariaDB in tests/tests/suite/routing_cluster.rs.

use std::{collections::BTreeMap, sync::atomic::Ordering, time::Duration};

use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_tests::{
    TestDb,
    axd::Axd,
    client::{create, dur, get, manual, retries, spec, trigger_with, wait_status},
    eventually,
    fleet::{Fleet, connected},
    on_every_backend,
};
use tonic::transport::Channel;

const LONG: Duration = Duration::from_secs(30);

type Admin = pb::admin_service_client::AdminServiceClient<Channel>;

async fn workers(admin: &Admin, app: &str) -> Vec<pb::WorkerSession> {
    admin.clone().list_workers(pb::ListWorkersRequest { app: app.into() }).await.expect("workers").into_inner().workers
}

async fn instance(admin: &Admin, id: i64) -> pb::GetInstanceResponse {
    admin.clone().get_instance(pb::GetInstanceRequest { id }).await.expect("get").into_inner()
}

/// The cooldowns of worker `id` of app `app`.
async fn cooldowns(admin: &Admin, id: &str) -> Vec<pb::WorkerCooldown> {
    workers(admin, "app").await.into_iter().find(|w| w.worker_id == id).map(|w| w.cooldowns).unwrap_or_default()
}

/// Waits until worker `id` is not cooling down any more.
async fn cooled(admin: &Admin, id: &str) {
    eventually(LONG, "the cooldown to end", || async {
        let now = chrono::Utc::now();
        let c = cooldowns(admin, id).await;
        c.iter().all(|c| c.until.as_ref().is_none_or(|u| ax_tests::client::utc(u) < now)).then_some(())
    })
    .await;
}

async fn a_worker_that_keeps_failing_cools_down_and_a_success_ends_it(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("flaky", "app", "run", manual());
    s.cooldown_after = Some(2);
    s.cooldown = Some(dur(Duration::from_secs(2)));
    create(&mut admin, s).await;
    let fleet = Fleet::default();
    // Two idle workers with equal free credits: routing picks w1 (the first by id) each time.
    fleet.start(&axd.endpoint, "app", "w1", 4, &[]);
    fleet.start(&axd.endpoint, "app", "w2", 4, &[]);
    connected(&admin, "app", &["w1", "w2"]).await;
    let run = |key: &str, params: &str| {
        let (mut admin, key, params) = (admin.clone(), key.to_owned(), params.to_owned());
        async move {
            let id = trigger_with(&mut admin, "flaky", &key, &params).await;
            let done = eventually(LONG, "the instance to end", || async {
                let i = instance(&admin, id).await.instance?;
                [S::Success as i32, S::Failed as i32].contains(&i.status).then_some(i)
            })
            .await;
            (id, done)
        }
    };
    let fail_w1 = r#"{"fail_on":["w1"]}"#;
    for k in ["f1", "f2"] {
        let (id, done) = run(k, fail_w1).await;
        assert_eq!((fleet.of(id)[0].worker.as_str(), done.status), ("w1", S::Failed as i32));
    }
    let c = cooldowns(&admin, "w1").await;
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].handler.as_str(), c[0].consecutive_failures), ("run", 2));
    assert!(c[0].until.is_some(), "two failures in a row start the cooldown");
    // While w1 cools down, the next instance goes to w2, and its trail says w1 was passed over.
    let (id, _) = run("ok-1", "{}").await;
    assert_eq!(fleet.of(id)[0].worker, "w2");
    let trail = instance(&admin, id).await.events;
    let dispatched = trail.iter().find(|e| e.to_status == S::Dispatched as i32).expect("dispatched");
    assert!(dispatched.reason.contains("passed over w1 (cooling down for handler run until"), "{}", dispatched.reason);
    // Once it ends, w1 is back; another failure there starts a cooldown twice as long.
    cooled(&admin, "w1").await;
    let (id, done) = run("f3", fail_w1).await;
    assert_eq!(fleet.of(id)[0].worker, "w1");
    let c = cooldowns(&admin, "w1").await;
    assert_eq!(c[0].consecutive_failures, 3);
    let until = ax_tests::client::utc(c[0].until.as_ref().expect("cooling again"));
    let finished = ax_tests::client::utc(done.finish_time.as_ref().expect("finished"));
    let length = (until - finished).num_milliseconds();
    assert!((3500..=4500).contains(&length), "the second cooldown doubles to 4 s, got {length} ms");
    // A success on w1 ends the streak.
    cooled(&admin, "w1").await;
    let (id, done) = run("ok-2", "{}").await;
    assert_eq!((fleet.of(id)[0].worker.as_str(), done.status), ("w1", S::Success as i32));
    assert!(cooldowns(&admin, "w1").await.is_empty());
    fleet.stop_all();
    axd.stop().await;
}

async fn a_retry_goes_to_another_worker_unless_it_is_the_only_one(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("retried", "app", "run", manual());
    s.retry_policy = Some(retries(1, Duration::ZERO));
    s.cooldown_after = Some(0);
    create(&mut admin, s).await;
    let fleet = Fleet::default();
    fleet.start(&axd.endpoint, "app", "w1", 4, &[]);
    connected(&admin, "app", &["w1"]).await;
    // Alone, w1 gets the retry back.
    let id = trigger_with(&mut admin, "retried", "alone", r#"{"fail_on":["w1"]}"#).await;
    let done = wait_status(&mut admin, id, S::Failed, LONG).await;
    assert_eq!(done.attempt, 2);
    let trail = instance(&admin, id).await.events;
    let second = trail.iter().filter(|e| e.to_status == S::Dispatched as i32).nth(1).expect("second dispatch");
    assert!(second.reason.contains("retry back on w1: it is the only worker serving run"), "{}", second.reason);
    // With w2 there, the retry of an attempt that failed on w1 goes to w2.
    fleet.start(&axd.endpoint, "app", "w2", 4, &[]);
    connected(&admin, "app", &["w1", "w2"]).await;
    for n in 0..4 {
        let id = trigger_with(&mut admin, "retried", &format!("two-{n}"), r#"{"fail_on":["w1"]}"#).await;
        wait_status(&mut admin, id, S::Success, LONG).await;
        let runs = fleet.of(id);
        if runs[0].worker == "w1" {
            assert_eq!(runs.len(), 2);
            assert_eq!(runs[1].worker, "w2", "{runs:?}");
            let trail = instance(&admin, id).await.events;
            let d = trail.iter().filter(|e| e.to_status == S::Dispatched as i32).nth(1).expect("retry");
            assert!(d.reason.contains("retry on another worker than w1"), "{}", d.reason);
        }
    }
    // retry-on same: the retry waits for w1 and runs there.
    let mut upd = spec("retried", "", "", manual());
    upd.retry_on = pb::RetryTarget::Same as i32;
    admin
        .update_task(pb::UpdateTaskRequest {
            name: "retried".into(),
            task: Some(upd),
            update_mask: Some(prost_types::FieldMask { paths: vec!["retry_on".into()] }),
        })
        .await
        .expect("update");
    let mut same = 0;
    for n in 0..6 {
        let id = trigger_with(&mut admin, "retried", &format!("same-{n}"), r#"{"fail_on":["w1"]}"#).await;
        let done = eventually(LONG, "the instance to end", || async {
            let i = instance(&admin, id).await.instance.expect("instance");
            [S::Success as i32, S::Failed as i32].contains(&i.status).then_some(i)
        })
        .await;
        let runs = fleet.of(id);
        if runs[0].worker == "w1" {
            same += 1;
            assert_eq!(done.status, S::Failed as i32, "both attempts on w1: {runs:?}");
            assert!(runs.iter().all(|r| r.worker == "w1"), "{runs:?}");
        }
    }
    assert!(same > 0, "least-loaded routing sent none of 6 first attempts to w1");
    fleet.stop_all();
    axd.stop().await;
}

async fn a_selector_runs_only_on_matching_workers_and_names_the_selector_while_none_matches(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("gpu-job", "app", "run", manual());
    s.selector = "gpu=true, zone in (a,b)".into();
    let t = create(&mut admin, s).await;
    assert_eq!(t.spec.expect("spec").selector, "gpu=true,zone in (a,b)", "stored normalized");
    let fleet = Fleet::default();
    fleet.start(&axd.endpoint, "app", "cpu", 4, &[("zone", "a")]);
    connected(&admin, "app", &["cpu"]).await;
    let id = trigger_with(&mut admin, "gpu-job", "k1", "{}").await;
    let got = instance(&admin, id).await;
    assert_eq!(got.instance.as_ref().map(|i| i.status), Some(S::Pending as i32));
    assert_eq!(got.instance.as_ref().map(|i| i.selector.as_str()), Some("gpu=true,zone in (a,b)"));
    let created = &got.events[0].reason;
    assert!(created.contains("no connected worker matches selector gpu=true,zone in (a,b)"), "{created}");
    assert!(created.contains("cpu{zone=a}"), "names the workers that are there: {created}");
    // Explain says so too, once it has waited over a second.
    let finding = eventually(LONG, "explain to name the selector", || async {
        let mut admin = admin.clone();
        let r = admin.explain_task(pb::ExplainTaskRequest { name: "gpu-job".into(), ..Default::default() });
        let r = r.await.ok()?.into_inner();
        r.findings.into_iter().find(|f| f.kind == pb::ExplainFindingKind::SelectorUnmatched as i32)
    })
    .await;
    assert_eq!(finding.instance_id, id);
    assert!(finding.message.contains("selector gpu=true,zone in (a,b)"), "{}", finding.message);
    fleet.start(&axd.endpoint, "app", "gpu", 4, &[("zone", "b"), ("gpu", "true")]);
    wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!(fleet.of(id).iter().map(|r| r.worker.as_str()).collect::<Vec<_>>(), ["gpu"]);
    // Many more: none lands on the worker that does not match.
    let ids: Vec<i64> = {
        let mut v = Vec::new();
        for n in 0..8 {
            v.push(trigger_with(&mut admin, "gpu-job", &format!("m{n}"), "{}").await);
        }
        v
    };
    for id in ids {
        wait_status(&mut admin, id, S::Success, LONG).await;
        assert_eq!(fleet.of(id)[0].worker, "gpu");
    }
    fleet.stop_all();
    axd.stop().await;
}

async fn a_broadcast_runs_once_on_each_matching_worker_and_its_parent_ends_with_them(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("everywhere", "app", "run", manual());
    s.routing = pb::RoutingStrategy::Broadcast as i32;
    s.selector = "zone=a".into();
    create(&mut admin, s).await;
    // No worker at all: the parent fails at once, saying why.
    let none = trigger_with(&mut admin, "everywhere", "none", "{}").await;
    let p = instance(&admin, none).await;
    assert_eq!(p.instance.as_ref().map(|i| i.status), Some(S::Failed as i32));
    assert!(p.instance.expect("i").message.contains("broadcast reached no worker"));
    assert!(p.children.is_empty());
    let fleet = Fleet::default();
    fleet.start(&axd.endpoint, "app", "w1", 2, &[("zone", "a")]);
    fleet.start(&axd.endpoint, "app", "w2", 2, &[("zone", "a")]);
    fleet.start(&axd.endpoint, "app", "w3", 2, &[("zone", "b")]);
    connected(&admin, "app", &["w1", "w2", "w3"]).await;
    let parent = trigger_with(&mut admin, "everywhere", "b1", r#"{"fail_on":["w2"]}"#).await;
    let done = wait_status(&mut admin, parent, S::Failed, LONG).await;
    assert_eq!(done.message, "1 of 2 children succeeded; 1 failed");
    let got = instance(&admin, parent).await;
    let kids: Vec<(String, u32, u32, i32)> =
        got.children.iter().map(|c| (c.target_worker.clone(), c.shard_index, c.shard_total, c.status)).collect();
    assert_eq!(kids, vec![("w1".into(), 0, 2, S::Success as i32), ("w2".into(), 1, 2, S::Failed as i32)]);
    for c in &got.children {
        assert_eq!(c.parent_id, parent);
        let runs = fleet.of(c.id);
        assert_eq!(runs.len(), 1, "each child runs once: {runs:?}");
        assert_eq!(runs[0].worker, c.target_worker, "on its own worker");
        assert_eq!(runs[0].shard, Some((c.shard_index, 2)));
    }
    let steps: Vec<(i32, i32)> = got.events.iter().map(|e| (e.from_status, e.to_status)).collect();
    assert_eq!(steps, vec![(0, S::Waiting as i32), (S::Waiting as i32, S::Failed as i32)]);
    // Retrying the failed child makes the parent wait again; its success ends the parent SUCCESS.
    let failed_child = got.children[1].id;
    // The params say to fail on w2: retry via the parent, which retries only unsuccessful children.
    admin.retry_instance(pb::RetryInstanceRequest { id: failed_child }).await.expect("retry child");
    let again = wait_status(&mut admin, parent, S::Failed, LONG).await;
    assert_eq!(again.message, "1 of 2 children succeeded; 1 failed");
    // The parent waited again in between: read from its trail, not from a snapshot (the retried
    // child can run, fail and end the parent again before a read right after the retry).
    let (w, f) = (S::Waiting as i32, S::Failed as i32);
    let steps: Vec<(i32, i32)> =
        instance(&admin, parent).await.events.iter().map(|e| (e.from_status, e.to_status)).collect();
    assert_eq!(steps, vec![(0, w), (w, f), (f, w), (w, f)], "the retried child made the parent wait again");
    assert_eq!(fleet.of(got.children[0].id).len(), 1, "the child that succeeded did not run again");
    // A parent retried as a whole reruns its unsuccessful children.
    let ok_parent = trigger_with(&mut admin, "everywhere", "b2", "{}").await;
    wait_status(&mut admin, ok_parent, S::Success, LONG).await;
    assert_eq!(instance(&admin, ok_parent).await.instance.expect("i").message, "all 2 children succeeded");
    admin.retry_instance(pb::RetryInstanceRequest { id: ok_parent }).await.expect("retry parent");
    wait_status(&mut admin, ok_parent, S::Success, LONG).await;
    for c in instance(&admin, ok_parent).await.children {
        assert_eq!(fleet.of(c.id).len(), 2, "every child of a successful parent ran again");
    }
    fleet.stop_all();
    axd.stop().await;
}

async fn a_broadcast_child_whose_worker_left_fails_after_the_grace_period(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("everywhere", "app", "run", manual());
    s.routing = pb::RoutingStrategy::Broadcast as i32;
    create(&mut admin, s).await;
    let mut busy = spec("busy", "app", "run", manual());
    busy.selector = "role=one".into();
    create(&mut admin, busy).await;
    let fleet = Fleet::default();
    fleet.start(&axd.endpoint, "app", "w1", 1, &[("role", "one")]);
    fleet.start(&axd.endpoint, "app", "w2", 1, &[("role", "two")]);
    connected(&admin, "app", &["w1", "w2"]).await;
    // w1's only slot is taken when the broadcast fires; then w1 leaves: its child can run nowhere.
    let hold = trigger_with(&mut admin, "busy", "hold-w1", r#"{"ms":2000}"#).await;
    wait_status(&mut admin, hold, S::Running, LONG).await;
    let parent = trigger_with(&mut admin, "everywhere", "p", "{}").await;
    assert_eq!(instance(&admin, parent).await.children.len(), 2);
    fleet.stop("w1");
    let done = wait_status(&mut admin, parent, S::Failed, LONG).await;
    assert_eq!(done.message, "1 of 2 children succeeded; 1 failed");
    let kids = instance(&admin, parent).await.children;
    let orphan = kids.iter().find(|c| c.target_worker == "w1").expect("w1's child");
    assert_eq!(orphan.status, S::Failed as i32);
    assert_eq!(orphan.attempt, 0, "it never ran");
    assert!(
        orphan.message.contains("worker w1, which this broadcast child is for, is not connected"),
        "{}",
        orphan.message
    );
    fleet.stop_all();
    axd.stop().await;
}

async fn a_sharded_fire_spreads_its_children_and_cancelling_the_parent_cancels_them(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("split", "app", "run", manual());
    s.shards = 4;
    create(&mut admin, s).await;
    let fleet = Fleet::default();
    fleet.start(&axd.endpoint, "app", "w1", 4, &[]);
    fleet.start(&axd.endpoint, "app", "w2", 4, &[]);
    connected(&admin, "app", &["w1", "w2"]).await;
    let parent = trigger_with(&mut admin, "split", "s1", r#"{"ms":200}"#).await;
    let done = wait_status(&mut admin, parent, S::Success, LONG).await;
    assert_eq!(done.message, "all 4 children succeeded");
    let kids = instance(&admin, parent).await.children;
    let mut shards: Vec<(u32, u32)> = kids.iter().map(|c| (c.shard_index, c.shard_total)).collect();
    shards.sort();
    assert_eq!(shards, vec![(0, 4), (1, 4), (2, 4), (3, 4)]);
    let mut per_worker: BTreeMap<String, usize> = BTreeMap::new();
    for c in &kids {
        let runs = fleet.of(c.id);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].shard, Some((c.shard_index, 4)), "Assign carries the shard");
        *per_worker.entry(runs[0].worker.clone()).or_default() += 1;
    }
    assert_eq!(per_worker.values().copied().collect::<Vec<_>>(), vec![2, 2], "spread: {per_worker:?}");
    // Cancel a fire whose children wait: they are canceled with it.
    fleet.stop_all();
    eventually(LONG, "workers gone", || async { workers(&admin, "app").await.is_empty().then_some(()) }).await;
    let p2 = trigger_with(&mut admin, "split", "s2", "{}").await;
    admin.cancel_instance(pb::CancelInstanceRequest { id: p2, reason: "not today".into() }).await.expect("cancel");
    let got = instance(&admin, p2).await;
    assert_eq!(got.instance.map(|i| i.status), Some(S::Canceled as i32));
    assert_eq!(got.children.len(), 4);
    for c in got.children {
        assert_eq!(c.status, S::Canceled as i32);
        assert!(c.message.contains(&format!("parent {p2} canceled: not today")), "{}", c.message);
    }
    axd.stop().await;
}

async fn hash_routing_keeps_a_key_on_one_worker_and_a_leaving_worker_moves_only_its_keys(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("sticky", "app", "run", manual());
    s.routing = pb::RoutingStrategy::Hash as i32;
    s.hash_key = "user".into();
    s.params = r#"{"user":"nobody"}"#.into();
    create(&mut admin, s).await;
    let fleet = Fleet::default();
    for w in ["w1", "w2", "w3"] {
        fleet.start(&axd.endpoint, "app", w, 8, &[]);
    }
    connected(&admin, "app", &["w1", "w2", "w3"]).await;
    let run_all = |round: &'static str, users: Vec<String>| {
        let admin = admin.clone();
        let fleet = fleet.clone();
        async move {
            let mut admin = admin;
            let mut ids = Vec::new();
            for u in &users {
                ids.push((
                    u.clone(),
                    trigger_with(&mut admin, "sticky", &format!("{round}-{u}"), &format!(r#"{{"user":"{u}"}}"#)).await,
                ));
            }
            let mut owner: BTreeMap<String, String> = BTreeMap::new();
            for (u, id) in ids {
                wait_status(&mut admin, id, S::Success, LONG).await;
                let w = fleet.of(id)[0].worker.clone();
                if let Some(prev) = owner.insert(u.clone(), w.clone()) {
                    assert_eq!(prev, w, "user {u} ran on two workers in one round");
                }
            }
            owner
        }
    };
    let users: Vec<String> = (0..24).map(|i| format!("u{i}")).collect();
    let first = run_all("a", users.iter().chain(users.iter()).cloned().collect()).await;
    let used: std::collections::BTreeSet<&String> = first.values().collect();
    assert_eq!(used.len(), 3, "keys spread over the three workers: {first:?}");
    let again = run_all("b", users.clone()).await;
    assert_eq!(first, again, "the same keys go to the same workers");
    fleet.stop("w2");
    eventually(LONG, "w2 gone", || async {
        (!workers(&admin, "app").await.iter().any(|w| w.worker_id == "w2")).then_some(())
    })
    .await;
    let after = run_all("c", users.clone()).await;
    for u in &users {
        if first[u] != "w2" {
            assert_eq!(first[u], after[u], "user {u} of a staying worker moved");
        } else {
            assert_ne!(after[u], "w2");
        }
    }
    // A trigger whose params lack the key field is refused, naming it.
    let err = admin
        .trigger_task(pb::TriggerTaskRequest { name: "sticky".into(), params: Some("{}".into()), ..Default::default() })
        .await
        .expect_err("no key");
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().contains("params: params have no field \"user\""), "{}", err.message());
    fleet.stop_all();
    axd.stop().await;
}

async fn max_running_caps_the_instances_dispatched_or_running_at_once(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("capped", "app", "run", manual());
    s.max_running = Some(2);
    create(&mut admin, s).await;
    let peak = capped_runs(&axd, &mut admin, &["w1", "w2"], 8, 2).await;
    assert_eq!(peak, 2, "20 free slots, 8 instances, at most 2 at once");
    axd.stop().await;
}

/// Runs `n` instances of task `capped` on gated workers of 10 slots each, checks while the gate is
/// closed that exactly `cap` run (whatever the machine's speed: no hoping that short runs
/// overlap), then lets them all finish; the most that ran at once.
async fn capped_runs(axd: &Axd, admin: &mut Admin, workers: &[&str], n: usize, cap: usize) -> usize {
    let fleet = Fleet::gated();
    for w in workers {
        fleet.start(&axd.endpoint, "app", w, 10, &[]);
    }
    connected(admin, "app", workers).await;
    let mut ids = Vec::new();
    for n in 0..n {
        ids.push(trigger_with(admin, "capped", &format!("c{n}"), r#"{"ms":50}"#).await);
    }
    fleet.hold_at_cap(admin, "capped", cap).await;
    for id in &ids {
        wait_status(admin, *id, S::Success, LONG).await;
    }
    fleet.stop_all();
    fleet.peak.load(Ordering::SeqCst)
}

/// A running limit set by UpdateTask holds, through a disable and an enable (which leave the
/// limit alone and write only what they change).
async fn a_running_limit_set_by_an_update_holds_through_a_disable_and_an_enable(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("capped", "app", "run", manual())).await;
    let upd = pb::TaskSpec { max_running: Some(2), ..Default::default() };
    let mask = Some(prost_types::FieldMask { paths: vec!["max_running".into()] });
    admin
        .update_task(pb::UpdateTaskRequest { name: "capped".into(), task: Some(upd), update_mask: mask })
        .await
        .expect("update");
    admin.disable_task(pb::DisableTaskRequest { name: "capped".into() }).await.expect("disable");
    admin.enable_task(pb::EnableTaskRequest { name: "capped".into() }).await.expect("enable");
    let peak = capped_runs(&axd, &mut admin, &["w1"], 6, 2).await;
    assert_eq!(peak, 2, "10 free slots, 6 instances, at most 2 at once");
    axd.stop().await;
}

async fn an_app_rate_limit_spaces_the_starts_of_its_instances(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("paced", "app", "run", manual())).await;
    let set = admin
        .set_app_limit(pb::SetAppLimitRequest {
            limit: Some(pb::AppLimit { app: "app".into(), per_second: 4.0, burst: 2, ..Default::default() }),
        })
        .await
        .expect("set")
        .into_inner()
        .limit
        .expect("limit");
    assert_eq!((set.burst, set.tokens), (2, 2.0), "a new bucket starts full");
    let fleet = Fleet::default();
    fleet.start(&axd.endpoint, "app", "w1", 20, &[]);
    connected(&admin, "app", &["w1"]).await;
    let mut ids = Vec::new();
    for n in 0..10 {
        ids.push(trigger_with(&mut admin, "paced", &format!("p{n}"), "{}").await);
    }
    let mut starts = Vec::new();
    for id in &ids {
        wait_status(&mut admin, *id, S::Success, LONG).await;
        let ev = instance(&admin, *id).await.events;
        let d = ev.iter().find(|e| e.to_status == S::Dispatched as i32).expect("dispatched");
        starts.push(ax_tests::client::utc(d.time.as_ref().expect("time")));
    }
    starts.sort();
    assert_starts_within_bucket(&starts, 4.0, 2);
    let span = (starts[9] - starts[0]).num_milliseconds();
    assert!(span >= 1900, "10 starts at 4/s with a burst of 2 take at least 2 s, took {span} ms");
    let listed = admin.list_app_limits(pb::ListAppLimitsRequest {}).await.expect("list").into_inner().limits;
    assert_eq!(listed.iter().map(|l| l.app.as_str()).collect::<Vec<_>>(), ["app"]);
    admin.delete_app_limit(pb::DeleteAppLimitRequest { app: "app".into() }).await.expect("delete");
    let err = admin.delete_app_limit(pb::DeleteAppLimitRequest { app: "app".into() }).await.expect_err("gone");
    assert_eq!(err.code(), tonic::Code::NotFound);
    fleet.stop_all();
    axd.stop().await;
}

/// Every stretch of starts fits the bucket: from the i-th to the j-th start, at most
/// `burst + rate x (t_j - t_i)` starts (with 50 ms for the clocks of the writers).
pub fn assert_starts_within_bucket(starts: &[chrono::DateTime<chrono::Utc>], rate: f64, burst: u32) {
    for i in 0..starts.len() {
        for j in i..starts.len() {
            let secs = (starts[j] - starts[i]).as_seconds_f64() + 0.05;
            let allowed = f64::from(burst) + rate * secs;
            let n = (j - i + 1) as f64;
            assert!(n <= allowed + 1e-9, "{n} starts in {secs:.3} s exceed rate {rate}/s burst {burst}: {starts:?}");
        }
    }
}

async fn bad_routing_input_is_refused_naming_the_field_and_stores_nothing(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    type Tweak = Box<dyn Fn(&mut pb::TaskSpec)>;
    let cases: Vec<(&str, Tweak, &str)> = vec![
        ("task.selector", Box::new(|s| s.selector = "region".into()), "has no operator"),
        ("task.selector", Box::new(|s| s.selector = "region>3".into()), "unknown operator"),
        ("task.shards", Box::new(|s| s.shards = 10_001), "out of range 1-10000"),
        (
            "task.shards",
            Box::new(|s| {
                s.shards = 2;
                s.routing = pb::RoutingStrategy::Broadcast as i32;
            }),
            "cannot be combined with routing BROADCAST",
        ),
        ("task.priority", Box::new(|s| s.priority = 10), "out of range 0-9"),
        (
            "task.hash_key",
            Box::new(|s| {
                s.routing = pb::RoutingStrategy::Hash as i32;
                s.hash_key = "user".into();
            }),
            "params have no field \"user\"",
        ),
        ("task.hash_key", Box::new(|s| s.hash_key = "user".into()), "only used with routing HASH"),
        ("task.hash_key", Box::new(|s| s.hash_key = "a b".into()), "letters, digits"),
        ("task.max_running", Box::new(|s| s.max_running = Some(0)), "out of range 1-100000"),
        ("task.max_pending", Box::new(|s| s.max_pending = Some(100_001)), "out of range 1-100000"),
        ("task.retry_on", Box::new(|s| s.retry_on = 9), "unknown retry target"),
        ("task.cooldown", Box::new(|s| s.cooldown = Some(dur(Duration::from_secs(2 * 86_400)))), "out of range"),
    ];
    for (field, tweak, why) in cases {
        let mut s = spec("bad", "app", "run", manual());
        tweak(&mut s);
        let err = admin.create_task(pb::CreateTaskRequest { task: Some(s) }).await.expect_err(field);
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{field}: {}", err.message());
        assert!(err.message().starts_with(&format!("{field}: ")), "{}", err.message());
        assert!(err.message().contains(why), "{field}: {}", err.message());
        let gone = admin.get_task(pb::GetTaskRequest { name: "bad".into() }).await.expect_err("nothing stored");
        assert_eq!(gone.code(), tonic::Code::NotFound);
    }
    // An update that would combine broadcast and shards changes nothing.
    let mut ok = spec("ok", "app", "run", manual());
    ok.shards = 3;
    let before = create(&mut admin, ok).await;
    let mut upd = pb::TaskSpec { routing: pb::RoutingStrategy::Broadcast as i32, ..Default::default() };
    upd.name = String::new();
    let err = admin
        .update_task(pb::UpdateTaskRequest {
            name: "ok".into(),
            task: Some(upd),
            update_mask: Some(prost_types::FieldMask { paths: vec!["routing".into()] }),
        })
        .await
        .expect_err("broadcast with shards");
    assert!(err.message().starts_with("task.shards: "), "{}", err.message());
    let after = admin.get_task(pb::GetTaskRequest { name: "ok".into() }).await.expect("get").into_inner().task;
    assert_eq!(after.map(|t| t.version), Some(before.version), "unchanged");
    // Trigger keys starting with child: are reserved.
    let err = admin
        .trigger_task(pb::TriggerTaskRequest {
            name: "ok".into(),
            idempotency_key: "child:1:0".into(),
            ..Default::default()
        })
        .await
        .expect_err("reserved");
    assert!(err.message().contains("reserved for the children"), "{}", err.message());
    // App limits.
    for (limit, field) in [
        (pb::AppLimit { app: "app".into(), per_second: 0.0, ..Default::default() }, "limit.per_second"),
        (pb::AppLimit { app: "app".into(), per_second: f64::NAN, ..Default::default() }, "limit.per_second"),
        (pb::AppLimit { app: "app".into(), per_second: 1.0, burst: 100_001, ..Default::default() }, "limit.burst"),
        (pb::AppLimit { app: "App!".into(), per_second: 1.0, ..Default::default() }, "limit.app"),
    ] {
        let err = admin.set_app_limit(pb::SetAppLimitRequest { limit: Some(limit) }).await.expect_err(field);
        assert_eq!(err.code(), tonic::Code::InvalidArgument);
        assert!(err.message().starts_with(&format!("{field}: ")), "{}", err.message());
    }
    assert!(admin.list_app_limits(pb::ListAppLimitsRequest {}).await.expect("list").into_inner().limits.is_empty());
    axd.stop().await;
}

async fn waiting_instances_follow_a_changed_selector(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("moving", "app", "run", manual());
    s.selector = "zone=x".into();
    create(&mut admin, s).await;
    let fleet = Fleet::default();
    fleet.start(&axd.endpoint, "app", "w1", 2, &[("zone", "y")]);
    connected(&admin, "app", &["w1"]).await;
    let id = trigger_with(&mut admin, "moving", "k", "{}").await;
    assert_eq!(get(&mut admin, id).await.0.status, S::Pending as i32);
    let upd = pb::TaskSpec { selector: "zone=y".into(), ..Default::default() };
    admin
        .update_task(pb::UpdateTaskRequest {
            name: "moving".into(),
            task: Some(upd),
            update_mask: Some(prost_types::FieldMask { paths: vec!["selector".into()] }),
        })
        .await
        .expect("update");
    wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!(fleet.of(id)[0].worker, "w1");
    fleet.stop_all();
    axd.stop().await;
}

on_every_backend!(
    a_worker_that_keeps_failing_cools_down_and_a_success_ends_it,
    a_retry_goes_to_another_worker_unless_it_is_the_only_one,
    a_selector_runs_only_on_matching_workers_and_names_the_selector_while_none_matches,
    a_broadcast_runs_once_on_each_matching_worker_and_its_parent_ends_with_them,
    a_broadcast_child_whose_worker_left_fails_after_the_grace_period,
    a_sharded_fire_spreads_its_children_and_cancelling_the_parent_cancels_them,
    hash_routing_keeps_a_key_on_one_worker_and_a_leaving_worker_moves_only_its_keys,
    max_running_caps_the_instances_dispatched_or_running_at_once,
    a_running_limit_set_by_an_update_holds_through_a_disable_and_an_enable,
    an_app_rate_limit_spaces_the_starts_of_its_instances,
    bad_routing_input_is_refused_naming_the_field_and_stores_nothing,
    waiting_instances_follow_a_changed_selector,
);
