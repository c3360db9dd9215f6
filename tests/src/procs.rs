//! Starting the real binaries (`axd`, `axctl`, example workers) from tests.

use std::{path::PathBuf, process::Command, sync::OnceLock};

/// The directory cargo put this test's binaries in (`target/<profile>`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .to_path_buf()
}

/// Path of a workspace binary or example, building them once per test process so the test never
/// runs a stale binary.
pub fn bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let profile_release = target_dir().ends_with("release");
        let mut cmd = Command::new(cargo);
        cmd.args([
            "build",
            "--quiet",
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
        ]);
        if profile_release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build");
        assert!(status.success(), "cargo build of the binaries failed");
    });
    let direct = target_dir().join(name);
    if direct.exists() {
        return direct;
    }
    target_dir().join("examples").join(name)
}

/// A demo-worker process (worker-sdk/examples/demo-worker.rs) that is killed when dropped.
pub struct DemoWorker {
    /// The child process.
    pub child: tokio::process::Child,
}

impl DemoWorker {
    /// Starts `demo-worker` with `--endpoint` for each endpoint, the worker id, capacity and an
    /// execution log.
    pub fn start(endpoints: &[String], app: &str, worker_id: &str, capacity: u32, exec_log: &std::path::Path) -> DemoWorker {
        let mut cmd = tokio::process::Command::new(bin("demo-worker"));
        for e in endpoints {
            cmd.arg("--endpoint").arg(e);
        }
        cmd.args(["--app", app, "--worker-id", worker_id, "--capacity", &capacity.to_string(), "--shutdown-deadline", "5"])
            .arg("--exec-log")
            .arg(exec_log)
            .env("AX_LOG", "warn")
            .kill_on_drop(true);
        DemoWorker { child: cmd.spawn().expect("start demo-worker") }
    }

    /// SIGKILL: the process dies without a word to axd.
    pub async fn kill_hard(&mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// One line of a demo-worker execution log.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Execution {
    /// Instance id.
    pub instance: i64,
    /// Attempt.
    pub attempt: u32,
    /// Worker id.
    pub worker: String,
    /// Handler.
    pub handler: String,
    /// Task name.
    pub task: String,
    /// Trigger time (RFC 3339).
    pub trigger_time: String,
    /// Start (RFC 3339).
    pub start: String,
    /// End (RFC 3339).
    pub end: String,
    /// SUCCESS or FAILED.
    pub outcome: String,
}

/// Reads an execution log (missing file = nothing ran).
pub fn executions(path: &std::path::Path) -> Vec<Execution> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("execution line"))
        .collect()
}
