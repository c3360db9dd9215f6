//! peer: ax's burn-down side by side with graphile-worker's on the same PostgreSQL server, with the
//! same number of jobs, alternating, so that the ratio compares two systems on one machine in one
//! sitting rather than figures from different days.
//!
//! Measured as fairly as ax (issue 31): no query of ours runs while either side works — each side
//! counts its completions in its own processes (ax's workers print the results axd acknowledged,
//! graphile-worker's processes the jobs their handler finished) and the end is the moment the sum
//! reaches N; graphile-worker runs with the settings of its own performance setup (a local queue
//! of 500 jobs, batched completion) as 1, 2 and 4 processes, and its best median is the one
//! compared; both sides' tables are ANALYZEd after seeding; graphile-worker's processes connect
//! and wait for a go outside its time (ax's worker processes start inside ax's: that counts
//! against ax). graphile-worker deletes each job it completes, while ax keeps
//! every instance and its trail. The counts per instance (per job) of both sides are printed.
//!
//! graphile-worker (a pinned version) is installed with npm into a temporary directory, or used
//! from `AX_BENCH_GRAPHILE_DIR` (a directory whose `node_modules` holds graphile-worker and `pg`,
//! for a machine without the registry).

use std::{path::Path, process::Stdio, sync::Arc, time::Duration};

use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

use crate::{DbKind, Report, burn_down, counts, env, stats};

/// The graphile-worker release compared against.
pub const GRAPHILE_WORKER: &str = "0.17.3";

/// Sizes of a peer run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Jobs (instances) per burn-down (smoke: 500).
    #[arg(short, long, default_value_t = 100_000)]
    pub n: usize,
    /// Alternated rounds (ax, then graphile-worker with each process count), at least 3.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// ax worker processes.
    #[arg(long, default_value_t = 2)]
    pub workers: u32,
    /// Capacity of each ax worker.
    #[arg(long, default_value_t = 256)]
    pub capacity: u32,
    /// graphile-worker's concurrency per process.
    #[arg(long, default_value_t = 24)]
    pub concurrency: u32,
    /// graphile-worker process counts to try (its best median is compared; smoke: 1,2).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 4])]
    pub processes: Vec<u32>,
    /// Both sides connect to PostgreSQL over TLS (ax with `sslmode=require`, graphile-worker's `pg`
    /// with `ssl`); by default both connect in plaintext, `pg`'s default. Either way the transport
    /// of every connection is read from the server after each run and must be the one chosen.
    #[arg(long)]
    pub db_tls: bool,
}

/// The Node script, in three modes:
/// - `node peer.js setup URL SCHEMA N`: migrates, adds N no-op jobs (batches of 1,000 through
///   `addJobs`), ANALYZEs the schema's tables, prints `ready`;
/// - `node peer.js work URL SCHEMA CONCURRENCY`: connects (application_name `graphile-worker`),
///   prints `ready`, waits for `go` on stdin, runs a worker, prints `done K` every 10 ms while its
///   count of finished jobs grows, and stops at `stop` (or the end of stdin);
/// - `node peer.js teardown URL SCHEMA`: drops the schema.
const SCRIPT: &str = r#"
const { makeWorkerUtils, run } = require("graphile-worker");
const { Pool } = require("pg");
const readline = require("readline");
const [mode, url, schema, arg] = process.argv.slice(2);
// The transport ax-bench chose for both sides (AX_PEER_TLS=1: TLS, the server's certificate not checked).
const ssl = process.env.AX_PEER_TLS === "1" ? { rejectUnauthorized: false } : false;
const say = (line) => process.stdout.write(line + "\n");
// A pool with handlers of its own and its clients' errors (graphile-worker warns without them).
const makePool = (options) => {
  const pool = new Pool({ connectionString: url, ssl, ...options });
  pool.on("error", (e) => console.error(e));
  pool.on("connect", (client) => client.on("error", (e) => console.error(e)));
  return pool;
};
(async () => {
  if (mode === "setup") {
    const n = Number(arg);
    const pgPool = makePool({ max: 4 });
    const utils = await makeWorkerUtils({ pgPool, schema });
    await utils.migrate();
    for (let done = 0; done < n; done += 1000) {
      const specs = [];
      for (let i = done; i < Math.min(n, done + 1000); i++) specs.push({ identifier: "noop", payload: {} });
      await utils.addJobs(specs);
    }
    const { rows } = await pgPool.query("select tablename from pg_tables where schemaname = $1", [schema]);
    for (const r of rows) await pgPool.query(`analyze "${schema}"."${r.tablename}"`);
    await utils.release();
    await pgPool.end();
    say("ready");
  } else if (mode === "work") {
    const concurrency = Number(arg);
    const pgPool = makePool({ max: concurrency + 4, application_name: "graphile-worker" });
    await pgPool.query("select 1");
    // stdin's lines, queued so that none is lost while the worker starts.
    const lines = readline.createInterface({ input: process.stdin });
    const queue = [];
    let waiter = null, closed = false;
    const wake = () => { if (waiter) { const w = waiter; waiter = null; w(); } };
    lines.on("line", (l) => { queue.push(l.trim()); wake(); });
    lines.on("close", () => { closed = true; wake(); });
    const next = async () => {
      while (queue.length === 0 && !closed) await new Promise((r) => { waiter = r; });
      return queue.length ? queue.shift() : "stop";
    };
    say("ready");
    if ((await next()) !== "go") { await pgPool.end(); return; }
    let count = 0, shown = 0;
    const runner = await run({
      pgPool, schema, concurrency, noHandleSignals: true, pollInterval: 1000,
      taskList: { noop: async () => { count++; } },
      preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    });
    const tick = setInterval(() => { if (count !== shown) { shown = count; say(`done ${count}`); } }, 10);
    while ((await next()) !== "stop") {}
    clearInterval(tick);
    say(`done ${count}`);
    await runner.stop();
    await pgPool.end();
    lines.close();
  } else if (mode === "teardown") {
    const pgPool = makePool({ max: 1 });
    await pgPool.query(`drop schema if exists "${schema}" cascade`);
    await pgPool.end();
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
})().catch((e) => { console.error(e); process.exit(1); });
"#;

/// Installs graphile-worker into `dir` (npm, the pinned version and `pg`), or links the
/// `node_modules` of `AX_BENCH_GRAPHILE_DIR`.
async fn install(dir: &Path) -> anyhow::Result<()> {
    std::fs::write(dir.join("package.json"), r#"{"name":"ax-bench-peer","private":true}"#)?;
    std::fs::write(dir.join("peer.js"), SCRIPT)?;
    if let Some(pre) = std::env::var_os("AX_BENCH_GRAPHILE_DIR") {
        let modules = Path::new(&pre).join("node_modules");
        anyhow::ensure!(modules.is_dir(), "AX_BENCH_GRAPHILE_DIR has no node_modules: {}", modules.display());
        std::os::unix::fs::symlink(&modules, dir.join("node_modules"))?;
        return Ok(());
    }
    let status = tokio::process::Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            &format!("graphile-worker@{GRAPHILE_WORKER}"),
            "pg@8",
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .await?;
    anyhow::ensure!(status.success(), "npm install graphile-worker@{GRAPHILE_WORKER} failed ({status})");
    Ok(())
}

/// Runs `node peer.js <args>` to its end.
async fn node(dir: &Path, tls: bool, args: &[&str]) -> anyhow::Result<()> {
    let status = tokio::process::Command::new("node")
        .env("AX_PEER_TLS", if tls { "1" } else { "0" })
        .arg("peer.js")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .await?;
    anyhow::ensure!(status.success(), "node peer.js {} failed ({status})", args.first().unwrap_or(&""));
    Ok(())
}

/// One graphile-worker burn-down of `n` jobs by `procs` processes over TLS or not (`tls`): jobs/s,
/// the counts per job and the transport its connections had (read from the server).
async fn graphile(
    dir: &Path,
    n: usize,
    procs: u32,
    concurrency: u32,
    smoke: bool,
    tls: bool,
) -> anyhow::Result<(f64, Vec<(String, serde_json::Value)>, String)> {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let schema = format!("gw_bench_{}_{stamp}", std::process::id());
    let url = ax_tests::postgres_url();
    node(dir, tls, &["setup", &url, &schema, &n.to_string()]).await?;
    let served = counts::Served { app: "graphile-worker".into(), schema: Some(schema.clone()) };
    let result = async {
        let mut meter = counts::Meter::start_for(DbKind::Postgres, &url, smoke, served).await?;
        let (total_tx, mut total) = tokio::sync::watch::channel(0_u64);
        let total_tx = Arc::new(total_tx);
        let mut children = Vec::new();
        for _ in 0..procs {
            let mut child = tokio::process::Command::new("node")
                .env("AX_PEER_TLS", if tls { "1" } else { "0" })
                .args(["peer.js", "work", &url, &schema, &concurrency.to_string()])
                .current_dir(dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .kill_on_drop(true)
                .spawn()?;
            let mut out = tokio::io::BufReader::new(child.stdout.take().expect("piped")).lines();
            let ready = tokio::time::timeout(Duration::from_secs(60), out.next_line()).await;
            anyhow::ensure!(
                matches!(&ready, Ok(Ok(Some(l))) if l == "ready"),
                "a graphile-worker process did not get ready: {ready:?}"
            );
            meter.follow(counts::Role::Worker, child.id(), true);
            children.push((child, Some(out)));
        }
        // Every process connected and waiting: the clock starts with the go.
        let started = std::time::Instant::now();
        for (child, out) in &mut children {
            child.stdin.as_mut().expect("piped").write_all(b"go\n").await?;
            let out = out.take().expect("read once");
            tokio::spawn(counts::add_counts(out.into_inner(), "done ", total_tx.clone()));
        }
        let limit = Duration::from_secs(if smoke { 120 } else { 1800 });
        let done = matches!(tokio::time::timeout(limit, total.wait_for(|&t| t >= n as u64)).await, Ok(Ok(_)));
        let secs = started.elapsed().as_secs_f64();
        anyhow::ensure!(done, "graphile-worker did not finish {n} jobs in time ({} counted)", *total.borrow());
        meter.sample_cpu().await?;
        let transport = counts::transport(&url, "graphile-worker").await?;
        for (child, _) in &mut children {
            let mut stdin = child.stdin.take().expect("piped");
            stdin.write_all(b"stop\n").await?;
            drop(stdin);
        }
        for (child, _) in &mut children {
            let status = tokio::time::timeout(Duration::from_secs(60), child.wait()).await??;
            anyhow::ensure!(status.success(), "a graphile-worker process failed ({status})");
        }
        Ok((n as f64 / secs, meter.finish(n as u64).await?, transport))
    }
    .await;
    node(dir, tls, &["teardown", &url, &schema]).await?;
    result
}

fn rate(r: &Report) -> f64 {
    r.figures.iter().find(|(k, _)| k == "instances/s").and_then(|(_, v)| v.as_f64()).unwrap_or(0.0)
}

/// The server's settings that bear on both sides.
async fn server_settings() -> anyhow::Result<String> {
    let pool = sqlx::PgPool::connect(&ax_tests::postgres_url()).await?;
    let mut out = Vec::new();
    for name in ["shared_buffers", "synchronous_commit", "max_wal_size", "wal_level", "max_connections"] {
        let v: String = sqlx::query_scalar(&format!("SHOW {name}")).fetch_one(&pool).await?;
        out.push(format!("{name}={v}"));
    }
    pool.close().await;
    Ok(out.join(", "))
}

pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    anyhow::ensure!(kind == DbKind::Postgres, "graphile-worker runs on PostgreSQL only: use --db postgres");
    anyhow::ensure!(smoke || a.rounds >= 3, "--rounds must be at least 3");
    anyhow::ensure!(!a.processes.is_empty() && !a.processes.contains(&0), "--processes: one or more counts above 0");
    let n = if smoke { 500 } else { a.n };
    let rounds = if smoke { 1 } else { a.rounds };
    let procs: Vec<u32> =
        if smoke { a.processes.iter().copied().filter(|&p| p <= 2).collect() } else { a.processes.clone() };
    let procs = if procs.is_empty() { vec![1] } else { procs };
    let dir = std::env::temp_dir().join(format!("ax-bench-peer-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    install(&dir).await?;
    let sslmode = if a.db_tls { "require" } else { "disable" };
    let ax_args =
        burn_down::Args { n, workers: a.workers, capacity: a.capacity, db_pool_workers: 4, sslmode: Some(sslmode) };
    // Every connection of both sides must have the transport chosen for both.
    let wanted = if a.db_tls { "TLS" } else { "plaintext" };
    let check = |side: &str, t: &str| {
        anyhow::ensure!(t.ends_with(wanted) && !t.contains(','), "{side}'s connections were not all {wanted}: {t}");
        Ok(())
    };
    let mut transports = (String::new(), String::new());
    let mut ax = Vec::new();
    let mut gw: Vec<Vec<f64>> = vec![Vec::new(); procs.len()];
    let (mut ax_counts, mut gw_counts) = (Vec::new(), vec![Vec::new(); procs.len()]);
    let mut envd = None;
    for round in 0..rounds {
        let r = burn_down::run(kind, smoke, &ax_args).await?;
        ax.push(rate(&r));
        let t = r.figures.iter().find(|(k, _)| k == "axd's database connections").and_then(|(_, v)| v.as_str());
        let t = t.unwrap_or("not read").to_owned();
        check("axd", &t)?;
        transports.0 = t;
        if ax_counts.is_empty() {
            ax_counts = r.figures.iter().filter(|(k, _)| counts::is_count(k)).cloned().collect();
        }
        envd.get_or_insert(r.env);
        let mut line = format!("  round {}: ax {:.0}/s", round + 1, ax[round]);
        for (i, &p) in procs.iter().enumerate() {
            let (rate, counted, t) = graphile(&dir, n, p, a.concurrency, smoke, a.db_tls).await?;
            check("graphile-worker", &t)?;
            transports.1 = t;
            gw[i].push(rate);
            if gw_counts[i].is_empty() {
                gw_counts[i] = counted;
            }
            line.push_str(&format!(", graphile-worker x{p} {rate:.0}/s"));
        }
        eprintln!("{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let ax_med = stats::median(&ax);
    let meds: Vec<f64> = gw.iter().map(|v| stats::median(v)).collect();
    let best = (0..procs.len()).max_by(|&x, &y| meds[x].total_cmp(&meds[y])).unwrap_or(0);
    let env = match envd {
        Some(e) => e,
        None => env::detect(kind, &ax_tests::postgres_url()).await?,
    };
    let series = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join(" / ");
    let mut figures: Vec<(String, serde_json::Value)> = vec![
        ("jobs per run".into(), n.into()),
        ("server settings".into(), server_settings().await?.into()),
        (
            "database transport (read from pg_stat_ssl)".into(),
            format!("ax: {}; graphile-worker: {}", transports.0, transports.1).into(),
        ),
        (
            "ax settings".into(),
            format!("{} workers x {} capacity, --db-pool-workers 4, release build", a.workers, a.capacity).into(),
        ),
        (
            "graphile-worker settings".into(),
            format!(
                "{GRAPHILE_WORKER}, concurrency {} per process, localQueue.size 500, completeJobBatchDelay 0, \
                 failJobBatchDelay 0, pollInterval 1000",
                a.concurrency
            )
            .into(),
        ),
        (format!("ax burn-down ({} x {}), instances/s", a.workers, a.capacity), series(&ax).into()),
    ];
    for (i, p) in procs.iter().enumerate() {
        figures.push((format!("graphile-worker x{p} process(es), jobs/s"), series(&gw[i]).into()));
    }
    figures.push(("ax median".into(), serde_json::json!(ax_med.round())));
    figures.push(("graphile-worker median".into(), serde_json::json!(meds[best].round())));
    figures.push(("graphile-worker best process count".into(), procs[best].into()));
    figures.push((
        "ratio of medians (ax / graphile-worker)".into(),
        serde_json::json!((ax_med / meds[best] * 100.0).round() / 100.0),
    ));
    figures.extend(ax_counts.into_iter().map(|(k, v)| (format!("ax {k}"), v)));
    let gw_best = std::mem::take(&mut gw_counts[best]);
    figures.extend(gw_best.into_iter().map(|(k, v)| (format!("graphile-worker {}", k.replace("instance", "job")), v)));
    Ok(Report { scenario: "peer", env, figures })
}
