//! The Python SDK (sdks/python) against a real axd (SQLite): the example worker of
//! examples/python-worker, built on it, runs tasks.
//!
//! Besides the happy path, the worker's side of liveness and leases: it leaves an axd that went
//! silent for another endpoint and keeps its attempt, stops its handlers before their lease runs out
//! when it is cut off from every axd (and reports them late once it is back), and rejects an
//! assignment it reads after the fence margin before its accept-by time.
//!
//! Needs python3 with the packages of sdks/python/requirements.txt. Without them the test
//! fails and says how to install them; outside CI, `AX_SKIP_PYTHON_TESTS=1` turns that into a skip.
//! `PYTHON` names another interpreter than `python3`.

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_scheduler::config::HumanDuration;
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{
        create, event_time, get, instance_of, manual, once_after, retries, spec, steps, trigger_with, utc,
        wait_renewed, wait_status,
    },
    eventually,
    procs::{Execution, executions, executions_in},
    proxy::Proxy,
};

const LONG: Duration = Duration::from_secs(30);

/// The repository root (this crate is `<root>/tests`).
fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn may_skip() -> bool {
    std::env::var("CI").map(|v| v != "true" && v != "1").unwrap_or(true)
        && std::env::var("AX_SKIP_PYTHON_TESTS").is_ok_and(|v| v == "1")
}

/// Whether python3 with grpcio and protobuf is available; fails the test (or skips it, when
/// allowed) with the install instructions otherwise.
fn python_ready() -> bool {
    let probe = Command::new(python()).args(["-c", "import grpc, google.protobuf"]).output();
    let why = match probe {
        Ok(o) if o.status.success() => return true,
        // The last line of the traceback, e.g. "ModuleNotFoundError: No module named 'grpc'".
        Ok(o) => String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or_default().to_owned(),
        Err(e) => format!("cannot run {}: {e}", python()),
    };
    let reqs = repo_root().join("sdks/python/requirements.txt");
    if may_skip() {
        ax_tests::skip(&format!(
            "the Python worker test needs python3 with grpcio and protobuf ({why}) and AX_SKIP_PYTHON_TESTS=1"
        ));
        return false;
    }
    panic!(
        "the Python worker test needs python3 with grpcio and protobuf ({why}). Install them \
         with `{} -m pip install -r {}`, or set AX_SKIP_PYTHON_TESTS=1 outside CI to skip",
        python(),
        reqs.display()
    );
}

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(prefix: &str) -> TempDir {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{nanos:x}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The Python worker process. Dropping it kills the process (also when the test panics), and on
/// a panic prints its log so the failure can be understood.
struct PythonWorker {
    child: Child,
    log: PathBuf,
    /// Its `--exec-log`: one JSON line when a handler starts and one when it returns, written by
    /// the worker itself (read with `ax_tests::procs::executions`).
    exec_log: PathBuf,
}

impl PythonWorker {
    /// Starts worker.py for the app `py` with `--endpoint` for each of `endpoints` (host:port), its
    /// log and execution log in `dir`.
    fn start(endpoints: &[String], worker_id: &str, dir: &Path) -> PythonWorker {
        let log = dir.join(format!("{worker_id}.log"));
        let exec_log = dir.join(format!("{worker_id}.exec.jsonl"));
        let out = File::create(&log).expect("worker log file");
        let err = out.try_clone().expect("worker log file");
        let mut cmd = Command::new(python());
        cmd.arg(repo_root().join("examples/python-worker/worker.py"));
        for e in endpoints {
            cmd.args(["--endpoint", e]);
        }
        let child = cmd
            .args(["--app", "py", "--worker-id", worker_id])
            .arg("--exec-log")
            .arg(&exec_log)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("start the Python worker");
        PythonWorker { child, log, exec_log }
    }

    /// Sends `kill -SIG` to the process this test started, by its PID.
    fn signal(&self, sig: &str) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args([&format!("-{sig}"), &pid]).status().expect("run kill");
        assert!(status.success(), "kill -{sig} {pid} failed");
    }

    /// Sends SIGTERM to the process.
    fn terminate(&self) {
        self.signal("TERM");
    }

    /// SIGSTOP: the whole process freezes; its connections stay open and nothing is read.
    fn freeze(&self) {
        self.signal("STOP");
    }

    /// SIGCONT after [`PythonWorker::freeze`].
    fn thaw(&self) {
        self.signal("CONT");
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// What its handlers ran, by its own record.
    fn executions(&self) -> Vec<Execution> {
        executions(&self.exec_log)
    }
}

impl Drop for PythonWorker {
    fn drop(&mut self) {
        // Still running (not yet reaped, so the PID is its own): SIGCONT in case the test stopped
        // it, then SIGKILL. If it already exited this only reaps it.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = Command::new("kill").args(["-CONT", &self.child.id().to_string()]).status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!(
                "--- Python worker log ({}) ---\n{}--- end of Python worker log ---",
                self.log.display(),
                self.log_text()
            );
        }
    }
}

async fn workers(
    admin: &mut pb::admin_service_client::AdminServiceClient<tonic::transport::Channel>,
) -> Vec<pb::WorkerSession> {
    admin.list_workers(pb::ListWorkersRequest::default()).await.expect("list workers").into_inner().workers
}

fn step(from: &str, to: &str, attempt: u32) -> (String, String, u32) {
    (from.to_owned(), to.to_owned(), attempt)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_worker_generated_from_the_proto_runs_tasks_and_shuts_down_cleanly() {
    if !python_ready() {
        return;
    }
    let tmp = TempDir::new("ax-python-worker");

    let Some(db) = TestDb::create(Db::Sqlite).await else {
        return;
    };
    let axd = Axd::start(&db, |o| {
        let ms = |n| Some(ax_scheduler::config::HumanDuration(Duration::from_millis(n)));
        o.trigger_lookahead = ms(2000);
        o.dispatch_ahead = ms(1500);
    })
    .await;
    let mut admin = axd.admin().await;
    let endpoint = axd.endpoint.strip_prefix("http://").expect("http endpoint").to_owned();

    create(&mut admin, spec("py-echo-task", "py", "py-echo", manual())).await;
    let mut sum = spec("py-sum-task", "py", "py-sum", manual());
    sum.retry_policy = Some(retries(2, Duration::ZERO));
    create(&mut admin, sum).await;
    let mut flaky = spec("py-flaky-task", "py", "py-flaky", manual());
    flaky.retry_policy = Some(retries(1, Duration::ZERO));
    create(&mut admin, flaky).await;

    let worker = PythonWorker::start(&[endpoint], "py-1", &tmp.0);

    // The worker announces itself with its handlers.
    let listed = eventually(LONG, "the Python worker to be listed", || {
        let mut admin = admin.clone();
        async move { workers(&mut admin).await.into_iter().find(|w| w.worker_id == "py-1") }
    })
    .await;
    assert_eq!(listed.app, "py");
    assert_eq!(listed.capacity, 4);
    let mut handlers = listed.handlers.clone();
    handlers.sort();
    assert_eq!(handlers, vec!["py-echo", "py-flaky", "py-sleep", "py-sum"]);
    assert!(listed.client.starts_with("ax-worker-python/"), "{}", listed.client);
    assert_eq!(listed.scheduler_id, axd.running.scheduler_id());

    // py-echo: the params come back unchanged, through the whole lifecycle.
    let params = r#"{"greeting":"hello from rust","n":[1,2,3]}"#;
    let id = trigger_with(&mut admin, "py-echo-task", "echo-1", params).await;
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!(done.output, params);
    assert_eq!(done.attempt, 1);
    assert_eq!(done.worker_id, "py-1");
    let (_, events) = get(&mut admin, id).await;
    assert_eq!(
        steps(&events),
        vec![
            step("UNSPECIFIED", "PENDING", 0),
            step("PENDING", "DISPATCHED", 1),
            step("DISPATCHED", "RUNNING", 1),
            step("RUNNING", "SUCCESS", 1),
        ]
    );
    assert!(events.iter().skip(1).all(|e| e.worker_id == "py-1"), "{events:?}");

    // py-sum: JSON output, and the log line the handler sent.
    let id = trigger_with(&mut admin, "py-sum-task", "sum-ok", r#"{"numbers":[1,2,3]}"#).await;
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    let output: serde_json::Value = serde_json::from_str(&done.output).expect("output is JSON");
    assert_eq!(output, serde_json::json!({"sum": 6}));
    let logs = admin
        .get_instance_logs(pb::GetInstanceLogsRequest { id, ..Default::default() })
        .await
        .expect("logs")
        .into_inner()
        .lines;
    assert!(logs.iter().any(|l| l.message == "summing 3 numbers"), "{logs:?}");

    // py-sum with bad params: FAILED, not retryable, so the retry policy (2) is not used.
    let id = trigger_with(&mut admin, "py-sum-task", "sum-bad", r#"{"numbers":"1,2,3"}"#).await;
    let failed = wait_status(&mut admin, id, S::Failed, LONG).await;
    assert_eq!(failed.attempt, 1, "not retried");
    assert_eq!(failed.max_retries, 2);
    assert!(failed.message.contains("py-sum: params must be"), "{}", failed.message);
    let (_, events) = get(&mut admin, id).await;
    let s = steps(&events);
    assert_eq!(s.last(), Some(&step("RUNNING", "FAILED", 1)), "{s:?}");
    assert!(!s.contains(&step("FAILED", "PENDING", 1)), "{s:?}");

    // py-flaky: attempt 1 fails (retryable), the retry succeeds.
    let id = trigger_with(&mut admin, "py-flaky-task", "flaky-1", "{}").await;
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!(done.attempt, 2);
    assert_eq!(done.failures, 1);
    assert_eq!(done.worker_id, "py-1");
    let (_, events) = get(&mut admin, id).await;
    let s = steps(&events);
    for want in [
        step("RUNNING", "FAILED", 1),
        step("FAILED", "PENDING", 1),
        step("PENDING", "DISPATCHED", 2),
        step("DISPATCHED", "RUNNING", 2),
        step("RUNNING", "SUCCESS", 2),
    ] {
        assert!(s.contains(&want), "missing {want:?} in {s:?}");
    }
    let failure = events.iter().find(|e| e.to_status == S::Failed as i32).expect("failed event");
    assert!(failure.reason.contains("py-flaky: failing attempt 1 on purpose"), "{}", failure.reason);

    // A one-time task: the worker (it sets Hello.start_after_supported) gets it ahead of time,
    // holds it, and starts it at its fire time, not before.
    create(&mut admin, spec("py-once", "py", "py-echo", once_after(Duration::from_secs(2)))).await;
    let instance = instance_of(&admin, "py-once").await;
    wait_status(&mut admin, instance.id, S::Success, LONG).await;
    let (_, events) = get(&mut admin, instance.id).await;
    let due = utc(instance.trigger_time.as_ref().expect("trigger time"));
    let dispatched = events.iter().find(|e| e.to_status == S::Dispatched as i32).expect("DISPATCHED event");
    assert!(event_time(&events, S::Dispatched) < due, "assigned ahead of its fire time: {}", dispatched.reason);
    assert!(dispatched.reason.contains("ahead of time"), "{}", dispatched.reason);
    assert!(event_time(&events, S::Running) >= due, "accepted (started) at or after its fire time");

    // SIGTERM: the worker resets its credits, closes the stream and exits 0.
    worker.terminate();
    let mut worker = worker;
    let status = eventually(Duration::from_secs(10), "the Python worker to exit after SIGTERM", || {
        let exited = worker.child.try_wait().expect("try_wait");
        async move { exited }
    })
    .await;
    assert!(status.success(), "exit status {status:?}; log:\n{}", worker.log_text());
    eventually(Duration::from_secs(10), "the Python worker to leave ListWorkers", || {
        let mut admin = admin.clone();
        async move { workers(&mut admin).await.iter().all(|w| w.worker_id != "py-1").then_some(()) }
    })
    .await;
    let log = worker.log_text();
    assert!(log.contains("SIGTERM: shutting down"), "{log}");

    drop(worker);
    axd.stop().await;
    db.cleanup().await;
}

/// A fresh temporary directory, or `None` if the Python test is skipped.
fn prepare(prefix: &str) -> Option<TempDir> {
    if !python_ready() {
        return None;
    }
    Some(TempDir::new(prefix))
}

/// A manual task of the app `py` running the handler `py-sleep`, with one retry right away.
fn sleep_task(name: &str) -> pb::TaskSpec {
    let mut s = spec(name, "py", "py-sleep", manual());
    s.retry_policy = Some(retries(1, Duration::ZERO));
    s
}

/// `host:port` of an axd started in this process.
fn direct(axd: &Axd) -> String {
    axd.endpoint.strip_prefix("http://").expect("http endpoint").to_owned()
}

/// Waits until `worker_id` has a session, and returns it.
async fn listed(
    admin: &pb::admin_service_client::AdminServiceClient<tonic::transport::Channel>,
    worker_id: &str,
) -> pb::WorkerSession {
    eventually(LONG, &format!("{worker_id} to be listed"), || {
        let mut admin = admin.clone();
        async move { workers(&mut admin).await.into_iter().find(|w| w.worker_id == worker_id) }
    })
    .await
}

/// The execution of `(instance, attempt)` on `worker`, by the worker's own record.
fn execution<'a>(runs: &'a [Execution], instance: i64, attempt: u32, worker: &str) -> &'a Execution {
    runs.iter()
        .find(|r| r.instance == instance && r.attempt == attempt && r.worker == worker)
        .unwrap_or_else(|| panic!("no execution of {instance}/{attempt} on {worker}: {runs:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_worker_leaves_a_silent_axd_for_its_next_endpoint_and_keeps_its_attempt() {
    let Some(tmp) = prepare("ax-python-silent") else {
        return;
    };
    let Some(db) = TestDb::create(Db::Sqlite).await else {
        return;
    };
    // Heartbeat 1 s: axd's silence shows after 3 s. Grace 15 s: the attempt's lease (3 s + 15 s,
    // less a 1 s fence) outlasts the worker's move and its first renewal on the new session,
    // however slowly a loaded machine lets it reconnect (with 8 s, a run beside a full test suite
    // lost the lease and re-ran the attempt). The attempt (16 s) is still running when the worker
    // moves (within 15 s of the silence).
    let axd = Axd::start(&db, |o| {
        o.heartbeat_interval = Some(HumanDuration(Duration::from_secs(1)));
        o.lost_worker_grace = Some(HumanDuration(Duration::from_secs(15)));
    })
    .await;
    let mut admin = axd.admin().await;
    create(&mut admin, sleep_task("py-silent")).await;
    // The first endpoint goes through a proxy that can hold every byte; the second is direct.
    let proxy = Proxy::start(axd.running.addr).await;
    let worker = PythonWorker::start(&[proxy.addr.to_string(), direct(&axd)], "py-a", &tmp.0);
    let first = listed(&admin, "py-a").await;

    let id = trigger_with(&mut admin, "py-silent", "one", r#"{"ms": 16000}"#).await;
    let running = wait_status(&mut admin, id, S::Running, LONG).await;
    assert_eq!(running.worker_id, "py-a");
    // Until a renewal answers one of its heartbeats, the worker holds the attempt only until its
    // Assign's accept-by time (the 3 s ack timeout) and rightly stops the handler near it.
    wait_renewed(&mut admin, id, LONG).await;
    // axd goes silent without the connection breaking (a stalled axd, a partition): only the
    // worker's own liveness rule can notice, within 3 heartbeat intervals, long before keepalive.
    proxy.hold();
    let moved = eventually(Duration::from_secs(15), "py-a to open a session on its second endpoint", || {
        let mut admin = admin.clone();
        let old = first.session_id.clone();
        async move { workers(&mut admin).await.into_iter().find(|w| w.worker_id == "py-a" && w.session_id != old) }
    })
    .await;
    assert_ne!(moved.session_id, first.session_id);

    // The attempt went with it: re-announced in Hello.in_flight, adopted, finished once.
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!((done.attempt, done.worker_id.as_str()), (1, "py-a"), "kept, not re-run");
    let (_, events) = get(&mut admin, id).await;
    assert!(events.iter().any(|e| e.reason.contains("re-announced by worker py-a")), "{:?}", steps(&events));
    assert!(!events.iter().any(|e| e.to_status == S::Failed as i32), "{:?}", steps(&events));
    let runs = worker.executions();
    assert_eq!(runs.len(), 1, "exactly one execution: {runs:?}");
    assert_eq!((runs[0].attempt, runs[0].outcome.as_deref(), runs[0].fenced), (1, Some("SUCCESS"), false));
    let log = worker.log_text();
    assert!(log.contains("has said nothing"), "{log}");

    proxy.release();
    drop(worker);
    axd.stop().await;
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_worker_cut_off_from_every_axd_stops_its_handlers_before_their_lease_ends() {
    let Some(tmp) = prepare("ax-python-fence") else {
        return;
    };
    let Some(db) = TestDb::create(Db::Sqlite).await else {
        return;
    };
    // Heartbeat 200 ms (the fence margin), grace 1.5 s: Welcome.lease_ttl is 3 x 200 ms + 1.5 s =
    // 2.1 s. Ack timeout 2 s and no dispatch-ahead keep each Assign.accept_by within lease_ttl of
    // its dispatch, so the renewals decide when a lease ends, not accept_by.
    let axd = Axd::start(&db, |o| {
        o.lost_worker_grace = Some(HumanDuration(Duration::from_millis(1500)));
        o.dispatch_ahead = Some(HumanDuration(Duration::ZERO));
    })
    .await;
    let mut admin = axd.admin().await;
    create(&mut admin, sleep_task("py-cut")).await;
    create(&mut admin, sleep_task("py-stuck")).await;
    create(&mut admin, spec("py-after", "py", "py-echo", manual())).await;
    let proxies = [Proxy::start(axd.running.addr).await, Proxy::start(axd.running.addr).await];
    let endpoints: Vec<String> = proxies.iter().map(|p| p.addr.to_string()).collect();
    let w1 = PythonWorker::start(&endpoints, "py-cut-1", &tmp.0);
    listed(&admin, "py-cut-1").await;

    // Attempt 1 of each sleeps (a minute, or 5 s without ever looking at ctx.cancelled); the
    // retries return at once.
    let id = trigger_with(&mut admin, "py-cut", "one", r#"{"ms": 60000, "attempts": [1]}"#).await;
    let stuck =
        trigger_with(&mut admin, "py-stuck", "one", r#"{"ms": 5000, "attempts": [1], "ignore_cancel": true}"#).await;
    for i in [id, stuck] {
        let running = wait_status(&mut admin, i, S::Running, LONG).await;
        assert_eq!(running.worker_id, "py-cut-1");
    }

    // Every path to axd goes silent: no renewal reaches the worker any more. Another worker, on a
    // direct endpoint, is there for the retries once axd has taken the attempts back.
    for p in &proxies {
        p.hold();
    }
    let w2 = PythonWorker::start(&[direct(&axd)], "py-cut-2", &tmp.0);
    for i in [id, stuck] {
        let done = wait_status(&mut admin, i, S::Success, LONG).await;
        assert_eq!((done.attempt, done.worker_id.as_str()), (2, "py-cut-2"));
    }

    // By py-cut-1's own record, its handler had returned before attempt 2 started elsewhere: the
    // two attempts never overlapped.
    let runs = executions_in(&[&w1.exec_log, &w2.exec_log]);
    let first = execution(&runs, id, 1, "py-cut-1");
    let second = execution(&runs, id, 2, "py-cut-2");
    let ended = first.end.unwrap_or_else(|| panic!("attempt 1 still running on py-cut-1: {runs:?}"));
    assert!(first.fenced, "stopped because its lease ran out: {first:?}");
    assert_eq!(first.outcome.as_deref(), Some("FAILED"), "{first:?}");
    assert!(ended < second.start, "attempt 1 ended at {ended}, attempt 2 started at {}", second.start);
    // The handler that ignores cancellation is still sleeping, but no longer counted as ours.
    let log = w1.log_text();
    assert!(log.contains(&format!("done {stuck}/1: OUTCOME_FAILED stopped: lease ran out")), "{log}");

    // Back in touch: the FAILED results go out after Welcome and axd records them as late ones.
    for p in &proxies {
        p.release();
    }
    for i in [id, stuck] {
        eventually(LONG, &format!("the late FAILED result of {i}/1 on its trail"), || {
            let mut admin = admin.clone();
            async move {
                let (_, events) = get(&mut admin, i).await;
                events
                    .iter()
                    .any(|e| e.attempt == 1 && e.reason.starts_with("ignored FAILED result (late)"))
                    .then_some(())
            }
        })
        .await;
    }

    // The stuck handler returns SUCCESS in the end (its own record says so), and the worker
    // discards it: the instance was not ours any more.
    eventually(LONG, "the stuck handler to return on py-cut-1", || {
        let runs = w1.executions();
        async move { runs.iter().any(|r| r.instance == stuck && r.attempt == 1 && r.end.is_some()).then_some(()) }
    })
    .await;
    assert_eq!(execution(&w1.executions(), stuck, 1, "py-cut-1").outcome.as_deref(), Some("SUCCESS"));
    // Whatever py-cut-1 sent about it went out before the result of one more instance run there.
    drop(w2);
    let after = trigger_with(&mut admin, "py-after", "one", "{}").await;
    let done = wait_status(&mut admin, after, S::Success, LONG).await;
    assert_eq!(done.worker_id, "py-cut-1");
    let (_, events) = get(&mut admin, stuck).await;
    assert!(!events.iter().any(|e| e.reason.contains("SUCCESS result")), "{:?}", steps(&events));
    let log = w1.log_text();
    assert!(
        log.contains(&format!("abandoned handler {stuck}/1 ended (OUTCOME_SUCCESS); its result is discarded")),
        "{log}"
    );

    drop(w1);
    axd.stop().await;
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_worker_rejects_an_assignment_it_reads_too_close_to_its_accept_by_time() {
    let Some(tmp) = prepare("ax-python-stale") else {
        return;
    };
    let Some(db) = TestDb::create(Db::Sqlite).await else {
        return;
    };
    // Heartbeat 3 s: the fence margin is 3 s and silence counts after 9 s (the grace may not be
    // shorter than an interval). Ack timeout 6 s: an Assign is stale from 3 s after it was sent. No
    // dispatch-ahead, so accept_by is exactly the dispatch time + 6 s.
    let axd = Axd::start(&db, |o| {
        o.heartbeat_interval = Some(HumanDuration(Duration::from_secs(3)));
        o.lost_worker_grace = Some(HumanDuration(Duration::from_secs(3)));
        o.ack_timeout = Some(HumanDuration(Duration::from_secs(6)));
        o.dispatch_ahead = Some(HumanDuration(Duration::ZERO));
    })
    .await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("py-late", "py", "py-echo", manual())).await;
    let worker = PythonWorker::start(&[direct(&axd)], "py-late-1", &tmp.0);
    listed(&admin, "py-late-1").await;

    // Frozen before the instance exists, so the Assign waits unread in its socket.
    worker.freeze();
    let id = trigger_with(&mut admin, "py-late", "one", "{}").await;
    let dispatched = eventually(LONG, "the instance to be dispatched to the frozen worker", || {
        let mut admin = admin.clone();
        async move {
            let (i, events) = get(&mut admin, id).await;
            (i.status == S::Dispatched as i32 && i.worker_id == "py-late-1").then_some(events)
        }
    })
    .await;
    // Thaw it 4.25 s after the dispatch: past accept_by - margin (3 s), well before accept_by
    // (6 s, so axd still holds the attempt for it and records the Reject), and before either side
    // has heard nothing for 9 s. The freeze has to last that long; nothing to poll for.
    let thaw_at = event_time(&dispatched, S::Dispatched) + chrono::TimeDelta::milliseconds(4250);
    let wait = (thaw_at - chrono::Utc::now()).to_std().unwrap_or(Duration::ZERO);
    tokio::time::sleep(wait).await;
    worker.thaw();

    // Rejected, not started: back in the queue without using a retry, and run as attempt 2.
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!((done.attempt, done.worker_id.as_str()), (2, "py-late-1"));
    let (_, events) = get(&mut admin, id).await;
    let rejected = events
        .iter()
        .find(|e| e.attempt == 1 && e.to_status == S::Pending as i32)
        .unwrap_or_else(|| panic!("attempt 1 back to PENDING: {:?}", steps(&events)));
    assert!(rejected.reason.contains("rejected by worker py-late-1: stale assignment"), "{}", rejected.reason);
    assert!(!steps(&events).contains(&step("DISPATCHED", "RUNNING", 1)), "{:?}", steps(&events));
    let runs = worker.executions();
    assert!(runs.iter().all(|r| r.attempt != 1), "attempt 1 never started: {runs:?}");
    assert_eq!(execution(&runs, id, 2, "py-late-1").outcome.as_deref(), Some("SUCCESS"));

    drop(worker);
    axd.stop().await;
    db.cleanup().await;
}
