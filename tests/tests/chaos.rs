//! The chaos test: three axd and three worker processes on one database, killed at random (-9),
//! and the database restarted once, while cron, fixed-rate, slow, failing and one-time tasks fire.
//! Afterwards: every fire time has exactly one instance, every instance is final, no attempt ran
//! twice or on two workers at once, an instance ran more than once only where its trail explains
//! it, and every trail is legal and ordered.
//!
//! Replay a run with `AX_CHAOS_SEED=<seed printed in the summary>`; `AX_CHAOS_SECS` sets the chaos
//! period (default 60).

use std::{
    collections::{BTreeMap, HashMap},
    io::Write as _,
    path::{Path, PathBuf},
    time::Duration,
};

use ax_proto::v1::{self as pb, InstanceStatus as S, admin_service_client::AdminServiceClient};
use ax_scheduler::{
    convert::ts_from_pb,
    model::{CronDialect, Schedule, Ts},
    schedule::Compiled,
};
use ax_tests::{
    Db, TestDb,
    client::{self, cron, spec},
    procs::{AxdProcess, DemoWorker, Execution, executions_in},
    proxy::free_port,
};
use chrono::Utc;
use tonic::transport::Channel;

/// The chaos runs share the machine's two cores: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_on_postgres_loses_and_doubles_nothing() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(db) = TestDb::create(Db::Postgres).await else { return };
    chaos(&db, "restart-postgres").await;
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_on_mariadb_loses_and_doubles_nothing() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(db) = TestDb::create(Db::MySql).await else { return };
    chaos(&db, "restart-mysql").await;
    db.cleanup().await;
}

struct Cluster {
    db_url: String,
    dir: PathBuf,
    ports: Vec<u16>,
    axds: Vec<Option<AxdProcess>>,
    workers: Vec<Option<DemoWorker>>,
    logs: Vec<PathBuf>,
    endpoints: Vec<String>,
    /// Kill times of each worker id (executions without an end lasted until then).
    worker_kills: HashMap<String, Vec<chrono::DateTime<Utc>>>,
    axd_kills: usize,
    starts: usize,
}

impl Cluster {
    fn axd_args(&self, i: usize) -> Vec<String> {
        [
            "--listen",
            &format!("127.0.0.1:{}", self.ports[i]),
            "--database-url",
            &self.db_url,
            "--heartbeat-interval",
            "500ms",
            "--lost-worker-grace",
            "2s",
            "--ack-timeout",
            "3s",
            "--poll-interval",
            "500ms",
            "--scheduler-heartbeat",
            "1s",
            "--health-stall-after",
            "20s",
            "--log",
            "warn",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    async fn start_axd(&mut self, i: usize) {
        let args = self.axd_args(i);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        self.starts += 1;
        let log = self.dir.join(format!("axd{i}-{}.log", self.starts));
        self.axds[i] = Some(AxdProcess::start(&a, &log).await);
    }

    fn start_worker(&mut self, i: usize) {
        // Each worker lists the endpoints in its own order.
        let mut e = self.endpoints.clone();
        e.rotate_left(i);
        self.workers[i] = Some(DemoWorker::start(&e, "chaos", &format!("w{i}"), 4, &self.logs[i]));
    }

    /// An admin client on any axd that answers.
    async fn admin(&self) -> AdminServiceClient<Channel> {
        loop {
            for (i, e) in self.endpoints.iter().enumerate() {
                if self.axds[i].is_none() {
                    continue;
                }
                if let Ok(Ok(ch)) = tokio::time::timeout(
                    Duration::from_secs(2),
                    tonic::transport::Endpoint::from_shared(e.clone()).expect("url").connect(),
                )
                .await
                {
                    return AdminServiceClient::new(ch);
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Retries an admin call across axd until it succeeds (axd may be mid-kill).
macro_rules! retry {
    ($cluster:expr, |$a:ident| $call:expr) => {{
        let mut tries = 0;
        loop {
            let mut $a = $cluster.admin().await;
            match $call.await {
                Ok(r) => break r.into_inner(),
                Err(e) if tries < 50 => {
                    tries += 1;
                    eprintln!("  admin call failed ({}), retrying", e.message());
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                Err(e) => panic!("admin call kept failing: {e}"),
            }
        }
    }};
}

struct Periodic {
    name: String,
    schedule: Schedule,
    first_fire: Ts,
}

async fn chaos(db: &TestDb, restart_command: &str) {
    let seed: u64 = std::env::var("AX_CHAOS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7)
    });
    let secs: u64 = std::env::var("AX_CHAOS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    eprintln!("chaos seed: {seed} (replay with AX_CHAOS_SEED={seed}); {secs} s of chaos on {:?}", db.db);
    let mut rng = fastrand::Rng::with_seed(seed);
    let dir = std::env::temp_dir().join(format!("ax-chaos-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let mut c = Cluster {
        db_url: db.url.clone(),
        endpoints: ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect(),
        ports,
        axds: vec![None, None, None],
        workers: vec![None, None, None],
        logs: (0..3).map(|i| dir.join(format!("w{i}.jsonl"))).collect(),
        dir: dir.clone(),
        worker_kills: HashMap::new(),
        axd_kills: 0,
        starts: 0,
    };
    for i in 0..3 {
        c.start_axd(i).await;
    }
    for i in 0..3 {
        c.start_worker(i);
    }

    // The task mix.
    let mut periodic = Vec::new();
    let with = |name: &str, handler: &str, kind: pb::schedule::Kind, params: &str, retries: u32| {
        let mut s = spec(name, "chaos", handler, kind);
        s.params = params.into();
        if retries > 0 {
            s.retry_policy = Some(client::retries(retries, Duration::from_millis(500)));
        }
        s
    };
    let every = |secs: u64| {
        pb::schedule::Kind::FixedRate(pb::IntervalSchedule {
            interval: Some(client::dur(Duration::from_secs(secs))),
            start_at: None,
        })
    };
    let specs = vec![
        with("cron-each-second", "noop", cron("* * * * * *"), "{}", 3),
        with("cron-every-2s", "sleep", cron("*/2 * * * * *"), r#"{"ms": 150}"#, 3),
        with("cron-slow", "sleep", cron("*/5 * * * * *"), r#"{"ms": 2500}"#, 3),
        with("cron-flaky", "flaky", cron("*/3 * * * * *"), "{}", 3),
        with("rate-1s", "sleep", every(1), r#"{"ms": 300}"#, 3),
        with("rate-3s", "noop", every(3), "{}", 3),
    ];
    for s in specs {
        let name = s.name.clone();
        let created = retry!(c, |a| a.create_task(pb::CreateTaskRequest { task: Some(s.clone()) }));
        let task = created.task.expect("task");
        let spec = task.spec.expect("spec");
        let schedule = match spec.schedule.and_then(|s| s.kind).expect("kind") {
            pb::schedule::Kind::Cron(c) => {
                Schedule::Cron { expression: c.expression, time_zone: c.time_zone, dialect: CronDialect::Unix }
            }
            pb::schedule::Kind::FixedRate(i) => Schedule::FixedRate {
                interval: Duration::from_secs(u64::try_from(i.interval.expect("interval").seconds).expect("positive")),
                start_at: ts_from_pb("start_at", &i.start_at.expect("start")).expect("ts"),
            },
            other => panic!("unexpected schedule {other:?}"),
        };
        let first_fire = ts_from_pb("next_fire_time", &task.next_fire_time.expect("next fire")).expect("ts");
        periodic.push(Periodic { name, schedule, first_fire });
    }

    // Chaos.
    let started = tokio::time::Instant::now();
    let period = Duration::from_secs(secs);
    let mut one_time = Vec::new();
    let mut db_restarted = false;
    let mut burst = 0;
    while started.elapsed() < period {
        tokio::time::sleep(Duration::from_millis(2000 + rng.u64(0..3000))).await;
        // A burst of one-time tasks, due two seconds from now.
        for k in 0..rng.usize(3..8) {
            let name = format!("once-{burst}-{k}");
            let kind = pb::schedule::Kind::OneTime(pb::OneTimeSchedule {
                when: Some(pb::one_time_schedule::When::After(client::dur(Duration::from_secs(2)))),
            });
            let s = with(&name, "sleep", kind, r#"{"ms": 100}"#, 2);
            retry!(c, |a| a.create_task(pb::CreateTaskRequest { task: Some(s.clone()) }));
            one_time.push(name);
        }
        burst += 1;
        match rng.u8(0..10) {
            0..=3 => {
                let i = rng.usize(0..3);
                eprintln!("  kill -9 axd {i}");
                if let Some(mut a) = c.axds[i].take() {
                    a.kill_hard().await;
                }
                c.axd_kills += 1;
                tokio::time::sleep(Duration::from_millis(rng.u64(0..2000))).await;
                c.start_axd(i).await;
            }
            4..=7 => {
                let i = rng.usize(0..3);
                eprintln!("  kill -9 worker w{i}");
                if let Some(mut w) = c.workers[i].take() {
                    w.kill_hard().await;
                }
                c.worker_kills.entry(format!("w{i}")).or_default().push(Utc::now());
                tokio::time::sleep(Duration::from_millis(rng.u64(0..2000))).await;
                c.start_worker(i);
            }
            _ => {}
        }
        if !db_restarted && started.elapsed() > period / 2 {
            eprintln!("  restarting the database");
            let status =
                std::process::Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/test-databases.sh"))
                    .arg(restart_command)
                    .status()
                    .expect("run the restart script");
            assert!(status.success(), "restarting the database failed");
            db_restarted = true;
        }
    }
    assert!(db_restarted, "the database was restarted once (chaos period too short?)");

    // Stop firing, then let every instance finish.
    let mut disabled_at = HashMap::new();
    for p in &periodic {
        let t = retry!(c, |a| a.disable_task(pb::DisableTaskRequest { name: p.name.clone() })).task.expect("task");
        disabled_at.insert(p.name.clone(), ts_from_pb("update_time", &t.update_time.expect("time")).expect("ts"));
    }
    let settle_until = tokio::time::Instant::now() + Duration::from_secs(120);
    let instances = loop {
        let list = retry!(c, |a| a.list_instances(pb::ListInstancesRequest { page_size: 1000, ..Default::default() }))
            .instances;
        let open = list.iter().filter(|i| i.status < S::Success as i32).count();
        if open == 0 && list.len() < 1000 {
            break list;
        }
        assert!(tokio::time::Instant::now() < settle_until, "{open} instances still not final 120 s after the chaos");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };

    // 1. Every fire time in the run has exactly one instance (no lost trigger, no duplicate).
    let mut by_task: BTreeMap<&str, Vec<&pb::Instance>> = BTreeMap::new();
    for i in &instances {
        by_task.entry(i.task_name.as_str()).or_default().push(i);
    }
    let mut expected_fires = 0;
    for p in &periodic {
        let compiled = Compiled::compile(&p.schedule).expect("compile");
        let until = disabled_at[&p.name] - chrono::TimeDelta::seconds(3);
        let mut fires = Vec::new();
        let mut t = Some(p.first_fire);
        while let Some(at) = t.filter(|at| *at <= until) {
            fires.push(at);
            t = compiled.next_after(at);
        }
        expected_fires += fires.len();
        let mut got: HashMap<String, usize> = HashMap::new();
        for i in by_task.get(p.name.as_str()).into_iter().flatten() {
            *got.entry(i.idempotency_key.clone()).or_default() += 1;
        }
        for f in &fires {
            let key = ax_scheduler::schedule::fire_key(*f);
            assert_eq!(got.get(&key).copied(), Some(1), "{}: fire {key} has {:?} instances", p.name, got.get(&key));
        }
        for key in got.keys() {
            let at = chrono::DateTime::parse_from_rfc3339(key.trim_start_matches("fire:"))
                .expect("fire key")
                .with_timezone(&Utc);
            assert_eq!(
                compiled.next_after(at - chrono::TimeDelta::microseconds(1)),
                Some(at),
                "{}: {key} is not a fire time",
                p.name
            );
        }
    }
    for name in &one_time {
        assert_eq!(by_task.get(name.as_str()).map(Vec::len), Some(1), "one-time task {name} has exactly one instance");
    }
    expected_fires += one_time.len();

    // 2. Every instance is final (checked by the settle loop above).

    // 3. No attempt ran twice or on two workers at once; repeated runs are explained by the trail.
    let runs: Vec<Execution> = executions_in(&c.logs.iter().map(PathBuf::as_path).collect::<Vec<_>>());
    let end_of = |r: &Execution| {
        r.end.unwrap_or_else(|| {
            c.worker_kills
                .get(&r.worker)
                .and_then(|k| k.iter().find(|t| **t >= r.start).copied())
                .unwrap_or_else(Utc::now)
        })
    };
    let mut by_instance: HashMap<i64, Vec<&Execution>> = HashMap::new();
    for r in &runs {
        by_instance.entry(r.instance).or_default().push(r);
    }
    let mut reruns = 0;
    let mut max_lag_ms = 0i64;
    for (id, rs) in &by_instance {
        for (a, ra) in rs.iter().enumerate() {
            for rb in rs.iter().skip(a + 1) {
                assert!(ra.attempt != rb.attempt, "instance {id} attempt {} ran twice: {ra:?} and {rb:?}", ra.attempt);
                let overlap = ra.start < end_of(rb) && rb.start < end_of(ra);
                assert!(
                    !(overlap && ra.worker != rb.worker && ra.attempt == rb.attempt),
                    "instance {id} ran on two workers at once"
                );
            }
        }
        if let Some(first) = rs.iter().min_by_key(|r| r.attempt) {
            max_lag_ms = max_lag_ms.max((first.start - first.trigger_time).num_milliseconds());
        }
        if rs.len() > 1 {
            reruns += 1;
            let events = retry!(c, |a| a.get_instance(pb::GetInstanceRequest { id: *id })).events;
            let explained = events.iter().any(|e| {
                e.to_status == S::Pending as i32
                    && (e.reason.starts_with("retry ")
                        || e.reason.contains("did not accept it in time")
                        || e.reason.contains("rejected by worker")
                        || e.reason.contains("could not be delivered"))
            });
            assert!(explained, "instance {id} ran {} times without a retry or a lost worker in its trail", rs.len());
        }
    }

    // 4. Every trail is legal and ordered, and ends in the instance's state.
    for i in &instances {
        let events = retry!(c, |a| a.get_instance(pb::GetInstanceRequest { id: i.id })).events;
        let mut prev_time = (i64::MIN, 0);
        let mut state = S::Unspecified as i32;
        for e in &events {
            let t = e.time.as_ref().map_or((0, 0), |t| (t.seconds, t.nanos));
            assert!(t >= prev_time, "instance {}: event times go backwards: {events:?}", i.id);
            prev_time = t;
            assert_eq!(
                e.from_status, state,
                "instance {}: event from {:?} but the state was {:?}",
                i.id, e.from_status, state
            );
            assert!(
                legal(e.from_status, e.to_status),
                "instance {}: illegal transition {} -> {}",
                i.id,
                e.from_status,
                e.to_status
            );
            state = e.to_status;
        }
        assert_eq!(state, i.status, "instance {}: the trail ends in its state", i.id);
    }

    let kills: usize = c.worker_kills.values().map(Vec::len).sum();
    // Written to the process's stderr directly, which the test harness does not capture: the
    // summary shows in every CI log, passing or not.
    let _ = writeln!(
        std::io::stderr(),
        "chaos summary ({:?}, seed {seed}): fires {expected_fires}, instances {}, executions {}, re-run instances {reruns}, \
         axd kills {}, worker kills {kills}, database restarts 1, max fire lag {max_lag_ms} ms",
        db.db,
        instances.len(),
        runs.len(),
        c.axd_kills,
    );
    for w in c.workers.iter_mut().flatten() {
        w.kill_hard().await;
    }
    for a in c.axds.iter_mut().flatten() {
        a.kill_hard().await;
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Transitions an instance may make (a step to the same state records something without a change).
fn legal(from: i32, to: i32) -> bool {
    use S::*;
    let (Ok(from), Ok(to)) = (S::try_from(from), S::try_from(to)) else { return false };
    if from == to && from != Unspecified {
        return true;
    }
    matches!(
        (from, to),
        (Unspecified, Pending | Skipped)
            | (Pending, Dispatched | Canceled)
            | (Dispatched, Running | Pending | Success | Failed | Canceled)
            | (Running, Success | Failed | Timeout | Canceled)
            | (Failed | Timeout, Pending)
            | (Success | Canceled | Skipped, Pending)
    )
}
