//! scale: the trigger loop and axd's memory with a million registered tasks.
//!
//! Phase A registers `--active` cron tasks (each fires once a minute, spread over the seconds) and
//! runs a fresh axd with one worker for `--secs`; phase B adds idle tasks up to `--tasks` (a yearly
//! cron, so they are registered but not due) and runs a fresh axd for the same time. Each phase
//! reads every trigger round's duration from axd's debug log (after a warm-up that absorbs catch-up
//! fires of the time axd was down) and samples axd's RSS each second. Flat means phase B's round
//! times are within 2x of phase A's and its RSS stays small.

use std::time::Duration;

use ax_proto::v1 as pb;
use ax_tests::{
    TestDb,
    axd::channel,
    procs::{AxdProcess, DemoWorker},
};
use chrono::{DateTime, Datelike as _, TimeZone as _, Utc};

use crate::{
    DbKind, Report, env, seed,
    stats::{Spread, round1, status_kb},
};

/// Sizes of a scale run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Registered tasks in phase B (smoke: 5,000).
    #[arg(long, default_value_t = 1_000_000)]
    pub tasks: usize,
    /// Tasks that fire (once a minute each) in both phases (smoke: 100).
    #[arg(long, default_value_t = 1_000)]
    pub active: usize,
    /// Seconds each phase is measured, after a warm-up of 10 s (smoke: 4, after 2).
    #[arg(long, default_value_t = 60)]
    pub secs: u64,
}

/// What one phase measured.
struct Phase {
    /// Trigger round durations, ms.
    rounds: Spread,
    /// Largest RSS sample, KiB.
    rss_max: u64,
}

/// Runs a fresh axd and one worker for `warmup + secs`; reads its trigger rounds and RSS.
async fn phase(db: &TestDb, dir: &std::path::Path, name: &str, warmup: u64, secs: u64) -> anyhow::Result<Phase> {
    let log = dir.join(format!("axd-{name}.log"));
    let mut axd = AxdProcess::start(
        &["--listen", "127.0.0.1:0", "--database-url", &db.url, "--log", "warn,ax_scheduler::loops::trigger=debug"],
        &log,
    )
    .await;
    let endpoint = format!("http://{}", axd.addr);
    let worker = DemoWorker::start_with(std::slice::from_ref(&endpoint), "bench", &format!("scale-{name}"), 256, None);
    let pid = axd.child.id().unwrap_or(0);
    tokio::time::sleep(Duration::from_secs(warmup)).await;
    let from = Utc::now();
    let mut rss_max = 0;
    for _ in 0..secs {
        tokio::time::sleep(Duration::from_secs(1)).await;
        rss_max = rss_max.max(status_kb(pid, "VmRSS")?);
    }
    let until = Utc::now();
    drop(worker);
    let _ = axd.terminate().await;
    // "2026-01-01T00:00:00.000000Z DEBUG ax_scheduler::loops::trigger: trigger round tasks=3 created=3 took_us=812"
    let text = std::fs::read_to_string(&log)?;
    let mut rounds: Vec<f64> = text
        .lines()
        .filter(|l| l.contains("trigger round"))
        .filter_map(|l| {
            let at = DateTime::parse_from_rfc3339(l.split_whitespace().next()?).ok()?.with_timezone(&Utc);
            let took: f64 = l.split("took_us=").nth(1)?.split_whitespace().next()?.parse().ok()?;
            (at >= from && at < until).then_some(took / 1000.0)
        })
        .collect();
    anyhow::ensure!(!rounds.is_empty(), "no trigger round logged in phase {name} (see {})", log.display());
    Ok(Phase { rounds: Spread::of(&mut rounds), rss_max })
}

pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    let (tasks, active, secs, warmup) = if smoke { (5_000, 100, 4, 2) } else { (a.tasks, a.active, a.secs, 10) };
    anyhow::ensure!(active >= 1 && active <= tasks, "--active must be between 1 and --tasks");
    let db = TestDb::create(kind.test_db()).await.ok_or_else(|| anyhow::anyhow!("database unavailable"))?;
    let dir = std::env::temp_dir().join(format!("ax-bench-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    // The template task is created through the API; the others are its clones.
    let template = {
        let mut axd = AxdProcess::start(
            &["--listen", "127.0.0.1:0", "--database-url", &db.url, "--log", "warn"],
            &dir.join("axd-setup.log"),
        )
        .await;
        let mut admin =
            pb::admin_service_client::AdminServiceClient::new(channel(&format!("http://{}", axd.addr)).await);
        let cron = pb::CronSchedule { expression: "0 * * * * *".into(), ..Default::default() };
        let spec = pb::TaskSpec {
            name: "scale-0".into(),
            app: "bench".into(),
            handler: "noop".into(),
            schedule: Some(pb::Schedule { kind: Some(pb::schedule::Kind::Cron(cron)) }),
            ..Default::default()
        };
        let t = admin.create_task(pb::CreateTaskRequest { task: Some(spec) }).await?.into_inner().task.expect("task");
        let _ = axd.terminate().await;
        t
    };
    let env = env::detect(kind, &db.url).await?;
    let now = Utc::now();
    let clones = seed::TaskClone::spread_over_minute("scale", active, now);
    seed::clone_tasks(kind, &db.url, template.id, &clones).await?;
    eprintln!("  phase A: {active} tasks");
    let small = phase(&db, &dir, "a", warmup, secs).await?;

    // Idle tasks: a yearly cron whose next fire is next New Year, far outside the run.
    let new_year = Utc.with_ymd_and_hms(Utc::now().year() + 1, 1, 1, 0, 0, 0).single().expect("valid date");
    let registering = std::time::Instant::now();
    for start in (active..tasks).step_by(100_000) {
        let clones: Vec<seed::TaskClone> = (start..(start + 100_000).min(tasks))
            .map(|i| seed::TaskClone {
                name: format!("scale-{i}"),
                cron: Some("0 0 0 1 1 *".into()),
                next_fire_us: new_year.timestamp_micros(),
            })
            .collect();
        seed::clone_tasks(kind, &db.url, template.id, &clones).await?;
        eprintln!("  registered {} tasks ({:.0}s)", start + clones.len(), registering.elapsed().as_secs_f64());
    }
    let register_secs = registering.elapsed().as_secs_f64();
    eprintln!("  phase B: {tasks} tasks");
    let large = phase(&db, &dir, "b", warmup, secs).await?;
    db.cleanup().await;
    crate::remove_run_dir(&dir);

    let mut figures = vec![
        ("active tasks".into(), active.into()),
        ("registered tasks (B)".into(), tasks.into()),
        ("seconds measured per phase".into(), secs.into()),
        ("registering B took s".into(), round1(register_secs)),
    ];
    small.rounds.rows(&format!("A ({active}) round ms"), &mut figures);
    large.rounds.rows(&format!("B ({tasks}) round ms"), &mut figures);
    figures.push(("rounds A / B".into(), format!("{} / {}", small.rounds.n, large.rounds.n).into()));
    figures.push(("round p50 B/A".into(), round1(large.rounds.p50 / small.rounds.p50.max(0.001))));
    figures.push(("round p99 B/A".into(), round1(large.rounds.p99 / small.rounds.p99.max(0.001))));
    figures.push(("axd RSS max MiB A".into(), round1(small.rss_max as f64 / 1024.0)));
    figures.push(("axd RSS max MiB B".into(), round1(large.rss_max as f64 / 1024.0)));
    Ok(Report { scenario: "scale", env, figures })
}
