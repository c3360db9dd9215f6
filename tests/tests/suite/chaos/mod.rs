//! The chaos test: three axd and four worker processes on one database, hit by every fault we know
//! of while cron, fixed-rate, long, failing, one-time and idempotent manual instances run.
//!
//! Faults (each kind at least once per run, in random order, two at once at least once): kill -9 of an
//! axd or a worker; SIGSTOP of an axd for longer than the lease (its workers must move away and
//! keep their attempts); SIGSTOP of a worker (past its lease, it must fence its handlers and not
//! start stale assignments when it resumes); a database freeze (every database connection held
//! silent by a proxy for seconds); a cut of every database connection; a cut of every worker
//! stream of one axd; a partition between the workers and one axd (its streams held silent, no
//! reset); SIGTERM of an axd (graceful restart); and one real restart of the database server: a
//! server of the test's own ([`PrivateServer`]), as the shared one serves the tests running beside it.
//!
//! Afterwards, from the database and from the workers' own execution logs:
//! 1. every fire time has exactly one instance, with the expected fire times derived by plain
//!    arithmetic (not by ax's schedule code), and every idempotency key exactly one;
//! 2. every instance is final;
//! 3. no two attempts of one instance ran at the same time, and no attempt ran twice (a frozen
//!    worker does no work while frozen, and a handler that its SDK fenced did none after the freeze
//!    that outlived its lease);
//! 4. every instance the database calls SUCCESS has a successful run in an execution log;
//! 5. an instance that ran more than once has a retry, a lost worker or a requeue in its trail;
//! 6. every trail is legal (the transitions below; no operator retries happen here), ordered, and
//!    ends in the instance's state;
//! 7. chains and a small DAG: every upstream instance that ended SUCCESS (or FAILED) created exactly
//!    one instance of its on-success (on-failure) task, none for another final state, and no
//!    successor exists without its upstream; every DAG run whose upstreams all succeeded has
//!    exactly one join instance, and the others none;
//! 8. every fault kind hit running work at least once (a fault that hit nothing proved nothing);
//! 9. a database freeze past the lease stopped the handlers running when it began by the lease's
//!    end (README: an outage longer than a lease stops running handlers);
//! 10. a handler whose worker was frozen past the lease was fenced and ended soon after the worker
//!     resumed (a fenced handler that keeps working fails the run);
//! 11. with a task whose handler fails on every worker in the mix (default cooldown settings),
//!     every instance is final within [`QUIESCE`] of the chaos's end.
//!
//! Replay a run with `AX_CHAOS_SEED=<seed printed in the summary>`; `AX_CHAOS_SECS` sets the chaos
//! period (default 75; the run lasts until every fault kind has happened at least once);
//! `AX_CHAOS_KEEP=1` keeps the run's directory (axd logs, execution logs).

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    io::Write as _,
    path::PathBuf,
    time::Duration,
};

use ax_proto::v1::{self as pb, InstanceStatus as S, admin_service_client::AdminServiceClient};
use ax_scheduler::{grpc::convert::ts_from_pb, model::Cause};
use ax_tests::{
    Db, TestDb,
    client::{self, cron, manual, spec},
    procs::{AxdProcess, DemoWorker, Execution, executions_in},
    proxy::{Proxy, free_port},
    servers::PrivateServer,
};
use chrono::{DateTime, TimeDelta, Utc};
use tonic::transport::Channel;

mod bounds;

/// The chaos runs share the machine's two cores: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_on_postgres_loses_and_doubles_nothing() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(mut server) = PrivateServer::start(Db::Postgres).await else { return };
    let db = TestDb::create_on(&server).await;
    chaos(&db, &mut server).await;
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_on_mariadb_loses_and_doubles_nothing() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(mut server) = PrivateServer::start(Db::MySql).await else { return };
    let db = TestDb::create_on(&server).await;
    chaos(&db, &mut server).await;
    db.cleanup().await;
}

const AXDS: usize = 3;
const WORKERS: usize = 4;
/// The axd timings of this test: heartbeat 500 ms, lost-worker grace 3 s, so a lease lasts
/// 3 × 500 ms + 3 s = 4.5 s after its last renewal.
const LEASE: Duration = Duration::from_millis(4500);
/// Every admin call gets this long before the test gives up on that axd and tries another.
const CALL_DEADLINE: Duration = Duration::from_secs(5);
/// Once the chaos is over and the tasks are disabled, every instance is final within this long:
/// the longest handler (7 s), a lost attempt's lease and its retries, with room for a slow
/// machine — never minutes of instances held back by cooldowns.
const QUIESCE: Duration = Duration::from_secs(45);
/// How long a fault waits for running work to hit (check 8): after a database fault the cluster
/// takes seconds to dispatch again (pools reconnect, leases lapse, retries back off).
const RUNNING_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Fault {
    KillAxd,
    KillWorker,
    FreezeAxd,
    FreezeWorker,
    FreezeDb,
    CutDb,
    CutStreams,
    Partition,
    TermAxd,
    RestartDb,
}

impl Fault {
    const ALL: [Fault; 10] = [
        Fault::KillAxd,
        Fault::KillWorker,
        Fault::FreezeAxd,
        Fault::FreezeWorker,
        Fault::FreezeDb,
        Fault::CutDb,
        Fault::CutStreams,
        Fault::Partition,
        Fault::TermAxd,
        Fault::RestartDb,
    ];
}

/// A time span: from, to.
type Span = (DateTime<Utc>, DateTime<Utc>);

/// Where a fault lands.
#[derive(Debug)]
enum Aim {
    /// This axd, holding streams of these workers.
    Axd(usize, Vec<String>),
    Worker(usize),
    Database,
    /// No axd to aim at.
    Nothing,
}

/// A fault in progress: what to undo when it ends.
#[derive(Debug)]
enum Undo {
    StartAxd(usize),
    StartWorker(usize),
    ThawAxd(usize),
    ThawWorker(usize, DateTime<Utc>),
    ReleaseDb(DateTime<Utc>),
    ReleaseStreams(usize),
    Nothing,
}

struct Cluster {
    db_url: String,
    dir: PathBuf,
    ports: Vec<u16>,
    axds: Vec<Option<AxdProcess>>,
    frozen_axds: HashSet<usize>,
    workers: Vec<Option<DemoWorker>>,
    logs: Vec<PathBuf>,
    /// Where workers connect: one proxy in front of each axd.
    stream_proxies: Vec<Proxy>,
    /// Every axd reaches the database through this proxy.
    db_proxy: Proxy,
    /// Kill times of each worker id (executions without an end lasted until then).
    worker_kills: BTreeMap<String, Vec<DateTime<Utc>>>,
    /// Frozen (SIGSTOP..SIGCONT) intervals of each worker id.
    worker_freezes: BTreeMap<String, Vec<Span>>,
    /// Database freezes (every connection held silent).
    db_freezes: Vec<Span>,
    /// Every fault as it began, and whose work it could hit.
    hits: Vec<bounds::Hit>,
    counts: BTreeMap<&'static str, usize>,
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
            "3s",
            "--ack-timeout",
            "3s",
            "--poll-interval",
            "500ms",
            "--scheduler-heartbeat",
            "1s",
            "--health-stall-after",
            "20s",
            "--shutdown-timeout",
            "4s",
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
        let mut e: Vec<String> = self.stream_proxies.iter().map(|p| format!("http://{}", p.addr)).collect();
        e.rotate_left(i % AXDS);
        self.workers[i] = Some(DemoWorker::start(&e, "chaos", &format!("w{i}"), 4, &self.logs[i]));
    }

    /// An admin client on an axd that is up and not frozen (directly, not through a proxy).
    async fn admin(&self, rng: &mut fastrand::Rng) -> AdminServiceClient<Channel> {
        loop {
            let mut order: Vec<usize> = (0..AXDS).collect();
            rng.shuffle(&mut order);
            for i in order {
                if self.axds[i].is_none() || self.frozen_axds.contains(&i) {
                    continue;
                }
                let url = format!("http://127.0.0.1:{}", self.ports[i]);
                if let Ok(Ok(ch)) = tokio::time::timeout(
                    Duration::from_secs(2),
                    tonic::transport::Endpoint::from_shared(url).expect("url").connect(),
                )
                .await
                {
                    return AdminServiceClient::new(ch);
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn count(&mut self, what: &'static str) {
        *self.counts.entry(what).or_default() += 1;
    }

    /// The workers running a handler now, by their execution logs (a run with no end whose worker
    /// was not killed since it started), the same reading check 8 makes afterwards. Runs of the
    /// 7 s `cron-long` handler that began under 4 s ago come first: they are still running when the
    /// fault lands a moment later.
    fn running_workers(&self) -> (HashSet<String>, HashSet<String>) {
        let now = Utc::now();
        let runs = executions_in(&self.logs.iter().map(PathBuf::as_path).collect::<Vec<_>>());
        let (mut fresh, mut any) = (HashSet::new(), HashSet::new());
        for r in runs.iter().filter(|r| r.end.is_none()) {
            if self.worker_kills.get(&r.worker).into_iter().flatten().any(|k| *k >= r.start) {
                continue;
            }
            if r.task == "cron-long" && now - r.start < TimeDelta::seconds(4) {
                fresh.insert(r.worker.clone());
            }
            any.insert(r.worker.clone());
        }
        (fresh, any)
    }

    /// Waits up to [`RUNNING_WAIT`] for a handler running on a worker `pick` accepts (fresh runs first; see
    /// [`Self::running_workers`]), so that a fault hits running work (check 8): right after
    /// another fault nothing may run for a while. Returns the accepted workers running one,
    /// empty when none came in time.
    async fn await_running(&self, pick: impl Fn(&str) -> bool) -> Vec<String> {
        let until = tokio::time::Instant::now() + RUNNING_WAIT;
        loop {
            let (fresh, any) = self.running_workers();
            for set in [fresh, any] {
                let mut on: Vec<String> = set.into_iter().filter(|w| pick(w)).collect();
                if !on.is_empty() {
                    on.sort();
                    return on;
                }
            }
            if tokio::time::Instant::now() >= until {
                return Vec::new();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The worker sessions of the cluster by `ListWorkers`, from the first axd that answers within
    /// 2 s (after a database fault one axd may take seconds to serve again; empty when none does).
    async fn list_workers(&self) -> Option<Vec<pb::WorkerSession>> {
        for i in (0..AXDS).filter(|i| self.axds[*i].is_some() && !self.frozen_axds.contains(i)) {
            let url = format!("http://127.0.0.1:{}", self.ports[i]);
            let listed = tokio::time::timeout(Duration::from_secs(2), async {
                let ch = tonic::transport::Endpoint::from_shared(url).expect("url").connect().await.ok()?;
                AdminServiceClient::new(ch).list_workers(pb::ListWorkersRequest::default()).await.ok()
            })
            .await;
            match listed {
                Ok(Some(r)) => return Some(r.into_inner().workers),
                _ => eprintln!("  (ListWorkers: axd {i} did not answer within 2 s)"),
            }
        }
        None
    }

    /// The free axd with a worker stream (by `ListWorkers`; a scheduler id carries its process id)
    /// of a worker running a handler now, the most such streams first, and those streams'
    /// workers: a fault of an axd must hit running work (check 8). Right after another fault no
    /// axd may hold such a stream yet: it asks again for up to [`RUNNING_WAIT`]. `None` when no
    /// free axd holds a stream at all (the step's other fault took the axd that holds them all),
    /// or none held one of a busy worker in time: the fault waits for a later step.
    async fn busiest_axd(&self, busy: &HashSet<usize>) -> Option<(usize, Vec<String>)> {
        let until = tokio::time::Instant::now() + RUNNING_WAIT;
        while tokio::time::Instant::now() < until {
            let Some(workers) = self.list_workers().await else {
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            };
            let (fresh, any) = self.running_workers();
            // Per free axd: (its streams' workers, how many run a fresh handler, how many any).
            let mut best: Option<(usize, Vec<String>, (usize, usize))> = None;
            for i in (0..AXDS).filter(|i| !busy.contains(i) && !self.frozen_axds.contains(i)) {
                let Some(pid) = self.axds[i].as_ref().and_then(|p| p.child.id()) else { continue };
                let tag = format!("-{pid}-");
                let on: Vec<String> =
                    workers.iter().filter(|w| w.scheduler_id.contains(&tag)).map(|w| w.worker_id.clone()).collect();
                let score =
                    (on.iter().filter(|w| fresh.contains(*w)).count(), on.iter().filter(|w| any.contains(*w)).count());
                if best.as_ref().is_none_or(|(_, m, s)| (score, on.len()) > (*s, m.len())) {
                    best = Some((i, on, score));
                }
            }
            match best {
                Some((i, on, (_, running))) if running > 0 => return Some((i, on)),
                Some((_, on, _)) if !on.is_empty() => {}
                // Every stream is on an axd this step's other fault took (or no axd is free).
                _ if !workers.is_empty() => return None,
                _ => {}
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        eprintln!("  (no free axd held a stream of a worker running work for {RUNNING_WAIT:?})");
        None
    }

    fn hit(&mut self, fault: Fault, workers: Option<Vec<String>>) {
        eprintln!("  {}: {fault:?}", Utc::now().format("%H:%M:%S%.3f"));
        self.hits.push(bounds::Hit { fault, at: Utc::now(), workers });
    }

    /// Chooses the target of a fault, waiting for running work to hit (check 8). A step's faults
    /// are all aimed before any begins: aimed after a database freeze had begun, a second fault
    /// would wait for work the freeze itself holds back.
    async fn aim(
        &self,
        f: Fault,
        rng: &mut fastrand::Rng,
        busy_axds: &mut HashSet<usize>,
        busy_workers: &mut HashSet<usize>,
    ) -> Aim {
        match f {
            Fault::KillAxd | Fault::FreezeAxd | Fault::TermAxd | Fault::CutStreams | Fault::Partition => {
                // The axd holding the most streams of workers running work.
                match self.busiest_axd(busy_axds).await {
                    Some((i, on)) => {
                        busy_axds.insert(i);
                        Aim::Axd(i, on)
                    }
                    None => Aim::Nothing,
                }
            }
            Fault::KillWorker | Fault::FreezeWorker => {
                let free = |w: &str| {
                    w.strip_prefix('w')
                        .and_then(|n| n.parse::<usize>().ok())
                        .is_some_and(|n| n < WORKERS && !busy_workers.contains(&n))
                };
                let running = self.await_running(free).await;
                // A free worker running a handler now (none: the fault waits for a later step).
                let on: Vec<usize> =
                    (0..WORKERS).filter(|i| !busy_workers.contains(i) && running.contains(&format!("w{i}"))).collect();
                if on.is_empty() {
                    return Aim::Nothing;
                }
                let w = on[rng.usize(0..on.len())];
                busy_workers.insert(w);
                Aim::Worker(w)
            }
            Fault::FreezeDb | Fault::CutDb | Fault::RestartDb => {
                if self.await_running(|_| true).await.is_empty() {
                    return Aim::Nothing;
                }
                Aim::Database
            }
        }
    }

    /// Starts a fault at its target; returns how long it lasts and how to end it.
    async fn begin(
        &mut self,
        f: Fault,
        aim: Aim,
        rng: &mut fastrand::Rng,
        server: &mut PrivateServer,
    ) -> (Duration, Undo) {
        let ms = |rng: &mut fastrand::Rng, lo: u64, hi: u64| Duration::from_millis(rng.u64(lo..hi));
        if matches!(aim, Aim::Nothing) {
            eprintln!("  {f:?}: no running work to hit; it comes again in a later step");
            return (Duration::ZERO, Undo::Nothing);
        }
        match f {
            Fault::KillAxd | Fault::FreezeAxd | Fault::TermAxd | Fault::CutStreams | Fault::Partition => {
                let Aim::Axd(i, on) = aim else { return (Duration::ZERO, Undo::Nothing) };
                self.hit(f, Some(on));
                match f {
                    Fault::KillAxd => {
                        eprintln!("  kill -9 axd {i}");
                        if let Some(mut a) = self.axds[i].take() {
                            a.kill_hard().await;
                        }
                        self.count("axd kill -9");
                        (ms(rng, 0, 2000), Undo::StartAxd(i))
                    }
                    Fault::TermAxd => {
                        eprintln!("  SIGTERM axd {i}");
                        if let Some(mut a) = self.axds[i].take() {
                            let status = a.terminate().await;
                            assert!(status.success(), "axd {i} exits cleanly on SIGTERM: {status}");
                        }
                        self.count("axd SIGTERM");
                        (ms(rng, 0, 1000), Undo::StartAxd(i))
                    }
                    Fault::FreezeAxd => {
                        // Longer than the lease: without liveness both ways, another axd would
                        // declare this axd's workers lost while they still run their handlers.
                        let d = LEASE + ms(rng, 1000, 3500);
                        eprintln!("  SIGSTOP axd {i} for {d:?}");
                        if let Some(a) = &self.axds[i] {
                            a.freeze();
                        }
                        self.frozen_axds.insert(i);
                        self.count("axd SIGSTOP past the lease");
                        (d, Undo::ThawAxd(i))
                    }
                    Fault::CutStreams => {
                        eprintln!("  cut every worker stream of axd {i}");
                        self.stream_proxies[i].cut().await;
                        self.count("worker streams cut");
                        (Duration::ZERO, Undo::Nothing)
                    }
                    _ => {
                        let d = ms(rng, 2000, 6000);
                        eprintln!("  partition between the workers and axd {i} for {d:?}");
                        self.stream_proxies[i].hold();
                        self.count("partition");
                        (d, Undo::ReleaseStreams(i))
                    }
                }
            }
            Fault::KillWorker => {
                let Aim::Worker(w) = aim else { return (Duration::ZERO, Undo::Nothing) };
                self.hit(f, Some(vec![format!("w{w}")]));
                eprintln!("  kill -9 worker w{w}");
                if let Some(mut p) = self.workers[w].take() {
                    p.kill_hard().await;
                }
                self.worker_kills.entry(format!("w{w}")).or_default().push(Utc::now());
                self.count("worker kill -9");
                (ms(rng, 0, 2000), Undo::StartWorker(w))
            }
            Fault::FreezeWorker => {
                let Aim::Worker(w) = aim else { return (Duration::ZERO, Undo::Nothing) };
                // The first freeze outlives the lease (the worker must fence its handlers and
                // reject what it reads stale); later ones are as long as chance makes them.
                let d = if self.counts.contains_key("worker SIGSTOP past the lease") {
                    ms(rng, 2000, 7000)
                } else {
                    LEASE + ms(rng, 1000, 2500)
                };
                if d > LEASE {
                    self.count("worker SIGSTOP past the lease");
                }
                self.hit(f, Some(vec![format!("w{w}")]));
                eprintln!("  SIGSTOP worker w{w} for {d:?}");
                let at = Utc::now();
                if let Some(p) = &self.workers[w] {
                    p.freeze();
                }
                self.count("worker SIGSTOP");
                (d, Undo::ThawWorker(w, at))
            }
            Fault::FreezeDb => {
                // The first freeze outlives the lease (running handlers must stop: check 9);
                // later ones are shorter.
                let d = if self.counts.contains_key("database freeze past the lease") {
                    ms(rng, 1500, 3500)
                } else {
                    self.count("database freeze past the lease");
                    LEASE + ms(rng, 1000, 2500)
                };
                eprintln!("  database freeze for {d:?}");
                self.hit(f, None);
                self.db_proxy.hold();
                self.count("database freeze");
                (d, Undo::ReleaseDb(Utc::now()))
            }
            Fault::CutDb => {
                self.hit(f, None);
                eprintln!("  cut every database connection");
                self.db_proxy.cut().await;
                self.count("database connections cut");
                (Duration::ZERO, Undo::Nothing)
            }
            Fault::RestartDb => {
                eprintln!("  restarting the database server");
                self.hit(f, None);
                // A session opened before (directly, not through the proxy) cannot outlive a real
                // restart: that tells a restart from a server that never went away.
                let mut before = Session::open(server).await;
                assert!(before.answers().await, "a session on the database server answers before its restart");
                server.restart().await;
                assert!(
                    !before.answers().await,
                    "a session opened before the database restart still answers: the server did not restart"
                );
                self.count("database restart");
                (Duration::ZERO, Undo::Nothing)
            }
        }
    }

    async fn end(&mut self, undo: Undo) {
        match undo {
            Undo::StartAxd(i) => self.start_axd(i).await,
            Undo::StartWorker(w) => self.start_worker(w),
            Undo::ThawAxd(i) => {
                if let Some(a) = &self.axds[i] {
                    a.thaw();
                }
                self.frozen_axds.remove(&i);
            }
            Undo::ThawWorker(w, at) => {
                if let Some(p) = &self.workers[w] {
                    p.thaw();
                }
                self.worker_freezes.entry(format!("w{w}")).or_default().push((at, Utc::now()));
            }
            Undo::ReleaseDb(at) => {
                eprintln!("  {}: database released", Utc::now().format("%H:%M:%S%.3f"));
                self.db_proxy.release();
                self.db_freezes.push((at, Utc::now()));
            }
            Undo::ReleaseStreams(i) => self.stream_proxies[i].release(),
            Undo::Nothing => {}
        }
    }
}

/// A session on the database server itself, not through the proxy.
enum Session {
    Postgres(sqlx::PgConnection),
    MySql(sqlx::MySqlConnection),
}

impl Session {
    async fn open(server: &PrivateServer) -> Session {
        use sqlx::Connection as _;
        let url = server.url();
        match server.db() {
            Db::Postgres => Session::Postgres(sqlx::PgConnection::connect(&url).await.expect("connect")),
            _ => Session::MySql(sqlx::MySqlConnection::connect(&url).await.expect("connect")),
        }
    }

    /// Whether the session still runs a query (within 10 s).
    async fn answers(&mut self) -> bool {
        let q = "SELECT 1";
        let r = tokio::time::timeout(Duration::from_secs(10), async {
            match self {
                Session::Postgres(c) => sqlx::query(q).execute(c).await.is_ok(),
                Session::MySql(c) => sqlx::query(q).execute(c).await.is_ok(),
            }
        })
        .await;
        r.unwrap_or(false)
    }
}

/// Runs an admin call on any live axd, each try bounded by [`CALL_DEADLINE`], until it succeeds
/// (axd may be mid-kill or frozen). `Err` only for a status the call will keep getting.
macro_rules! call {
    ($cluster:expr, $rng:expr, |$a:ident| $call:expr) => {{
        let mut tries = 0;
        loop {
            let mut $a = $cluster.admin($rng).await;
            match tokio::time::timeout(CALL_DEADLINE, $call).await {
                Ok(Ok(r)) => break Ok(r.into_inner()),
                Ok(Err(e)) if e.code() == tonic::Code::AlreadyExists || e.code() == tonic::Code::NotFound => {
                    break Err(e);
                }
                r if tries < 60 => {
                    tries += 1;
                    let why = match r {
                        Ok(Err(e)) => e.message().to_owned(),
                        _ => "no answer within the deadline".to_owned(),
                    };
                    eprintln!("  admin call failed ({why}), retrying");
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                r => panic!("admin call kept failing: {r:?}"),
            }
        }
    }};
}

/// How a periodic task fires, for deriving its fire times by arithmetic.
#[derive(Debug, Clone, Copy)]
enum Cadence {
    /// Cron `*/k * * * * *` in UTC: every second whose second-of-minute is a multiple of k.
    EverySecondsOfMinute(u32),
    /// Fixed rate: first fire + n × seconds.
    Rate(i64),
}

struct Periodic {
    name: String,
    cadence: Cadence,
    first_fire: DateTime<Utc>,
}

/// The first fire of a task with this cadence created at `created_at`, by arithmetic.
fn first_fire(cadence: Cadence, created_at: DateTime<Utc>) -> DateTime<Utc> {
    match cadence {
        Cadence::EverySecondsOfMinute(k) => {
            let mut t = DateTime::from_timestamp(created_at.timestamp() + 1, 0).expect("in range");
            while !(t.timestamp().rem_euclid(60) as u32).is_multiple_of(k) {
                t += TimeDelta::seconds(1);
            }
            t
        }
        Cadence::Rate(s) => created_at + TimeDelta::seconds(s),
    }
}

/// Fire times of `p` from its first fire up to `until`, by arithmetic.
fn fires(p: &Periodic, until: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    let mut out = Vec::new();
    let mut t = p.first_fire;
    while t <= until {
        match p.cadence {
            Cadence::EverySecondsOfMinute(k) => {
                if t.timestamp_subsec_nanos() == 0 && (t.timestamp().rem_euclid(60) as u32).is_multiple_of(k) {
                    out.push(t);
                }
                t += TimeDelta::seconds(1);
            }
            Cadence::Rate(s) => {
                out.push(t);
                t += TimeDelta::seconds(s);
            }
        }
    }
    out
}

/// The idempotency key of a scheduled fire: `fire:` and the fire time in RFC 3339, UTC, with as
/// many fractional digits as it needs (none for whole seconds).
fn key_of(t: DateTime<Utc>) -> String {
    format!("fire:{}", t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
}

async fn chaos(db: &TestDb, server: &mut PrivateServer) {
    let seed: u64 = std::env::var("AX_CHAOS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7)
    });
    let secs: u64 = std::env::var("AX_CHAOS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(75);
    eprintln!("chaos seed: {seed} (replay with AX_CHAOS_SEED={seed}); {secs} s of chaos on {:?}", db.db);
    let mut rng = fastrand::Rng::with_seed(seed);
    let dir = std::env::temp_dir().join(format!("ax-chaos-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let ports: Vec<u16> = (0..AXDS).map(|_| free_port()).collect();
    let db_proxy = Proxy::start(db.server_addr()).await;
    let mut stream_proxies = Vec::new();
    for p in &ports {
        stream_proxies.push(Proxy::start(std::net::SocketAddr::from(([127, 0, 0, 1], *p))).await);
    }
    let mut c = Cluster {
        db_url: db.url_via(db_proxy.addr),
        ports,
        axds: (0..AXDS).map(|_| None).collect(),
        frozen_axds: HashSet::new(),
        workers: (0..WORKERS).map(|_| None).collect(),
        logs: (0..WORKERS).map(|i| dir.join(format!("w{i}.jsonl"))).collect(),
        stream_proxies,
        db_proxy,
        dir: dir.clone(),
        worker_kills: BTreeMap::new(),
        worker_freezes: BTreeMap::new(),
        db_freezes: Vec::new(),
        hits: Vec::new(),
        counts: BTreeMap::new(),
        starts: 0,
    };
    for i in 0..AXDS {
        c.start_axd(i).await;
    }
    for i in 0..WORKERS {
        c.start_worker(i);
    }

    // The task mix.
    let with = |name: &str, handler: &str, kind: pb::schedule::Kind, params: &str, retries: u32| {
        let mut s = spec(name, "chaos", handler, kind);
        s.params = params.into();
        if retries > 0 {
            s.retry_policy = Some(client::retries(retries, Duration::from_millis(500)));
        }
        s
    };
    // shards 0: a broadcast; otherwise that many shards.
    let fanout = |mut s: pb::TaskSpec, shards: u32| {
        if shards == 0 {
            s.routing = pb::RoutingStrategy::Broadcast as i32;
        } else {
            s.shards = shards;
        }
        s
    };
    let every = |secs: u64| {
        pb::schedule::Kind::FixedRate(pb::IntervalSchedule {
            interval: Some(client::dur(Duration::from_secs(secs))),
            start_at: None,
        })
    };
    // The chain targets exist before the tasks that name them.
    for name in ["chain-ok", "chain-failed"] {
        let s = with(name, "noop", manual(), "{}", 3);
        call!(c, &mut rng, |a| a.create_task(pb::CreateTaskRequest { task: Some(s.clone()) }))
            .expect("create a chain target");
    }
    let chained = |mut s: pb::TaskSpec| {
        s.on_success = vec!["chain-ok".into()];
        s.on_failure = vec!["chain-failed".into()];
        s
    };
    let specs = vec![
        (with("cron-each-second", "noop", cron("* * * * * *"), "{}", 3), Cadence::EverySecondsOfMinute(1)),
        (with("cron-every-2s", "sleep", cron("*/2 * * * * *"), r#"{"ms": 150}"#, 3), Cadence::EverySecondsOfMinute(2)),
        (with("cron-slow", "sleep", cron("*/5 * * * * *"), r#"{"ms": 2500}"#, 3), Cadence::EverySecondsOfMinute(5)),
        // Longer than the lease: these are running whenever an axd freezes or a partition starts.
        (with("cron-long", "sleep", cron("*/3 * * * * *"), r#"{"ms": 7000}"#, 4), Cadence::EverySecondsOfMinute(3)),
        (with("cron-flaky", "flaky", cron("*/3 * * * * *"), "{}", 3), Cadence::EverySecondsOfMinute(3)),
        (with("rate-1s", "sleep", every(1), r#"{"ms": 300}"#, 3), Cadence::Rate(1)),
        (with("rate-3s", "noop", every(3), "{}", 3), Cadence::Rate(3)),
        // A parent per fire with a child on every live worker, and one with three shards.
        (
            fanout(with("broadcast-4s", "sleep", cron("*/4 * * * * *"), r#"{"ms": 400}"#, 3), 0),
            Cadence::EverySecondsOfMinute(4),
        ),
        (
            fanout(with("shards-3s", "sleep", cron("*/3 * * * * *"), r#"{"ms": 300}"#, 3), 3),
            Cadence::EverySecondsOfMinute(3),
        ),
        // Chains: one upstream that succeeds, one that fails, each naming both targets.
        (chained(with("chain-ok-up", "noop", cron("*/4 * * * * *"), "{}", 3)), Cadence::EverySecondsOfMinute(4)),
        (chained(with("chain-fail-up", "fail", cron("*/4 * * * * *"), "{}", 0)), Cadence::EverySecondsOfMinute(4)),
        // A handler that fails on every worker, with retries: every worker's cooldown for "fail"
        // would hold its instances PENDING for minutes without the cooldown's floor (check 11).
        (
            with("always-fail", "fail", cron("*/2 * * * * *"), r#"{"retryable": true}"#, 2),
            Cadence::EverySecondsOfMinute(2),
        ),
        // The root of a DAG: dag-a and dag-b run after it, dag-join after both.
        (with("dag-start", "noop", cron("*/3 * * * * *"), "{}", 3), Cadence::EverySecondsOfMinute(3)),
    ];
    let mut periodic = Vec::new();
    for (s, cadence) in specs {
        let name = s.name.clone();
        let created = call!(c, &mut rng, |a| a.create_task(pb::CreateTaskRequest { task: Some(s.clone()) }))
            .expect("create a periodic task");
        let task = created.task.expect("task");
        // The first fire by arithmetic from the moment the task was created: the next whole second
        // whose second-of-minute is a multiple of k (cron), or one interval later (fixed rate).
        let created_at = ts_from_pb("create_time", &task.create_time.expect("create time")).expect("ts");
        let first_fire = first_fire(cadence, created_at);
        let reported = ts_from_pb("next_fire_time", &task.next_fire_time.expect("next fire")).expect("ts");
        assert_eq!(reported, first_fire, "{name}: the first fire after {created_at}");
        periodic.push(Periodic { name, cadence, first_fire });
    }
    // The DAG under dag-start (which must exist first): runs that began before the join existed
    // are left out of the checks.
    for (name, handler, after, retries) in [
        ("dag-a", "sleep", &["dag-start"][..], 3),
        ("dag-b", "flaky", &["dag-start"], 1),
        ("dag-join", "noop", &["dag-a", "dag-b"], 3),
    ] {
        let mut s = with(name, handler, manual(), r#"{"ms": 200}"#, retries);
        s.after_all = after.iter().map(|a| (*a).to_owned()).collect();
        call!(c, &mut rng, |a| a.create_task(pb::CreateTaskRequest { task: Some(s.clone()) }))
            .expect("create a DAG task");
    }
    let dag_ready = Utc::now() + TimeDelta::seconds(1);
    let mut manual_spec = with("manual", "sleep", manual(), r#"{"ms": 100}"#, 4);
    manual_spec.retry_policy = Some(client::retries(4, Duration::from_millis(300)));
    call!(c, &mut rng, |a| a.create_task(pb::CreateTaskRequest { task: Some(manual_spec.clone()) }))
        .expect("create the manual task");

    // Chaos: every fault kind once, in random order, then random ones until the period is over.
    let started = tokio::time::Instant::now();
    let period = Duration::from_secs(secs);
    let mut plan: Vec<Fault> = Fault::ALL.to_vec();
    rng.shuffle(&mut plan);
    let mut one_time = Vec::new();
    // Manual keys: (key, whether at least one trigger call was answered).
    let mut manual_keys: Vec<(String, bool)> = Vec::new();
    let mut step = 0;
    while !plan.is_empty() || started.elapsed() < period {
        tokio::time::sleep(Duration::from_millis(1000 + rng.u64(0..2000))).await;
        // A burst of one-time tasks due two seconds from now.
        for k in 0..rng.usize(2..6) {
            let name = format!("once-{step}-{k}");
            let kind = client::once_after(Duration::from_secs(2));
            let s = with(&name, "sleep", kind, r#"{"ms": 100}"#, 2);
            match call!(c, &mut rng, |a| a.create_task(pb::CreateTaskRequest { task: Some(s.clone()) })) {
                Ok(_) => {}
                Err(e) if e.code() == tonic::Code::AlreadyExists => {} // an earlier try got through
                Err(e) => panic!("creating {name}: {e}"),
            }
            one_time.push(name);
        }
        // A burst of manual triggers, each key sent through every axd that answers.
        for k in 0..rng.usize(2..5) {
            let key = format!("m-{step}-{k}");
            let params = format!(r#"{{"ms": {}}}"#, rng.u64(50..4000));
            let mut answered = false;
            for i in 0..AXDS {
                if c.axds[i].is_none() || c.frozen_axds.contains(&i) {
                    continue;
                }
                let url = format!("http://127.0.0.1:{}", c.ports[i]);
                let Ok(Ok(ch)) = tokio::time::timeout(
                    Duration::from_secs(1),
                    tonic::transport::Endpoint::from_shared(url).expect("url").connect(),
                )
                .await
                else {
                    continue;
                };
                let mut a = AdminServiceClient::new(ch);
                let req = pb::TriggerTaskRequest {
                    name: "manual".into(),
                    params: Some(params.clone()),
                    idempotency_key: key.clone(),
                    when: None,
                    wait: None,
                    tags: Default::default(),
                };
                answered |= matches!(tokio::time::timeout(CALL_DEADLINE, a.trigger_task(req)).await, Ok(Ok(_)));
            }
            manual_keys.push((key, answered));
        }
        step += 1;
        // One fault, or two at once (at least once per run: the last planned step takes two).
        // (fault, whether it is one of the plan's: one that found nothing to hit goes back).
        let mut now: Vec<(Fault, bool)> = Vec::new();
        let last_planned = plan.len() == 2 && !c.counts.contains_key("two faults at once");
        let n = if last_planned || rng.u8(0..4) == 0 { 2 } else { 1 };
        for _ in 0..n {
            let f = match plan.pop() {
                Some(f) => (f, true),
                None => loop {
                    let f = Fault::ALL[rng.usize(0..Fault::ALL.len())];
                    if f != Fault::RestartDb {
                        break (f, false);
                    }
                },
            };
            now.push(f);
        }
        assert!(
            started.elapsed() < period + Duration::from_secs(150),
            "fault kinds {plan:?} found no running work to hit in {:?}",
            started.elapsed()
        );
        let (mut busy_axds, mut busy_workers) = (HashSet::new(), HashSet::new());
        let mut aims = Vec::new();
        for (f, planned) in now {
            let aim = c.aim(f, &mut rng, &mut busy_axds, &mut busy_workers).await;
            if matches!(aim, Aim::Nothing) && planned {
                plan.insert(0, f);
            }
            aims.push((f, aim));
        }
        if aims.iter().filter(|(_, a)| !matches!(a, Aim::Nothing)).count() == 2 {
            c.count("two faults at once");
        }
        // A worker's fault begins after the step's other fault: killed first, its handlers have
        // ended when an axd fault aimed at the axd holding its stream begins, and that fault hits
        // nothing (check 8; seed 1796596818676916924 drew KillWorker and KillAxd on w2 together).
        // An axd's or the database's fault leaves the worker's handler running for the other.
        aims.sort_by_key(|(_, a)| matches!(a, Aim::Worker(_)));
        let mut undo = Vec::new();
        for (f, aim) in aims {
            let (d, u) = c.begin(f, aim, &mut rng, server).await;
            undo.push((tokio::time::Instant::now() + d, u));
        }
        undo.sort_by_key(|(at, _)| *at);
        // Starting an axd waits until its database answers: it goes after the step's other undos,
        // or a database freeze that ends later would wait for the start that waits for it.
        let (starts, others): (Vec<_>, Vec<_>) = undo.into_iter().partition(|(_, u)| matches!(u, Undo::StartAxd(_)));
        for (at, u) in others.into_iter().chain(starts) {
            tokio::time::sleep_until(at).await;
            c.end(u).await;
        }
    }

    // Stop firing, then let every instance finish.
    let mut disabled_at = HashMap::new();
    for p in &periodic {
        let t = call!(c, &mut rng, |a| a.disable_task(pb::DisableTaskRequest { name: p.name.clone() }))
            .expect("disable")
            .task
            .expect("task");
        disabled_at.insert(p.name.clone(), ts_from_pb("update_time", &t.update_time.expect("time")).expect("ts"));
    }
    let chaos_over = tokio::time::Instant::now();
    let settle_until = chaos_over + QUIESCE;
    let mut instances: Vec<pb::Instance> = loop {
        let mut all = Vec::new();
        let mut token = String::new();
        loop {
            let page = call!(c, &mut rng, |a| a.list_instances(pb::ListInstancesRequest {
                page_size: 1000,
                page_token: token.clone(),
                ..Default::default()
            }))
            .expect("list");
            all.extend(page.instances);
            if page.next_page_token.is_empty() {
                break;
            }
            token = page.next_page_token;
        }
        let open = all.iter().filter(|i| i.status < S::Success as i32).count();
        if open == 0 {
            break all;
        }
        assert!(
            tokio::time::Instant::now() < settle_until,
            "{open} instances still not final {QUIESCE:?} after the chaos: {:?}",
            all.iter()
                .filter(|i| i.status < S::Success as i32)
                .map(|i| (i.id, &i.task_name, i.status))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let quiesced = chaos_over.elapsed();
    instances.sort_by_key(|i| i.id);

    // 1. Every fire time has exactly one instance; every key exactly one.
    let mut by_task: BTreeMap<&str, Vec<&pb::Instance>> = BTreeMap::new();
    for i in &instances {
        by_task.entry(i.task_name.as_str()).or_default().push(i);
    }
    let mut expected_fires = 0;
    for p in &periodic {
        let until = disabled_at[&p.name] - TimeDelta::seconds(3);
        let expected = fires(p, until);
        assert!(expected.len() > 5, "{}: only {} fires expected; the run was too short", p.name, expected.len());
        expected_fires += expected.len();
        let mut got: HashMap<String, usize> = HashMap::new();
        // Children of broadcast and sharded fires are checked below, with their parents.
        for i in by_task.get(p.name.as_str()).into_iter().flatten().filter(|i| i.parent_id == 0) {
            *got.entry(i.idempotency_key.clone()).or_default() += 1;
        }
        for f in &expected {
            let key = key_of(*f);
            assert_eq!(got.get(&key).copied(), Some(1), "{}: fire {key} has {:?} instances", p.name, got.get(&key));
        }
        let all_fires: HashSet<String> =
            fires(p, disabled_at[&p.name] + TimeDelta::seconds(30)).into_iter().map(key_of).collect();
        for key in got.keys() {
            assert!(all_fires.contains(key), "{}: {key} is not a fire time of its schedule", p.name);
        }
    }
    for name in &one_time {
        assert_eq!(by_task.get(name.as_str()).map(Vec::len), Some(1), "one-time task {name} has exactly one instance");
    }
    expected_fires += one_time.len();
    let mut manual_by_key: HashMap<&str, usize> = HashMap::new();
    for i in by_task.get("manual").into_iter().flatten() {
        *manual_by_key.entry(i.idempotency_key.as_str()).or_default() += 1;
    }
    for (key, answered) in &manual_keys {
        let n = manual_by_key.get(key.as_str()).copied().unwrap_or(0);
        if *answered {
            assert_eq!(n, 1, "manual key {key}, sent through every axd, has {n} instances");
        } else {
            assert!(n <= 1, "manual key {key} has {n} instances");
        }
    }

    // 2. Every instance is final (the settle loop above). Every child of a broadcast or sharded
    // fire exists once (one per shard index, one per worker), and every parent's state is its
    // children's verdict: SUCCESS when all succeeded, FAILED otherwise.
    let mut children: BTreeMap<i64, Vec<&pb::Instance>> = BTreeMap::new();
    for i in instances.iter().filter(|i| i.parent_id != 0) {
        children.entry(i.parent_id).or_default().push(i);
    }
    let mut parents = 0;
    for name in ["broadcast-4s", "shards-3s"] {
        for parent in by_task.get(name).into_iter().flatten().filter(|i| i.parent_id == 0) {
            parents += 1;
            let kids = children.get(&parent.id).cloned().unwrap_or_default();
            let mut shards: Vec<u32> = kids.iter().map(|k| k.shard_index).collect();
            shards.sort_unstable();
            let n = kids.len() as u32;
            assert_eq!(shards, (0..n).collect::<Vec<_>>(), "{name} parent {}: children by shard {shards:?}", parent.id);
            assert!(kids.iter().all(|k| k.shard_total == n), "{name} parent {}: shard totals", parent.id);
            if name == "shards-3s" {
                assert_eq!(n, 3, "sharded parent {} has {n} children", parent.id);
            } else {
                let mut workers: Vec<&str> = kids.iter().map(|k| k.target_worker.as_str()).collect();
                workers.sort_unstable();
                workers.dedup();
                assert_eq!(workers.len(), kids.len(), "broadcast parent {}: one child per worker", parent.id);
            }
            let all_ok = n > 0 && kids.iter().all(|k| k.status == S::Success as i32);
            let expected = if all_ok { S::Success } else { S::Failed };
            assert_eq!(
                parent.status,
                expected as i32,
                "{name} parent {} is {:?} but its children are {:?}",
                parent.id,
                parent.status,
                kids.iter().map(|k| (k.id, k.status)).collect::<Vec<_>>()
            );
        }
    }
    for (parent, kids) in &children {
        assert!(instances.iter().any(|i| i.id == *parent), "children {kids:?} of a missing parent {parent}");
    }
    let (chains, dag_runs) = check_chains_and_dag(&instances, dag_ready);

    // 3. No two attempts of one instance at once; no attempt twice.
    let runs: Vec<Execution> = executions_in(&c.logs.iter().map(PathBuf::as_path).collect::<Vec<_>>());
    let alive = |r: &Execution| -> Vec<Span> {
        let end = r.end.unwrap_or_else(|| {
            c.worker_kills
                .get(&r.worker)
                .and_then(|k| k.iter().find(|t| **t >= r.start).copied())
                .unwrap_or_else(Utc::now)
        });
        let freezes = c.worker_freezes.get(&r.worker).cloned().unwrap_or_default();
        let mut spans = vec![(r.start, end)];
        for (stop, cont) in freezes {
            if r.fenced && stop < end && cont > r.start {
                // The handler found on resuming that its lease had run out and did no more work.
                spans = spans.into_iter().filter_map(|(a, b)| (a < stop).then_some((a, b.min(stop)))).collect();
                continue;
            }
            spans = spans
                .into_iter()
                .flat_map(|(a, b)| {
                    if cont <= a || stop >= b {
                        vec![(a, b)]
                    } else {
                        [(a, stop), (cont, b)].into_iter().filter(|(x, y)| x < y).collect()
                    }
                })
                .collect();
        }
        spans
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
                for (a0, a1) in alive(ra) {
                    for (b0, b1) in alive(rb) {
                        assert!(
                            !(a0 < b1 && b0 < a1),
                            "instance {id}: attempts {} (on {}) and {} (on {}) ran at the same time: {ra:?} and {rb:?}",
                            ra.attempt,
                            ra.worker,
                            rb.attempt,
                            rb.worker
                        );
                    }
                }
            }
        }
        if let Some(first) = rs.iter().min_by_key(|r| r.attempt) {
            max_lag_ms = max_lag_ms.max((first.start - first.trigger_time).num_milliseconds());
        }
        if rs.len() > 1 {
            reruns += 1;
            let events =
                call!(c, &mut rng, |a| a.get_instance(pb::GetInstanceRequest { id: *id })).expect("get").events;
            let explained = events.iter().any(|e| {
                e.to_status == S::Pending as i32
                    && (e.reason.starts_with("retry ")
                        || e.reason.contains("did not accept it in time")
                        || e.reason.contains("rejected by worker")
                        || e.reason.contains("could not be delivered"))
            });
            assert!(explained, "instance {id} ran {} times without a retry or a requeue in its trail", rs.len());
        }
    }

    // 8–10: every fault hit running work; database and worker freezes past the lease stopped
    // their handlers in time.
    let tally = bounds::every_fault_hit_running_work(&c.hits, &runs, &c.worker_kills);
    let db_held = bounds::a_database_freeze_past_the_lease_stops_running_handlers(
        &c.db_freezes,
        &runs,
        &c.worker_kills,
        &c.worker_freezes,
    );
    let fenced_held =
        bounds::fenced_handlers_end_soon_after_their_worker_resumes(&c.worker_freezes, &runs, &c.worker_kills);

    // A broadcast child runs only on its own worker.
    for i in instances.iter().filter(|i| !i.target_worker.is_empty()) {
        for r in by_instance.get(&i.id).into_iter().flatten() {
            assert_eq!(r.worker, i.target_worker, "broadcast child {} ran on another worker: {r:?}", i.id);
        }
    }

    // 4. Every SUCCESS in the database has a successful run in an execution log (a parent runs
    // nothing itself: its children are checked).
    for i in instances.iter().filter(|i| i.status == S::Success as i32 && !children.contains_key(&i.id)) {
        let ran = by_instance
            .get(&i.id)
            .into_iter()
            .flatten()
            .any(|r| r.attempt == i.attempt && r.outcome.as_deref() == Some("SUCCESS"));
        assert!(
            ran,
            "instance {} ({}) is SUCCESS on attempt {} but no worker logged that run",
            i.id, i.task_name, i.attempt
        );
    }

    // 5/6. Every trail is legal and ordered, and ends in the instance's state.
    for i in &instances {
        let events = call!(c, &mut rng, |a| a.get_instance(pb::GetInstanceRequest { id: i.id })).expect("get").events;
        let mut prev_time = (i64::MIN, 0);
        let mut state = S::Unspecified as i32;
        for e in &events {
            let t = e.time.as_ref().map_or((0, 0), |t| (t.seconds, t.nanos));
            assert!(t >= prev_time, "instance {}: event times go backwards: {events:?}", i.id);
            prev_time = t;
            assert_eq!(
                e.from_status, state,
                "instance {}: event from {:?} but the state was {:?}: {events:?}",
                i.id, e.from_status, state
            );
            assert!(
                legal(e.from_status, e.to_status),
                "instance {}: illegal transition {} -> {}: {events:?}",
                i.id,
                e.from_status,
                e.to_status
            );
            state = e.to_status;
        }
        assert_eq!(state, i.status, "instance {}: the trail ends in its state", i.id);
    }

    let faults: Vec<String> = c.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    // Written to the process's stderr directly, which the test harness does not capture: the
    // summary shows in every CI log, passing or not.
    let _ = writeln!(
        std::io::stderr(),
        "chaos summary ({:?}, seed {seed}): fires {expected_fires}, manual keys {}, instances {}, executions {}, \
         re-run instances {reruns}, fan-out parents {parents}, chained instances {chains}, DAG runs {dag_runs}, \
         max fire lag {max_lag_ms} ms, final {quiesced:?} after the chaos, runs held to the database freeze's \
         bound {db_held}, to a frozen worker's fence {fenced_held}; faults: {}; faults that hit running work: {tally:?}",
        db.db,
        manual_keys.len(),
        instances.len(),
        runs.len(),
        faults.join(", "),
    );
    for w in c.workers.iter_mut().flatten() {
        w.kill_hard().await;
    }
    for a in c.axds.iter_mut().flatten() {
        a.thaw();
        a.kill_hard().await;
    }
    // The faults that found the bugs this test exists for happened (each is forced once per run).
    for must in [
        "axd SIGSTOP past the lease",
        "worker SIGSTOP past the lease",
        "two faults at once",
        "database restart",
        "database freeze past the lease",
    ] {
        assert!(c.counts.contains_key(must), "no {must:?} in this run: {faults:?}");
    }
    if std::env::var("AX_CHAOS_KEEP").is_ok_and(|v| v == "1") {
        eprintln!("kept {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Check 7: every upstream of the chains created its one successor by its final state, and only
/// then; every DAG run has its join exactly when both of its upstreams succeeded. Returns how many
/// chained instances and checked DAG runs there were.
fn check_chains_and_dag(instances: &[pb::Instance], dag_ready: DateTime<Utc>) -> (usize, usize) {
    let of = |task: &str| -> Vec<&pb::Instance> { instances.iter().filter(|i| i.task_name == task).collect() };
    let (ok, failed) = (of("chain-ok"), of("chain-failed"));
    let mut upstreams = HashSet::new();
    for up in of("chain-ok-up").into_iter().chain(of("chain-fail-up")).filter(|i| i.parent_id == 0) {
        upstreams.insert(up.id);
        let n_ok = ok.iter().filter(|s| s.chained_from == up.id).count();
        let n_failed = failed.iter().filter(|s| s.chained_from == up.id).count();
        let expected = match S::try_from(up.status) {
            Ok(S::Success) => (1, 0),
            Ok(S::Failed | S::Timeout) => (0, 1),
            _ => (0, 0),
        };
        assert_eq!(
            (n_ok, n_failed),
            expected,
            "{} instance {} ended {:?}: chain-ok x{n_ok}, chain-failed x{n_failed}",
            up.task_name,
            up.id,
            up.status
        );
    }
    for s in ok.iter().chain(&failed) {
        assert!(
            upstreams.contains(&s.chained_from),
            "{} instance {} has no upstream {}",
            s.task_name,
            s.id,
            s.chained_from
        );
        assert_eq!(s.run_id, s.chained_from, "a chain continues its upstream's run");
    }
    let (a, b, join) = (of("dag-a"), of("dag-b"), of("dag-join"));
    let roots: HashSet<i64> = of("dag-start").iter().map(|r| r.id).collect();
    for i in a.iter().chain(&b).chain(&join) {
        assert!(
            roots.contains(&i.run_id),
            "{} instance {} belongs to no run of dag-start: {}",
            i.task_name,
            i.id,
            i.run_id
        );
    }
    let mut runs = 0;
    let after_ready = |r: &&&pb::Instance| {
        r.trigger_time.as_ref().is_some_and(|t| ts_from_pb("trigger_time", t).expect("ts") > dag_ready)
    };
    for root in of("dag-start").iter().filter(after_ready) {
        runs += 1;
        let in_run = |list: &[&pb::Instance]| -> Vec<i32> {
            list.iter().filter(|i| i.run_id == root.id).map(|i| i.status).collect()
        };
        let (sa, sb, sj) = (in_run(&a), in_run(&b), in_run(&join));
        let started = if root.status == S::Success as i32 { 1 } else { 0 };
        assert_eq!((sa.len(), sb.len()), (started, started), "run {}: dag-a {sa:?}, dag-b {sb:?}", root.id);
        let both = sa == [S::Success as i32] && sb == [S::Success as i32];
        assert_eq!(sj.len(), usize::from(both), "run {}: dag-a {sa:?}, dag-b {sb:?}, dag-join {sj:?}", root.id);
    }
    (ok.len() + failed.len(), runs)
}

/// Transitions an instance may make here (a step to the same state records something without a
/// change). No operator retries happen in this test, so a final state is never left.
/// A move the server's own table of transitions allows (`ax_scheduler::model::InstanceStatus::can_move_to`), made
/// by something other than an operator's retry: the chaos test never retries by hand, so a final
/// instance that became PENDING again would be a bug.
fn legal(from: i32, to: i32) -> bool {
    let status = |v: i32| ax_scheduler::grpc::convert::status_from_pb("status", v).ok().flatten();
    match (S::try_from(from), status(to)) {
        (Ok(S::Unspecified), Some(to)) => to.can_start_as(),
        (_, Some(to)) => match status(from) {
            Some(from) if from == to => true,
            Some(from) => from.causes(to).iter().any(|c| *c != Cause::OperatorRetry),
            None => false,
        },
        _ => false,
    }
}
