//! The polyglot proof: the plain-Python worker of examples/python-worker, speaking the protocol
//! through stubs that grpcio-tools generates from proto/ax/v1, runs tasks on a real axd (SQLite).
//!
//! Needs python3 with the packages of examples/python-worker/requirements.txt. Without them the test
//! fails and says how to install them; outside CI, `AX_SKIP_PYTHON_TESTS=1` turns that into a skip.
//! `PYTHON` names another interpreter than `python3`.

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{
        create, event_time, get, instance_of, manual, once_after, retries, spec, steps, trigger_with, utc, wait_status,
    },
    eventually,
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

/// Whether python3 with grpcio and grpcio-tools is available; fails the test (or skips it, when
/// allowed) with the install instructions otherwise.
fn python_ready() -> bool {
    let probe = Command::new(python()).args(["-c", "import grpc, grpc_tools"]).output();
    let why = match probe {
        Ok(o) if o.status.success() => return true,
        // The last line of the traceback, e.g. "ModuleNotFoundError: No module named 'grpc'".
        Ok(o) => String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or_default().to_owned(),
        Err(e) => format!("cannot run {}: {e}", python()),
    };
    let reqs = repo_root().join("examples/python-worker/requirements.txt");
    if may_skip() {
        eprintln!(
            "SKIPPED: the Python worker test needs python3 with grpcio and grpcio-tools ({why}) \
             and AX_SKIP_PYTHON_TESTS=1"
        );
        return false;
    }
    panic!(
        "the Python worker test needs python3 with grpcio and grpcio-tools ({why}). Install them \
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
}

impl PythonWorker {
    fn start(endpoint: &str, worker_id: &str, stubs: &Path, log: PathBuf) -> PythonWorker {
        let out = File::create(&log).expect("worker log file");
        let err = out.try_clone().expect("worker log file");
        let child = Command::new(python())
            .arg(repo_root().join("examples/python-worker/worker.py"))
            .args(["--endpoint", endpoint, "--app", "py", "--worker-id", worker_id])
            .arg("--stubs")
            .arg(stubs)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("start the Python worker");
        PythonWorker { child, log }
    }

    /// Sends SIGTERM to the process.
    fn terminate(&self) {
        let status = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().expect("run kill");
        assert!(status.success(), "kill -TERM {} failed", self.child.id());
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for PythonWorker {
    fn drop(&mut self) {
        // SIGKILL by PID; harmless if it already exited (then this only reaps it).
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

/// Generates the ax.v1 Python stubs into `dir` with the example's generate.sh.
fn generate_stubs(dir: &Path) {
    let out = Command::new("bash")
        .arg(repo_root().join("examples/python-worker/generate.sh"))
        .arg(dir)
        .env("PYTHON", python())
        .output()
        .expect("run generate.sh");
    assert!(
        out.status.success(),
        "generate.sh failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.join("ax/v1/worker_pb2_grpc.py").exists());
    assert!(dir.join("ax/v1/__init__.py").exists());
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
    let stubs = tmp.0.join("stubs");
    generate_stubs(&stubs);

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

    let worker = PythonWorker::start(&endpoint, "py-1", &stubs, tmp.0.join("worker.log"));

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
    assert_eq!(handlers, vec!["py-echo", "py-flaky", "py-sum"]);
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
