//! Workers that die or lose their connection, with real worker processes.

use std::time::Duration;

use ax_proto::v1::{
    self as pb, InstanceStatus as S, TaskSpec, scheduler_message::Msg as In, worker_message::Msg as Out,
};
use ax_scheduler::config::HumanDuration;
use ax_tests::{
    TestDb,
    axd::{Axd, channel},
    client::{RawWorker, create, get, hello, manual, retries, spec, steps, trigger, trigger_with, wait_status},
    eventually, on_every_backend,
    procs::{DemoWorker, executions},
    proxy::Proxy,
};

const LONG: Duration = Duration::from_secs(30);

fn sleep_task(name: &str) -> TaskSpec {
    let mut s = spec(name, "demo", "sleep", manual());
    s.retry_policy = Some(retries(1, Duration::ZERO));
    s
}

fn temp_log(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("ax-exec-{tag}-{}-{:x}.jsonl", std::process::id(), fastrand_like()))
}

fn fastrand_like() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

async fn a_killed_worker_s_instance_reruns_on_another_worker_after_the_grace_period(db: &TestDb) {
    let axd = Axd::start(db, |o| o.lost_worker_grace = Some(HumanDuration(Duration::from_secs(1)))).await;
    let mut admin = axd.admin().await;
    create(&mut admin, sleep_task("victim")).await;
    let log = temp_log("kill");
    let mut w1 = DemoWorker::start(std::slice::from_ref(&axd.endpoint), "demo", "w1", 1, &log);
    let id = trigger_with(&mut admin, "victim", "one", r#"{"ms": 60000, "attempts": [1]}"#).await;
    let running = wait_status(&mut admin, id, S::Running, LONG).await;
    assert_eq!(running.worker_id, "w1");
    w1.kill_hard().await;
    let _w2 = DemoWorker::start(std::slice::from_ref(&axd.endpoint), "demo", "w2", 1, &log);
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!((done.attempt, done.worker_id.as_str()), (2, "w2"));
    let (_, events) = get(&mut admin, id).await;
    let s = steps(&events);
    assert!(s.contains(&("RUNNING".into(), "FAILED".into(), 1)), "{s:?}");
    assert!(s.contains(&("FAILED".into(), "PENDING".into(), 1)), "{s:?}");
    let ended =
        events.iter().find(|e| e.reason.contains("session") && e.reason.contains("ended")).expect("session end event");
    let lost = events.iter().find(|e| e.reason.starts_with("worker lost")).expect("worker lost event");
    let ms = |e: &ax_proto::v1::InstanceEvent| {
        e.time.as_ref().map(|t| t.seconds * 1000 + i64::from(t.nanos / 1_000_000)).unwrap_or(0)
    };
    assert!(ms(lost) - ms(ended) >= 1000, "failed only after the 1 s grace ({} ms)", ms(lost) - ms(ended));
    let runs = executions(&log);
    assert_eq!(runs.len(), 2, "w1 started attempt 1 and died, w2 ran attempt 2: {runs:?}");
    assert!(runs.iter().any(|r| r.worker == "w1" && r.attempt == 1 && r.end.is_none()));
    assert!(runs.iter().any(|r| r.worker == "w2" && r.attempt == 2 && r.outcome.as_deref() == Some("SUCCESS")));
    let _ = std::fs::remove_file(log);
    axd.stop().await;
}

async fn a_worker_that_reconnects_within_the_grace_period_keeps_its_instance(db: &TestDb) {
    let axd = Axd::start(db, |o| o.lost_worker_grace = Some(HumanDuration(Duration::from_secs(5)))).await;
    let mut admin = axd.admin().await;
    create(&mut admin, sleep_task("survivor")).await;
    let proxy = Proxy::start(axd.running.addr).await;
    let log = temp_log("reconnect");
    let _w = DemoWorker::start(&[format!("http://{}", proxy.addr)], "demo", "w1", 1, &log);
    let id = trigger_with(&mut admin, "survivor", "one", r#"{"ms": 1500}"#).await;
    wait_status(&mut admin, id, S::Running, LONG).await;
    // The network drops; the worker process keeps running the handler and comes back.
    proxy.cut().await;
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!((done.attempt, done.worker_id.as_str()), (1, "w1"), "kept, not re-run");
    let (_, events) = get(&mut admin, id).await;
    assert!(events.iter().any(|e| e.reason.contains("re-announced by worker w1")), "{:?}", steps(&events));
    assert!(!events.iter().any(|e| e.to_status == S::Failed as i32));
    let runs = executions(&log);
    assert_eq!(runs.len(), 1, "exactly one execution: {runs:?}");
    assert_eq!((runs[0].instance, runs[0].attempt, runs[0].outcome.as_deref()), (id, 1, Some("SUCCESS")));
    let _ = std::fs::remove_file(log);
    axd.stop().await;
}

async fn a_worker_that_stays_connected_but_silent_loses_its_session_after_three_intervals(db: &TestDb) {
    // Heartbeat 200 ms: three silent intervals are 600 ms.
    let axd = Axd::start(db, |o| o.heartbeat_interval = Some(HumanDuration(Duration::from_millis(200)))).await;
    let mut admin = axd.admin().await;
    let mut s = spec("quiet", "raw", "h", manual());
    s.retry_policy = Some(retries(1, Duration::from_secs(60)));
    create(&mut admin, s).await;
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("raw", "raw-1", "h", 1, 1)).await.expect("connect");
    let id = trigger(&mut admin, "quiet", "one").await;
    let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    // The last word from this worker: it keeps the connection open and keeps reading, but says
    // nothing more (no heartbeats).
    w.tx.send(pb::WorkerMessage { msg: Some(Out::Accepted(pb::Accepted { instance_id: id, attempt: a.attempt })) })
        .await
        .expect("send");
    let silent_since = tokio::time::Instant::now();
    let end = silent_since + Duration::from_secs(10);
    let status = loop {
        match tokio::time::timeout_at(end, w.rx.message()).await {
            Ok(Ok(Some(_))) => {} // axd's own heartbeats keep coming meanwhile
            Ok(Err(status)) => break status,
            Err(_) => panic!("the silent worker's session was still open 10 s later"),
            other => panic!("expected the session to end with a status, got {other:?}"),
        }
    };
    let after = silent_since.elapsed();
    assert_eq!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");
    assert!(status.message().contains("no message from the worker for 600ms"), "{}", status.message());
    assert!(after >= Duration::from_millis(600), "ended only after three silent intervals ({after:?})");
    assert!(after < Duration::from_secs(5), "ended soon after them ({after:?})");
    // Its attempt waits out the grace period, then fails as lost and goes back to the queue.
    let lost = eventually(Duration::from_secs(20), "the attempt to fail as lost", || {
        let mut admin = admin.clone();
        async move {
            let (_, events) = get(&mut admin, id).await;
            events.iter().any(|e| e.reason.starts_with("worker lost")).then_some(events)
        }
    })
    .await;
    let ended = lost.iter().find(|e| e.reason.contains("ended (no message from the worker")).expect("session end");
    assert!(ended.reason.contains("waiting until"), "{}", ended.reason);
    axd.stop().await;
}

async fn a_worker_back_after_the_grace_period_is_told_its_attempt_was_released(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("released", "raw", "h", manual());
    s.retry_policy = Some(retries(1, Duration::from_secs(60)));
    create(&mut admin, s).await;
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("raw", "raw-1", "h", 1, 1)).await.expect("connect");
    let id = trigger(&mut admin, "released", "one").await;
    let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: a.attempt })).await;
    wait_status(&mut admin, id, S::Running, Duration::from_secs(20)).await;
    drop(w);
    // Gone longer than the grace period: the attempt fails as lost.
    eventually(Duration::from_secs(20), "the attempt to fail as lost", || {
        let mut admin = admin.clone();
        async move {
            let (_, events) = get(&mut admin, id).await;
            events.iter().any(|e| e.reason.starts_with("worker lost")).then_some(())
        }
    })
    .await;
    let mut back = hello("raw", "raw-1", "h", 1, 0);
    back.in_flight = vec![pb::InstanceAttempt { instance_id: id, attempt: a.attempt }];
    let (mut w2, welcome) = RawWorker::connect(channel(&axd.endpoint).await, back).await.expect("reconnect");
    assert!(welcome.adopted.is_empty(), "{welcome:?}");
    assert_eq!(welcome.released, vec![pb::InstanceAttempt { instance_id: id, attempt: a.attempt }]);
    // Its late result is recorded on the trail and changes nothing.
    w2.send(ax_tests::client::result(id, a.attempt, true)).await;
    let ack = w2.expect("ack", |m| if let In::ResultAck(a) = m { Some(a.clone()) } else { None }).await;
    assert!(!ack.applied);
    let (inst, events) = get(&mut admin, id).await;
    assert_ne!(inst.status, S::Success as i32);
    assert!(events.iter().any(|e| e.reason.starts_with("ignored SUCCESS result (late)")), "{:?}", steps(&events));
    axd.stop().await;
}

async fn a_worker_frozen_past_its_lease_does_not_start_a_stale_assignment(db: &TestDb) {
    // Heartbeat 1 s (a session dies after 3 s of silence), grace 5 s: a lease lasts 3 s + 5 s.
    let lease = Duration::from_secs(8);
    let axd = Axd::start(db, |o| {
        o.heartbeat_interval = Some(HumanDuration(Duration::from_secs(1)));
        o.lost_worker_grace = Some(HumanDuration(Duration::from_secs(5)));
    })
    .await;
    let mut admin = axd.admin().await;
    create(&mut admin, sleep_task("stale")).await;
    let log = temp_log("stale");
    let worker_log = temp_log("stale-stderr");
    let w = DemoWorker::start_logged(std::slice::from_ref(&axd.endpoint), "demo", "w1", 1, &log, &worker_log);
    eventually(Duration::from_secs(20), "the worker to connect", || {
        let mut admin = admin.clone();
        async move {
            let r = admin.list_workers(pb::ListWorkersRequest::default()).await.ok()?.into_inner();
            r.workers.iter().any(|x| x.worker_id == "w1" && x.credits > 0).then_some(())
        }
    })
    .await;
    // The worker's process stops; axd still counts its stream alive and assigns it the instance.
    w.freeze();
    let frozen_at = tokio::time::Instant::now();
    let id = trigger_with(&mut admin, "stale", "one", r#"{"ms": 100}"#).await;
    let dispatched = wait_status(&mut admin, id, S::Dispatched, Duration::from_secs(20)).await;
    assert_eq!((dispatched.worker_id.as_str(), dispatched.attempt), ("w1", 1));
    // The ack deadline passes: axd takes the instance back.
    eventually(Duration::from_secs(20), "attempt 1 to be taken back", || {
        let mut admin = admin.clone();
        async move {
            let (_, events) = get(&mut admin, id).await;
            events.iter().any(|e| e.attempt == 1 && e.reason.contains("did not accept it in time")).then_some(())
        }
    })
    .await;
    // Past the whole lease, too: whatever the worker was promised is over.
    tokio::time::sleep_until(frozen_at + lease + Duration::from_secs(1)).await;
    // The worker resumes and finds the old Assign waiting: it must read it, reject it as stale, and
    // not run it.
    w.thaw();
    let done = wait_status(&mut admin, id, S::Success, Duration::from_secs(30)).await;
    assert!(done.attempt >= 2, "{done:?}");
    let runs = executions(&log);
    assert!(runs.iter().all(|r| r.attempt != 1), "attempt 1 never started: {runs:?}");
    assert_eq!(runs.len(), 1, "{runs:?}");
    let said = std::fs::read_to_string(&worker_log).unwrap_or_default();
    assert!(
        said.lines().any(|l| l.contains("stale assignment") && l.contains(&format!("instance={id}"))),
        "the worker rejected attempt 1 as stale: {said}"
    );
    let _ = std::fs::remove_file(log);
    let _ = std::fs::remove_file(worker_log);
    axd.stop().await;
}

on_every_backend!(
    a_killed_worker_s_instance_reruns_on_another_worker_after_the_grace_period,
    a_worker_that_reconnects_within_the_grace_period_keeps_its_instance,
    a_worker_that_stays_connected_but_silent_loses_its_session_after_three_intervals,
    a_worker_back_after_the_grace_period_is_told_its_attempt_was_released,
    a_worker_frozen_past_its_lease_does_not_start_a_stale_assignment,
);
