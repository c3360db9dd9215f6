//! ax-bench: measures ax the way users compare job systems, against a real database.
//!
//! Every scenario starts what it needs (the real `axd` binary, worker processes built with the SDK
//! running the demo worker's no-op handler) on a fresh database (SQLite file, PostgreSQL schema or
//! MySQL database, on the servers named by `AX_TEST_POSTGRES_URL` / `AX_TEST_MYSQL_URL`), prints a
//! table with the machine and database version, and writes the figures as JSON.

mod burn_down;
mod ceiling;
mod counts;
mod env;
mod failover;
mod fire_lag;
mod idle;
mod lifecycle;
mod peer;
mod scale;
mod seed;
mod stats;
mod streams;

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// Which database to run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DbKind {
    /// SQLite file in a temporary directory.
    Sqlite,
    /// A fresh schema on AX_TEST_POSTGRES_URL.
    Postgres,
    /// A fresh database on AX_TEST_MYSQL_URL.
    Mysql,
}

impl DbKind {
    fn test_db(self) -> ax_tests::Db {
        match self {
            DbKind::Sqlite => ax_tests::Db::Sqlite,
            DbKind::Postgres => ax_tests::Db::Postgres,
            DbKind::Mysql => ax_tests::Db::MySql,
        }
    }
}

#[derive(Debug, Parser)]
#[command(name = "ax-bench", about = "Benchmarks of ax against a real database")]
struct Cli {
    /// Database to run on.
    #[arg(long, global = true, value_enum, default_value = "sqlite")]
    db: DbKind,
    /// Small sizes that finish in seconds (CI keeps the benchmark working with this).
    #[arg(long, global = true)]
    smoke: bool,
    /// Also write the results as JSON to this file.
    #[arg(long, global = true)]
    json: Option<PathBuf>,
    /// Run axd with --metrics-listen and scrape /metrics every second (the cost of metrics).
    #[arg(long, global = true)]
    metrics: bool,
    /// Build axd, axctl and the example workers with cargo first (same profile as this ax-bench).
    /// Without it, ax-bench runs the binaries beside its own executable and never runs cargo.
    #[arg(long, global = true)]
    build: bool,
    #[command(subcommand)]
    scenario: Scenario,
}

#[derive(Debug, Subcommand)]
enum Scenario {
    /// Pre-create N PENDING instances, then start the workers and time until all are SUCCESS with
    /// their event trails (the method of the published River and graphile-worker figures).
    BurnDown(burn_down::Args),
    /// Kill -9 the axd holding a worker's stream, repeatedly: time until the worker's next
    /// assignment from another axd (p50/p99).
    Failover(failover::Args),
    /// N one-time tasks due at one instant plus a steady rate of manual triggers: fire -> instance
    /// -> run -> result, instances/s and fire lag.
    FullLifecycle(lifecycle::Args),
    /// Cron tasks spread over every minute (seconds field): fire lag (worker start − fire time) and
    /// dispatch lag (DISPATCHED − fire time), p50/p99/max.
    FireLag(fire_lag::Args),
    /// A million registered tasks (mostly not due) against a thousand: trigger round time and axd
    /// RSS must stay flat.
    Scale(scale::Args),
    /// Hold N idle worker streams (Hello, Credit, then heartbeats only) on one axd: its RSS per
    /// stream and its CPU while they heartbeat.
    Streams(streams::Args),
    /// The database's own ceiling for ax's claim (SKIP LOCKED select + update to DISPATCHED, no
    /// axd): rows/s and batches/s.
    Ceiling(ceiling::Args),
    /// ax's burn-down alternated with graphile-worker's (installed with npm, a pinned version) on
    /// the same PostgreSQL server and N: both series and the ratio of medians.
    Peer(peer::Args),
    /// K idle axd (optionally with idle workers): database transactions per second per axd
    /// (PostgreSQL).
    Idle(idle::Args),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    METRICS.store(cli.metrics, std::sync::atomic::Ordering::Relaxed);
    ax_tests::procs::build_binaries(cli.build);
    // Which binaries the figures are of: a benchmark of a stale build is worse than none.
    for name in ["axd", "demo-worker"] {
        let path = ax_tests::procs::bin(name);
        let built = std::fs::metadata(&path).and_then(|m| m.modified()).map(chrono::DateTime::<chrono::Utc>::from);
        match built {
            Ok(t) => eprintln!("ax-bench: running {} (built {})", path.display(), t.format("%Y-%m-%d %H:%M:%S UTC")),
            Err(_) => eprintln!("ax-bench: running {}", path.display()),
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let result = runtime.block_on(async {
        match &cli.scenario {
            Scenario::BurnDown(a) => burn_down::run(cli.db, cli.smoke, a).await,
            Scenario::Failover(a) => failover::run(cli.db, cli.smoke, a).await,
            Scenario::FireLag(a) => fire_lag::run(cli.db, cli.smoke, a).await,
            Scenario::Scale(a) => scale::run(cli.db, cli.smoke, a).await,
            Scenario::FullLifecycle(a) => lifecycle::run(cli.db, cli.smoke, a).await,
            Scenario::Streams(a) => streams::run(cli.db, cli.smoke, a).await,
            Scenario::Ceiling(a) => ceiling::run(cli.db, cli.smoke, a).await,
            Scenario::Peer(a) => peer::run(cli.db, cli.smoke, a).await,
            Scenario::Idle(a) => idle::run(cli.db, cli.smoke, a).await,
        }
    })?;
    println!("{}", result.table());
    if let Some(path) = &cli.json {
        std::fs::write(path, serde_json::to_string_pretty(&result.json())?)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// `--metrics`: [`Bed::start`] turns metrics on.
static METRICS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Scrapes `http://addr/metrics` every second, as long as the process runs (the bench exits when
/// its scenario is done); a failed scrape is reported once.
async fn scrape_every_second(addr: std::net::SocketAddr) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut warned = false;
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let scraped = async {
            let mut s = tokio::net::TcpStream::connect(addr).await?;
            // The Host a loopback /metrics answers: its own address.
            s.write_all(format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).await?;
            let mut body = Vec::new();
            s.read_to_end(&mut body).await?;
            Ok::<bool, std::io::Error>(body.starts_with(b"HTTP/1.1 200"))
        };
        if !matches!(scraped.await, Ok(true)) && !warned {
            eprintln!("ax-bench: scraping http://{addr}/metrics failed");
            warned = true;
        }
    }
}

/// A fresh database, a run directory and one axd on it: how the single-axd scenarios begin.
pub struct Bed {
    /// The database, dropped when the scenario is done.
    pub db: ax_tests::TestDb,
    /// The run's temporary directory (axd's log is `axd.log` in it); see [`remove_run_dir`].
    pub dir: PathBuf,
    /// The axd under test.
    pub axd: ax_tests::procs::AxdProcess,
    /// Its gRPC endpoint, `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The `application_name` of its PostgreSQL connections, this run's own (so that counts and
    /// checks find them among other axd on the server).
    pub db_app: String,
}

impl Bed {
    /// Creates the database and starts axd on it with `extra` flags. `AX_BENCH_AXD_LOG` sets axd's
    /// log filter (default `warn`; `ax_scheduler=debug` shows dispatch rounds and group commits).
    pub async fn start(kind: DbKind, scenario: &str, extra: &[&str]) -> anyhow::Result<Bed> {
        Bed::start_with(kind, scenario, extra, None).await
    }

    /// [`Bed::start`], axd connecting to PostgreSQL with this `sslmode` (added to its URL).
    pub async fn start_with(
        kind: DbKind,
        scenario: &str,
        extra: &[&str],
        sslmode: Option<&str>,
    ) -> anyhow::Result<Bed> {
        let db =
            ax_tests::TestDb::create(kind.test_db()).await.ok_or_else(|| anyhow::anyhow!("database unavailable"))?;
        static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let db_app = format!("axd-bench-{}-{run}", std::process::id());
        let url = match kind {
            DbKind::Postgres => {
                let url = with_param(&db.url, "application_name", &db_app);
                match sslmode {
                    Some(mode) => with_param(&url, "sslmode", mode),
                    None => url,
                }
            }
            _ => db.url.clone(),
        };
        let dir = std::env::temp_dir().join(format!("ax-bench-{scenario}-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let log = std::env::var("AX_BENCH_AXD_LOG").unwrap_or_else(|_| "warn".to_owned());
        let mut args = vec!["--listen", "127.0.0.1:0", "--database-url", &url, "--log", &log];
        args.extend_from_slice(extra);
        // A free port for /metrics, outside the ephemeral range (axd binds it right after).
        let metrics = if METRICS.load(std::sync::atomic::Ordering::Relaxed) {
            Some(std::net::SocketAddr::from(([127, 0, 0, 1], ax_tests::proxy::free_port())))
        } else {
            None
        };
        let metrics_arg = metrics.map(|a| a.to_string()).unwrap_or_default();
        if metrics.is_some() {
            args.extend_from_slice(&["--metrics-listen", &metrics_arg]);
        }
        let axd = ax_tests::procs::AxdProcess::start(&args, &dir.join("axd.log")).await;
        if let Some(addr) = metrics {
            tokio::spawn(scrape_every_second(addr));
        }
        let endpoint = format!("http://{}", axd.addr);
        Ok(Bed { db, dir, axd, endpoint, db_app })
    }
}

/// `url` with its query parameter `name` set to `value` (one the URL names is replaced).
pub fn with_param(url: &str, name: &str, value: &str) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let prefix = format!("{name}=");
    let mut params: Vec<&str> = query.split('&').filter(|p| !p.is_empty() && !p.starts_with(&prefix)).collect();
    let pair = format!("{name}={value}");
    params.push(&pair);
    format!("{base}?{}", params.join("&"))
}

/// Starts `count` demo worker processes (app `bench`, no-op handler) named `prefix-i`, each
/// logging its executions to `exec-i.jsonl` in the run directory; returns the log paths too.
pub fn start_workers(
    dir: &std::path::Path,
    endpoint: &str,
    prefix: &str,
    count: u32,
    capacity: u32,
) -> (Vec<PathBuf>, Vec<ax_tests::procs::DemoWorker>) {
    let logs: Vec<PathBuf> = (0..count).map(|i| dir.join(format!("exec-{i}.jsonl"))).collect();
    let endpoints = &[endpoint.to_owned()];
    let workers = logs
        .iter()
        .enumerate()
        .map(|(i, log)| ax_tests::procs::DemoWorker::start(endpoints, "bench", &format!("{prefix}-{i}"), capacity, log))
        .collect();
    (logs, workers)
}

/// Removes a run's temporary directory, first copying its `axd.log` to `AX_BENCH_KEEP_LOG` if set
/// (with `AX_BENCH_AXD_LOG=ax_scheduler=debug` it shows every dispatch, trigger and commit round).
/// With `AX_BENCH_KEEP_DIR` set, the directory stays (workers' execution logs included).
pub fn remove_run_dir(dir: &std::path::Path) {
    if let Ok(keep) = std::env::var("AX_BENCH_KEEP_LOG") {
        let _ = std::fs::copy(dir.join("axd.log"), keep);
    }
    if std::env::var_os("AX_BENCH_KEEP_DIR").is_some() {
        eprintln!("  kept {}", dir.display());
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A scenario's result: rows of (name, value) under a header describing the run.
pub struct Report {
    /// Scenario name.
    pub scenario: &'static str,
    /// Machine and database.
    pub env: env::Env,
    /// Named figures, in order.
    pub figures: Vec<(String, serde_json::Value)>,
}

impl Report {
    fn table(&self) -> String {
        let mut out = format!(
            "\n{} on {} {} ({} cores, {})\n",
            self.scenario, self.env.database, self.env.database_version, self.env.cores, self.env.cpu
        );
        let w = self.figures.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (k, v) in &self.figures {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push_str(&format!("  {k:<w$}  {v}\n"));
        }
        out
    }

    fn json(&self) -> serde_json::Value {
        let figures: serde_json::Map<String, serde_json::Value> = self.figures.iter().cloned().collect();
        serde_json::json!({
            "scenario": self.scenario,
            "database": self.env.database,
            "database_version": self.env.database_version,
            "cores": self.env.cores,
            "cpu": self.env.cpu,
            "figures": figures,
        })
    }
}
