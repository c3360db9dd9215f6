//! ax-runner end to end on SQLite (the runner does not touch the database, so one backend
//! suffices): the real `ax-runner` binary with a configuration file, an axd in this process, and
//! an HTTP server on 127.0.0.1 started by the test. http tasks succeed with the body as output,
//! fail on other statuses, fill secrets without showing them, and are refused at loopback unless
//! allowed; shell tasks run allow-listed programs only and are killed, with their children, on
//! Cancel.

use std::{path::PathBuf, time::Duration};

use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{cancel, create, get, manual, retries, spec, trigger_with, wait_status},
    eventually,
    fleet::connected,
    on_every_backend,
    procs::bin,
    webhook::Receiver,
};

const LONG: Duration = Duration::from_secs(20);
const SECRET: &str = "tok-e2e-7f3a9c";
/// A runner configuration that allows `/bin/sh` and nothing else.
const SHELL: &str = "[shell]\nallow = [\"/bin/sh\"]\n";

/// A running `ax-runner` with its configuration file; killed when dropped.
struct Runner {
    _child: tokio::process::Child,
    dir: PathBuf,
}

impl Runner {
    /// Starts `ax-runner` for app `runner` (worker id `r1`) with `config` as its file, and waits
    /// until axd lists it.
    async fn start(axd: &Axd, config: &str) -> Runner {
        let dir = std::env::temp_dir().join(format!("ax-runner-{}-{:08x}", std::process::id(), fastrand::u32(..)));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("runner.toml");
        std::fs::write(&path, config).expect("write config");
        let child = tokio::process::Command::new(bin("ax-runner"))
            .arg("--config")
            .arg(&path)
            .args(["--endpoint", &axd.endpoint, "--app", "runner", "--worker-id", "r1", "--shutdown-deadline", "2"])
            .env("AX_LOG", "warn")
            .env("NO_COLOR", "1")
            .kill_on_drop(true)
            .spawn()
            .expect("start ax-runner");
        connected(&axd.admin().await, "runner", &["r1"]).await;
        Runner { _child: child, dir }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Creates a manual task of app `runner` for `handler` with `retries` retries, triggers it with
/// `params` and returns the instance id.
async fn run(axd: &Axd, name: &str, handler: &str, retries_left: u32, params: serde_json::Value) -> i64 {
    let mut admin = axd.admin().await;
    let mut s = spec(name, "runner", handler, manual());
    s.retry_policy = Some(retries(retries_left, Duration::from_millis(100)));
    create(&mut admin, s).await;
    trigger_with(&mut admin, name, "k", &params.to_string()).await
}

async fn sqlite() -> TestDb {
    TestDb::create(Db::Sqlite).await.expect("sqlite")
}

/// Ends as FAILED on its first attempt, the result marked not retryable (the task had retries
/// left); the handler's message.
async fn failed_for_good(axd: &Axd, id: i64) -> String {
    let i = wait_status(&mut axd.admin().await, id, S::Failed, LONG).await;
    assert_eq!(i.attempt, 1, "not retried: {}", i.message);
    let message = i.message.strip_prefix("handler failed: ").and_then(|m| m.strip_suffix(" (not retryable)"));
    message.unwrap_or_else(|| panic!("a non-retryable handler failure: {}", i.message)).to_owned()
}

async fn runner_http_task_outputs_the_body_and_fills_secrets_without_showing_them(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let server = Receiver::start_replying(|_, r| {
        Some(if r.request_line.starts_with("POST /echo") {
            (200, format!("auth was {}", r.header("authorization")))
        } else {
            (200, "hello from the server".to_owned())
        })
    })
    .await;
    let _runner =
        Runner::start(&axd, &format!("[http]\nallow = [\"127.0.0.1\"]\n[secrets.TOKEN]\nvalue = \"{SECRET}\"\n")).await;
    let plain = run(&axd, "plain", "http", 0, serde_json::json!({"url": server.url("/hello")})).await;
    let done = wait_status(&mut axd.admin().await, plain, S::Success, LONG).await;
    assert_eq!(done.output, "hello from the server");

    let params = serde_json::json!({
        "method": "POST",
        "url": server.url("/echo?customer={{params.customer}}"),
        "headers": {"Authorization": "Bearer {{secret.TOKEN}}"},
        "body": "{\"customer\": {{params.customer | json}}}",
        "customer": "acme & co",
    });
    let id = run(&axd, "echo", "http", 0, params).await;
    let done = wait_status(&mut axd.admin().await, id, S::Success, LONG).await;
    let got = server.received().into_iter().find(|r| r.request_line.starts_with("POST")).expect("the POST");
    assert_eq!(got.request_line, "POST /echo?customer=acme%20%26%20co HTTP/1.1");
    assert_eq!(got.header("authorization"), format!("Bearer {SECRET}"), "the secret was filled in");
    assert_eq!(String::from_utf8_lossy(&got.body), r#"{"customer": "acme & co"}"#);
    assert_eq!(done.output, "auth was Bearer [secret TOKEN]", "the echoed secret is redacted from the output");
    let (i, events) = get(&mut axd.admin().await, id).await;
    let seen = format!("{} {} {} {:?}", i.params, i.output, i.message, events);
    assert!(!seen.contains(SECRET), "the secret shows in the instance: {seen}");
    axd.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runner_http_task_fails_on_a_status_that_is_not_a_success() {
    let db = sqlite().await;
    let axd = Axd::start(&db, |_| {}).await;
    let server = Receiver::start_replying(|_, _| Some((404, "no such thing".to_owned()))).await;
    let _runner = Runner::start(&axd, "[http]\nallow = [\"127.0.0.0/8\"]\n").await;
    let id = run(&axd, "missing", "http", 2, serde_json::json!({"url": server.url("/x")})).await;
    let message = failed_for_good(&axd, id).await;
    assert_eq!(message, "HTTP 404 is not a success (params.success); body: no such thing");
    axd.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runner_refuses_loopback_and_bad_input_for_good_naming_the_field() {
    let db = sqlite().await;
    let axd = Axd::start(&db, |_| {}).await;
    let server = Receiver::start(|_| Some(200)).await;
    let _runner = Runner::start(&axd, SHELL).await;
    let ssrf = run(&axd, "ssrf", "http", 2, serde_json::json!({"url": server.url("/")})).await;
    let message = failed_for_good(&axd, ssrf).await;
    assert_eq!(
        message,
        "params.url: refused destination: 127.0.0.1 is 127.0.0.1, a loopback address (allow it in the runner's \
         configuration: http.allow)"
    );
    let no_url = run(&axd, "no-url", "http", 2, serde_json::json!({"method": "GET"})).await;
    assert_eq!(failed_for_good(&axd, no_url).await, "params.url: required");
    let off_list = run(&axd, "off-list", "shell", 2, serde_json::json!({"argv": ["/bin/echo", "hi"]})).await;
    assert_eq!(
        failed_for_good(&axd, off_list).await,
        "params.argv[0]: \"/bin/echo\" is not on the runner's allow-list (shell.allow)"
    );
    assert!(server.received().is_empty(), "nothing reached the server");
    axd.stop().await;
}

async fn runner_shell_task_outputs_stdout_and_logs_stderr(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let _runner = Runner::start(&axd, SHELL).await;
    let script = r#"read -r line; echo "stdin=$line greeting=$GREETING"; echo "a warning" >&2"#;
    let params = serde_json::json!({"argv": ["/bin/sh", "-c", script], "env": {"GREETING": "hi"}});
    let id = run(&axd, "sh", "shell", 0, params.clone()).await;
    let done = wait_status(&mut axd.admin().await, id, S::Success, LONG).await;
    assert_eq!(done.output, format!("stdin={params} greeting=hi\n"));
    let logs = eventually(LONG, "the stderr line in the instance's log", || async {
        let r = pb::GetInstanceLogsRequest { id, ..Default::default() };
        let lines = axd.admin().await.get_instance_logs(r).await.ok()?.into_inner().lines;
        lines.iter().any(|l| l.message == "stderr: a warning").then_some(lines)
    })
    .await;
    assert_eq!(logs.len(), 1, "{logs:?}");
    axd.stop().await;
}

// The runner speaks only to axd, whatever database axd uses: these two run on every backend.
on_every_backend!(
    runner_http_task_outputs_the_body_and_fills_secrets_without_showing_them,
    runner_shell_task_outputs_stdout_and_logs_stderr,
);

/// Whether process `pid` is gone (or a zombie: dead, waiting for a parent that is not this test
/// to read its status).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

/// Starts a shell task (with `timeout`, if given) whose shell starts a child, writes both PIDs
/// and waits: a process group of two. The instance id and the two PIDs, once both run.
async fn long_command(axd: &Axd, runner: &Runner, name: &str, timeout: Option<Duration>) -> (i64, Vec<u32>) {
    let out = runner.dir.clone();
    let script = r#"sleep 300 & echo $! > "$OUT/child"; echo $$ > "$OUT/pid.tmp"; mv "$OUT/pid.tmp" "$OUT/pid"; wait"#;
    let params = serde_json::json!({"argv": ["/bin/sh", "-c", script], "env": {"OUT": out.display().to_string()}});
    let mut admin = axd.admin().await;
    let mut s = spec(name, "runner", "shell", manual());
    s.timeout = timeout.map(ax_tests::client::dur);
    create(&mut admin, s).await;
    let id = trigger_with(&mut admin, name, "k", &params.to_string()).await;
    let pids: Vec<u32> = eventually(LONG, "the command's PIDs", || async {
        let read = |f: &str| std::fs::read_to_string(out.join(f)).ok()?.trim().parse::<u32>().ok();
        Some(vec![read("pid")?, read("child")?])
    })
    .await;
    assert!(pids.iter().all(|p| !gone(*p)), "both run");
    (id, pids)
}

/// Waits (10 s at most) until every one of `pids` is gone.
async fn all_gone(pids: &[u32]) {
    eventually(Duration::from_secs(10), "the command and its child to be killed", || async {
        pids.iter().all(|p| gone(*p)).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runner_kills_a_shell_command_and_its_children_on_cancel() {
    let db = sqlite().await;
    let axd = Axd::start(&db, |_| {}).await;
    let runner = Runner::start(&axd, SHELL).await;
    let (id, pids) = long_command(&axd, &runner, "long", None).await;
    cancel(&mut axd.admin().await, id, "test").await;
    all_gone(&pids).await;
    wait_status(&mut axd.admin().await, id, S::Canceled, LONG).await;
    axd.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runner_kills_a_shell_command_and_its_children_at_the_task_timeout() {
    let db = sqlite().await;
    let axd = Axd::start(&db, |_| {}).await;
    let runner = Runner::start(&axd, SHELL).await;
    let (id, pids) = long_command(&axd, &runner, "too-long", Some(Duration::from_secs(1))).await;
    all_gone(&pids).await;
    wait_status(&mut axd.admin().await, id, S::Timeout, LONG).await;
    axd.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runner_refuses_to_start_with_a_bad_configuration_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("ax-runner-config-{}-{:08x}", std::process::id(), fastrand::u32(..)));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let check = |config: &str| {
        let path = dir.join("runner.toml");
        std::fs::write(&path, config).expect("write config");
        let out = std::process::Command::new(bin("ax-runner"))
            .arg("--config")
            .arg(&path)
            .arg("--check-config")
            .output()
            .expect("run ax-runner");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, _, stderr) = check("[shell]\nallow = [\"/bin/sh\", \"/no/such/program\"]\n");
    assert!(!ok, "a program that does not exist is refused");
    assert!(stderr.contains("shell.allow[1]: /no/such/program is not a file"), "{stderr}");
    let (ok, _, stderr) = check("[secrets.TOKEN]\nvalue = \"x\"\nenv = \"Y\"\n");
    assert!(!ok && stderr.contains("secrets.TOKEN: give exactly one of value and env"), "{stderr}");
    assert_eq!(check(SHELL), (true, "ok\n".to_owned(), String::new()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runner_cuts_a_long_body_or_stdout_to_the_output_limit_and_says_so() {
    let db = sqlite().await;
    let axd = Axd::start(&db, |_| {}).await;
    let server = Receiver::start_replying(|_, _| Some((200, "a".repeat(200_000)))).await;
    let _runner = Runner::start(&axd, &format!("{SHELL}[http]\nallow = [\"127.0.0.1\"]\n")).await;
    let http = run(&axd, "big-body", "http", 0, serde_json::json!({"url": server.url("/big")})).await;
    let sh =
        run(&axd, "big-stdout", "shell", 0, serde_json::json!({"argv": ["/bin/sh", "-c", "yes | head -c 200000"]}))
            .await;
    for (id, what) in [(http, "the response body"), (sh, "stdout")] {
        let done = wait_status(&mut axd.admin().await, id, S::Success, LONG).await;
        assert!(done.output.len() <= ax_worker::MAX_OUTPUT, "{} bytes", done.output.len());
        let mark = format!("…[truncated: {what} is longer than {} bytes]", ax_worker::MAX_OUTPUT - 80);
        assert!(done.output.ends_with(&mark), "{}", &done.output[done.output.len() - 80..]);
    }
    axd.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runner_http_task_without_an_answer_fails_at_its_params_timeout() {
    let db = sqlite().await;
    let axd = Axd::start(&db, |_| {}).await;
    let server = Receiver::start_replying(|_, _| None).await;
    let _runner = Runner::start(&axd, "[http]\nallow = [\"127.0.0.1\"]\n").await;
    let id = run(&axd, "silent", "http", 0, serde_json::json!({"url": server.url("/"), "timeout": "300ms"})).await;
    let failed = wait_status(&mut axd.admin().await, id, S::Failed, LONG).await;
    assert!(failed.message.contains("no complete response from 127.0.0.1 within 300ms"), "{}", failed.message);
    assert!(!failed.message.contains("not retryable"), "a timeout may pass when retried: {}", failed.message);
    axd.stop().await;
}
