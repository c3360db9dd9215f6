//! peer: ax's burn-down side by side with graphile-worker's on the same PostgreSQL server, with the
//! same number of jobs, alternating, so that the ratio compares two systems on one machine in one
//! sitting rather than figures from different days.
//!
//! graphile-worker (a pinned version) is installed with npm into a temporary directory, and a small
//! Node script adds N no-op jobs (in batches, through `addJobs`) and then runs a worker with the
//! settings of graphile-worker's own performance setup: a local queue of 500 jobs and batched
//! completion. The time from the worker's start until no job is left is its burn-down; completed
//! jobs are deleted by graphile-worker, while ax keeps every instance and its trail.

use std::{path::Path, process::Stdio};

use crate::{DbKind, Report, burn_down, env, stats};

/// The graphile-worker release compared against.
pub const GRAPHILE_WORKER: &str = "0.17.3";

/// Sizes of a peer run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Jobs (instances) per burn-down (smoke: 500).
    #[arg(short, long, default_value_t = 100_000)]
    pub n: usize,
    /// Alternated pairs of runs (ax, then graphile-worker), at least 3.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// ax worker processes.
    #[arg(long, default_value_t = 2)]
    pub workers: u32,
    /// Capacity of each ax worker.
    #[arg(long, default_value_t = 256)]
    pub capacity: u32,
    /// graphile-worker's concurrency (one process).
    #[arg(long, default_value_t = 24)]
    pub concurrency: u32,
}

/// The Node script: `node peer.js URL SCHEMA N CONCURRENCY` prints `{"seconds": S}`.
const SCRIPT: &str = r#"
const { makeWorkerUtils, run } = require("graphile-worker");
const { Pool } = require("pg");
const [url, schema, nText, concText] = process.argv.slice(2);
const n = Number(nText), concurrency = Number(concText);
(async () => {
  const pgPool = new Pool({ connectionString: url, max: concurrency + 4 });
  const utils = await makeWorkerUtils({ pgPool, schema });
  await utils.migrate();
  for (let done = 0; done < n; done += 1000) {
    const specs = [];
    for (let i = done; i < Math.min(n, done + 1000); i++) specs.push({ identifier: "noop", payload: {} });
    await utils.addJobs(specs);
  }
  const started = process.hrtime.bigint();
  const runner = await run({
    pgPool, schema, concurrency, noHandleSignals: true, pollInterval: 1000,
    taskList: { noop: async () => {} },
    preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  });
  for (;;) {
    const { rows } = await pgPool.query(`select count(*)::int as c from "${schema}"._private_jobs`);
    if (rows[0].c === 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await runner.stop();
  await pgPool.query(`drop schema "${schema}" cascade`);
  await utils.release();
  await pgPool.end();
  console.log(JSON.stringify({ seconds }));
})().catch((e) => { console.error(e); process.exit(1); });
"#;

/// Installs graphile-worker into `dir` (npm, the pinned version and `pg`).
async fn install(dir: &Path) -> anyhow::Result<()> {
    std::fs::write(dir.join("package.json"), r#"{"name":"ax-bench-peer","private":true}"#)?;
    std::fs::write(dir.join("peer.js"), SCRIPT)?;
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

/// One graphile-worker burn-down of `n` jobs; jobs/s.
async fn graphile(dir: &Path, n: usize, concurrency: u32) -> anyhow::Result<f64> {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let schema = format!("gw_bench_{}_{stamp}", std::process::id());
    let out = tokio::process::Command::new("node")
        .args(["peer.js", &ax_tests::postgres_url(), &schema, &n.to_string(), &concurrency.to_string()])
        .current_dir(dir)
        .stderr(Stdio::inherit())
        .output()
        .await?;
    anyhow::ensure!(out.status.success(), "graphile-worker's burn-down failed ({})", out.status);
    let line = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(line.trim().lines().last().unwrap_or(""))?;
    let secs = v["seconds"].as_f64().ok_or_else(|| anyhow::anyhow!("no seconds in {line:?}"))?;
    Ok(n as f64 / secs)
}

fn rate(r: &Report) -> f64 {
    r.figures.iter().find(|(k, _)| k == "instances/s").and_then(|(_, v)| v.as_f64()).unwrap_or(0.0)
}

pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    anyhow::ensure!(kind == DbKind::Postgres, "graphile-worker runs on PostgreSQL only: use --db postgres");
    anyhow::ensure!(smoke || a.rounds >= 3, "--rounds must be at least 3");
    let n = if smoke { 500 } else { a.n };
    let rounds = if smoke { 1 } else { a.rounds };
    let dir = std::env::temp_dir().join(format!("ax-bench-peer-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    install(&dir).await?;
    let ax_args = burn_down::Args { n, workers: a.workers, capacity: a.capacity, db_pool_workers: 4 };
    let (mut ax, mut gw) = (Vec::new(), Vec::new());
    let mut envd = None;
    for i in 0..rounds {
        let r = burn_down::run(kind, false, &ax_args).await?;
        ax.push(rate(&r));
        envd.get_or_insert(r.env);
        gw.push(graphile(&dir, n, a.concurrency).await?);
        eprintln!("  round {}: ax {:.0}/s, graphile-worker {:.0}/s", i + 1, ax[i], gw[i]);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (ax_med, gw_med) = (stats::median(&ax), stats::median(&gw));
    let env = match envd {
        Some(e) => e,
        None => env::detect(kind, &ax_tests::postgres_url()).await?,
    };
    let series = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join(" / ");
    Ok(Report {
        scenario: "peer",
        env,
        figures: vec![
            ("jobs per run".into(), n.into()),
            (format!("ax burn-down ({} x {}), instances/s", a.workers, a.capacity), series(&ax).into()),
            (format!("graphile-worker {GRAPHILE_WORKER} (concurrency {}), jobs/s", a.concurrency), series(&gw).into()),
            ("ax median".into(), serde_json::json!(ax_med.round())),
            ("graphile-worker median".into(), serde_json::json!(gw_med.round())),
            (
                "ratio of medians (ax / graphile-worker)".into(),
                serde_json::json!((ax_med / gw_med * 100.0).round() / 100.0),
            ),
        ],
    })
}
