//! Starting the real binaries (`axd`, `axctl`, example workers) from tests.

use std::{
    path::PathBuf,
    process::Command,
    sync::{
        OnceLock,
        atomic::{AtomicBool, Ordering},
    },
};

/// The directory cargo put this process's binaries in (`target/<profile>`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // Tests live in target/<profile>/deps/, binaries (ax-bench) in target/<profile>/.
    let dir = exe.parent().expect("exe dir");
    if dir.ends_with("deps") { dir.parent().expect("target dir").to_path_buf() } else { dir.to_path_buf() }
}

/// Whether [`bin`] runs `cargo build` before it returns a path: set by [`build_binaries`], and off
/// when the environment says [`BINARIES_BUILT`].
static BUILD: AtomicBool = AtomicBool::new(true);

/// Set to `1` by a caller that has already built the binaries (the test script builds them once
/// before the test run): then [`bin`] runs no cargo, which under a test runner that starts one
/// process per test would be one more cargo run, waiting on the build lock, for each test.
pub const BINARIES_BUILT: &str = "AX_BINARIES_BUILT";

/// Whether [`bin`] builds the binaries first (the default for tests) or takes those beside this
/// process's executable as they are (ax-bench, unless asked to `--build`).
pub fn build_binaries(build: bool) {
    BUILD.store(build, Ordering::Relaxed);
}

/// Path of a workspace binary or example. Unless told otherwise ([`build_binaries`],
/// [`BINARIES_BUILT`]), builds them once per process first, with the profile of this process,
/// so that a test never runs a stale binary. A binary that is missing is a panic that says how to
/// build it.
pub fn bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let profile_release = target_dir().ends_with("release");
    let packages = [
        "-p",
        "ax-scheduler",
        "--bin",
        "axd",
        "-p",
        "axctl",
        "--bin",
        "axctl",
        "-p",
        "ax-worker",
        "--examples",
        "-p",
        "ax-runner",
        "--bin",
        "ax-runner",
    ];
    let prebuilt = std::env::var_os(BINARIES_BUILT).is_some_and(|v| v == "1");
    if BUILD.load(Ordering::Relaxed) && !prebuilt {
        BUILT.get_or_init(|| {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--quiet"]).args(packages);
            if profile_release {
                cmd.arg("--release");
            }
            let status = cmd.status().expect("run cargo build");
            assert!(status.success(), "cargo build of the binaries failed");
        });
    }
    let direct = target_dir().join(name);
    let path = if direct.exists() { direct } else { target_dir().join("examples").join(name) };
    assert!(
        path.exists(),
        "{name} is not built in {}: run `cargo build{} {}`",
        target_dir().display(),
        if profile_release { " --release" } else { "" },
        packages.join(" ")
    );
    path
}

/// A field of `/proc/<pid>/status` given in kB (e.g. `VmRSS`, `VmHWM`); None if the process or the
/// field is not there.
pub fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':')?.trim().strip_suffix("kB")?.trim().parse().ok())
}

/// A demo-worker process (worker-sdk/examples/demo-worker.rs) that is killed when dropped.
pub struct DemoWorker {
    /// The child process.
    pub child: tokio::process::Child,
}

impl DemoWorker {
    /// Starts `demo-worker` with `--endpoint` for each endpoint, the worker id, capacity and an
    /// execution log.
    pub fn start(
        endpoints: &[String],
        app: &str,
        worker_id: &str,
        capacity: u32,
        exec_log: &std::path::Path,
    ) -> DemoWorker {
        Self::start_with(endpoints, app, worker_id, capacity, Some(exec_log))
    }

    /// Like [`DemoWorker::start`], with the execution log optional (benchmarks leave it off).
    pub fn start_with(
        endpoints: &[String],
        app: &str,
        worker_id: &str,
        capacity: u32,
        exec_log: Option<&std::path::Path>,
    ) -> DemoWorker {
        Self::spawn(tokio::process::Command::new(bin("demo-worker")), endpoints, app, worker_id, capacity, exec_log)
    }

    /// Like [`DemoWorker::start_with`] without an execution log, printing `acked N` on stdout as
    /// axd acknowledges its results (`--print-acked`): the returned stdout is how a benchmark
    /// counts completions without asking the database.
    pub fn start_counting(
        endpoints: &[String],
        app: &str,
        worker_id: &str,
        capacity: u32,
    ) -> (DemoWorker, tokio::process::ChildStdout) {
        let mut cmd = tokio::process::Command::new(bin("demo-worker"));
        cmd.arg("--print-acked").stdout(std::process::Stdio::piped());
        let mut w = Self::spawn(cmd, endpoints, app, worker_id, capacity, None);
        let out = w.child.stdout.take().expect("piped stdout");
        (w, out)
    }

    /// Like [`DemoWorker::start`], with the worker's own log (stderr) written to `stderr_log`.
    pub fn start_logged(
        endpoints: &[String],
        app: &str,
        worker_id: &str,
        capacity: u32,
        exec_log: &std::path::Path,
        stderr_log: &std::path::Path,
    ) -> DemoWorker {
        let mut cmd = tokio::process::Command::new(bin("demo-worker"));
        cmd.stderr(std::fs::File::create(stderr_log).expect("worker log"));
        Self::spawn(cmd, endpoints, app, worker_id, capacity, Some(exec_log))
    }

    /// Like [`DemoWorker::start`], inside a network namespace (its endpoints must be reachable from
    /// there, e.g. proxies on the namespace's host addresses).
    pub fn start_in(
        ns: &crate::netns::Netns,
        endpoints: &[String],
        app: &str,
        worker_id: &str,
        capacity: u32,
        exec_log: &std::path::Path,
    ) -> DemoWorker {
        Self::spawn(ns.command(&bin("demo-worker")), endpoints, app, worker_id, capacity, Some(exec_log))
    }

    fn spawn(
        mut cmd: tokio::process::Command,
        endpoints: &[String],
        app: &str,
        worker_id: &str,
        capacity: u32,
        exec_log: Option<&std::path::Path>,
    ) -> DemoWorker {
        for e in endpoints {
            cmd.arg("--endpoint").arg(e);
        }
        cmd.args([
            "--app",
            app,
            "--worker-id",
            worker_id,
            "--capacity",
            &capacity.to_string(),
            "--shutdown-deadline",
            "5",
        ]);
        if let Some(log) = exec_log {
            cmd.arg("--exec-log").arg(log);
        }
        // AX_TEST_WORKER_LOG (e.g. `ax_worker=debug`) makes the workers of a test say more.
        let log = std::env::var("AX_TEST_WORKER_LOG").unwrap_or_else(|_| "warn".to_owned());
        cmd.env("AX_LOG", log).env("NO_COLOR", "1").kill_on_drop(true);
        DemoWorker { child: cmd.spawn().expect("start demo-worker") }
    }

    /// SIGKILL: the process dies without a word to axd.
    pub async fn kill_hard(&mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }

    /// SIGSTOP: the process freezes (its connections stay open, it answers nothing).
    pub fn freeze(&self) {
        signal(&self.child, "STOP");
    }

    /// SIGCONT after [`DemoWorker::freeze`].
    pub fn thaw(&self) {
        signal(&self.child, "CONT");
    }
}

/// Sends `kill -<sig>` to a child this test started (by its PID; nothing if it has exited).
pub fn signal(child: &tokio::process::Child, sig: &str) {
    if let Some(pid) = child.id() {
        let status = std::process::Command::new("kill").args([&format!("-{sig}"), &pid.to_string()]).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{sig} {pid} failed");
    }
}

/// One execution from a demo-worker execution log: its start, and its end unless the worker died.
#[derive(Debug, Clone)]
pub struct Execution {
    /// Instance id.
    pub instance: i64,
    pub attempt: u32,
    /// Worker id.
    pub worker: String,
    pub handler: String,
    /// Task name.
    pub task: String,
    pub trigger_time: chrono::DateTime<chrono::Utc>,
    pub start: chrono::DateTime<chrono::Utc>,
    /// End, if it finished.
    pub end: Option<chrono::DateTime<chrono::Utc>>,
    /// SUCCESS or FAILED, if it finished.
    pub outcome: Option<String>,
    /// The handler ended after its lease had run out (the SDK fenced it): it did no work after
    /// that point.
    pub fenced: bool,
}

#[derive(serde::Deserialize)]
struct ExecLine {
    event: String,
    instance: i64,
    attempt: u32,
    worker: String,
    handler: String,
    task: String,
    trigger_time: chrono::DateTime<chrono::Utc>,
    at: chrono::DateTime<chrono::Utc>,
    outcome: Option<String>,
    #[serde(default)]
    fenced: bool,
}

/// Reads execution logs (missing files = nothing ran), pairing starts with ends.
pub fn executions_in(paths: &[&std::path::Path]) -> Vec<Execution> {
    let mut out: Vec<Execution> = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for l in text.lines().filter(|l| !l.trim().is_empty()) {
            // A worker killed mid-write can leave a torn last line.
            let Ok(e) = serde_json::from_str::<ExecLine>(l) else { continue };
            if e.event == "start" {
                out.push(Execution {
                    instance: e.instance,
                    attempt: e.attempt,
                    worker: e.worker,
                    handler: e.handler,
                    task: e.task,
                    trigger_time: e.trigger_time,
                    start: e.at,
                    end: None,
                    outcome: None,
                    fenced: false,
                });
            } else if let Some(x) = out
                .iter_mut()
                .rev()
                .find(|x| x.instance == e.instance && x.attempt == e.attempt && x.worker == e.worker && x.end.is_none())
            {
                x.end = Some(e.at);
                x.outcome = e.outcome;
                x.fenced = e.fenced;
            }
        }
    }
    out
}

/// Reads one execution log.
pub fn executions(path: &std::path::Path) -> Vec<Execution> {
    executions_in(&[path])
}

/// The real `axd` binary, stopped with SIGTERM (or killed) when dropped.
pub struct AxdProcess {
    pub child: tokio::process::Child,
    /// Address it listens on (from its readiness line).
    pub addr: std::net::SocketAddr,
    /// Where it serves the web console, with `--console-listen` (from its `axd console at` line).
    pub console: Option<std::net::SocketAddr>,
    /// Its stderr log file.
    pub log: std::path::PathBuf,
    /// Its `--shutdown-timeout` (from the arguments or `AX_SHUTDOWN_TIMEOUT`; default 10 s).
    pub shutdown_timeout: std::time::Duration,
}

/// How long after its `--shutdown-timeout` an axd process may take to be gone: after the bounded
/// shutdown it leaves `ax_scheduler` and closes its pools, which takes milliseconds; 3 s more
/// covers a loaded 2-core machine (a process that ignored its timeout would stay until killed).
pub const EXIT_MARGIN: std::time::Duration = std::time::Duration::from_secs(3);

fn shutdown_timeout_of(args: &[&str], env: &[(&str, &str)]) -> std::time::Duration {
    let flag = args.iter().position(|a| *a == "--shutdown-timeout").and_then(|i| args.get(i + 1)).copied();
    let flag = flag.or_else(|| args.iter().find_map(|a| a.strip_prefix("--shutdown-timeout=")));
    let var = env.iter().find(|(k, _)| *k == "AX_SHUTDOWN_TIMEOUT").map(|(_, v)| *v);
    flag.or(var).map_or(std::time::Duration::from_secs(10), |v| {
        ax_scheduler::config::parse_duration(v).unwrap_or_else(|e| panic!("--shutdown-timeout {v}: {e}"))
    })
}

impl AxdProcess {
    /// Starts `axd` with `args` (add `--listen 127.0.0.1:0` to pick a free port) and waits for its
    /// readiness line `axd listening on ADDR`.
    pub async fn start(args: &[&str], log: &std::path::Path) -> AxdProcess {
        Self::start_env(args, &[], log).await
    }

    /// Like [`AxdProcess::start`], with extra environment variables.
    pub async fn start_env(args: &[&str], env: &[(&str, &str)], log: &std::path::Path) -> AxdProcess {
        Self::start_cmd(tokio::process::Command::new(bin("axd")), args, env, log).await
    }

    /// Like [`AxdProcess::start`], with at most `nofile` open files (soft and hard limit, set with
    /// `prlimit` before axd starts).
    pub async fn start_with_nofile(args: &[&str], nofile: u64, log: &std::path::Path) -> AxdProcess {
        let mut cmd = tokio::process::Command::new("prlimit");
        cmd.arg(format!("--nofile={nofile}:{nofile}")).arg("--").arg(bin("axd"));
        Self::start_cmd(cmd, args, &[], log).await
    }

    async fn start_cmd(
        mut cmd: tokio::process::Command,
        args: &[&str],
        env: &[(&str, &str)],
        log: &std::path::Path,
    ) -> AxdProcess {
        use tokio::io::AsyncBufReadExt as _;
        let stderr = std::fs::File::create(log).expect("axd log");
        let mut child = cmd
            .args(args)
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .expect("start axd");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .unwrap_or_else(|_| {
                panic!("axd did not become ready; log: {}", std::fs::read_to_string(log).unwrap_or_default())
            })
            .expect("read stdout")
            .unwrap_or_else(|| panic!("axd exited; log: {}", std::fs::read_to_string(log).unwrap_or_default()));
        let addr = line
            .strip_prefix("axd listening on ")
            .and_then(|r| r.split_whitespace().next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("unexpected readiness line {line:?}"));
        // `axd console at http(s)://ADDR/` follows the readiness line (after the metrics line).
        let mut console = None;
        if args.iter().any(|a| a.starts_with("--console-listen")) {
            while console.is_none() {
                let line = lines.next_line().await.expect("read stdout").expect("axd printed no console line");
                console = line
                    .strip_prefix("axd console at ")
                    .and_then(|u| u.split("://").nth(1))
                    .and_then(|a| a.trim_end_matches('/').parse().ok());
            }
        }
        // Keep draining stdout so axd never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        AxdProcess { child, addr, console, log: log.to_path_buf(), shutdown_timeout: shutdown_timeout_of(args, env) }
    }

    /// Sends SIGTERM and waits for the exit status, which must come within its shutdown timeout
    /// (plus [`EXIT_MARGIN`]), as the README promises.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        let bound = self.shutdown_timeout + EXIT_MARGIN;
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status();
        }
        tokio::time::timeout(bound, self.child.wait())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "axd did not exit within its shutdown timeout of {:?} (+{EXIT_MARGIN:?}) after SIGTERM; log: {}",
                    self.shutdown_timeout,
                    self.log.display()
                )
            })
            .expect("wait")
    }

    /// SIGKILL.
    pub async fn kill_hard(&mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }

    /// SIGSTOP: axd freezes with every connection open (a long pause, a VM freeze).
    pub fn freeze(&self) {
        signal(&self.child, "STOP");
    }

    /// SIGCONT after [`AxdProcess::freeze`].
    pub fn thaw(&self) {
        signal(&self.child, "CONT");
    }
}

/// The outcome of one `axctl` run.
#[derive(Debug)]
pub struct CtlOutput {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl CtlOutput {
    /// The JSON document on stdout (the run must have succeeded).
    pub fn json(&self) -> serde_json::Value {
        assert_eq!(self.code, 0, "axctl failed: {}", self.stderr);
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", self.stdout))
    }
}

/// Runs `axctl` with `args` and environment `env`.
pub async fn axctl(env: &[(&str, &str)], args: &[&str]) -> CtlOutput {
    let out = tokio::process::Command::new(bin("axctl"))
        .args(args)
        .env_remove("AX_CA")
        .env_remove("AX_CERT")
        .env_remove("AX_KEY")
        .env_remove("AX_ENDPOINT")
        .envs(env.iter().copied())
        .output()
        .await
        .expect("run axctl");
    CtlOutput {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
