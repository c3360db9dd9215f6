//! Cluster behaviour: half-dead detection, isolation of the admin pool, database outages, axd
//! failover with re-adoption, rolling restarts and skewed clocks.

use std::time::Duration;

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

/// What `grpc.health.v1` answers, or `None` if the call failed.
async fn health(endpoint: &str) -> Option<ServingStatus> {
    let mut h = HealthClient::new(channel(endpoint).await);
    let r = h.check(HealthCheckRequest { service: String::new() }).await.ok()?;
    ServingStatus::try_from(r.into_inner().status).ok()
}

async fn serving(endpoint: &str) -> bool {
    health(endpoint).await == Some(ServingStatus::Serving)
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
    assert_eq!(health(&axd.endpoint).await, Some(ServingStatus::NotServing), "while the database is blocked");
    lock.release().await;
    eventually(LONG, "SERVING again after the block", || async { serving(&axd.endpoint).await.then_some(()) }).await;
    axd.stop().await;
}

/// A lock that makes every reader of `ax_audit` wait: ListAuditEntries reads it, no loop of axd
/// does. (SQLite has no lock on one table: a reader waits on none, a writer on every writer.)
enum AuditLock {
    Pg(sqlx::PgConnection),
    My(sqlx::MySqlConnection),
}

impl AuditLock {
    async fn take(db: &TestDb) -> AuditLock {
        use sqlx::{Connection, Executor};
        match db.db {
            Db::Postgres => {
                let mut c = sqlx::PgConnection::connect(&db.url).await.expect("pg");
                c.execute("BEGIN").await.expect("begin");
                c.execute("LOCK TABLE ax_audit IN ACCESS EXCLUSIVE MODE").await.expect("lock");
                AuditLock::Pg(c)
            }
            Db::MySql => {
                let mut c = sqlx::MySqlConnection::connect(&db.url).await.expect("mysql");
                c.execute("LOCK TABLES ax_audit WRITE").await.expect("lock");
                AuditLock::My(c)
            }
            Db::Sqlite => unreachable!("server backends only"),
        }
    }

    /// Whether a statement on `ax_audit` waits on this lock.
    async fn waited_on(db: &TestDb) -> bool {
        let waiting = match db.db {
            Db::Postgres => {
                "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%ax_audit%'"
            }
            _ => {
                "SELECT COUNT(*) FROM information_schema.processlist WHERE state LIKE '%lock%' \
                  AND info LIKE '%ax_audit%'"
            }
        };
        db.scalar(waiting).await > 0
    }

    async fn release(self) {
        use sqlx::Executor;
        match self {
            AuditLock::Pg(mut c) => drop(c.execute("COMMIT").await),
            AuditLock::My(mut c) => drop(c.execute("UNLOCK TABLES").await),
        }
    }
}

async fn triggers_keep_firing_on_time_while_the_admin_pool_is_exhausted(db: &TestDb) {
    // How late a fire may start while the admin pool is exhausted. A correct build starts fires a
    // few ms late, a few hundred on a loaded 2-core machine. A trigger loop on the admin pool
    // creates no instance while the pool is held: the fires already created ahead (the 2.5 s
    // look-ahead) run, the later ones only after the hold, seconds late or never.
    const LAG_BOUND_MS: i64 = 2000;
    /// How many seconds of fires must run while the pool is held: more than the look-ahead plus the
    /// bound, so that the held pool decides the outcome, not instances created before the hold.
    const HELD_FOR: i64 = 6;
    // axd runs as a process of its own, as in production. Its admin pool has one connection: a
    // ListAuditEntries call waiting on a lock the test holds on ax_audit keeps it, and every other
    // admin call (and the scheduler heartbeat) waits for the pool, for as long as the test holds
    // the lock. No flood: the machine is not loaded by the test itself.
    let dir = ax_tests::ScratchDir::new("admin-pool");
    let args = ["--listen", "127.0.0.1:0", "--database-url", &db.url, "--db-pool-admin", "1"];
    let axd = AxdProcess::start(&args, &dir.join("axd.log")).await;
    let endpoint = format!("http://{}", axd.addr);
    let mut admin = AdminServiceClient::new(channel(&endpoint).await);
    let log = dir.join("exec.jsonl");
    let _w = DemoWorker::start(std::slice::from_ref(&endpoint), "demo", "w", 4, &log);
    create(&mut admin, spec("tick", "demo", "noop", cron("* * * * * *"))).await;
    let ticks = || executions(&log).into_iter().filter(|e| e.task == "tick").collect::<Vec<_>>();
    eventually(LONG, "three fires before the hold", || async { (ticks().len() >= 3).then_some(()) }).await;

    let lock = AuditLock::take(db).await;
    let held_from = chrono::Utc::now();
    // Clients without deadlines: the calls wait as long as the lock is held.
    let mut a = admin.clone();
    let stuck = tokio::spawn(async move { a.list_audit_entries(pb::ListAuditEntriesRequest::default()).await });
    eventually(LONG, "ListAuditEntries to wait on the lock", || async { AuditLock::waited_on(db).await.then_some(()) })
        .await;
    // The pool's one connection is taken: a call that does not read ax_audit waits for it too.
    let mut s = admin.clone();
    let stats = tokio::spawn(async move { s.get_cluster_stats(pb::GetClusterStatsRequest {}).await });
    let until = held_from + chrono::TimeDelta::seconds(HELD_FOR);
    eventually(LONG, "the fires of the hold to run", || async {
        ticks().iter().any(|e| e.trigger_time >= until).then_some(())
    })
    .await;
    let held_until = chrono::Utc::now();
    assert!(!stuck.is_finished(), "ListAuditEntries still waits on the lock");
    if stats.is_finished() {
        let r = stats.await.expect("stats task");
        assert!(
            r.is_err(),
            "the admin pool was exhausted: GetClusterStats got no connection while it was held ({r:?})"
        );
    } else {
        stats.abort();
    }
    lock.release().await;
    stuck.await.expect("audit task").expect("ListAuditEntries answers once the lock is gone");

    eventually(LONG, "the fires after the hold", || async {
        ticks().iter().any(|e| e.trigger_time > held_until).then_some(())
    })
    .await;
    admin.disable_task(pb::DisableTaskRequest { name: "tick".into() }).await.expect("disable");
    let mut runs = ticks();
    runs.sort_by_key(|e| e.trigger_time);
    // A fire every second, before, during and after the hold: one run per fire time, none lost.
    let secs: Vec<i64> = runs.iter().map(|e| e.trigger_time.timestamp()).collect();
    let expected: Vec<i64> = (secs[0]..=secs[secs.len() - 1]).collect();
    assert_eq!(secs, expected, "one run per fire time");
    let lag = |e: &ax_tests::procs::Execution| (e.start - e.trigger_time).num_milliseconds();
    let during: Vec<(chrono::DateTime<chrono::Utc>, i64)> = runs
        .iter()
        .filter(|e| e.trigger_time >= held_from && e.trigger_time <= held_until)
        .map(|e| (e.trigger_time, lag(e)))
        .collect();
    assert!(during.len() as i64 >= HELD_FOR, "fires while the admin pool was held: {during:?}");
    for (fire, ms) in &during {
        assert!(ms >= &0, "the fire of {fire} started {} ms early", -ms);
        assert!(
            *ms <= LAG_BOUND_MS,
            "the fire of {fire} started {ms} ms late while the admin pool was held (bound {LAG_BOUND_MS} ms)"
        );
    }
    eprintln!("admin pool held: fire lags {during:?}");
    drop(axd);
}

on_every_backend!(health_turns_not_serving_while_the_database_is_blocked_and_serving_again_after);

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
    // The database goes away for 4 s: connections drop, new ones are refused. Fires due early in
    // the outage are more than the 1 s misfire threshold late when it ends.
    proxy.down().await;
    let outage_until = tokio::time::Instant::now() + Duration::from_secs(4);
    eventually(LONG, "NOT_SERVING while the database is unreachable", || async {
        (health(&axd.endpoint).await == Some(ServingStatus::NotServing)).then_some(())
    })
    .await;
    tokio::time::sleep_until(outage_until).await;
    assert_eq!(health(&axd.endpoint).await, Some(ServingStatus::NotServing), "for as long as the outage lasts");
    proxy.up();
    let before = success(admin.clone()).await.len();
    eventually(LONG, "runs again after the outage", || async {
        (success(admin.clone()).await.len() >= before + 3).then_some(())
    })
    .await;
    eventually(LONG, "SERVING after the outage", || async { serving(&axd.endpoint).await.then_some(()) }).await;
    admin.disable_task(pb::DisableTaskRequest { name: "tick".into() }).await.expect("disable");
    let events = admin.get_task(pb::GetTaskRequest { name: "tick".into() }).await.expect("get").into_inner().events;
    let catch_up_events = events.iter().filter(|e| e.kind == "MISFIRE_CATCH_UP").count();
    assert!(catch_up_events >= 1, "the missed fires were handled by the misfire policy: {events:?}");
    let all = admin
        .list_instances(pb::ListInstancesRequest { task_name: "tick".into(), page_size: 1000, ..Default::default() })
        .await
        .expect("list")
        .into_inner()
        .instances;
    let catch_ups = all.iter().filter(|i| i.source == pb::InstanceSource::CatchUp as i32).count();
    assert_eq!(catch_ups, catch_up_events, "FIRE_ONCE: one catch-up instance per outage");
    // One instance per fire time, by arithmetic: every second from the first fire to the last,
    // except the missed fires the policy skipped (FIRE_ONCE keeps the latest of them).
    let skipped: Vec<i64> = events
        .iter()
        .filter(|e| e.kind == "MISFIRE_SKIPPED")
        .flat_map(|e| {
            let (from, to) = missed_range(&e.message);
            from..to
        })
        .collect();
    assert_one_instance_per_fire(&all, &skipped);
    let _ = stop_worker.send(());
    axd.stop().await;
}

async fn a_worker_whose_axd_dies_moves_to_another_and_keeps_its_instance(db: &TestDb) {
    let dir = ax_tests::ScratchDir::new("failover");
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
}

async fn a_rolling_restart_of_every_axd_fails_no_instance(db: &TestDb) {
    let dir = ax_tests::ScratchDir::new("rolling");
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
}

async fn axd_processes_with_skewed_clocks_fire_neither_early_nor_late(db: &TestDb) {
    let Some(lib) = faketime_lib() else { return };
    let dir = ax_tests::ScratchDir::new("skew");
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
        // axd logs "axd started" before its readiness line, each line starting with its wall time.
        let log = std::fs::read_to_string(dir.join(format!("axd{i}.log"))).unwrap_or_default();
        let first_time = log
            .split_whitespace()
            .find_map(|w| chrono::DateTime::parse_from_rfc3339(w.trim_matches(|c: char| !c.is_ascii_graphic())).ok())
            .unwrap_or_else(|| panic!("axd {i}'s log has no time stamp to check its clock by:\n{log}"));
        let off = (first_time.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_seconds();
        assert!(off.abs() > 200, "axd {i} really runs with a skewed clock (its log is {off} s off)");
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
        // An axd that followed its own clock would run fires 300 s early or late; 10 s is the margin
        // for a loaded machine (runs start a few ms after their fire time).
        let lag = (r.start - r.trigger_time).num_milliseconds();
        assert!(lag >= 0, "ran {} ms before its fire time", -lag);
        assert!(lag < 10_000, "ran {lag} ms after its fire time");
        let skew = (r.trigger_time - started).num_seconds();
        assert!(skew.abs() < 60, "fire times follow the database clock, not a skewed axd ({skew} s)");
    }
    let list = admin
        .list_instances(pb::ListInstancesRequest { task_name: "tick".into(), page_size: 1000, ..Default::default() })
        .await
        .expect("list")
        .into_inner()
        .instances;
    // Two clocks 10 minutes apart could each fire a second the other did not, or leave one out.
    assert_one_instance_per_fire(&list, &[]);
    drop(axds);
}

async fn axd_started_while_its_database_does_not_answer_waits_for_it(db: &TestDb) {
    let proxy = Proxy::start(db.server_addr()).await;
    proxy.down().await;
    let url = db.url_via(proxy.addr);
    let dir = std::env::temp_dir().join(format!("ax-startup-wait-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let log = dir.join(format!("axd-{:?}.log", db.db));
    let args = ["--listen", "127.0.0.1:0", "--database-url", url.as_str()].map(str::to_owned);
    let started = tokio::spawn({
        let log = log.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            AxdProcess::start(&args, &log).await
        }
    });
    // axd finds nothing answering and says it will try again (instead of exiting).
    eventually(LONG, "axd to report that it waits for the database", || async {
        std::fs::read_to_string(&log).ok()?.contains("the database is not answering yet").then_some(())
    })
    .await;
    proxy.up();
    let axd = started.await.expect("axd started once the database answered");
    eventually(LONG, "axd to serve", || async { serving(&format!("http://{}", axd.addr)).await.then_some(()) }).await;
    drop(axd);
    let _ = std::fs::remove_dir_all(dir);
}

mod servers {
    use super::*;
    on_server_backends!(
        triggers_keep_firing_on_time_while_the_admin_pool_is_exhausted,
        axd_started_while_its_database_does_not_answer_waits_for_it,
        axd_survives_a_database_outage_applies_misfire_and_creates_no_duplicate,
        a_worker_whose_axd_dies_moves_to_another_and_keeps_its_instance,
        a_rolling_restart_of_every_axd_fails_no_instance,
        axd_processes_with_skewed_clocks_fire_neither_early_nor_late,
    );
}

/// The whole seconds a MISFIRE_SKIPPED message names as skipped: "skipped S of N fire(s) missed by
/// more than T from A to B (FIRE_ONCE)" skips A up to, not including, B (the latest missed fire,
/// which FIRE_ONCE catches up). Returns (A, B) in Unix seconds.
fn missed_range(message: &str) -> (i64, i64) {
    let secs = |w: &str| {
        chrono::DateTime::parse_from_rfc3339(w).unwrap_or_else(|e| panic!("{w:?} in {message:?}: {e}")).timestamp()
    };
    let rest = message.split_once(" from ").unwrap_or_else(|| panic!("no range in {message:?}")).1;
    let (from, rest) = rest.split_once(" to ").unwrap_or_else(|| panic!("no range in {message:?}"));
    (secs(from), secs(rest.split_whitespace().next().unwrap_or_default()))
}

/// Checks, by arithmetic on fire times, that a task firing every second has exactly one instance
/// for every second from its first fire to its last, except the `skipped` ones, which have none.
fn assert_one_instance_per_fire(instances: &[pb::Instance], skipped: &[i64]) {
    let mut fired: Vec<i64> =
        instances.iter().map(|i| i.trigger_time.as_ref().expect("trigger time").seconds).collect();
    fired.sort_unstable();
    let (first, last) = (fired[0], fired[fired.len() - 1]);
    let expected: Vec<i64> = (first..=last).filter(|s| !skipped.contains(s)).collect();
    assert_eq!(fired, expected, "one instance per fire time from {first} to {last}, none for {skipped:?}");
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
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
        ax_tests::skip("libfaketime is not installed and AX_SKIP_FAKETIME_TESTS=1");
        return None;
    }
    panic!(
        "libfaketime is missing: install the Debian package `faketime` (scripts/test.sh does), or set \
         AX_SKIP_FAKETIME_TESTS=1 outside CI to skip"
    );
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
