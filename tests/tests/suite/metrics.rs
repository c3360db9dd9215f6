//! Prometheus metrics (`--metrics-listen`): the values after a scripted run on every backend, the
//! HTTP answers of the endpoint, and README's list and `deploy/prometheus/alerts.yml` checked
//! against the names axd defines.
//!
//! The recorder is global to this test process: each backend's run uses its own app, and asserts
//! exact values only of series labelled with it (histograms without labels are shared: they are
//! asserted to have counts).

use std::{collections::BTreeSet, net::SocketAddr, time::Duration};

use ax_proto::v1::{self as pb, InstanceStatus as S, scheduler_message::Msg as In, worker_message::Msg as Out};
use ax_scheduler::prometheus::{CATALOG, Kind};
use ax_tests::{
    Db, TestDb,
    axd::{Axd, channel},
    client::{RawWorker, create, cron, dur, hello, manual, retries, spec, trigger, wait_status},
    eventually, on_every_backend, on_server_backends,
};
use ax_worker::{Context, HandlerError, Worker};
use sqlx::Connection as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const LONG: Duration = Duration::from_secs(30);

/// One HTTP/1.1 request: (status line, body).
async fn http(addr: SocketAddr, method: &str, path: &str) -> (String, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect to /metrics");
    let req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: ax-tests\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read the answer");
    let (head, body) = out.split_once("\r\n\r\n").expect("head and body");
    (head.lines().next().unwrap_or_default().to_owned(), body.to_owned())
}

/// A GET of /metrics naming `host` as its Host: the status line.
async fn get_as(addr: SocketAddr, host: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect to /metrics");
    let req = format!("GET /metrics HTTP/1.1\r\nHost: {host}\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read the answer");
    out.lines().next().unwrap_or_default().to_owned()
}

async fn scrape(addr: SocketAddr) -> String {
    let (status, body) = http(addr, "GET", "/metrics").await;
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    body
}

/// The value of the series written exactly as `series` (name and labels), if present.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

async fn a_scripted_run_shows_exact_counters_gauges_and_histograms(db: &TestDb) {
    let app = format!("metrics-{:?}", db.db).to_lowercase();
    let axd = Axd::start(db, |o| o.metrics_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)))).await;
    let addr = axd.running.metrics_addr.expect("metrics are served");
    // A loopback port answers this machine's names only: a page under DNS rebinding reads nothing.
    let port = addr.port();
    assert_eq!(get_as(addr, &format!("rebind.evil:{port}")).await, "HTTP/1.1 403 Forbidden");
    assert_eq!(get_as(addr, &format!("localhost:{}", port.wrapping_add(1))).await, "HTTP/1.1 403 Forbidden");
    assert_eq!(get_as(addr, &format!("localhost:{port}")).await, "HTTP/1.1 200 OK");
    let mut admin = axd.admin().await;
    create(&mut admin, spec("ok", &app, "ok", manual())).await;
    let mut bad = spec("bad", &app, "fail", manual());
    bad.retry_policy = Some(retries(1, Duration::from_millis(50)));
    create(&mut admin, bad).await;
    let mut slow = spec("slow", &app, "slow", manual());
    slow.timeout = Some(dur(Duration::from_secs(1)));
    create(&mut admin, slow).await;
    let mut ok = Vec::new();
    for i in 0..3 {
        ok.push(trigger(&mut admin, "ok", &format!("k{i}")).await);
    }
    let failing = trigger(&mut admin, "bad", "k").await;
    let slow = trigger(&mut admin, "slow", "k").await;

    // No worker yet: the five wait in PENDING, read from the database by a scrape (one reading
    // serves the scrapes of the next 5 s: the one above may still be shown).
    let pending = format!("ax_pending_instances{{app=\"{app}\"}}");
    let text = eventually(LONG, "the backlog of five", || async {
        let text = scrape(addr).await;
        (value(&text, &pending) == Some(5.0)).then_some(text)
    })
    .await;
    let created = format!("ax_instances_created_total{{app=\"{app}\",status=\"PENDING\"}}");
    assert_eq!(value(&text, &created), Some(5.0), "{text}");
    for role in ["admin", "trigger", "dispatch", "workers", "sweeper", "metrics"] {
        let max = value(&text, &format!("ax_db_pool_connections_max{{role=\"{role}\"}}"));
        assert!(max.is_some_and(|m| m >= 1.0), "pool {role}: {text}");
        assert!(value(&text, &format!("ax_db_pool_connections_in_use{{role=\"{role}\"}}")).is_some(), "{text}");
    }
    assert!(text.contains("# TYPE ax_instances_created_total counter\n"), "{text}");

    let worker = Worker::builder()
        .endpoint(&axd.endpoint)
        .app(&app)
        .worker_id("mw")
        .capacity(2)
        .shutdown_deadline(Duration::from_secs(2))
        .handler("ok", |_ctx: Context| async move { Ok::<_, HandlerError>(()) })
        .handler("fail", |_ctx: Context| async move { Err::<(), _>(HandlerError::retryable("boom")) })
        .handler("slow", |ctx: Context| async move {
            ctx.cancellation().cancelled().await;
            Err::<(), _>(HandlerError::retryable("canceled"))
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let w = tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    for id in ok {
        wait_status(&mut admin, id, S::Success, LONG).await;
    }
    let failed = wait_status(&mut admin, failing, S::Failed, LONG).await;
    assert_eq!(failed.attempt, 2, "one retry, then FAILED");
    wait_status(&mut admin, slow, S::Timeout, LONG).await;

    // Counters are recorded just after their transaction commits: wait for the last one, then
    // every other value is exact.
    let finished = |s: &str| format!("ax_instances_finished_total{{app=\"{app}\",status=\"{s}\"}}");
    let text = eventually(LONG, "the finished counters, the idle worker and no backlog", || async {
        let text = scrape(addr).await;
        let idle = value(&text, &format!("ax_worker_credits_in_use{{app=\"{app}\"}}")) == Some(0.0);
        let done = [("SUCCESS", 3.0), ("FAILED", 1.0), ("TIMEOUT", 1.0)];
        let drained = value(&text, &pending) == Some(0.0);
        (done.iter().all(|(s, n)| value(&text, &finished(s)) == Some(*n)) && idle && drained).then_some(text)
    })
    .await;
    assert_eq!(value(&text, &finished("CANCELED")), None, "no such series: {text}");
    assert_eq!(value(&text, &format!("ax_instance_timeouts_total{{app=\"{app}\"}}")), Some(1.0), "{text}");
    assert_eq!(value(&text, &format!("ax_instance_retries_total{{app=\"{app}\"}}")), Some(1.0), "{text}");
    assert_eq!(value(&text, &pending), Some(0.0), "{text}");
    assert_eq!(value(&text, &created), Some(5.0), "a retry creates nothing: {text}");
    assert_eq!(value(&text, &format!("ax_worker_streams{{app=\"{app}\"}}")), Some(1.0), "{text}");
    assert_eq!(value(&text, &format!("ax_worker_credits_granted{{app=\"{app}\"}}")), Some(2.0), "{text}");
    // 5 first attempts started, 6 attempts dispatched (other backends' runs may add to these).
    assert!(value(&text, "ax_fire_lag_seconds_count").is_some_and(|n| n >= 5.0), "{text}");
    assert!(value(&text, "ax_dispatch_lag_seconds_count").is_some_and(|n| n >= 6.0), "{text}");
    assert!(value(&text, "ax_dispatch_lag_seconds_bucket{le=\"+Inf\"}").is_some_and(|n| n >= 6.0), "{text}");
    for l in ["trigger", "dispatch", "sweeper", "heartbeat", "alerts"] {
        let rounds = value(&text, &format!("ax_loop_round_duration_seconds_count{{loop=\"{l}\"}}"));
        assert!(rounds.is_some_and(|n| n >= 1.0), "{l} rounds: {text}");
    }
    let waits = value(&text, "ax_db_pool_wait_seconds_count{role=\"workers\"}");
    assert!(waits.is_some_and(|n| n >= 1.0), "{text}");

    let _ = stop.send(());
    w.await.expect("join").expect("worker");
    // The stream is gone: its app reads 0, not its last value.
    let text = eventually(LONG, "the stream to go", || async {
        let text = scrape(addr).await;
        (value(&text, &format!("ax_worker_streams{{app=\"{app}\"}}")) == Some(0.0)).then_some(text)
    })
    .await;
    assert_eq!(value(&text, &format!("ax_worker_credits_granted{{app=\"{app}\"}}")), Some(0.0), "{text}");
    axd.stop().await;
}

on_every_backend!(a_scripted_run_shows_exact_counters_gauges_and_histograms);

/// The backlog is read on a connection of its own (issue 33, item 8): while the admin pool's only
/// connection waits on a lock for an UpdateTask, a scrape still reads the PENDING backlog.
async fn a_scrape_reads_the_backlog_while_every_admin_connection_is_busy(db: &TestDb) {
    let axd = Axd::start(db, |o| {
        o.metrics_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
        o.db_pool_admin = Some(1);
    })
    .await;
    let addr = axd.running.metrics_addr.expect("metrics are served");
    let mut admin = axd.admin().await;
    create(&mut admin, spec("held", "busy-pool", "run", manual())).await;
    for n in 0..3 {
        trigger(&mut admin, "held", &format!("k{n}")).await;
    }
    // Another transaction holds the task's row: UpdateTask waits for it on the admin connection.
    let lock = ["BEGIN", "SELECT id FROM ax_task WHERE name = 'held' FOR UPDATE"];
    let holder = match db.db {
        Db::Postgres => {
            let mut c = sqlx::PgConnection::connect(&db.url).await.expect("connect");
            for sql in lock {
                sqlx::raw_sql(sql).execute(&mut c).await.expect("lock");
            }
            Ok(c)
        }
        _ => {
            let mut c = sqlx::MySqlConnection::connect(&db.url).await.expect("connect");
            for sql in lock {
                sqlx::raw_sql(sql).execute(&mut c).await.expect("lock");
            }
            Err(c)
        }
    };
    let update = {
        let mut c = admin.clone();
        tokio::spawn(async move {
            let task = pb::TaskSpec { description: "changed".into(), ..Default::default() };
            let mask = prost_types::FieldMask { paths: vec!["description".into()] };
            c.update_task(pb::UpdateTaskRequest { name: "held".into(), task: Some(task), update_mask: Some(mask) })
                .await
        })
    };
    let waiting = match db.db {
        Db::Postgres => {
            "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = 'axd'"
        }
        _ => "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'",
    };
    eventually(LONG, "UpdateTask waiting on the lock", || async { (db.scalar(waiting).await >= 1).then_some(()) })
        .await;
    let text = scrape(addr).await;
    assert_eq!(value(&text, "ax_db_pool_connections_in_use{role=\"admin\"}"), Some(1.0), "admin pool busy: {text}");
    assert_eq!(value(&text, "ax_pending_instances{app=\"busy-pool\"}"), Some(3.0), "{text}");
    match holder {
        Ok(mut c) => sqlx::raw_sql("COMMIT").execute(&mut c).await.map(|_| ()),
        Err(mut c) => sqlx::raw_sql("COMMIT").execute(&mut c).await.map(|_| ()),
    }
    .expect("release the lock");
    update.await.expect("join").expect("UpdateTask once the lock is released");
    axd.stop().await;
}

mod busy_admin_pool {
    use super::*;
    on_server_backends!(a_scrape_reads_the_backlog_while_every_admin_connection_is_busy);
}

/// A worker that accepts an attempt and vanishes: once its lease and grace are over, the attempt
/// fails as "worker lost", which counts in `ax_instance_workers_lost_total` and as finished FAILED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_worker_counts_once() {
    let Some(db) = TestDb::create(ax_tests::Db::Sqlite).await else { return };
    let app = "metrics-lost";
    let axd = Axd::start(&db, |o| o.metrics_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)))).await;
    let addr = axd.running.metrics_addr.expect("metrics are served");
    let mut admin = axd.admin().await;
    create(&mut admin, spec("lost", app, "h", manual())).await;
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello(app, "gone", "h", 1, 1)).await.expect("connect");
    let id = trigger(&mut admin, "lost", "k").await;
    let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: a.attempt })).await;
    wait_status(&mut admin, id, S::Running, LONG).await;
    drop(w);
    wait_status(&mut admin, id, S::Failed, LONG).await;
    let lost = format!("ax_instance_workers_lost_total{{app=\"{app}\"}}");
    let text = eventually(LONG, "the lost worker to be counted", || async {
        let text = scrape(addr).await;
        value(&text, &lost).is_some().then_some(text)
    })
    .await;
    assert_eq!(value(&text, &lost), Some(1.0), "{text}");
    let failed = format!("ax_instances_finished_total{{app=\"{app}\",status=\"FAILED\"}}");
    assert_eq!(value(&text, &failed), Some(1.0), "{text}");
    axd.stop().await;
    db.cleanup().await;
}

#[tokio::test]
async fn the_endpoint_answers_only_get_metrics() {
    let Some(db) = TestDb::create(ax_tests::Db::Sqlite).await else { return };
    let axd = Axd::start(&db, |o| o.metrics_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)))).await;
    let addr = axd.running.metrics_addr.expect("metrics are served");
    assert_eq!(http(addr, "GET", "/other").await.0, "HTTP/1.1 404 Not Found");
    assert_eq!(http(addr, "POST", "/metrics").await.0, "HTTP/1.1 405 Method Not Allowed");
    let (status, body) = http(addr, "GET", "/metrics?x=1").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains("# HELP ax_db_pool_connections_max "), "{body}");
    // A client that never finishes its request head does not hold the endpoint: others are answered.
    let _silent = tokio::net::TcpStream::connect(addr).await.expect("connect");
    assert_eq!(http(addr, "GET", "/metrics").await.0, "HTTP/1.1 200 OK");
    axd.stop().await;
    db.cleanup().await;
}

/// A per-second task whose fires went unserved for longer than its misfire threshold (axd was
/// down) counts one misfire, with the policy's action, when axd is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missed_fires_count_as_one_misfire_with_the_policy_action() {
    let Some(db) = TestDb::create(ax_tests::Db::Sqlite).await else { return };
    let app = "metrics-misfire";
    let axd = Axd::start(&db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("tick", app, "h", cron("* * * * * *"));
    s.misfire_policy = pb::MisfirePolicy::Skip as i32;
    s.misfire_threshold = Some(dur(Duration::from_secs(1)));
    create(&mut admin, s).await;
    axd.stop().await;
    // Down for over the threshold past the next fire (no clock to inject across a restart).
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let axd = Axd::start(&db, |o| o.metrics_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)))).await;
    let addr = axd.running.metrics_addr.expect("metrics are served");
    let series = format!("ax_misfires_total{{app=\"{app}\",action=\"skipped\"}}");
    let text = eventually(LONG, "the misfire to be counted", || async {
        let text = scrape(addr).await;
        value(&text, &series).is_some().then_some(text)
    })
    .await;
    assert_eq!(value(&text, &series), Some(1.0), "{text}");
    assert!(!text.contains(&format!("ax_misfires_total{{app=\"{app}\",action=\"catch_up\"}}")), "{text}");
    axd.stop().await;
    db.cleanup().await;
}

fn repo_file(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// README "Metrics" lists every metric axd defines, with its type and labels, and nothing else.
#[test]
fn readme_lists_every_metric_with_its_labels() {
    let readme = repo_file("README.md");
    let section = readme.split("\n## Metrics\n").nth(1).expect("README has a Metrics section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut listed = BTreeSet::new();
    for row in section.lines().filter(|l| l.starts_with("| `ax_")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`');
        let m = CATALOG.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("README lists unknown {name}"));
        let kind = match m.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        };
        assert_eq!(cells[2], kind, "{name}'s type");
        let labels: Vec<&str> =
            cells[3].split(',').map(|l| l.trim().trim_matches('`')).filter(|l| !l.is_empty()).collect();
        let labels: Vec<&str> = labels.into_iter().filter(|l| *l != "—").collect();
        assert_eq!(labels, m.labels, "{name}'s labels");
        listed.insert(name.to_owned());
    }
    let defined: BTreeSet<String> = CATALOG.iter().map(|m| m.name.to_owned()).collect();
    assert_eq!(listed, defined, "README lists exactly the metrics axd defines");
}

/// Every `expr` of the example alert rules uses only metrics axd defines (a histogram through its
/// `_bucket`, `_sum` or `_count` series), and every rule has the fields Prometheus requires.
#[test]
fn example_alert_rules_use_only_defined_metrics() {
    let yml = repo_file("deploy/prometheus/alerts.yml");
    assert!(yml.starts_with("groups:\n") || yml.lines().any(|l| l == "groups:"), "a rule file starts with groups");
    let known = |name: &str| {
        CATALOG.iter().any(|m| match m.kind {
            Kind::Histogram => ["_bucket", "_sum", "_count"].iter().any(|s| name == format!("{}{s}", m.name)),
            _ => name == m.name,
        })
    };
    let (mut rules, mut exprs) = (0, 0);
    let mut thresholds = Vec::new();
    for line in yml.lines().map(str::trim) {
        if line.starts_with("- alert:") {
            rules += 1;
        }
        let Some(expr) = line.strip_prefix("expr:") else { continue };
        exprs += 1;
        let bytes = expr.as_bytes();
        let mut i = 0;
        while let Some(at) = expr[i..].find("ax_") {
            let start = i + at;
            let end =
                expr[start..].find(|c: char| !(c.is_ascii_lowercase() || c == '_')).map_or(expr.len(), |n| start + n);
            let name = &expr[start..end];
            assert!(start == 0 || !bytes[start - 1].is_ascii_alphanumeric(), "{expr}");
            assert!(known(name), "alerts.yml uses {name}, which axd does not define: {expr}");
            i = end;
        }
        thresholds.push(expr.to_owned());
    }
    assert!(rules >= 4 && rules == exprs, "{rules} rules, {exprs} exprs");
    assert_eq!(yml.matches("for:").count(), rules, "every rule says how long it must hold");
    assert!(thresholds.iter().any(|e| e.contains("ax_pending_instances") && e.contains("> 500")), "the backlog rule");
    assert!(thresholds.iter().any(|e| e.contains("ax_db_pool_connections_in_use")), "the busy connections rule");
}
