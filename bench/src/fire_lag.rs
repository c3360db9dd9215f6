//! fire-lag: how late cron fires start on a worker.
//!
//! N cron tasks with a seconds field spread the fires over every minute (task i fires at second
//! i mod 60). After registration, a window of some minutes is measured: for every fire inside it,
//! fire lag = the handler's start on the worker (from the demo worker's execution log) − the fire
//! time, and dispatch lag = the DISPATCHED event's time − the fire time (negative: the SDK workers
//! take early assignments and hold them until the fire time, see axd's --dispatch-ahead). Fires
//! that did not run, and any that started before their time, are counted, never dropped silently.

use std::time::Duration;

use ax_proto::v1 as pb;
use ax_tests::{axd::channel, procs::executions_in};
use chrono::Utc;

use crate::{
    Bed, DbKind, Report, env, seed,
    stats::{Cpu, Spread, round1, status_kb, ticks_per_second},
};

/// Sizes of a fire-lag run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Cron tasks (smoke: 60).
    #[arg(long, default_value_t = 5_000)]
    pub tasks: usize,
    /// Seconds measured (smoke: 6).
    #[arg(long, default_value_t = 180)]
    pub secs: u64,
    /// Worker processes.
    #[arg(long, default_value_t = 2)]
    pub workers: u32,
    /// Capacity of each worker.
    #[arg(long, default_value_t = 256)]
    pub capacity: u32,
    /// axd's --dispatch-ahead (how early the SDK workers get assignments they hold until the fire
    /// time), e.g. 200ms; 0 dispatches at the fire time. Default: axd's own default.
    #[arg(long)]
    pub dispatch_ahead: Option<String>,
}

pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    let (tasks, secs) = if smoke { (60, 6) } else { (a.tasks, a.secs) };
    let ahead: Vec<&str> = match &a.dispatch_ahead {
        Some(d) => vec!["--dispatch-ahead", d],
        None => Vec::new(),
    };
    let Bed { db, dir, mut axd, endpoint, .. } = Bed::start(kind, "lag", &ahead).await?;
    let env = env::detect(kind, &db.url).await?;
    // Workers first, so the first measured fire finds them connected.
    let (logs, workers) = crate::start_workers(&dir, &endpoint, "lag", a.workers, a.capacity);
    let mut admin = pb::admin_service_client::AdminServiceClient::new(channel(&endpoint).await);
    let template = admin
        .create_task(pb::CreateTaskRequest {
            task: Some(pb::TaskSpec {
                name: "lag-0".into(),
                app: "bench".into(),
                handler: "noop".into(),
                schedule: Some(pb::Schedule {
                    kind: Some(pb::schedule::Kind::Cron(pb::CronSchedule {
                        expression: "0 * * * * *".into(),
                        ..Default::default()
                    })),
                }),
                ..Default::default()
            }),
        })
        .await?
        .into_inner()
        .task
        .expect("task");
    let seeded_from = Utc::now();
    let clones = seed::TaskClone::spread_over_minute("lag", tasks, seeded_from);
    seed::clone_tasks(kind, &db.url, template.id, &clones).await?;
    // Fires missed while registering are caught up at once; the window starts after that burst.
    let from = Utc::now() + chrono::Duration::seconds(5);
    let until = from + chrono::Duration::seconds(secs as i64);
    eprintln!(
        "  {tasks} tasks registered in {:.1}s; measuring fires from {from} for {secs}s",
        (Utc::now() - seeded_from).num_milliseconds() as f64 / 1000.0
    );
    let pid = axd.child.id().unwrap_or(0);
    tokio::time::sleep((from - Utc::now()).to_std().unwrap_or_default()).await;
    let cpu0 = Cpu::sample(pid)?;
    tokio::time::sleep((until - Utc::now()).to_std().unwrap_or_default()).await;
    let cpu = Cpu::sample(pid)?.since(&cpu0, ticks_per_second());
    let rss = status_kb(pid, "VmRSS")?;
    // Let the window's last fires finish.
    tokio::time::sleep(Duration::from_secs(3)).await;
    drop(workers);
    let _ = axd.terminate().await;

    let (from_us, until_us) = (from.timestamp_micros(), until.timestamp_micros());
    let pool = seed::AnyPool::connect(kind, &db.url).await?;
    let dispatched = seed::dispatch_delays(&pool, from_us, until_us).await?;
    let fires = seed::instances_fired_between(&pool, from_us, until_us).await?;
    db.cleanup().await;
    let paths: Vec<&std::path::Path> = logs.iter().map(|p| p.as_path()).collect();
    let mut lag: Vec<f64> = executions_in(&paths)
        .iter()
        .filter(|e| e.attempt == 1 && e.trigger_time >= from && e.trigger_time < until)
        .map(|e| (e.start - e.trigger_time).num_microseconds().unwrap_or(0) as f64 / 1000.0)
        .collect();
    let lag_samples_below_zero = lag.iter().filter(|ms| **ms < 0.0).count();
    let mut dispatch: Vec<f64> = dispatched.iter().map(|us| *us as f64 / 1000.0).collect();
    let (lag, dispatch) = (Spread::of(&mut lag), Spread::of(&mut dispatch));
    crate::remove_run_dir(&dir);
    let mut figures = vec![
        ("cron tasks".into(), tasks.into()),
        ("workers x capacity".into(), format!("{} x {}", a.workers, a.capacity).into()),
        ("axd --dispatch-ahead".into(), a.dispatch_ahead.clone().unwrap_or_else(|| "default (200ms)".into()).into()),
        ("window seconds".into(), secs.into()),
        ("fires in window".into(), fires.into()),
        ("fires started".into(), lag.n.into()),
    ];
    lag.rows("fire lag ms", &mut figures);
    dispatch.rows("dispatch lag ms", &mut figures);
    figures.push(("axd CPU % of a core".into(), round1(cpu.percent())));
    figures.push(("axd RSS MiB".into(), round1(rss as f64 / 1024.0)));
    let early = lag_samples_below_zero;
    figures.push(("fires started before their time".into(), early.into()));
    if early > 0 {
        eprintln!("  WARNING: {early} fires started before their fire time");
    }
    let missing = fires.saturating_sub(lag.n as u64);
    if missing > 0 {
        eprintln!("  WARNING: {missing} of {fires} fires in the window did not start");
    }
    figures.push(("fires not started".into(), missing.into()));
    Ok(Report { scenario: "fire-lag", env, figures })
}
