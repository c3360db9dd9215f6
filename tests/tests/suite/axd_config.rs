//! axd's configuration, end to end through the real binary: a flag beats its `AX_*` variable,
//! which beats the file; `--retention` purges; `--dispatch-ahead 0` turns early assignments off;
//! on SIGTERM axd sends Drain to its workers and exits within `--shutdown-timeout`.

use std::time::Duration;

use ax_proto::v1::{
    self as pb, InstanceStatus as S, admin_service_client::AdminServiceClient, scheduler_message::Msg as In,
};
use ax_tests::{
    Db, TestDb,
    axd::channel,
    client::{RawWorker, cancel, create, event_time, get, hello, manual, once_after, spec, trigger_with, utc},
    eventually, on_every_backend, on_server_backends,
    procs::{AxdProcess, EXIT_MARGIN, bin, signal},
    proxy::free_port,
};
use tonic::transport::Channel;

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d =
        std::env::temp_dir().join(format!("ax-{tag}-{}-{}", std::process::id(), chrono::Utc::now().timestamp_micros()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn seconds(d: Option<prost_types::Duration>) -> i64 {
    d.expect("duration").seconds
}

/// What a worker is told in Welcome: (heartbeat interval, lost-worker grace, ack timeout) in
/// seconds, and the address axd listens on.
async fn welcome_of(axd: &AxdProcess) -> ((i64, i64, i64), std::net::SocketAddr) {
    let endpoint = format!("http://{}", axd.addr);
    let (_, w) = RawWorker::connect(channel(&endpoint).await, hello("cfg", "w", "h", 1, 0)).await.expect("connect");
    ((seconds(w.heartbeat_interval), seconds(w.lost_worker_grace), seconds(w.ack_timeout)), axd.addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flag_beats_its_environment_variable_which_beats_the_config_file() {
    let dir = tempdir("config");
    let db = format!("sqlite://{}", dir.join("ax.db").display());
    let (from_file, from_env, from_flag) = (free_port(), free_port(), free_port());
    let file = dir.join("axd.toml");
    std::fs::write(
        &file,
        format!(
            "database_url = \"{db}\"\nlisten = \"127.0.0.1:{from_file}\"\nheartbeat_interval = \"3s\"\n\
             lost_worker_grace = \"20s\"\nack_timeout = \"30s\"\n"
        ),
    )
    .expect("write config");
    let config = file.to_str().expect("utf-8");
    let env = [
        ("AX_LISTEN", format!("127.0.0.1:{from_env}")),
        ("AX_HEARTBEAT_INTERVAL", "4s".into()),
        ("AX_LOST_WORKER_GRACE", "25s".into()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let listen_flag = format!("127.0.0.1:{from_flag}");

    // Each option from the highest source that sets it.
    let mut axd = AxdProcess::start_env(
        &["--config", config, "--listen", &listen_flag, "--heartbeat-interval", "5s"],
        &env,
        &dir.join("all.log"),
    )
    .await;
    let (timings, addr) = welcome_of(&axd).await;
    assert_eq!(addr.port(), from_flag, "--listen beats AX_LISTEN and the file");
    assert_eq!(timings, (5, 25, 30), "heartbeat from the flag, grace from the variable, ack timeout from the file");
    assert!(axd.terminate().await.success());

    let mut axd = AxdProcess::start_env(&["--config", config], &env, &dir.join("env.log")).await;
    let (timings, addr) = welcome_of(&axd).await;
    assert_eq!(addr.port(), from_env, "AX_LISTEN beats the file");
    assert_eq!(timings, (4, 25, 30), "the variables beat the file");
    assert!(axd.terminate().await.success());

    let mut axd = AxdProcess::start(&["--config", config], &dir.join("file.log")).await;
    let (timings, addr) = welcome_of(&axd).await;
    assert_eq!(addr.port(), from_file, "the file's listen");
    assert_eq!(timings, (3, 20, 30), "the file beats the defaults (2 s, 10 s, 10 s)");
    assert!(axd.terminate().await.success());

    // An unknown key is refused by name, and axd does not start.
    std::fs::write(&file, format!("database_url = \"{db}\"\nlisen = \"127.0.0.1:{from_file}\"\n")).expect("write");
    let out = tokio::process::Command::new(bin("axd")).args(["--config", config]).output().await.expect("run axd");
    assert_eq!(out.status.code(), Some(2), "a configuration error exits with 2");
    assert!(String::from_utf8_lossy(&out.stderr).contains("lisen"), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(dir);
}

async fn admin_of(axd: &AxdProcess) -> AdminServiceClient<Channel> {
    AdminServiceClient::new(channel(&format!("http://{}", axd.addr)).await)
}

async fn finished_instances_past_retention_are_purged_with_their_events_and_keys(db: &TestDb) {
    let dir = tempdir("retention");
    let args =
        ["--listen", "127.0.0.1:0", "--database-url", &db.url, "--retention", "1d", "--housekeeping-interval", "1s"];
    let mut axd = AxdProcess::start(&args, &dir.join("axd.log")).await;
    let mut admin = admin_of(&axd).await;
    let task = create(&mut admin, spec("kept", "nobody", "h", manual())).await;
    let old = trigger_with(&mut admin, "kept", "old", "{}").await;
    let recent = trigger_with(&mut admin, "kept", "recent", "{}").await;
    let open = trigger_with(&mut admin, "kept", "open", "{}").await;
    cancel(&mut admin, old, "finished").await;
    cancel(&mut admin, recent, "finished").await;
    // Two days and one hour ago: past and within the one-day retention.
    let now_us = chrono::Utc::now().timestamp_micros();
    let (day, hour) = (86_400_000_000_i64, 3_600_000_000_i64);
    for (id, finished) in [(old, now_us - 2 * day), (recent, now_us - hour)] {
        let n = db.execute(&format!("UPDATE ax_instance SET finished_at = {finished} WHERE id = {id}")).await;
        assert_eq!(n, 1);
    }
    // Retention runs with axd's housekeeping, every --housekeeping-interval (a minute by default,
    // past this wait: without the flag the test fails).
    eventually(Duration::from_secs(30), "the instance finished two days ago to be purged", || {
        let mut admin = admin.clone();
        async move {
            let r = admin.get_instance(pb::GetInstanceRequest { id: old }).await;
            matches!(r, Err(s) if s.code() == tonic::Code::NotFound).then_some(())
        }
    })
    .await;
    let events = db.scalar(&format!("SELECT COUNT(*) FROM ax_instance_event WHERE instance_id = {old}")).await;
    assert_eq!(events, 0, "its events went with it");
    assert_eq!(get(&mut admin, recent).await.0.status, S::Canceled as i32, "finished within retention: kept");
    assert_eq!(get(&mut admin, open).await.0.status, S::Pending as i32, "not finished: kept");
    // Its idempotency key went with it, so the key makes a new instance; a kept one's does not.
    let again = admin
        .trigger_task(pb::TriggerTaskRequest {
            name: "kept".into(),
            params: None,
            idempotency_key: "old".into(),
            when: None,
            wait: None,
            tags: Default::default(),
        })
        .await
        .expect("trigger")
        .into_inner();
    assert!(again.created, "the purged instance's key is free again");
    let kept = admin
        .trigger_task(pb::TriggerTaskRequest {
            name: "kept".into(),
            params: None,
            idempotency_key: "recent".into(),
            when: None,
            wait: None,
            tags: Default::default(),
        })
        .await
        .expect("trigger")
        .into_inner();
    assert!(!kept.created && kept.instance.map(|i| i.id) == Some(recent), "the kept instance's key still holds");
    assert_eq!(task.spec.map(|s| s.name).as_deref(), Some("kept"));
    assert!(axd.terminate().await.success());
    let _ = std::fs::remove_dir_all(dir);
}

async fn with_dispatch_ahead_0_a_holding_worker_gets_its_instance_only_when_it_is_due(db: &TestDb) {
    let dir = tempdir("ahead0");
    // The trigger creates instances 2.5 s ahead (the default), so with the default dispatch-ahead
    // this instance would go out 200 ms early.
    let args = ["--listen", "127.0.0.1:0", "--database-url", &db.url, "--dispatch-ahead", "0"];
    let mut axd = AxdProcess::start(&args, &dir.join("axd.log")).await;
    let mut admin = admin_of(&axd).await;
    let mut h = hello("early", "holder", "h", 1, 1);
    h.start_after_supported = true;
    let (mut w, _) = RawWorker::connect(channel(&format!("http://{}", axd.addr)).await, h).await.expect("connect");
    create(&mut admin, spec("due", "early", "h", once_after(Duration::from_secs(2)))).await;
    let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    let received = chrono::Utc::now();
    let due = utc(a.trigger_time.as_ref().expect("trigger time"));
    assert!(received >= due, "assigned at {received}, before it was due at {due}");
    assert_eq!(a.start_after, None, "nothing to hold");
    let (_, events) = get(&mut admin, a.instance_id).await;
    assert!(event_time(&events, S::Dispatched) >= due, "DISPATCHED when it was due, not before");
    assert!(axd.terminate().await.success());
    let _ = std::fs::remove_dir_all(dir);
}

async fn on_sigterm_axd_sends_drain_to_its_workers_and_exits_within_its_shutdown_timeout(db: &TestDb) {
    let dir = tempdir("sigterm");
    // A 4 s shutdown gives the streams 2 s after Drain (half of it) before axd closes them.
    let args = ["--listen", "127.0.0.1:0", "--database-url", &db.url, "--shutdown-timeout", "4s"];
    let mut axd = AxdProcess::start(&args, &dir.join("axd.log")).await;
    let endpoint = format!("http://{}", axd.addr);
    let (mut w, _) = RawWorker::connect(channel(&endpoint).await, hello("app", "w", "h", 1, 0)).await.expect("connect");
    let sent = tokio::time::Instant::now();
    signal(&axd.child, "TERM");
    let drain = w.expect("Drain", |m| if let In::Drain(d) = m { Some(d.clone()) } else { None }).await;
    assert_eq!(drain.reason, "scheduler shutting down");
    assert_eq!(seconds(drain.deadline), 2, "the stream stays open for half the shutdown timeout");
    // This worker does not leave: axd closes its stream at the deadline, and exits in time anyway.
    let bound = axd.shutdown_timeout + EXIT_MARGIN;
    let status = tokio::time::timeout_at(sent + bound, axd.child.wait())
        .await
        .unwrap_or_else(|_| panic!("axd still running {bound:?} after SIGTERM"))
        .expect("wait");
    assert!(status.success(), "{status:?}");
    eprintln!("axd exited {:?} after SIGTERM", sent.elapsed());
    let _ = std::fs::remove_dir_all(dir);
}

/// A lock that makes every reader of `ax_task_event` wait: GetTask reads it, no loop of axd does.
enum EventLock {
    Pg(sqlx::PgConnection),
    My(sqlx::MySqlConnection),
}

impl EventLock {
    async fn take(db: &TestDb) -> EventLock {
        use sqlx::{Connection as _, Executor as _};
        match db.db {
            Db::Postgres => {
                let mut c = sqlx::PgConnection::connect(&db.url).await.expect("pg");
                c.execute("BEGIN").await.expect("begin");
                c.execute("LOCK TABLE ax_task_event IN ACCESS EXCLUSIVE MODE").await.expect("lock");
                EventLock::Pg(c)
            }
            Db::MySql => {
                let mut c = sqlx::MySqlConnection::connect(&db.url).await.expect("mysql");
                c.execute("LOCK TABLES ax_task_event WRITE").await.expect("lock");
                EventLock::My(c)
            }
            Db::Sqlite => unreachable!("server backends only"),
        }
    }

    async fn release(self) {
        use sqlx::Executor as _;
        match self {
            EventLock::Pg(mut c) => drop(c.execute("COMMIT").await),
            EventLock::My(mut c) => drop(c.execute("UNLOCK TABLES").await),
        }
    }
}

async fn a_call_stuck_on_the_database_does_not_keep_axd_past_its_shutdown_timeout(db: &TestDb) {
    let dir = tempdir("stuck");
    let args = ["--listen", "127.0.0.1:0", "--database-url", &db.url, "--shutdown-timeout", "3s"];
    let mut axd = AxdProcess::start(&args, &dir.join("axd.log")).await;
    let mut admin = admin_of(&axd).await;
    create(&mut admin, spec("t", "app", "h", manual())).await;
    let lock = EventLock::take(db).await;
    // GetTask waits on the lock, holding one of axd's connections, for as long as the test keeps it.
    let mut stuck_client = admin.clone();
    let stuck = tokio::spawn(async move { stuck_client.get_task(pb::GetTaskRequest { name: "t".into() }).await });
    eventually(Duration::from_secs(10), "GetTask to wait on the lock", || async {
        let waiting = match db.db {
            Db::Postgres => {
                "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%ax_task_event%'"
            }
            _ => {
                "SELECT COUNT(*) FROM information_schema.processlist WHERE state LIKE '%lock%' \
                  AND info LIKE '%ax_task_event%'"
            }
        };
        (db.scalar(waiting).await > 0).then_some(())
    })
    .await;
    assert!(!stuck.is_finished());
    let status = axd.terminate().await;
    assert!(status.success(), "{status:?}");
    lock.release().await;
    let _ = stuck.await;
    let _ = std::fs::remove_dir_all(dir);
}

on_every_backend!(
    finished_instances_past_retention_are_purged_with_their_events_and_keys,
    with_dispatch_ahead_0_a_holding_worker_gets_its_instance_only_when_it_is_due,
    on_sigterm_axd_sends_drain_to_its_workers_and_exits_within_its_shutdown_timeout,
);

mod servers {
    use super::*;
    on_server_backends!(a_call_stuck_on_the_database_does_not_keep_axd_past_its_shutdown_timeout);
}
