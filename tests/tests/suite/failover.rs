//! The database fails over (README "Running on a replicated PostgreSQL / Patroni"): two axd
//! processes on a PostgreSQL primary and its streaming standby, given both as one libpq-style URL
//! (`postgres://…@primary,standby/postgres?target_session_attrs=read-write`), with SDK workers
//! running instances that a client triggers all along. The test kills the primary (SIGKILL to its
//! processes) and promotes the standby. The same axd processes must turn NOT_SERVING while no
//! primary answers, reach the new primary without a restart (their LISTEN connections too), and
//! serve again.
//!
//! With synchronous replication, nothing acknowledged is lost or doubled: every trigger that
//! returned OK has its instance (same id, same idempotency key) and it ends SUCCESS; every result
//! a worker saw acknowledged as applied left its instance SUCCESS; no attempt ran twice and no two
//! attempts of one instance overlapped. With asynchronous replication the test measures the same
//! counts and prints them (README "Running on a replicated PostgreSQL / Patroni" reports them): what
//! the standby had not received when the primary died is gone.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use ax_proto::v1::{self as pb, InstanceStatus as S, admin_service_client::AdminServiceClient};
use ax_tests::{
    axd::channel,
    client::{create, manual, retries, spec},
    eventually,
    procs::AxdProcess,
    replica::{PgPair, Replication},
};
use ax_worker::{Context, Worker};
use sqlx::Connection as _;
use tonic::transport::Channel;
use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient};

const LONG: Duration = Duration::from_secs(30);

/// One run of the handler, as the worker saw it.
#[derive(Debug, Clone)]
struct Run {
    instance: i64,
    attempt: u32,
    worker: String,
    start: Instant,
    end: Option<Instant>,
}

/// What a failover cost, counted from what the client and the workers were told.
#[derive(Debug, Default)]
struct Outcome {
    /// Triggers that returned OK.
    acknowledged: usize,
    /// Of those, instances missing afterwards (or holding another idempotency key).
    lost_triggers: Vec<i64>,
    /// Results acknowledged as applied.
    applied: usize,
    /// Of those, instances not SUCCESS afterwards.
    lost_results: Vec<(i64, u32)>,
    /// Attempts that ran twice, and pairs of attempts of one instance that overlapped.
    doubled: Vec<String>,
    /// From the kill of the primary until both axd served again.
    outage: Duration,
}

async fn health(endpoint: &str) -> Option<ServingStatus> {
    let c = tokio::time::timeout(Duration::from_secs(2), channel(endpoint)).await.ok()?;
    let r = tokio::time::timeout(Duration::from_secs(2), HealthClient::new(c).check(HealthCheckRequest::default()))
        .await
        .ok()?
        .ok()?;
    ServingStatus::try_from(r.into_inner().status).ok()
}

async fn wait_health(endpoint: &str, want: ServingStatus, what: &str) {
    eventually(LONG, what, || async { (health(endpoint).await == Some(want)).then_some(()) }).await;
}

/// SDK workers of app `fo` on both axd, recording every run and the results acknowledged to them.
fn start_workers(
    endpoints: &[String],
    runs: &Arc<Mutex<Vec<Run>>>,
) -> (Vec<ax_worker::Stats>, Vec<tokio::sync::oneshot::Sender<()>>) {
    let mut stats = Vec::new();
    let mut stops = Vec::new();
    for id in ["w1", "w2"] {
        let runs = runs.clone();
        let worker = Worker::builder()
            .endpoints(endpoints.iter().cloned())
            .app("fo")
            .worker_id(id)
            .capacity(4)
            .handler("run", move |ctx: Context| {
                let runs = runs.clone();
                async move {
                    let at = {
                        let mut r = runs.lock().expect("lock");
                        r.push(Run {
                            instance: ctx.instance_id,
                            attempt: ctx.attempt,
                            worker: id.to_owned(),
                            start: Instant::now(),
                            end: None,
                        });
                        r.len() - 1
                    };
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    runs.lock().expect("lock")[at].end = Some(Instant::now());
                    Ok(())
                }
            })
            .build()
            .expect("worker");
        worker.stats().record_applied();
        stats.push(worker.stats());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(worker.run_until(async move {
            let _ = stopped.await;
        }));
        stops.push(stop);
    }
    (stats, stops)
}

/// Triggers `work` on the axd in turn until `stop`, each with a key of its own; the triggers that
/// returned OK, as (instance id, key).
async fn trigger_until(admins: Vec<AdminServiceClient<Channel>>, stop: Arc<AtomicBool>) -> Vec<(i64, String)> {
    let mut ok = Vec::new();
    let mut n = 0usize;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let key = format!("k{n}");
        let mut admin = admins[n % admins.len()].clone();
        let call = admin.trigger_task(pb::TriggerTaskRequest {
            name: "work".into(),
            params: None,
            idempotency_key: key.clone(),
            when: None,
            wait: None,
            tags: Default::default(),
        });
        if let Ok(Ok(r)) = tokio::time::timeout(Duration::from_secs(3), call).await
            && let Some(i) = r.into_inner().instance
        {
            ok.push((i.id, key));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    ok
}

fn applied(stats: &[ax_worker::Stats]) -> Vec<(i64, u32)> {
    stats.iter().flat_map(ax_worker::Stats::applied).collect()
}

/// The LISTEN sessions of axd on the server at `url` (each axd holds one).
async fn listeners(url: &str) -> i64 {
    let Ok(mut c) = sqlx::PgConnection::connect(url).await else { return -1 };
    let n = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'axd' AND query LIKE 'LISTEN%'",
    )
    .fetch_one(&mut c)
    .await
    .unwrap_or(-1);
    let _ = c.close().await;
    n
}

/// The flags of the tests' axd on `url`: a lease lasts 3 × 500 ms + 4 s = 5.5 s, and a loop without
/// a round for 1 s makes axd NOT_SERVING.
fn axd_args(url: &str) -> Vec<&str> {
    vec![
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        url,
        "--heartbeat-interval",
        "500ms",
        "--lost-worker-grace",
        "4s",
        "--ack-timeout",
        "3s",
        "--poll-interval",
        "200ms",
        "--scheduler-heartbeat",
        "500ms",
        "--health-stall-after",
        "1s",
        "--log",
        "warn",
    ]
}

/// Kills the primary under load and promotes the standby; with `cut`, the standby stops receiving
/// the primary's WAL first (its `primary_conninfo` emptied and reloaded) and the load goes on a
/// while, so that the primary acknowledges commits the standby never gets: the loss an
/// asynchronous standby risks, forced.
async fn failover(replication: Replication, cut: bool) -> Option<Outcome> {
    let mut pair = PgPair::start(replication).await?;
    let url = pair.url();
    let dir = std::env::temp_dir().join(format!("ax-failover-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let args = axd_args(&url);
    let mut axds = Vec::new();
    for name in ["a", "b"] {
        axds.push(AxdProcess::start(&args, &dir.join(format!("axd-{name}.log"))).await);
    }
    let pids: Vec<Option<u32>> = axds.iter().map(|a| a.child.id()).collect();
    let endpoints: Vec<String> = axds.iter().map(|a| format!("http://{}", a.addr)).collect();
    let mut admins = Vec::new();
    for e in &endpoints {
        admins.push(AdminServiceClient::new(channel(e).await));
    }
    let mut s = spec("work", "fo", "run", manual());
    s.retry_policy = Some(retries(3, Duration::from_millis(200)));
    create(&mut admins[0], s).await;
    eventually(LONG, "both LISTEN sessions on the primary", || async {
        (listeners(&pair.primary_url()).await == 2).then_some(())
    })
    .await;

    let runs = Arc::new(Mutex::new(Vec::new()));
    let (stats, stops) = start_workers(&endpoints, &runs);
    let stop = Arc::new(AtomicBool::new(false));
    let load = tokio::spawn(trigger_until(admins.clone(), stop.clone()));
    eventually(LONG, "results applied before the failover", || async { (applied(&stats).len() >= 15).then_some(()) })
        .await;

    if cut {
        let mut standby = sqlx::PgConnection::connect(&pair.standby_url()).await.expect("standby");
        sqlx::query("ALTER SYSTEM SET primary_conninfo = ''").execute(&mut standby).await.expect("cut");
        sqlx::query("SELECT pg_reload_conf()").execute(&mut standby).await.expect("reload");
        eventually(LONG, "the standby's WAL receiver stopped", || {
            let url = pair.standby_url();
            async move {
                let mut c = sqlx::PgConnection::connect(&url).await.ok()?;
                let n: i64 =
                    sqlx::query_scalar("SELECT COUNT(*) FROM pg_stat_wal_receiver").fetch_one(&mut c).await.ok()?;
                (n == 0).then_some(())
            }
        })
        .await;
        let before = applied(&stats).len();
        eventually(LONG, "results applied after the cut", || async {
            (applied(&stats).len() >= before + 10).then_some(())
        })
        .await;
    }
    let crashed = Instant::now();
    pair.crash_primary();
    for e in &endpoints {
        wait_health(e, ServingStatus::NotServing, "NOT_SERVING while no primary answers").await;
    }
    pair.promote().await;
    for e in &endpoints {
        wait_health(e, ServingStatus::Serving, "SERVING again on the new primary").await;
    }
    let outage = crashed.elapsed();
    for (a, pid) in axds.iter_mut().zip(&pids) {
        assert!(matches!(a.child.try_wait(), Ok(None)), "axd exited during the failover; log: {}", a.log.display());
        assert_eq!(a.child.id(), *pid, "the same axd process");
    }
    eventually(LONG, "both LISTEN sessions on the new primary", || async {
        (listeners(&pair.standby_url()).await == 2).then_some(())
    })
    .await;
    let before = applied(&stats).len();
    eventually(LONG, "results applied after the failover", || async {
        (applied(&stats).len() >= before + 15).then_some(())
    })
    .await;
    stop.store(true, Ordering::SeqCst);
    let acknowledged = load.await.expect("load");

    // Every acknowledged trigger: its instance (or none, when lost) once final.
    let mut admin = admins[1].clone();
    let mut lost_triggers = Vec::new();
    let mut status: HashMap<i64, i32> = HashMap::new();
    for (id, key) in &acknowledged {
        let found = eventually(LONG, &format!("instance {id} final or gone"), || {
            let mut admin = admin.clone();
            async move {
                match admin.get_instance(pb::GetInstanceRequest { id: *id }).await {
                    Ok(r) => {
                        let i = r.into_inner().instance.expect("instance");
                        (i.status >= S::Success as i32).then_some(Some(i))
                    }
                    Err(e) if e.code() == tonic::Code::NotFound => Some(None),
                    Err(_) => None,
                }
            }
        })
        .await;
        match found {
            Some(i) if i.idempotency_key == *key => {
                status.insert(*id, i.status);
            }
            _ => lost_triggers.push(*id),
        }
    }
    let acks = applied(&stats);
    let mut lost_results = Vec::new();
    for (id, attempt) in &acks {
        let st = match status.get(id) {
            Some(s) => *s,
            None => match admin.get_instance(pb::GetInstanceRequest { id: *id }).await {
                Ok(r) => r.into_inner().instance.expect("instance").status,
                Err(_) => -1,
            },
        };
        if st != S::Success as i32 {
            lost_results.push((*id, *attempt));
        }
    }
    for s in stops {
        let _ = s.send(());
    }
    let doubled = doubled(&runs.lock().expect("lock"));
    for a in &mut axds {
        a.terminate().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Some(Outcome {
        acknowledged: acknowledged.len(),
        lost_triggers,
        applied: acks.len(),
        lost_results,
        doubled,
        outage,
    })
}

/// Attempts that ran twice, and attempts of one instance that overlapped (a run still going at the
/// end counts as going on).
fn doubled(runs: &[Run]) -> Vec<String> {
    let mut by_instance: HashMap<i64, Vec<&Run>> = HashMap::new();
    for r in runs {
        by_instance.entry(r.instance).or_default().push(r);
    }
    let mut out = Vec::new();
    let now = Instant::now();
    for (id, rs) in by_instance {
        for (i, a) in rs.iter().enumerate() {
            for b in &rs[i + 1..] {
                if a.attempt == b.attempt {
                    out.push(format!("instance {id} attempt {} ran twice ({} and {})", a.attempt, a.worker, b.worker));
                } else if a.start < b.end.unwrap_or(now) && b.start < a.end.unwrap_or(now) {
                    out.push(format!("instance {id}: attempts {} and {} overlapped", a.attempt, b.attempt));
                }
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_to_a_synchronous_standby_loses_and_doubles_nothing() {
    let Some(o) = failover(Replication::Sync, false).await else { return };
    eprintln!("failover (synchronous standby): {o:?}");
    assert!(o.acknowledged > 30 && o.applied > 30, "too little work to say anything: {o:?}");
    assert!(o.lost_triggers.is_empty(), "acknowledged triggers lost: {:?}", o.lost_triggers);
    assert!(o.lost_results.is_empty(), "acknowledged results lost: {:?}", o.lost_results);
    assert!(o.doubled.is_empty(), "runs doubled: {:?}", o.doubled);
}

/// Measures (README): with an asynchronous standby, what the primary acknowledged but had not
/// streamed when it died is lost. Asserts only what must hold anyway: axd comes back by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_to_an_asynchronous_standby_is_measured() {
    let Some(o) = failover(Replication::Async, false).await else { return };
    eprintln!(
        "MEASURED failover (asynchronous standby): {} triggers acknowledged, {} lost; {} results acknowledged, {} \
         lost; {} runs doubled; outage {:?}: {o:?}",
        o.acknowledged,
        o.lost_triggers.len(),
        o.applied,
        o.lost_results.len(),
        o.doubled.len(),
        o.outage
    );
    assert!(o.acknowledged > 30 && o.applied > 30, "too little work to say anything: {o:?}");
}

/// A primary that turns read-only under axd and stays up (SQLSTATE 25006 on its open sessions, as
/// a demoted primary answers) while its standby is promoted: axd goes NOT_SERVING while no host of
/// the URL takes writes, then moves to the new primary without a restart and loses nothing it had.
/// Without the 25006 check its connections never fail in a way that says "look elsewhere", and
/// it would stay on the read-only server. Both servers are the test's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_turned_read_only_is_left_for_the_promoted_standby() {
    let Some(pair) = PgPair::start(Replication::Async).await else { return };
    let dir = std::env::temp_dir().join(format!("ax-read-only-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let url = pair.url();
    let args = axd_args(&url);
    let mut axd = AxdProcess::start(&args, &dir.join("axd.log")).await;
    let endpoint = format!("http://{}", axd.addr);
    let mut admin = AdminServiceClient::new(channel(&endpoint).await);
    create(&mut admin, spec("kept", "ro", "run", manual())).await;
    let trigger =
        |key: &str| pb::TriggerTaskRequest { name: "kept".into(), idempotency_key: key.into(), ..Default::default() };
    let before = admin.trigger_task(trigger("before")).await.expect("trigger").into_inner().instance.expect("i").id;
    wait_health(&endpoint, ServingStatus::Serving, "SERVING on the primary").await;
    // The standby has it before the primary turns read-only (asynchronous streaming).
    let standby = pair.standby_url();
    eventually(LONG, "the instance streamed to the standby", || {
        let standby = standby.clone();
        async move {
            let mut c = sqlx::PgConnection::connect(&standby).await.ok()?;
            let q = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM ax_instance WHERE idempotency_key = 'before'");
            (q.fetch_one(&mut c).await.ok()? == 1).then_some(())
        }
    })
    .await;

    let mut su = sqlx::PgConnection::connect(&pair.primary_url()).await.expect("connect");
    sqlx::query("ALTER SYSTEM SET default_transaction_read_only = on").execute(&mut su).await.expect("alter");
    sqlx::query("SELECT pg_reload_conf()").execute(&mut su).await.expect("reload");
    wait_health(&endpoint, ServingStatus::NotServing, "NOT_SERVING while no host takes writes").await;
    pair.promote().await;
    wait_health(&endpoint, ServingStatus::Serving, "SERVING on the promoted standby").await;
    assert!(matches!(axd.child.try_wait(), Ok(None)), "the same axd process; log: {}", axd.log.display());
    eventually(LONG, "axd's LISTEN session on the new primary", || async {
        (listeners(&pair.standby_url()).await == 1).then_some(())
    })
    .await;
    let after = admin.trigger_task(trigger("after")).await.expect("trigger after").into_inner().instance.expect("i");
    let kept = admin.get_instance(pb::GetInstanceRequest { id: before }).await.expect("get").into_inner();
    assert_eq!(kept.instance.expect("instance").idempotency_key, "before", "nothing lost");
    assert!(after.id != before);
    let log = std::fs::read_to_string(&axd.log).unwrap_or_default();
    assert!(log.contains("the database moved"), "axd said it moved; log:\n{log}");
    axd.terminate().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Measures (README) the loss an asynchronous standby risks, forced: the standby stops receiving
/// WAL, the load goes on, the primary dies. Acknowledged triggers and results since the cut are
/// lost, and axd comes back by itself on the promoted standby.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_to_a_standby_that_stopped_receiving_loses_what_it_missed() {
    let Some(o) = failover(Replication::Async, true).await else { return };
    eprintln!(
        "MEASURED failover (standby cut off before the crash): {} triggers acknowledged, {} lost; {} results \
         acknowledged, {} lost; {} runs doubled; outage {:?}",
        o.acknowledged,
        o.lost_triggers.len(),
        o.applied,
        o.lost_results.len(),
        o.doubled.len(),
        o.outage
    );
    assert!(o.applied > 30, "too little work to say anything: {o:?}");
    assert!(!o.lost_results.is_empty(), "results acknowledged after the cut were on the primary only: {o:?}");
}
