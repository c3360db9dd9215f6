//! Trigger and wait (`TriggerTaskRequest.wait`, issue 35) on every backend: the call answers with
//! the instance once it is final (its output, or its failure), or as it is when the wait runs out
//! (it still runs after); a key used before waits for that instance; a wait over 10 minutes or
//! negative is INVALID_ARGUMENT and creates nothing; a wait longer than axd's call limit
//! (`--request-timeout`, 2 s here) goes on by the instance's key and creates nothing more;
//! ax-client's `trigger_and_wait` and `axctl task trigger --wait` (exit 0 SUCCESS, 3 another final
//! state, 4 the wait ran out). WatchInstance: every change of an instance and its log lines, once
//! each, until it is final.

use std::time::{Duration, Instant};

use ax_client::{Client, Trigger};
use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_scheduler::config::HumanDuration;
use ax_tests::{
    Db, TestDb,
    axd::{Axd, channel},
    client::{create, instances_of, manual, spec},
    eventually,
    fleet::connected,
    on_every_backend,
    procs::axctl,
};
use ax_worker::{Context, HandlerError, Level, Worker};
use tokio_stream::StreamExt as _;

const LONG: Duration = Duration::from_secs(30);

async fn a_trigger_that_waits_answers_with_the_final_instance(db: &TestDb) {
    let ms = |n| Some(HumanDuration(Duration::from_millis(n)));
    let axd = Axd::start(db, |o| {
        o.heartbeat_interval = ms(500);
        o.request_timeout = ms(2000);
    })
    .await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("echo", "waits", "echo", manual())).await;
    create(&mut admin, spec("slow", "waits", "slow", manual())).await;
    create(&mut admin, spec("talk", "waits", "talk", manual())).await;
    create(&mut admin, spec("boom", "waits", "boom", manual())).await;
    // No worker serves app "idle": its instance stays PENDING.
    create(&mut admin, spec("nobody", "idle", "none", manual())).await;
    let worker = Worker::builder()
        .endpoint(&axd.endpoint)
        .app("waits")
        .worker_id("w1")
        .capacity(4)
        .handler("echo", |ctx: Context| async move { Ok(ctx.params_raw.clone()) })
        .handler("boom", |_ctx: Context| async { Err::<String, _>(HandlerError::fatal("boom on purpose")) })
        .handler("talk", |ctx: Context| async move {
            // Its lines come while the watch is open, and after the first update.
            tokio::time::sleep(Duration::from_millis(600)).await;
            ctx.log(Level::Info, "one");
            tokio::time::sleep(Duration::from_millis(600)).await;
            ctx.log(Level::Info, "two");
            tokio::time::sleep(Duration::from_millis(600)).await;
            Ok("said".to_owned())
        })
        .handler("slow", |_ctx: Context| async {
            tokio::time::sleep(Duration::from_millis(3500)).await;
            Ok("slept".to_owned())
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    connected(&admin, "waits", &["w1"]).await;
    let mut client = Client::from_channel(channel(&axd.endpoint).await);

    // The output of a successful run.
    let ok =
        client.trigger_and_wait(Trigger::new("echo").params_json(r#"{"n":1}"#).key("k1"), LONG).await.expect("wait");
    assert!(ok.done && ok.created, "{ok:?}");
    assert_eq!((ok.instance.status, ok.instance.output.as_str()), (S::Success as i32, r#"{"n":1}"#));
    // The same key: that instance, final already.
    let again = client.trigger_and_wait(Trigger::new("echo").key("k1"), LONG).await.expect("wait");
    assert_eq!((again.instance.id, again.created, again.done), (ok.instance.id, false, true));
    // A failure, with its message.
    let failed = client.trigger_and_wait(Trigger::new("boom"), LONG).await.expect("wait");
    assert!(failed.done, "{failed:?}");
    assert_eq!(failed.instance.status, S::Failed as i32);
    assert!(failed.instance.message.contains("boom on purpose"), "{}", failed.instance.message);
    // The wait runs out: the instance as it is, which stays to run.
    let started = Instant::now();
    let pending = client.trigger_and_wait(Trigger::new("nobody"), Duration::from_millis(300)).await.expect("wait");
    let took = started.elapsed();
    assert!(!pending.done && pending.created, "{pending:?}");
    assert_eq!(pending.instance.status, S::Pending as i32);
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(10), "answered after {took:?}");
    // Longer than axd's call limit: axd answers after a second, the client waits on by the key.
    let started = Instant::now();
    let slow = client.trigger_and_wait(Trigger::new("slow"), LONG).await.expect("wait");
    assert!(slow.done && slow.created, "{slow:?}");
    assert_eq!((slow.instance.status, slow.instance.output.as_str()), (S::Success as i32, "slept"));
    assert!(started.elapsed() >= Duration::from_millis(3500), "{:?}", started.elapsed());
    // Bad waits: INVALID_ARGUMENT naming the field, and nothing created.
    for (wait, why) in [((660, 0), "wait: 11m is longer than 10m"), ((-1, 0), "wait:")] {
        let req = pb::TriggerTaskRequest {
            name: "nobody".into(),
            wait: Some(prost_types::Duration { seconds: wait.0, nanos: wait.1 }),
            ..Default::default()
        };
        let e = admin.trigger_task(req).await.expect_err("a bad wait");
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        assert!(e.message().starts_with(why), "{}", e.message());
    }
    let listed = instances_of(&admin, "nobody").await;
    assert_eq!(listed.len(), 1, "a refused wait created nothing: {listed:?}");

    // axctl: exit 0 with the output, 3 for another final state, 4 when the wait ran out.
    let env = [("AX_ENDPOINT", axd.endpoint.as_str())];
    let out = axctl(&env, &["task", "trigger", "echo", "--params", r#"{"n":2}"#, "--wait", "30s"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("SUCCESS") && out.stdout.contains(r#"{"n":2}"#), "{}", out.stdout);
    let out = axctl(&env, &["task", "trigger", "boom", "--wait"]).await;
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stderr.contains("ended FAILED"), "{}", out.stderr);
    let out = axctl(&env, &["-o", "json", "task", "trigger", "nobody", "--wait", "200ms"]).await;
    assert_eq!(out.code, 4, "{out:?}");
    assert!(out.stderr.contains("still PENDING: the wait ran out"), "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["done"], serde_json::Value::Bool(false), "{json}");
    let out = axctl(&env, &["task", "trigger", "slow", "--wait", "30s"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    // One instance per waiting trigger, however many calls it took.
    let slow = instances_of(&admin, "slow").await;
    assert_eq!(slow.len(), 2, "{slow:?}");

    // WatchInstance: every change once, the log lines once each and in order, the last update
    // final, then the stream ends.
    let talk = client.trigger(Trigger::new("talk")).await.expect("trigger").instance;
    let mut watch =
        admin.watch_instance(pb::WatchInstanceRequest { id: talk.id, logs: true }).await.expect("watch").into_inner();
    let mut updates = Vec::new();
    while let Some(u) = tokio::time::timeout(LONG, watch.next()).await.expect("an update or the end") {
        updates.push(u.expect("an update"));
    }
    let last = updates.last().expect("updates");
    assert!(last.done && updates[..updates.len() - 1].iter().all(|u| !u.done), "{updates:?}");
    let final_instance = last.instance.as_ref().expect("instance");
    assert_eq!((final_instance.status, final_instance.output.as_str()), (S::Success as i32, "said"));
    let lines: Vec<&str> = updates.iter().flat_map(|u| u.lines.iter().map(|l| l.message.as_str())).collect();
    assert_eq!(lines, ["one", "two"], "{updates:?}");
    let events: Vec<i32> = updates.iter().flat_map(|u| u.events.iter().map(|e| e.to_status)).collect();
    let (_, trail) = ax_tests::client::get(&mut admin, talk.id).await;
    assert_eq!(events, trail.iter().map(|e| e.to_status).collect::<Vec<_>>(), "the trail, each event once");
    assert!(updates.len() >= 3, "the lines came in updates of their own: {updates:?}");
    // A PENDING instance: the first update at once, not done; an unknown id: NOT_FOUND.
    let mut watch = admin
        .watch_instance(pb::WatchInstanceRequest { id: pending.instance.id, logs: false })
        .await
        .expect("watch")
        .into_inner();
    let first = tokio::time::timeout(Duration::from_secs(5), watch.next()).await.expect("at once").expect("one");
    let first = first.expect("an update");
    assert!(!first.done && first.instance.as_ref().is_some_and(|i| i.status == S::Pending as i32), "{first:?}");
    let e = admin.watch_instance(pb::WatchInstanceRequest { id: 999_999, logs: false }).await.expect_err("no such id");
    assert_eq!(e.code(), tonic::Code::NotFound, "{e:?}");

    let _ = stop.send(());
    let _ = running.await;
    axd.stop().await;
}

on_every_backend!(a_trigger_that_waits_answers_with_the_final_instance);

/// `--max-waiting-calls` places are shared by waiting triggers and watches: past them a call is
/// RESOURCE_EXHAUSTED and creates nothing, a trigger that does not wait still works, and a place
/// comes back when its caller goes away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_calls_past_the_cap_are_refused_and_a_place_comes_back_when_its_caller_leaves() {
    let Some(db) = TestDb::create(Db::Sqlite).await else { return };
    let axd = Axd::start(&db, |o| o.max_waiting_calls = Some(2)).await;
    let mut admin = axd.admin().await;
    // No worker serves app "idle": its instances stay PENDING, their waits run long.
    create(&mut admin, spec("nobody", "idle", "none", manual())).await;
    let waiting = |key: &str, secs: i64| pb::TriggerTaskRequest {
        name: "nobody".into(),
        idempotency_key: key.into(),
        wait: Some(prost_types::Duration { seconds: secs, nanos: 0 }),
        ..Default::default()
    };
    let mut held = Vec::new();
    for key in ["w1", "w2"] {
        let mut a = axd.admin().await;
        let req = waiting(key, 20);
        held.push(tokio::spawn(async move { a.trigger_task(req).await }));
    }
    // Each takes its place before its instance is created.
    eventually(LONG, "two waiting calls", || async { (instances_of(&admin, "nobody").await.len() == 2).then_some(()) })
        .await;
    let e = admin.trigger_task(waiting("w3", 20)).await.expect_err("past the cap");
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    assert!(e.message().starts_with("wait: ") && e.message().contains("--max-waiting-calls"), "{}", e.message());
    let id = instances_of(&admin, "nobody").await[0].id;
    let e = admin.watch_instance(pb::WatchInstanceRequest { id, logs: false }).await.expect_err("a watch too");
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    assert_eq!(instances_of(&admin, "nobody").await.len(), 2, "the refused call created nothing");
    let plain = pb::TriggerTaskRequest { name: "nobody".into(), idempotency_key: "p".into(), ..Default::default() };
    admin.trigger_task(plain).await.expect("a trigger that does not wait");
    // One caller goes away: its place comes back.
    held.remove(0).abort();
    eventually(LONG, "a place again", || async {
        let mut a = axd.admin().await;
        a.trigger_task(waiting("w5", 1)).await.ok().map(|_| ())
    })
    .await;
    for h in held {
        h.abort();
    }
    axd.stop().await;
    db.cleanup().await;
}
