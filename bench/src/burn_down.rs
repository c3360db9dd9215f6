//! burn-down: pre-created PENDING instances worked to completion by worker processes over gRPC.

use std::time::{Duration, Instant};

use ax_proto::v1 as pb;
use ax_tests::{axd::channel, procs::DemoWorker};

use crate::{Bed, DbKind, Report, counts, env, seed};

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
    /// PostgreSQL: the `sslmode` axd connects with (`peer` sets it so that both sides use one
    /// transport); `None` leaves the URL's (sqlx's default is `prefer`: TLS when the server has it).
    #[arg(skip)]
    pub sslmode: Option<&'static str>,
}

pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    let n = if smoke { 500 } else { a.n };
    let conns = a.db_pool_workers.to_string();
    let Bed { db, dir, mut axd, endpoint, db_app } =
        Bed::start_with(kind, "burn-down", &["--db-pool-workers", &conns], a.sslmode).await?;
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

    let mut meter = counts::Meter::start(kind, &db.url, smoke, &db_app).await?;
    meter.follow(counts::Role::Axd, axd.child.id(), false);
    let started = Instant::now();
    let (acked_tx, mut acked) = tokio::sync::watch::channel(0_u64);
    let acked_tx = std::sync::Arc::new(acked_tx);
    let mut workers = Vec::new();
    for i in 0..a.workers {
        let (w, out) =
            DemoWorker::start_counting(std::slice::from_ref(&endpoint), "bench", &format!("bench-{i}"), a.capacity);
        meter.follow(counts::Role::Worker, w.child.id(), true);
        tokio::spawn(counts::add_counts(out, "acked ", acked_tx.clone()));
        workers.push(w);
    }
    // The end is learned from the workers (each prints how many of its results axd acknowledged,
    // that is recorded durably): no query competes with the run while it goes.
    let limit = Duration::from_secs(if smoke { 120 } else { 1800 });
    let done = matches!(tokio::time::timeout(limit, acked.wait_for(|&a| a >= n as u64)).await, Ok(Ok(_)));
    if !done {
        let pool = seed::AnyPool::connect(kind, &db.url).await?;
        let left = seed::any_unfinished(&pool, "bench").await?;
        crate::remove_run_dir(&dir);
        anyhow::bail!(
            "not every instance finished in time ({} acknowledged; unfinished left: {left})",
            *acked.borrow()
        );
    }
    let secs = started.elapsed().as_secs_f64();
    meter.sample_cpu().await?;
    // Read once the run is over, while axd's connections are still open.
    let transport = match kind {
        DbKind::Postgres => Some(counts::transport(&db.url, &db_app).await?),
        _ => None,
    };
    let pool = seed::AnyPool::connect(kind, &db.url).await?;
    anyhow::ensure!(
        !seed::any_unfinished(&pool, "bench").await?,
        "the workers counted {n} results but instances are left"
    );
    drop(pool);
    let (event_rows, events) = seed::event_count(kind, &db.url).await?;
    drop(workers);
    let _ = axd.terminate().await;
    let counted = meter.finish(n as u64).await?;
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
            ("event rows per instance".into(), serde_json::json!(event_rows as f64 / n as f64)),
            ("seed seconds".into(), serde_json::json!((seed_secs * 1000.0).round() / 1000.0)),
        ]
        .into_iter()
        .chain(transport.map(|t| ("axd's database connections".to_owned(), serde_json::Value::from(t))))
        .chain(counted)
        .collect(),
    })
}
