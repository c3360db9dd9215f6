//! The worker under test: started from the user's command line once per scenario, with the
//! endpoint, app, worker id and capacity in its environment, its output kept in a log file.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
};

use anyhow::Context as _;
use tokio::process::{Child, Command};

/// What the kit tells the worker (the environment contract, see README "Writing a worker in any
/// language").
pub struct Env<'a> {
    pub endpoint: &'a str,
    pub app: &'a str,
    pub worker_id: &'a str,
    pub capacity: u32,
}

/// A running worker process; killed when dropped.
pub struct WorkerProc {
    child: Child,
    /// Its stdout and stderr.
    pub log: PathBuf,
}

impl WorkerProc {
    /// Starts `cmd` (program and arguments) with `env`, output to `log`.
    pub fn start(cmd: &[String], env: &Env<'_>, log: &Path) -> anyhow::Result<WorkerProc> {
        let (program, args) = cmd.split_first().context("no worker command given")?;
        let out = std::fs::File::create(log).with_context(|| format!("{}", log.display()))?;
        let err = out.try_clone()?;
        let child = Command::new(program)
            .args(args)
            .env("AX_ENDPOINT", env.endpoint)
            .env("AX_APP", env.app)
            .env("AX_WORKER_ID", env.worker_id)
            .env("AX_CAPACITY", env.capacity.to_string())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting the worker {program:?}"))?;
        Ok(WorkerProc { child, log: log.to_owned() })
    }

    /// `Some(status)` if the process has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Kills the process and waits for it.
    pub async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }

    /// The last `n` lines of its output.
    pub fn tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}
