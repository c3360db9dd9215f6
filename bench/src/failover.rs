//! failover: how long a worker goes without work when the axd holding its stream is killed.
//!
//! Three axd share the database and one worker (knowing all three endpoints) runs an endless supply
//! of short instances. Each round kills -9 the axd holding the worker's stream, then measures the
//! time until the worker starts its next execution (assigned by another axd), and restarts the
//! killed axd on the same port.

use std::{
    io::{BufRead, Seek},
    path::Path,
    time::{Duration, Instant},
};

use ax_proto::v1 as pb;
use ax_tests::{
    TestDb,
    axd::channel,
    procs::{AxdProcess, DemoWorker},
    proxy::free_port,
};

use crate::{DbKind, Report, env, seed};

/// Sizes of a failover run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Kills to measure (smoke: 3).
    #[arg(long, default_value_t = 20)]
    pub kills: usize,
}

/// Reads the start times appended to an execution log since the last call.
struct Tail {
    file: std::io::BufReader<std::fs::File>,
}

impl Tail {
    fn open(path: &Path) -> anyhow::Result<Tail> {
        let mut f = std::fs::OpenOptions::new().create(true).append(true).read(true).open(path)?;
        f.seek(std::io::SeekFrom::End(0))?;
        Ok(Tail { file: std::io::BufReader::new(f) })
    }

    /// The first execution start after `after` among new lines, if any.
    fn first_start_after(&mut self, after: chrono::DateTime<chrono::Utc>) -> Option<chrono::DateTime<chrono::Utc>> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.file.read_line(&mut line).ok()? == 0 || !line.ends_with('\n') {
                return None;
            }
            let v: serde_json::Value = serde_json::from_str(&line).ok()?;
            if v["event"] == "start" {
                let at = chrono::DateTime::parse_from_rfc3339(v["at"].as_str()?).ok()?.with_timezone(&chrono::Utc);
                if at > after {
                    return Some(at);
                }
            }
        }
    }
}

pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    let kills = if smoke { 3 } else { a.kills };
    let db = TestDb::create(kind.test_db()).await.ok_or_else(|| anyhow::anyhow!("database unavailable"))?;
    let dir = std::env::temp_dir().join(format!("ax-bench-failover-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let endpoints: Vec<String> = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();
    let args = |i: usize| -> Vec<String> {
        ["--listen", &format!("127.0.0.1:{}", ports[i]), "--database-url", &db.url, "--log", "warn"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let start = |i: usize, n: usize| {
        let a = args(i);
        let log = dir.join(format!("axd{i}-{n}.log"));
        async move {
            let v: Vec<&str> = a.iter().map(String::as_str).collect();
            AxdProcess::start(&v, &log).await
        }
    };
    let mut axds = Vec::new();
    for i in 0..3 {
        axds.push(start(i, 0).await);
    }
    let mut admin = pb::admin_service_client::AdminServiceClient::new(channel(&endpoints[0]).await);
    let spec = pb::TaskSpec {
        name: "failover".into(),
        app: "bench".into(),
        handler: "sleep".into(),
        schedule: Some(pb::Schedule { kind: Some(pb::schedule::Kind::Manual(pb::ManualSchedule {})) }),
        ..Default::default()
    };
    let task = admin.create_task(pb::CreateTaskRequest { task: Some(spec) }).await?.into_inner().task.expect("task");
    let env = env::detect(kind, &db.url).await?;
    // Enough short instances to keep the worker busy through every kill.
    let supply = if smoke { 20_000 } else { 100_000 };
    let seeded = Instant::now();
    seed::pending_instances(
        kind,
        &db.url,
        task.id,
        "failover",
        "bench",
        "sleep",
        r#"{"ms": 5}"#,
        supply,
        chrono::Utc::now().timestamp_micros(),
    )
    .await?;
    eprintln!("  seeded {supply} instances in {:.1}s", seeded.elapsed().as_secs_f64());
    let log = dir.join("exec.jsonl");
    let mut tail = Tail::open(&log)?;
    let _worker = DemoWorker::start(&endpoints, "bench", "failover-worker", 4, &log);
    let mut lags = Vec::with_capacity(kills);
    let run = Instant::now();
    for k in 0..kills {
        // Find the axd holding the worker's stream (from any axd that answers).
        let holder = loop {
            let pids: Vec<String> = axds.iter().map(|x: &AxdProcess| x.child.id().unwrap_or(0).to_string()).collect();
            let mut found = None;
            for e in &endpoints {
                let Ok(ch) = tonic::transport::Endpoint::from_shared(e.clone())?.connect().await else { continue };
                let mut a = pb::admin_service_client::AdminServiceClient::new(ch);
                if let Ok(r) = a.list_workers(pb::ListWorkersRequest::default()).await {
                    // Scheduler ids are <host>-<pid>-<suffix>.
                    found =
                        r.into_inner().workers.iter().find_map(|w| {
                            pids.iter().position(|p| w.scheduler_id.rsplit('-').nth(1) == Some(p.as_str()))
                        });
                    break;
                }
            }
            if let Some(h) = found {
                break h;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        // Let work flow on the current stream first.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let killed_at = chrono::Utc::now();
        let t0 = Instant::now();
        axds[holder].kill_hard().await;
        let deadline = t0 + Duration::from_secs(30);
        let next = loop {
            if let Some(at) = tail.first_start_after(killed_at) {
                break at;
            }
            anyhow::ensure!(Instant::now() < deadline, "no execution within 30 s of kill {k}");
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let lag = (next - killed_at).num_microseconds().unwrap_or(0) as f64 / 1000.0;
        eprintln!(
            "  kill {}: axd {holder} killed; next assignment after {lag:.1} ms ({:.1}s into the run)",
            k + 1,
            run.elapsed().as_secs_f64()
        );
        lags.push(lag);
        axds[holder] = start(holder, k + 1).await;
    }
    drop(axds);
    db.cleanup().await;
    crate::remove_run_dir(&dir);
    lags.sort_by(f64::total_cmp);
    let pct = |p: f64| lags[((lags.len() as f64 - 1.0) * p).round() as usize];
    Ok(Report {
        scenario: "failover",
        env,
        figures: vec![
            ("kills".into(), kills.into()),
            ("failover ms p50".into(), serde_json::json!((pct(0.5) * 10.0).round() / 10.0)),
            ("failover ms p99".into(), serde_json::json!((pct(0.99) * 10.0).round() / 10.0)),
            ("failover ms max".into(), serde_json::json!((pct(1.0) * 10.0).round() / 10.0)),
        ],
    })
}
