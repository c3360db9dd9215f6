//! The `shell` executor: runs one allow-listed program with the argv the task's params give (no
//! shell parses anything), captures its stdout as the output and sends its stderr lines to the
//! instance's log.
//!
//! The program gets the params twice: as JSON on stdin (unless `params.stdin` is `"none"`) and in
//! `AX_PARAMS`; with `AX_INSTANCE_ID`, `AX_ATTEMPT`, `AX_IDEMPOTENCY_KEY`, `AX_TASK`, the
//! variables of `params.env` and of the configuration's `shell.env`. Nothing of the runner's own
//! environment is passed on (it may hold secrets). The program leads a process group of its own:
//! on Cancel, when the attempt is fenced (lease lost) or past its timeout, and if the handler is
//! dropped, the whole group is killed (SIGKILL), so children it started do not outlive it.

use std::{path::Path, process::Stdio, sync::Arc, time::Duration};

use ax_worker::{Context, Level, MAX_OUTPUT};
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::{
    io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _},
    task::JoinHandle,
};

use crate::{
    config::{Config, is_identifier},
    params::{Failure, Params, input},
    template::redact,
};

/// The stdout kept: what fits in the output with room for the truncation mark.
const STDOUT_LIMIT: usize = MAX_OUTPUT - 80;

/// Most stderr lines sent to the instance's log per attempt (the rest are counted).
const MAX_LOG_LINES: usize = 1000;

/// How long the output is still read after the program ended (a child it left behind that kept
/// the pipe open was killed with its group).
const DRAIN: Duration = Duration::from_secs(2);

/// Runs shell tasks with the runner's configuration.
#[derive(Debug, Clone)]
pub struct ShellExecutor {
    config: Arc<Config>,
}

/// Kills the process group it holds when dropped (the SDK aborted the handler).
struct Group(Option<Pid>);

impl Group {
    fn kill(&mut self) {
        if let Some(pid) = self.0.take() {
            // ESRCH: every member has already exited.
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What `params.stdin` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stdin {
    /// The params as JSON (default).
    Params,
    /// Nothing (stdin is /dev/null).
    None,
}

/// A command ready to start, from the params.
#[derive(Debug)]
struct Prepared {
    argv: Vec<String>,
    env: Vec<(String, String)>,
    stdin: Stdin,
    timeout: Duration,
}

impl ShellExecutor {
    /// An executor allowing what `config.shell` allows.
    pub fn new(config: Arc<Config>) -> ShellExecutor {
        ShellExecutor { config }
    }

    fn prepare(&self, params: &Params) -> Result<Prepared, Failure> {
        let list = params.get("argv").ok_or_else(|| input("params.argv", "required"))?;
        let list = list
            .as_array()
            .filter(|l| !l.is_empty())
            .ok_or_else(|| input("params.argv", "must be a non-empty list of strings"))?;
        let argv = list
            .iter()
            .enumerate()
            .map(|(i, a)| {
                a.as_str().map(str::to_owned).ok_or_else(|| input(format!("params.argv[{i}]"), "must be a string"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if !self.config.shell.allow.iter().any(|p| p == Path::new(&argv[0])) {
            return Err(input(
                "params.argv[0]",
                format!("{:?} is not on the runner's allow-list (shell.allow)", argv[0]),
            ));
        }
        let mut env = Vec::new();
        for (k, v) in params.string_map("env")? {
            if !is_identifier(k) || k.starts_with("AX_") {
                return Err(input(
                    format!("params.env.{k}"),
                    "a name is letters, digits and '_', not starting with a digit or AX_",
                ));
            }
            env.push((k.to_owned(), v.to_owned()));
        }
        let stdin = match params.str("stdin")? {
            None | Some("params") => Stdin::Params,
            Some("none") => Stdin::None,
            Some(other) => return Err(input("params.stdin", format!("{other:?} is not \"params\" or \"none\""))),
        };
        Ok(Prepared { argv, env, stdin, timeout: params.timeout(&self.config)? })
    }

    /// Runs one attempt: stdout if the program exits with 0, else why not.
    pub async fn run(&self, ctx: &Context) -> Result<String, Failure> {
        let params = Params::parse(&ctx.params_raw)?;
        let p = self.prepare(&params)?;
        let mut cmd = tokio::process::Command::new(&p.argv[0]);
        cmd.args(&p.argv[1..])
            .env_clear()
            .envs(&self.config.shell.env)
            .envs(p.env.iter().map(|(k, v)| (k, v)))
            .env("AX_PARAMS", &ctx.params_raw)
            .env("AX_INSTANCE_ID", ctx.instance_id.to_string())
            .env("AX_ATTEMPT", ctx.attempt.to_string())
            .env("AX_IDEMPOTENCY_KEY", &ctx.idempotency_key)
            .env("AX_TASK", &ctx.task_name)
            .stdin(if p.stdin == Stdin::Params { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(dir) = &self.config.shell.dir {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|e| Failure::Permanent(format!("starting {}: {e}", p.argv[0])))?;
        let mut group = Group(child.id().and_then(|id| i32::try_from(id).ok()).and_then(Pid::from_raw));
        if let Some(mut stdin) = child.stdin.take() {
            let json = ctx.params_raw.clone().into_bytes();
            // A program that does not read its stdin closes it: that is not a failure.
            tokio::spawn(async move {
                let _ = stdin.write_all(&json).await;
            });
        }
        let stdout = child.stdout.take().map(|out| tokio::spawn(read_bounded(out)));
        let stderr = child.stderr.take().map(|err| tokio::spawn(log_lines(err, ctx.clone())));
        let ended = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => Err(Failure::Stopped("killed: the attempt was canceled or lost its lease".into())),
            () = tokio::time::sleep(p.timeout) => Err(Failure::Stopped(format!("killed: ran longer than its timeout of {}", humantime::format_duration(p.timeout)))),
            status = child.wait() => status.map_err(|e| Failure::Transient(format!("waiting for {}: {e}", p.argv[0]))),
        };
        // Whatever happened, nothing of the group outlives the attempt.
        group.kill();
        let status = match ended {
            Ok(status) => status,
            Err(stopped) => {
                let _ = child.wait().await;
                stdout.iter().for_each(JoinHandle::abort);
                stderr.iter().for_each(JoinHandle::abort);
                return Err(stopped);
            }
        };
        let (out, cut) = drained(stdout).await;
        let last_stderr = drained(stderr).await;
        if status.success() {
            let mut text = String::from_utf8_lossy(&out).into_owned();
            if cut {
                text.push_str(&format!("…[truncated: stdout is longer than {} bytes]", out.len()));
            }
            return Ok(redact(text, &self.config.secrets));
        }
        let how = match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => "was killed by a signal".to_owned(),
        };
        let tail = if last_stderr.is_empty() { String::new() } else { format!("; last stderr line: {last_stderr}") };
        Err(Failure::Transient(redact(format!("{} {how}{tail}", p.argv[0]), &self.config.secrets)))
    }
}

/// What a reader task returned, waiting at most [`DRAIN`]; a reader still blocked then (a process
/// that left the group holds the pipe open) is aborted, and its part is empty.
async fn drained<T: Default>(reader: Option<JoinHandle<T>>) -> T {
    let Some(mut reader) = reader else { return T::default() };
    match tokio::time::timeout(DRAIN, &mut reader).await {
        Ok(Ok(v)) => v,
        _ => {
            reader.abort();
            T::default()
        }
    }
}

/// Reads at most [`STDOUT_LIMIT`] bytes, then drains the rest (so the program never blocks on a
/// full pipe); the bytes kept and whether more came.
async fn read_bounded(mut out: tokio::process::ChildStdout) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut cut = false;
    loop {
        match out.read(&mut buf).await {
            Ok(0) | Err(_) => return (kept, cut),
            Ok(n) => {
                let room = STDOUT_LIMIT - kept.len();
                kept.extend_from_slice(&buf[..n.min(room)]);
                cut |= n > room;
            }
        }
    }
}

/// Sends each stderr line to the instance's log (at most [`MAX_LOG_LINES`]); the last line.
async fn log_lines(err: tokio::process::ChildStderr, ctx: Context) -> String {
    let mut lines = tokio::io::BufReader::new(err).split(b'\n');
    let (mut sent, mut dropped, mut last) = (0usize, 0usize, String::new());
    while let Ok(Some(line)) = lines.next_segment().await {
        last = String::from_utf8_lossy(&line).trim_end().chars().take(512).collect();
        if sent < MAX_LOG_LINES {
            ctx.log(Level::Info, format!("stderr: {last}"));
            sent += 1;
        } else {
            dropped += 1;
        }
    }
    if dropped > 0 {
        ctx.log(Level::Warn, format!("{dropped} more stderr lines were not logged"));
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepare(params: serde_json::Value) -> Result<Prepared, String> {
        let config = Config::parse("[shell]\nallow = [\"/bin/sh\"]", |_| None).expect("config");
        let p = Params::parse(&params.to_string()).expect("object");
        ShellExecutor::new(Arc::new(config)).prepare(&p).map_err(|e| e.to_string())
    }

    #[test]
    fn only_allow_listed_programs_with_a_valid_argv_are_run() {
        for (params, says) in [
            (serde_json::json!({}), "params.argv: required"),
            (serde_json::json!({"argv": "/bin/sh -c x"}), "params.argv: must be a non-empty list of strings"),
            (serde_json::json!({"argv": []}), "params.argv: must be a non-empty list of strings"),
            (serde_json::json!({"argv": ["/bin/sh", 1]}), "params.argv[1]: must be a string"),
            (
                serde_json::json!({"argv": ["sh"]}),
                "params.argv[0]: \"sh\" is not on the runner's allow-list (shell.allow)",
            ),
            (
                serde_json::json!({"argv": ["/bin/rm", "-rf", "/"]}),
                "params.argv[0]: \"/bin/rm\" is not on the runner's allow-list",
            ),
            (serde_json::json!({"argv": ["/bin/sh"], "env": {"AX_PARAMS": "x"}}), "params.env.AX_PARAMS: a name is"),
            (serde_json::json!({"argv": ["/bin/sh"], "stdin": "file"}), "params.stdin: \"file\" is not"),
        ] {
            let e = prepare(params.clone()).err().unwrap_or_default();
            assert!(e.starts_with(says), "{params}: {e:?} does not start with {says:?}");
        }
        let ok = prepare(serde_json::json!({"argv": ["/bin/sh", "-c", "echo"], "env": {"A": "1"}, "stdin": "none"}))
            .expect("valid");
        assert_eq!((ok.argv.len(), ok.env.len(), ok.stdin), (3, 1, Stdin::None));
    }
}
