//! burn-down: pre-created PENDING instances worked to completion by worker processes over gRPC.

use std::time::{Duration, Instant};

use ax_proto::v1 as pb;
use ax_tests::{axd::channel, procs::DemoWorker};

use crate::{Bed, DbKind, Report, env, seed};

/// Sizes of a burn-down run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Instances to work off (smoke: 500).
    #[arg(short, long, default_value_t = 100_000)]
    pub n: usize,
    /// Worker processes.
    #[arg(long, default_value_t = 1)]
    pub workers: u32,
    /// Capacity of each worker.
    #[arg(long, default_value_t = 64)]
    pub capacity: u32,
    /// Database connections of axd's worker-session pool (group commits).
    #[arg(long, default_value_t = 4)]
    pub db_pool_workers: u32,
}

pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    let n = if smoke { 500 } else { a.n };
    let conns = a.db_pool_workers.to_string();
    let Bed { db, dir, mut axd, endpoint } = Bed::start(kind, "burn-down", &["--db-pool-workers", &conns]).await?;
    let mut admin = pb::admin_service_client::AdminServiceClient::new(channel(&endpoint).await);
    let spec = pb::TaskSpec {
        name: "bench".into(),
        app: "bench".into(),
        handler: "noop".into(),
        schedule: Some(pb::Schedule { kind: Some(pb::schedule::Kind::Manual(pb::ManualSchedule {})) }),
        ..Default::default()
    };
    let task = admin.create_task(pb::CreateTaskRequest { task: Some(spec) }).await?.into_inner().task.expect("task");
    let env = env::detect(kind, &db.url).await?;
    let now_us = chrono::Utc::now().timestamp_micros();
    let seeded = Instant::now();
    seed::pending_instances(kind, &db.url, task.id, "bench", "bench", "noop", "{}", n, now_us).await?;
    let seed_secs = seeded.elapsed().as_secs_f64();

    let wal_before = seed::wal_position(kind, &db.url).await?;
    let started = Instant::now();
    let workers: Vec<DemoWorker> = (0..a.workers)
        .map(|i| {
            DemoWorker::start_with(std::slice::from_ref(&endpoint), "bench", &format!("bench-{i}"), a.capacity, None)
        })
        .collect();
    let deadline = started + Duration::from_secs(if smoke { 120 } else { 1800 });
    let pool = seed::AnyPool::connect(kind, &db.url).await?;
    let mut last_report = Instant::now();
    // Polls two index probes (not the cluster stats, which count every row) every 10 ms.
    while seed::any_unfinished(&pool, "bench").await? {
        anyhow::ensure!(Instant::now() < deadline, "not every instance finished in time");
        if last_report.elapsed() > Duration::from_secs(5) {
            eprintln!("  still working after {:.1}s", started.elapsed().as_secs_f64());
            last_report = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let secs = started.elapsed().as_secs_f64();
    let wal = match (wal_before, seed::wal_position(kind, &db.url).await?) {
        (Some(a), Some(b)) => serde_json::json!(((b - a) as f64 / n as f64).round()),
        _ => serde_json::Value::String("n/a".into()),
    };
    let events = seed::event_count(kind, &db.url).await?;
    drop(workers);
    let _ = axd.terminate().await;
    db.cleanup().await;
    crate::remove_run_dir(&dir);
    Ok(Report {
        scenario: "burn-down",
        env,
        figures: vec![
            ("instances".into(), n.into()),
            ("workers x capacity".into(), format!("{} x {}", a.workers, a.capacity).into()),
            ("seconds".into(), serde_json::json!((secs * 1000.0).round() / 1000.0)),
            ("instances/s".into(), serde_json::json!((n as f64 / secs).round())),
            ("events per instance".into(), serde_json::json!(events as f64 / n as f64)),
            ("WAL bytes per instance".into(), wal),
            ("seed seconds".into(), serde_json::json!((seed_secs * 1000.0).round() / 1000.0)),
        ],
    })
}
