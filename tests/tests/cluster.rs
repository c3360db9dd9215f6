//! Cluster behaviour: half-dead detection, isolation of the admin API, database outages, axd
//! failover with re-adoption, rolling restarts and skewed clocks.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use ax_proto::v1::{self as pb, InstanceStatus as S, admin_service_client::AdminServiceClient};
use ax_scheduler::config::HumanDuration;
use ax_tests::{
    Db, TestDb,
    axd::{Axd, channel},
    client::{self, RawWorker, create, cron, get, hello, manual, spec, steps, trigger_with, wait_status},
    eventually, on_every_backend, on_server_backends,
    procs::{AxdProcess, DemoWorker, executions, executions_in},
    proxy::{Proxy, free_port},
};
use ax_worker::{Context, HandlerError, Worker};
use tonic::transport::Channel;
use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient};

const LONG: Duration = Duration::from_secs(30);

fn ms(n: u64) -> Option<HumanDuration> {
    Some(HumanDuration(Duration::from_millis(n)))
}

async fn serving(endpoint: &str) -> bool {
    let mut h = HealthClient::new(channel(endpoint).await);
    h.check(HealthCheckRequest { service: String::new() })
        .await
        .map(|r| r.into_inner().status == ServingStatus::Serving as i32)
        .unwrap_or(false)
}

fn noop_worker(endpoint: &str, app: &str, capacity: u32) -> tokio::sync::oneshot::Sender<()> {
    let worker = Worker::builder()
        .endpoint(endpoint)
        .app(app)
        .capacity(capacity)
        .handler("noop", |_ctx: Context| async move { Ok::<_, HandlerError>(()) })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    stop
}

/// Holds a lock that stalls every writer on `db` until dropped or released.
enum DbLock {
    Pg(sqlx::PgConnection),
    My(sqlx::MySqlConnection),
    Lite(sqlx::SqliteConnection),
}

impl DbLock {
    async fn take(db: &TestDb) -> DbLock {
        use sqlx::{Connection, Executor};
        match db.db {
            Db::Postgres => {
                let mut c = sqlx::PgConnection::connect(&db.url).await.expect("pg");
                c.execute("BEGIN").await.expect("begin");
                c.execute("LOCK TABLE ax_task, ax_instance, ax_scheduler IN ACCESS EXCLUSIVE MODE")
                    .await
                    .expect("lock");
                DbLock::Pg(c)
            }
            Db::MySql => {
                let mut c = sqlx::MySqlConnection::connect(&db.url).await.expect("mysql");
                c.execute("LOCK TABLES ax_task WRITE, ax_instance WRITE, ax_scheduler WRITE").await.expect("lock");
                DbLock::My(c)
            }
            Db::Sqlite => {
                let mut c = sqlx::SqliteConnection::connect(&db.url).await.expect("sqlite");
                c.execute("BEGIN IMMEDIATE").await.expect("lock");
                DbLock::Lite(c)
            }
        }
    }

    async fn release(self) {
        use sqlx::Executor;
        match self {
            DbLock::Pg(mut c) => drop(c.execute("COMMIT").await),
            DbLock::My(mut c) => drop(c.execute("UNLOCK TABLES").await),
            DbLock::Lite(mut c) => drop(c.execute("COMMIT").await),
        }
    }
}

async fn health_turns_not_serving_while_the_database_is_blocked_and_serving_again_after(db: &TestDb) {
    let axd = Axd::start(db, |o| o.health_stall_after = ms(1000)).await;
    eventually(LONG, "SERVING at start", || async { serving(&axd.endpoint).await.then_some(()) }).await;
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("app", "w", "h", 1, 0)).await.expect("connect");
    let lock = DbLock::take(db).await;
    // The half-dead axd sends its workers to a healthy one (the raw worker keeps heartbeating
    // while it waits).
    let drain =
        w.expect("Drain", |m| if let pb::scheduler_message::Msg::Drain(d) = m { Some(d.clone()) } else { None }).await;
    assert_eq!(drain.reason, "scheduler unhealthy");
    assert!(!serving(&axd.endpoint).await, "NOT_SERVING while the database is blocked");
    lock.release().await;
    eventually(LONG, "SERVING again after the block", || async { serving(&axd.endpoint).await.then_some(()) }).await;
    axd.stop().await;
}

async fn triggers_keep_firing_on_time_while_the_admin_api_is_flooded(db: &TestDb) {
    let axd = Axd::start(db, |o| o.db_pool_admin = Some(2)).await;
    let mut admin = axd.admin().await;
    let stop_worker = noop_worker(&axd.endpoint, "app", 4);
    // Some history for the flood to read.
    create(&mut admin, spec("history", "app", "noop", manual())).await;
    for i in 0..200 {
        client::trigger(&mut admin, "history", &format!("h{i}")).await;
    }
    create(&mut admin, spec("tick", "app", "noop", cron("* * * * * *"))).await;
    let calls = Arc::new(AtomicU64::new(0));
    let flood_for = Duration::from_secs(5);
    let started = tokio::time::Instant::now();
    let mut flood = Vec::new();
    for _ in 0..32 {
        let (mut a, calls) = (admin.clone(), calls.clone());
        flood.push(tokio::spawn(async move {
            while started.elapsed() < flood_for {
                let _ = a.list_instances(pb::ListInstancesRequest { page_size: 1000, ..Default::default() }).await;
                let _ = a.get_cluster_stats(pb::GetClusterStatsRequest {}).await;
                calls.fetch_add(2, Ordering::Relaxed);
            }
        }));
    }
    for f in flood {
        f.await.expect("flood task");
    }
    admin.disable_task(pb::DisableTaskRequest { name: "tick".into() }).await.expect("disable");
    let ticks = admin
        .list_instances(pb::ListInstancesRequest { task_name: "tick".into(), page_size: 100, ..Default::default() })
        .await
        .expect("list")
        .into_inner()
        .instances;
    assert!(ticks.len() >= 4, "a fire every second during the flood: {}", ticks.len());
    let us = |t: &Option<prost_types::Timestamp>| {
        t.as_ref().map_or(0, |t| t.seconds * 1_000_000 + i64::from(t.nanos / 1000))
    };
    for t in &ticks {
        let fire = us(&t.trigger_time);
        let (_, events) = get(&mut admin, t.id).await;
        let created = us(&events[0].time);
        assert!(
            created <= fire + 200_000,
            "instance for {fire} created {} ms after its fire time",
            (created - fire) / 1000
        );
        if let Some(dispatched) = events.iter().find(|e| e.to_status == S::Dispatched as i32) {
            let lag = us(&dispatched.time) - fire;
            assert!(lag < 500_000, "dispatched {} ms after its fire time during the flood", lag / 1000);
        }
    }
    eprintln!("admin flood: {} calls in {flood_for:?}; {} fires on time", calls.load(Ordering::Relaxed), ticks.len());
    let _ = stop_worker.send(());
    axd.stop().await;
}

on_every_backend!(
    health_turns_not_serving_while_the_database_is_blocked_and_serving_again_after,
    triggers_keep_firing_on_time_while_the_admin_api_is_flooded,
);

async fn axd_survives_a_database_outage_applies_misfire_and_creates_no_duplicate(db: &TestDb) {
    let proxy = Proxy::start(db.server_addr()).await;
    let via = db.with_url(db.url_via(proxy.addr));
    let axd = Axd::start(&via, |o| o.health_stall_after = ms(1000)).await;
    let mut admin = axd.admin().await;
    let stop_worker = noop_worker(&axd.endpoint, "app", 4);
    let mut s = spec("tick", "app", "noop", cron("* * * * * *"));
    s.misfire_threshold = Some(client::dur(Duration::from_secs(1)));
    create(&mut admin, s).await;
    let success = |admin: AdminServiceClient<Channel>| async move {
        let mut admin = admin;
        admin
            .list_instances(pb::ListInstancesRequest {
                task_name: "tick".into(),
                status: S::Success as i32,
                page_size: 1000,
                ..Default::default()
            })
            .await
            .map(|r| r.into_inner().instances)
            .unwrap_or_default()
    };
    eventually(LONG, "two runs before the outage", || async {
        (success(admin.clone()).await.len() >= 2).then_some(())
    })
    .await;
    // The database goes away for 4 s: connections drop, new ones are refused.
    proxy.down().await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    proxy.up();
    let before = success(admin.clone()).await.len();
    eventually(LONG, "runs again after the outage", || async {
        (success(admin.clone()).await.len() >= before + 3).then_some(())
    })
    .await;
    eventually(LONG, "SERVING after the outage", || async { serving(&axd.endpoint).await.then_some(()) }).await;
    admin.disable_task(pb::DisableTaskRequest { name: "tick".into() }).await.expect("disable");
    let events = admin.get_task(pb::GetTaskRequest { name: "tick".into() }).await.expect("get").into_inner().events;
    assert!(
        events.iter().any(|e| e.kind == "MISFIRE_CATCH_UP"),
        "the missed fires were handled by the misfire policy: {events:?}"
    );
    let all = admin
        .list_instances(pb::ListInstancesRequest { task_name: "tick".into(), page_size: 1000, ..Default::default() })
        .await
        .expect("list")
        .into_inner()
        .instances;
    let mut keys: Vec<&str> = all.iter().map(|i| i.idempotency_key.as_str()).collect();
    let n = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), n, "one instance per fire time");
    let _ = stop_worker.send(());
    axd.stop().await;
}

async fn a_worker_whose_axd_dies_moves_to_another_and_keeps_its_instance(db: &TestDb) {
    let dir = tempdir("failover");
    let (pa, pb_) = (free_port(), free_port());
    let args =
        |port: u16| vec!["--listen".to_owned(), format!("127.0.0.1:{port}"), "--database-url".into(), db.url.clone()];
    let mut a = AxdProcess::start(&strs(&args(pa)), &dir.join("a.log")).await;
    let b = AxdProcess::start(&strs(&args(pb_)), &dir.join("b.log")).await;
    let ea = format!("http://127.0.0.1:{pa}");
    let eb = format!("http://127.0.0.1:{pb_}");
    let mut admin = AdminServiceClient::new(channel(&eb).await);
    let mut s = spec("long", "demo", "sleep", manual());
    s.retry_policy = Some(client::retries(1, Duration::ZERO));
    create(&mut admin, s).await;
    let log = dir.join("exec.jsonl");
    let _w = DemoWorker::start(&[ea.clone(), eb.clone()], "demo", "w1", 1, &log);
    let pid_a = a.child.id().unwrap_or(0).to_string();
    eventually(LONG, "the worker on axd A", || {
        let mut admin = admin.clone();
        let pid_a = pid_a.clone();
        async move {
            let w = admin.list_workers(pb::ListWorkersRequest::default()).await.ok()?.into_inner().workers;
            w.first().filter(|w| w.scheduler_id.contains(&pid_a)).map(|_| ())
        }
    })
    .await;
    let id = trigger_with(&mut admin, "long", "one", r#"{"ms": 3000}"#).await;
    wait_status(&mut admin, id, S::Running, LONG).await;
    a.kill_hard().await;
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!(done.attempt, 1, "kept, not re-run");
    let (_, events) = get(&mut admin, id).await;
    assert!(events.iter().any(|e| e.reason.contains("re-announced by worker w1")), "{:?}", steps(&events));
    let runs = executions(&log);
    assert_eq!(runs.len(), 1, "exactly one execution: {runs:?}");
    drop(b);
    let _ = std::fs::remove_dir_all(dir);
}

async fn a_rolling_restart_of_every_axd_fails_no_instance(db: &TestDb) {
    let dir = tempdir("rolling");
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let endpoints: Vec<String> = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();
    let args =
        |port: u16| vec!["--listen".to_owned(), format!("127.0.0.1:{port}"), "--database-url".into(), db.url.clone()];
    let mut axds = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        axds.push(AxdProcess::start(&strs(&args(*p)), &dir.join(format!("axd{i}.log"))).await);
    }
    let mut admin = AdminServiceClient::new(channel(&endpoints[0]).await);
    let every = pb::schedule::Kind::FixedRate(pb::IntervalSchedule {
        interval: Some(client::dur(Duration::from_secs(1))),
        start_at: None,
    });
    for t in 0..3 {
        let mut s = spec(&format!("steady-{t}"), "demo", "sleep", every.clone());
        s.params = r#"{"ms": 400}"#.into();
        create(&mut admin, s).await;
    }
    create(&mut admin, spec("burst", "demo", "sleep", manual())).await;
    let logs: Vec<_> = (0..2).map(|i| dir.join(format!("w{i}.jsonl"))).collect();
    let mut reversed = endpoints.clone();
    reversed.reverse();
    let _w0 = DemoWorker::start(&endpoints, "demo", "w0", 4, &logs[0]);
    let _w1 = DemoWorker::start(&reversed, "demo", "w1", 4, &logs[1]);
    let mut n = 0;
    for (i, port) in ports.iter().enumerate() {
        for _ in 0..10 {
            // A burst of one-time work while the restart happens.
            let e = &endpoints[(i + 1) % 3];
            let mut a = AdminServiceClient::new(channel(e).await);
            trigger_with(&mut a, "burst", &format!("b{n}"), r#"{"ms": 200}"#).await;
            n += 1;
        }
        let status = axds[i].terminate().await;
        assert!(status.success(), "axd {i} stopped cleanly: {status:?}");
        axds[i] = AxdProcess::start(&strs(&args(*port)), &dir.join(format!("axd{i}-again.log"))).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let mut admin = AdminServiceClient::new(channel(&endpoints[0]).await);
    for t in 0..3 {
        admin.disable_task(pb::DisableTaskRequest { name: format!("steady-{t}") }).await.expect("disable");
    }
    let all: Vec<pb::Instance> = eventually(LONG, "every instance to finish", || {
        let mut admin = admin.clone();
        async move {
            let l = admin
                .list_instances(pb::ListInstancesRequest { page_size: 1000, ..Default::default() })
                .await
                .ok()?
                .into_inner()
                .instances;
            l.iter().all(|i| i.status >= S::Success as i32).then_some(l)
        }
    })
    .await;
    let bad: Vec<_> =
        all.iter().filter(|i| i.status != S::Success as i32).map(|i| (i.id, i.status, i.message.clone())).collect();
    assert!(bad.is_empty(), "every instance succeeded through the rolling restart: {bad:?}");
    assert!(all.len() >= 30, "work kept flowing: {} instances", all.len());
    let runs = executions_in(&[&logs[0], &logs[1]]);
    assert_eq!(
        runs.iter().filter(|r| r.outcome.as_deref() == Some("SUCCESS")).count(),
        all.len(),
        "one execution per instance"
    );
    drop(axds);
    let _ = std::fs::remove_dir_all(dir);
}

async fn axd_processes_with_skewed_clocks_fire_neither_early_nor_late(db: &TestDb) {
    let Some(lib) = faketime_lib() else { return };
    let dir = tempdir("skew");
    // Two axd on one database, one clock five minutes fast and one five minutes slow.
    let mut axds = Vec::new();
    for (i, skew) in ["+300", "-300"].iter().enumerate() {
        let port = free_port();
        let args = ["--listen".to_owned(), format!("127.0.0.1:{port}"), "--database-url".into(), db.url.clone()];
        let env = [
            ("LD_PRELOAD", lib.as_str()),
            ("FAKETIME", skew),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
            ("FAKETIME_NO_CACHE", "1"),
        ];
        axds.push(AxdProcess::start_env(&strs(&args), &env, &dir.join(format!("axd{i}.log"))).await);
        let log = std::fs::read_to_string(dir.join(format!("axd{i}.log"))).unwrap_or_default();
        let first_time = log
            .split_whitespace()
            .find_map(|w| chrono::DateTime::parse_from_rfc3339(w.trim_matches(|c: char| !c.is_ascii_graphic())).ok());
        if let Some(t) = first_time {
            let off = (t.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_seconds();
            assert!(off.abs() > 200, "axd {i} really runs with a skewed clock (its log is {off} s off)");
        }
    }
    let endpoints: Vec<String> = axds.iter().map(|a| format!("http://{}", a.addr)).collect();
    let mut admin = AdminServiceClient::new(channel(&endpoints[0]).await);
    create(&mut admin, spec("tick", "demo", "noop", cron("* * * * * *"))).await;
    let log = dir.join("exec.jsonl");
    let _w = DemoWorker::start(&endpoints, "demo", "w", 4, &log);
    let started = chrono::Utc::now();
    eventually(LONG, "six runs", || async { (executions(&log).len() >= 6).then_some(()) }).await;
    admin.disable_task(pb::DisableTaskRequest { name: "tick".into() }).await.expect("disable");
    let runs = executions(&log);
    for r in &runs {
        let lag = (r.start - r.trigger_time).num_milliseconds();
        assert!(lag >= 0, "ran {} ms before its fire time", -lag);
        assert!(lag < 1000, "ran {lag} ms after its fire time");
        let skew = (r.trigger_time - started).num_seconds();
        assert!(skew.abs() < 60, "fire times follow the database clock, not a skewed axd ({skew} s)");
    }
    let list = admin
        .list_instances(pb::ListInstancesRequest { task_name: "tick".into(), page_size: 1000, ..Default::default() })
        .await
        .expect("list")
        .into_inner()
        .instances;
    let mut keys: Vec<&str> = list.iter().map(|i| i.idempotency_key.as_str()).collect();
    let n = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), n, "one instance per fire time");
    drop(axds);
    let _ = std::fs::remove_dir_all(dir);
}

mod servers {
    use super::*;
    on_server_backends!(
        axd_survives_a_database_outage_applies_misfire_and_creates_no_duplicate,
        a_worker_whose_axd_dies_moves_to_another_and_keeps_its_instance,
        a_rolling_restart_of_every_axd_fails_no_instance,
        axd_processes_with_skewed_clocks_fire_neither_early_nor_late,
    );
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d =
        std::env::temp_dir().join(format!("ax-{tag}-{}-{}", std::process::id(), chrono::Utc::now().timestamp_micros()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// libfaketime (Debian package `faketime`), which the skew test preloads into axd.
fn faketime_lib() -> Option<String> {
    let candidates = [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/faketime/libfaketime.so.1",
    ];
    if let Some(p) = candidates.iter().find(|p| std::path::Path::new(p).exists()) {
        return Some((*p).to_owned());
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    if !ci && std::env::var("AX_SKIP_FAKETIME_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: libfaketime is not installed and AX_SKIP_FAKETIME_TESTS=1");
        return None;
    }
    panic!("libfaketime is missing: install the Debian package `faketime` (scripts/test.sh does)");
}

async fn cancel_and_retry_reach_the_worker_through_whichever_axd_holds_its_stream(db: &TestDb) {
    let a = Axd::start(db, |_| {}).await;
    let b = Axd::start(db, |_| {}).await;
    let (canceled_tx, mut canceled_rx) = tokio::sync::mpsc::channel::<i64>(4);
    let worker = Worker::builder()
        .endpoint(&a.endpoint)
        .app("app")
        .capacity(2)
        .handler("wait", move |ctx: Context| {
            let tx = canceled_tx.clone();
            async move {
                if ctx.params_raw.contains("quick") {
                    return Ok(());
                }
                ctx.cancellation().cancelled().await;
                let _ = tx.send(ctx.instance_id).await;
                Err(HandlerError::fatal("canceled"))
            }
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    let mut admin_b = b.admin().await;
    create(&mut admin_b, spec("held", "app", "wait", manual())).await;
    let id = trigger_with(&mut admin_b, "held", "one", "{}").await;
    let running = wait_status(&mut admin_b, id, S::Running, LONG).await;
    assert_eq!(running.scheduler_id, a.running.scheduler_id(), "the worker's stream is on axd A");
    // Canceled through axd B: the Cancel travels through the database to axd A and the worker.
    admin_b.cancel_instance(pb::CancelInstanceRequest { id, reason: "via b".into() }).await.expect("cancel");
    let got =
        tokio::time::timeout(Duration::from_secs(5), canceled_rx.recv()).await.expect("cancel reached the handler");
    assert_eq!(got, Some(id));
    // Retried through axd B: dispatched by axd A (the only one with a worker) and run.
    let retried = client::trigger_with(&mut admin_b, "held", "two", r#"{"quick": true}"#).await;
    wait_status(&mut admin_b, retried, S::Success, LONG).await;
    admin_b.retry_instance(pb::RetryInstanceRequest { id: retried }).await.expect("retry");
    let again = wait_status(&mut admin_b, retried, S::Success, LONG).await;
    assert_eq!(again.attempt, 2, "ran again as a new attempt");
    let _ = stop.send(());
    a.stop().await;
    b.stop().await;
}

mod two_axd {
    use super::*;
    on_server_backends!(cancel_and_retry_reach_the_worker_through_whichever_axd_holds_its_stream);
}
