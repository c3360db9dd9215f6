//! `axctl task explain` end to end, on SQLite, PostgreSQL and MySQL/MariaDB: the answers for a
//! disabled task, a task whose app has no worker (now, and afterwards from the session history),
//! a task whose fires were missed while axd was down, and a task whose attempts fail.

use std::time::Duration;

use ax_proto::v1::{self as pb, ExplainFindingKind as K, InstanceStatus as S};
use ax_tests::{
    TestDb,
    axd::Axd,
    client::{create, cron, dur, manual, retries, spec, trigger, utc, wait_status},
    eventually, on_every_backend,
    procs::axctl,
};
use ax_worker::{Context, HandlerError, Worker};
use tonic::transport::Channel;

type Admin = pb::admin_service_client::AdminServiceClient<Channel>;

const LONG: Duration = Duration::from_secs(30);

async fn explain(admin: &mut Admin, name: &str, at: Option<prost_types::Timestamp>) -> pb::ExplainTaskResponse {
    admin.explain_task(pb::ExplainTaskRequest { name: name.into(), at, limit: 10 }).await.expect("explain").into_inner()
}

fn with_kind(r: &pb::ExplainTaskResponse, kind: K) -> Vec<&pb::ExplainFinding> {
    r.findings.iter().filter(|f| f.kind == kind as i32).collect()
}

/// Runs an SDK worker of `app` in this process until the returned sender fires.
fn worker(
    endpoint: &str,
    app: &str,
    id: &str,
    succeed: bool,
) -> (tokio::task::JoinHandle<Result<(), ax_worker::WorkerError>>, tokio::sync::oneshot::Sender<()>) {
    let w = Worker::builder()
        .endpoint(endpoint)
        .app(app)
        .worker_id(id)
        .capacity(2)
        .shutdown_deadline(Duration::from_secs(2))
        .handler("h", move |_ctx: Context| async move {
            if succeed { Ok::<_, HandlerError>(String::new()) } else { Err(HandlerError::retryable("boom")) }
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let h = tokio::spawn(w.run_until(async move {
        let _ = stopped.await;
    }));
    (h, stop)
}

async fn a_disabled_task_says_who_disabled_it(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("nightly", "nobody", "h", cron("0 0 3 * * *"))).await;
    admin.disable_task(pb::DisableTaskRequest { name: "nightly".into() }).await.expect("disable");
    let r = explain(&mut admin, "nightly", None).await;
    assert_eq!(r.findings.first().map(|f| f.kind), Some(K::Disabled as i32), "{r:#?}");
    assert!(r.findings[0].message.starts_with("disabled by anonymous at "), "{}", r.findings[0].message);
    assert_eq!(r.next_fires.len(), 10, "what it would do if enabled");
    // axctl prints the same answer, as text and as JSON.
    let endpoint = axd.endpoint.clone();
    let out = axctl(&[], &["--endpoint", &endpoint, "task", "explain", "nightly"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("findings:\n  DISABLED ["), "{}", out.stdout);
    assert!(out.stdout.contains("]: disabled by anonymous at "), "{}", out.stdout);
    let json =
        axctl(&[], &["--endpoint", &endpoint, "-o", "json", "task", "explain", "nightly", "--limit", "3"]).await.json();
    assert_eq!(json["findings"][0]["kind"], "DISABLED");
    assert_eq!(json["next_fires"].as_array().map(Vec::len), Some(3));
    // Bad input names the field; a future instant is refused.
    let err = admin
        .explain_task(pb::ExplainTaskRequest { name: "nightly".into(), limit: 101, ..Default::default() })
        .await
        .expect_err("limit 101");
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().starts_with("limit: "), "{}", err.message());
    let later = prost_types::Timestamp { seconds: chrono::Utc::now().timestamp() + 3600, nanos: 0 };
    let err = admin
        .explain_task(pb::ExplainTaskRequest { name: "nightly".into(), at: Some(later), limit: 0 })
        .await
        .expect_err("future at");
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().starts_with("at: "), "{}", err.message());
    let err = admin.explain_task(pb::ExplainTaskRequest { name: "nope".into(), ..Default::default() }).await;
    assert_eq!(err.expect_err("missing").code(), tonic::Code::NotFound);
    axd.stop().await;
}

async fn a_task_without_a_worker_says_so_now_and_afterwards(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("lonely", "ghost", "h", manual())).await;
    let id = trigger(&mut admin, "lonely", "k1").await;
    // Due for over a second with no worker of the app anywhere.
    let waiting = eventually(LONG, "a NO_WORKER finding", || {
        let mut admin = admin.clone();
        async move {
            let r = explain(&mut admin, "lonely", None).await;
            let f = with_kind(&r, K::NoWorker).first().map(|f| (*f).clone());
            f.filter(|f| f.instance_id == id)
        }
    })
    .await;
    assert!(waiting.message.contains("no worker of app ghost is connected"), "{}", waiting.message);
    // A worker comes; the instance runs. The answer for it now comes from the session history.
    let (h, stop) = worker(&axd.endpoint, "ghost", "w-late", true);
    wait_status(&mut admin, id, S::Success, LONG).await;
    let r = explain(&mut admin, "lonely", None).await;
    let fire = r.recent.iter().find(|f| f.instance.as_ref().map(|i| i.id) == Some(id)).expect("the instance");
    assert!(
        fire.waited_for.starts_with(
            "no worker of app ghost serving handler h was connected when it was due; worker w-late connected at "
        ),
        "{fire:#?}"
    );
    assert!(fire.dispatch_delay.as_ref().is_some_and(|d| d.seconds >= 1), "{fire:#?}");
    assert_eq!(fire.attempts.len(), 1);
    assert_eq!(fire.attempts[0].worker_id, "w-late");
    assert_eq!(fire.attempts[0].outcome, S::Success as i32);
    let w = r.workers.expect("workers");
    assert_eq!((w.sessions, w.serving, w.capacity), (1, 1, 2));
    let _ = stop.send(());
    h.await.expect("join").expect("worker");
    axd.stop().await;
}

async fn missed_fires_are_explained_by_the_misfire_decision(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("tick", "nobody", "h", cron("* * * * * *"));
    s.misfire_policy = pb::MisfirePolicy::Skip as i32;
    s.misfire_threshold = Some(dur(Duration::from_secs(1)));
    create(&mut admin, s).await;
    let count = |admin: &Admin| {
        let mut admin = admin.clone();
        async move {
            let r = admin.list_instances(pb::ListInstancesRequest {
                task_name: "tick".into(),
                page_size: 1000,
                ..Default::default()
            });
            r.await.expect("list").into_inner().instances.len()
        }
    };
    eventually(LONG, "fires before the stop", || async { (count(&admin).await >= 1).then_some(()) }).await;
    axd.stop().await;
    // Down for four seconds: more than the threshold past several fires.
    let down_since = chrono::Utc::now();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let axd = Axd::start(db, |_| {}).await;
    let admin = axd.admin().await;
    let r = eventually(LONG, "the misfire decision", || {
        let mut admin = admin.clone();
        async move {
            let r = explain(&mut admin, "tick", None).await;
            (!with_kind(&r, K::MisfireSkipped).is_empty()).then_some(r)
        }
    })
    .await;
    let missing = with_kind(&r, K::NoInstance);
    assert!(!missing.is_empty(), "{r:#?}");
    for f in &missing {
        let at = utc(f.time.as_ref().expect("time"));
        assert!(at >= down_since - chrono::Duration::seconds(2), "only fires of the outage are missing: {f:#?}");
        assert!(f.message.contains("has no instance: missed: skipped"), "{}", f.message);
    }
    axd.stop().await;
}

async fn a_failing_task_lists_each_failed_attempt(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("flaky", "jobs", "h", manual());
    s.retry_policy = Some(retries(1, Duration::from_millis(100)));
    create(&mut admin, s).await;
    let (h, stop) = worker(&axd.endpoint, "jobs", "w-bad", false);
    let id = trigger(&mut admin, "flaky", "k1").await;
    wait_status(&mut admin, id, S::Failed, LONG).await;
    let r = explain(&mut admin, "flaky", None).await;
    let kinds: Vec<i32> = r.findings.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        vec![K::Manual as i32, K::AttemptFailed as i32, K::AttemptFailed as i32, K::Failed as i32],
        "{r:#?}"
    );
    for (n, f) in with_kind(&r, K::AttemptFailed).iter().enumerate() {
        let head = format!("instance {id} attempt {} on worker w-bad after ", n + 1);
        assert!(f.message.starts_with(&head) && f.message.contains("handler failed: boom"), "{}", f.message);
    }
    let out = axctl(&[], &["--endpoint", &axd.endpoint, "task", "explain", "flaky"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("ATTEMPT_FAILED"), "{}", out.stdout);
    let _ = stop.send(());
    h.await.expect("join").expect("worker");
    axd.stop().await;
}

on_every_backend!(
    a_disabled_task_says_who_disabled_it,
    a_task_without_a_worker_says_so_now_and_afterwards,
    missed_fires_are_explained_by_the_misfire_decision,
    a_failing_task_lists_each_failed_attempt,
);
