//! `axctl instance logs ID --follow` against a real axd and an SDK worker whose handler logs lines
//! when the test says so: lines logged after the follow started are printed as they arrive, the
//! command exits 0 once the instance is final, an unknown instance is an error, an outage shorter
//! than `--reconnect-for` is ridden out without losing or repeating a line, and a longer one ends
//! the follow with an error instead of waiting forever.

use std::{process::Stdio, sync::Arc, time::Duration};

use ax_proto::v1::InstanceStatus as S;
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{create, manual, spec, trigger, wait_status},
    procs::{axctl, bin},
    proxy::Proxy,
};
use ax_worker::{Context, HandlerError, Level, Worker};
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt as _, BufReader, Lines},
    process::{Child, ChildStderr, ChildStdout},
    sync::{Mutex, mpsc},
};

const LONG: Duration = Duration::from_secs(20);

/// A follower process and its stdout, line by line.
struct Follower {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    errors: Lines<BufReader<ChildStderr>>,
}

impl Follower {
    fn start(endpoint: &str, id: i64, extra: &[&str]) -> Follower {
        let mut child = tokio::process::Command::new(bin("axctl"))
            .args(["--endpoint", endpoint, "-o", "json", "instance", "logs", &id.to_string(), "--follow"])
            .args(["--interval", "100ms"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start axctl");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let errors = BufReader::new(child.stderr.take().expect("stderr")).lines();
        Follower { child, lines, errors }
    }

    /// Waits for a line on stderr containing `what`; the line.
    async fn said(&mut self, what: &str) -> String {
        loop {
            let line = tokio::time::timeout(LONG, self.errors.next_line())
                .await
                .unwrap_or_else(|_| panic!("no {what:?} on stderr within the deadline"))
                .expect("read stderr")
                .unwrap_or_else(|| panic!("stderr ended before {what:?}"));
            if line.contains(what) {
                return line;
            }
        }
    }

    /// The next line the follower printed, parsed as one JSON object.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(LONG, self.lines.next_line())
            .await
            .expect("a line within the deadline")
            .expect("read stdout")
            .expect("stdout ended early");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not one JSON object per line ({e}): {line}"))
    }

    /// Waits for the exit; its code, what is left on stdout, and stderr.
    async fn exit(mut self) -> (i32, String, String) {
        let mut rest = String::new();
        while let Some(line) = tokio::time::timeout(LONG, self.lines.next_line()).await.expect("eof").expect("read") {
            rest.push_str(&line);
            rest.push('\n');
        }
        let status = tokio::time::timeout(LONG, self.child.wait()).await.expect("exits").expect("wait");
        let mut stderr = String::new();
        while let Some(line) = self.errors.next_line().await.expect("read stderr") {
            stderr.push_str(&line);
            stderr.push('\n');
        }
        (status.code().unwrap_or(-1), rest, stderr)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn following_logs_prints_lines_as_they_arrive_and_ends_with_the_instance() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |_| {}).await;
    let mut admin = axd.admin().await;
    // The handler logs line 1, then one more line each time the test sends on `go`, and returns
    // when `go` closes.
    let (go, steps) = mpsc::channel::<()>(1);
    let steps = Arc::new(Mutex::new(steps));
    let worker = Worker::builder()
        .endpoint(&axd.endpoint)
        .app("follow")
        .worker_id("talker")
        .handler("talk", move |ctx: Context| {
            let steps = steps.clone();
            async move {
                ctx.log(Level::Info, "line 1");
                let mut steps = steps.lock().await;
                let mut n = 1;
                while steps.recv().await.is_some() {
                    n += 1;
                    ctx.log(Level::Warn, format!("line {n}"));
                }
                Ok::<_, HandlerError>("done")
            }
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    create(&mut admin, spec("talk", "follow", "talk", manual())).await;
    let id = trigger(&mut admin, "talk", "follow-1").await;
    wait_status(&mut admin, id, S::Running, LONG).await;

    let mut follower = Follower::start(&axd.endpoint, id, &[]);
    let first = follower.next().await;
    assert_eq!(first["message"], "line 1", "{first}");
    assert_eq!(first["level"], "INFO");
    assert_eq!(first["attempt"], 1);
    // Each further line is logged only after the follower printed the one before: it can only
    // have been read by following.
    let mut last_seq = first["seq"].as_i64().expect("seq");
    for n in 2..=3 {
        go.send(()).await.expect("handler waiting");
        let line = follower.next().await;
        assert_eq!(line["message"], format!("line {n}"), "{line}");
        assert_eq!(line["level"], "WARN");
        let seq = line["seq"].as_i64().expect("seq");
        assert!(seq > last_seq, "sequence numbers increase: {seq} after {last_seq}");
        last_seq = seq;
    }
    // The handler returns; the instance ends SUCCESS and the follower with it, printing nothing more.
    drop(go);
    let (code, rest, stderr) = follower.exit().await;
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(rest, "", "nothing after the last line");
    wait_status(&mut admin, id, S::Success, LONG).await;

    // A final instance: everything at once, then exit 0 straight away.
    let (code, all, stderr) = Follower::start(&axd.endpoint, id, &[]).exit().await;
    assert_eq!(code, 0, "stderr: {stderr}");
    let messages: Vec<String> = all
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json line")["message"].as_str().expect("text").to_owned())
        .collect();
    assert_eq!(messages, ["line 1", "line 2", "line 3"]);

    // An unknown instance is an error naming it, not an endless wait.
    let endpoint = axd.endpoint.clone();
    let unknown = axctl(&[], &["--endpoint", &endpoint, "instance", "logs", "999999", "--follow"]).await;
    assert_eq!(unknown.code, 1, "{unknown:?}");
    assert!(unknown.stderr.contains("NotFound") && unknown.stderr.contains("999999"), "{}", unknown.stderr);

    let _ = stop.send(());
    let _ = worker.await;
    axd.stop().await;
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn following_stops_with_an_error_when_axd_stays_away_past_reconnect_for() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |_| {}).await;
    let mut admin = axd.admin().await;
    // A handler that logs once and then runs until it is canceled or the worker stops.
    let worker = Worker::builder()
        .endpoint(&axd.endpoint)
        .app("follow")
        .worker_id("stuck")
        .shutdown_deadline(Duration::from_millis(200))
        .handler("stuck", |ctx: Context| async move {
            ctx.log(Level::Info, "started");
            std::future::pending::<()>().await;
            Ok::<_, HandlerError>("never")
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    create(&mut admin, spec("stuck", "follow", "stuck", manual())).await;
    let id = trigger(&mut admin, "stuck", "stuck-1").await;
    wait_status(&mut admin, id, S::Running, LONG).await;
    let mut follower = Follower::start(&axd.endpoint, id, &["--reconnect-for", "1s"]);
    assert_eq!(follower.next().await["message"], "started");

    let _ = stop.send(());
    let _ = worker.await;
    axd.stop().await;
    let started = tokio::time::Instant::now();
    let (code, rest, stderr) = follower.exit().await;
    assert_eq!(code, 1, "stdout: {rest} stderr: {stderr}");
    assert!(stderr.contains("retrying for 1s"), "{stderr}");
    assert!(stderr.contains("error: lost http://127.0.0.1:") && stderr.contains("for 1s"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(15), "gave up after {:?}", started.elapsed());
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn following_rides_out_an_outage_shorter_than_reconnect_for_without_losing_a_line() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |_| {}).await;
    let mut admin = axd.admin().await;
    // The follower reaches axd through a proxy the test takes down; the worker connects directly.
    let proxy = Proxy::start(axd.running.addr).await;
    let (go, steps) = mpsc::channel::<()>(1);
    let steps = Arc::new(Mutex::new(steps));
    let worker = Worker::builder()
        .endpoint(&axd.endpoint)
        .app("follow")
        .worker_id("outage")
        .handler("outage", move |ctx: Context| {
            let steps = steps.clone();
            async move {
                ctx.log(Level::Info, "before");
                let mut steps = steps.lock().await;
                while steps.recv().await.is_some() {
                    ctx.log(Level::Info, "during");
                }
                Ok::<_, HandlerError>("done")
            }
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    create(&mut admin, spec("outage", "follow", "outage", manual())).await;
    let id = trigger(&mut admin, "outage", "outage-1").await;
    wait_status(&mut admin, id, S::Running, LONG).await;
    let via_proxy = format!("http://{}", proxy.addr);
    let mut follower = Follower::start(&via_proxy, id, &["--reconnect-for", "30s"]);
    assert_eq!(follower.next().await["message"], "before");

    proxy.down().await;
    let lost = follower.said("retrying for 30s").await;
    assert!(lost.contains(&format!("lost {via_proxy}")), "{lost}");
    // A line stored while the follower cannot reach axd.
    go.send(()).await.expect("handler waiting");
    ax_tests::eventually(LONG, "the second line stored", || {
        let mut admin = admin.clone();
        async move {
            let request = ax_proto::v1::GetInstanceLogsRequest { id, after_seq: 0, limit: 0 };
            let lines = admin.get_instance_logs(request).await.expect("logs").into_inner().lines;
            (lines.len() == 2).then_some(())
        }
    })
    .await;
    proxy.up();
    let during = follower.next().await;
    assert_eq!(during["message"], "during", "the line logged during the outage, and not `before` again: {during}");
    follower.said("again; following").await;
    drop(go);
    let (code, rest, stderr) = follower.exit().await;
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(rest, "", "no line repeated or added");

    let _ = stop.send(());
    let _ = worker.await;
    axd.stop().await;
    db.cleanup().await;
}
