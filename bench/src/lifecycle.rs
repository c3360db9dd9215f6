//! full lifecycle: fire → instance → run → result, under load.
//!
//! N one-time tasks all fire at the same instant T0, while manual triggers (`TriggerTask` over
//! gRPC) arrive at a steady rate from T0 until every one-time fire has finished. The trigger loop
//! creates the instances, dispatch hands them to the worker processes, results are written back:
//! instances/s = (N + manual triggers) / (time from T0 until the last one is SUCCESS). Fire lag is
//! the handler's start on the worker minus the fire (or trigger) time.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use ax_proto::v1 as pb;
use ax_tests::{axd::channel, procs::executions_in};
use chrono::Utc;

use crate::{
    Bed, DbKind, Report, counts, env, seed,
    stats::{Spread, round1},
};

/// Sizes of a full-lifecycle run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// One-time tasks firing at the same instant (smoke: 500).
    #[arg(short, long, default_value_t = 100_000)]
    pub n: usize,
    /// Manual triggers per second while the one-time fires are worked off (smoke: 50).
    #[arg(long, default_value_t = 500)]
    pub manual_rate: u32,
    /// Worker processes.
    #[arg(long, default_value_t = 2)]
    pub workers: u32,
    /// Capacity of each worker.
    #[arg(long, default_value_t = 256)]
    pub capacity: u32,
}

fn task(name: &str, kind: pb::schedule::Kind) -> pb::CreateTaskRequest {
    pb::CreateTaskRequest {
        task: Some(pb::TaskSpec {
            name: name.into(),
            app: "bench".into(),
            handler: "noop".into(),
            schedule: Some(pb::Schedule { kind: Some(kind) }),
            ..Default::default()
        }),
    }
}

pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    let (n, rate) = if smoke { (500, 50) } else { (a.n, a.manual_rate) };
    let Bed { db, dir, mut axd, endpoint, db_app } = Bed::start(kind, "lifecycle", &[]).await?;
    let env = env::detect(kind, &db.url).await?;
    let mut admin = pb::admin_service_client::AdminServiceClient::new(channel(&endpoint).await);
    // Registered to fire in an hour, then all moved to T0 at once when registration is done.
    let far = Utc::now() + chrono::Duration::hours(1);
    let at = prost_types::Timestamp { seconds: far.timestamp(), nanos: 0 };
    let one_time = pb::schedule::Kind::OneTime(pb::OneTimeSchedule { when: Some(pb::one_time_schedule::When::At(at)) });
    let template = admin.create_task(task("life-0", one_time)).await?.into_inner().task.expect("task");
    let manual = pb::schedule::Kind::Manual(pb::ManualSchedule {});
    admin.create_task(task("life-manual", manual)).await?;
    let clones: Vec<seed::TaskClone> = (1..n)
        .map(|i| seed::TaskClone { name: format!("life-{i}"), cron: None, next_fire_us: far.timestamp_micros() })
        .collect();
    let registering = Instant::now();
    seed::clone_tasks(kind, &db.url, template.id, &clones).await?;
    eprintln!("  {n} one-time tasks registered in {:.1}s", registering.elapsed().as_secs_f64());

    let t0 = Utc::now() + chrono::Duration::seconds(5);
    let mover = seed::AnyPool::connect(kind, &db.url).await?;
    seed::move_one_time_fires(&mover, t0.timestamp_micros()).await?;
    mover.close().await;
    // Counted from here: creating every instance from its task, and its life (the tasks are
    // registered and moved to T0 already: that update of every task row is the benchmark's, not
    // axd's work).
    let mut meter = counts::Meter::start(kind, &db.url, smoke, &db_app).await?;
    meter.follow(counts::Role::Axd, axd.child.id(), false);
    let (logs, workers) = crate::start_workers(&dir, &endpoint, "life", a.workers, a.capacity);
    for w in &workers {
        meter.follow(counts::Role::Worker, w.child.id(), true);
    }
    let pool = seed::AnyPool::connect(kind, &db.url).await?;
    anyhow::ensure!(
        Utc::now() < t0,
        "moving the one-time fires and starting the meter took past T0 ({t0}): the counts would miss fires"
    );
    tokio::time::sleep((t0 - Utc::now()).to_std().unwrap_or_default()).await;

    // Manual triggers, every 10 ms a hundredth of the rate, until the one-time fires are done. Open
    // loop: each call runs on its own (at most 256 at once), so a slow answer does not lower the rate.
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let triggers = {
        let (stop, sent, admin) = (stop.clone(), sent.clone(), admin.clone());
        tokio::spawn(async move {
            let in_flight = Arc::new(tokio::sync::Semaphore::new(256));
            let mut calls = tokio::task::JoinSet::new();
            let mut tick = tokio::time::interval(Duration::from_millis(10));
            let mut owed = 0.0_f64;
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                owed += f64::from(rate) / 100.0;
                while owed >= 1.0 {
                    owed -= 1.0;
                    let permit = in_flight.clone().acquire_owned().await?;
                    let (mut admin, sent) = (admin.clone(), sent.clone());
                    calls.spawn(async move {
                        let req = pb::TriggerTaskRequest { name: "life-manual".into(), ..Default::default() };
                        admin.trigger_task(req).await?;
                        sent.fetch_add(1, Ordering::Relaxed);
                        drop(permit);
                        anyhow::Ok(())
                    });
                }
                while let Some(done) = calls.try_join_next() {
                    done??;
                }
            }
            while let Some(done) = calls.join_next().await {
                done??;
            }
            anyhow::Ok(())
        })
    };
    let deadline = Instant::now() + Duration::from_secs(if smoke { 120 } else { 1800 });
    while seed::one_time_unfinished(&pool).await? {
        anyhow::ensure!(Instant::now() < deadline, "the one-time fires did not finish in time");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.store(true, Ordering::Relaxed);
    triggers.await??;
    while seed::any_unfinished(&pool, "bench").await? {
        anyhow::ensure!(Instant::now() < deadline, "the manual triggers did not finish in time");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let secs = (Utc::now() - t0).num_microseconds().unwrap_or(0) as f64 / 1e6;
    let manual = sent.load(Ordering::Relaxed);
    let total = n as u64 + manual;
    let (event_rows, events) = seed::event_count(kind, &db.url).await?;
    meter.sample_cpu().await?;
    drop(pool);
    drop(workers);
    let _ = axd.terminate().await;
    let counted = meter.finish(total).await?;
    db.cleanup().await;
    let paths: Vec<&std::path::Path> = logs.iter().map(|p| p.as_path()).collect();
    let (mut fired, mut triggered) = (Vec::with_capacity(n), Vec::new());
    for e in executions_in(&paths).iter().filter(|e| e.attempt == 1) {
        let lag = (e.start - e.trigger_time).num_microseconds().unwrap_or(0) as f64 / 1000.0;
        if e.task == "life-manual" { triggered.push(lag) } else { fired.push(lag) }
    }
    let ran = (fired.len() + triggered.len()) as u64;
    let (fired, triggered) = (Spread::of(&mut fired), Spread::of(&mut triggered));
    crate::remove_run_dir(&dir);
    let mut figures = vec![
        ("one-time tasks".into(), n.into()),
        ("manual triggers".into(), manual.into()),
        ("workers x capacity".into(), format!("{} x {}", a.workers, a.capacity).into()),
        ("seconds".into(), serde_json::json!((secs * 1000.0).round() / 1000.0)),
        ("instances/s".into(), serde_json::json!((total as f64 / secs).round())),
        ("events per instance".into(), round1(events as f64 / total as f64)),
        ("event rows per instance".into(), round1(event_rows as f64 / total as f64)),
    ];
    fired.rows("one-time fire lag ms", &mut figures);
    triggered.rows("manual trigger lag ms", &mut figures);
    figures.extend(counted);
    anyhow::ensure!(ran == total, "{total} instances finished but the workers logged {ran} first attempts");
    Ok(Report { scenario: "full lifecycle", env, figures })
}
