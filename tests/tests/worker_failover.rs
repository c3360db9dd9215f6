//! Workers that die or lose their connection, with real worker processes.

use std::time::Duration;

use ax_proto::v1::{InstanceStatus as S, TaskSpec};
use ax_scheduler::config::HumanDuration;
use ax_tests::{
    TestDb,
    axd::Axd,
    client::{create, get, manual, retries, spec, steps, trigger_with, wait_status},
    on_every_backend,
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

on_every_backend!(
    a_killed_worker_s_instance_reruns_on_another_worker_after_the_grace_period,
    a_worker_that_reconnects_within_the_grace_period_keeps_its_instance,
);
