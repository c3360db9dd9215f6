//! idle: what axd costs the database while nothing is due — database transactions per second per
//! axd, with no task firing, optionally with idle workers connected.
//!
//! PostgreSQL only: the count is `xact_commit + xact_rollback` of a database created for the run
//! (`pg_stat_database` counts per database, so other databases on the server do not disturb it).
//! MySQL/MariaDB count transactions only server-wide; SQLite has no counter.

use std::time::Duration;

use ax_tests::procs::{AxdProcess, DemoWorker};
use sqlx::{Connection as _, Executor as _, PgConnection};

use crate::{DbKind, Report, env};

/// Sizes of an idle run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// axd processes on the database.
    #[arg(long, default_value_t = 3)]
    pub axds: usize,
    /// Idle worker processes per axd (connected, heartbeating, nothing to run).
    #[arg(long, default_value_t = 0)]
    pub workers: usize,
    /// Seconds counted (smoke: 5), after 10 s of warm-up (smoke: 2).
    #[arg(long, default_value_t = 60)]
    pub secs: u64,
}

async fn transactions(c: &mut PgConnection) -> anyhow::Result<i64> {
    // pg_stat_database is updated by each backend at most once a second; a snapshot is forced so
    // the two samples read the counters as they are now.
    c.execute("SELECT pg_stat_clear_snapshot()").await?;
    let (n,): (i64,) = sqlx::query_as(
        "SELECT (xact_commit + xact_rollback)::bigint FROM pg_stat_database WHERE datname = current_database()",
    )
    .fetch_one(&mut *c)
    .await?;
    Ok(n)
}

pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    anyhow::ensure!(kind == DbKind::Postgres, "idle counts transactions on PostgreSQL only: use --db postgres");
    let (secs, warm) = if smoke { (5, 2) } else { (a.secs, 10) };
    let server = ax_tests::postgres_url();
    let name = format!("ax_idle_{}", std::process::id());
    let mut admin = PgConnection::connect(&server).await?;
    admin.execute(format!("CREATE DATABASE {name}").as_str()).await?;
    let base = server.rsplit_once('/').map_or(server.as_str(), |(b, _)| b).to_owned();
    let url = format!("{base}/{name}");
    let dir = std::env::temp_dir().join(format!("ax-bench-idle-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut axds = Vec::new();
    for i in 0..a.axds {
        let log = dir.join(format!("axd-{i}.log"));
        axds.push(AxdProcess::start(&["--listen", "127.0.0.1:0", "--database-url", &url, "--log", "warn"], &log).await);
    }
    let mut workers = Vec::new();
    for (i, axd) in axds.iter().enumerate() {
        let endpoint = [format!("http://{}", axd.addr)];
        for w in 0..a.workers {
            workers.push(DemoWorker::start_with(&endpoint, "idle", &format!("idle-{i}-{w}"), 4, None));
        }
    }
    tokio::time::sleep(Duration::from_secs(warm)).await;
    let mut c = PgConnection::connect(&url).await?;
    let before = transactions(&mut c).await?;
    let t0 = std::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let after = transactions(&mut c).await?;
    let elapsed = t0.elapsed().as_secs_f64();
    let env = env::detect(kind, &url).await?;
    drop(workers);
    for mut axd in axds {
        let _ = axd.terminate().await;
    }
    drop(c);
    let _ = admin.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str()).await;
    crate::remove_run_dir(&dir);
    // The sampling's own transactions: the snapshot clear and the read of the first sample.
    let counted = (after - before - 2).max(0) as f64;
    let per_axd = counted / elapsed / a.axds.max(1) as f64;
    Ok(Report {
        scenario: "idle",
        env,
        figures: vec![
            ("axd processes".into(), a.axds.into()),
            ("idle workers per axd".into(), a.workers.into()),
            ("seconds counted".into(), serde_json::json!((elapsed * 10.0).round() / 10.0)),
            ("transactions".into(), serde_json::json!(counted)),
            ("transactions/s per axd".into(), serde_json::json!((per_axd * 10.0).round() / 10.0)),
        ],
    })
}
