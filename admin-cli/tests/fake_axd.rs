//! Runs the real axctl binary against an in-process fake AdminService over mTLS, with certificates
//! made by `axctl certs init`. The fake answers a few calls with canned data and records what it
//! was sent, so these tests check the wire requests, the JSON contract, error printing and exit
//! codes end to end without axd.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use ax_proto::v1::{
    admin_service_server::{AdminService, AdminServiceServer},
    *,
};
use serde_json::Value;
use tokio::sync::oneshot;
use tonic::{
    Request, Response, Status,
    transport::{Certificate, Identity, Server, ServerTlsConfig, server::TcpIncoming},
};

/// What the fake was sent.
#[derive(Default)]
struct Seen {
    created: Option<TaskSpec>,
    updated: Option<UpdateTaskRequest>,
    /// Whether the last call came with a client certificate.
    client_cert: bool,
}

#[derive(Clone, Default)]
struct Fake {
    seen: Arc<Mutex<Seen>>,
}

fn ts(seconds: i64, nanos: i32) -> Option<prost_types::Timestamp> {
    Some(prost_types::Timestamp { seconds, nanos })
}

fn secs(seconds: i64) -> prost_types::Duration {
    prost_types::Duration { seconds, nanos: 0 }
}

/// The stored task: 2 retries with a list backoff of 5s.
fn stored_task(spec: Option<TaskSpec>) -> Task {
    let mut spec = spec.unwrap_or_else(|| TaskSpec {
        name: "nightly".into(),
        app: "demo".into(),
        handler: "report".into(),
        retry_policy: Some(RetryPolicy {
            max_retries: 2,
            backoff: Some(Backoff { kind: Some(backoff::Kind::List(ListBackoff { delays: vec![secs(5)] })) }),
        }),
        ..TaskSpec::default()
    });
    spec.misfire_policy = MisfirePolicy::FireOnce as i32;
    spec.routing = RoutingStrategy::LeastLoaded as i32;
    spec.enabled.get_or_insert(true);
    Task {
        id: 1,
        spec: Some(spec),
        next_fire_time: ts(1_767_232_800, 0),
        create_time: ts(1_767_225_600, 0),
        update_time: None,
        version: 1,
    }
}

fn preview() -> SchedulePreview {
    SchedulePreview {
        fires: vec![
            Fire { time: ts(1_767_232_800, 0), local_time: "2026-01-01T02:00:00+00:00".into() },
            Fire { time: ts(1_767_319_200, 0), local_time: "2026-01-02T02:00:00+00:00".into() },
        ],
        fires_per_day: 1.0,
        warnings: vec!["this is a test warning".into()],
        description: "cron (unix dialect) in UTC".into(),
    }
}

/// Server text that tries to take over a terminal: set the window title (OSC 0), move up and erase
/// a line (CSI), start a C1 control sequence, return the carriage and add a line of its own.
const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[1A\x1b[2K\u{9b}31m\rfake\nwarning: injected";

/// How HOSTILE reads in text output.
const HOSTILE_ESCAPED: &str = r"\x1b]0;pwned\x07\x1b[1A\x1b[2K\u{9b}31m\rfake\nwarning: injected";

fn hostile_instance(id: i64) -> Instance {
    Instance {
        id,
        task_name: HOSTILE.into(),
        idempotency_key: HOSTILE.into(),
        worker_id: HOSTILE.into(),
        message: HOSTILE.into(),
        output: HOSTILE.into(),
        status: InstanceStatus::Failed as i32,
        ..Instance::default()
    }
}

type Reply<T> = std::result::Result<Response<T>, Status>;

#[tonic::async_trait]
impl AdminService for Fake {
    async fn create_task(&self, request: Request<CreateTaskRequest>) -> Reply<CreateTaskResponse> {
        let spec = request.into_inner().task;
        self.seen.lock().expect("lock").created = spec.clone();
        Ok(Response::new(CreateTaskResponse { task: Some(stored_task(spec)), preview: Some(preview()) }))
    }
    async fn get_task(&self, request: Request<GetTaskRequest>) -> Reply<GetTaskResponse> {
        if request.get_ref().name != "nightly" {
            return Err(Status::not_found(format!("task {:?} does not exist", request.get_ref().name)));
        }
        Ok(Response::new(GetTaskResponse { task: Some(stored_task(None)), events: vec![] }))
    }
    async fn list_tasks(&self, _: Request<ListTasksRequest>) -> Reply<ListTasksResponse> {
        Err(Status::unimplemented("fake"))
    }
    async fn update_task(&self, request: Request<UpdateTaskRequest>) -> Reply<UpdateTaskResponse> {
        let request = request.into_inner();
        self.seen.lock().expect("lock").updated = Some(request.clone());
        Ok(Response::new(UpdateTaskResponse { task: Some(stored_task(None)), preview: Some(preview()) }))
    }
    async fn delete_task(&self, _: Request<DeleteTaskRequest>) -> Reply<DeleteTaskResponse> {
        Ok(Response::new(DeleteTaskResponse { canceled_instances: 3 }))
    }
    async fn enable_task(&self, _: Request<EnableTaskRequest>) -> Reply<EnableTaskResponse> {
        Err(Status::unimplemented("fake"))
    }
    async fn disable_task(&self, _: Request<DisableTaskRequest>) -> Reply<DisableTaskResponse> {
        Err(Status::unimplemented("fake"))
    }
    async fn trigger_task(&self, _: Request<TriggerTaskRequest>) -> Reply<TriggerTaskResponse> {
        Ok(Response::new(TriggerTaskResponse { instance: Some(hostile_instance(9)), created: false }))
    }
    async fn preview_schedule(&self, request: Request<PreviewScheduleRequest>) -> Reply<PreviewScheduleResponse> {
        match request.into_inner().schedule.and_then(|s| s.kind) {
            Some(schedule::Kind::Cron(cron)) if cron.expression == "0 25 * * *" => Err(Status::invalid_argument(
                "task.schedule.cron.expression: field 2 (hours) = 25 is out of range 0-23",
            )),
            _ => Ok(Response::new(PreviewScheduleResponse { preview: Some(preview()) })),
        }
    }
    async fn list_instances(&self, _: Request<ListInstancesRequest>) -> Reply<ListInstancesResponse> {
        Ok(Response::new(ListInstancesResponse {
            instances: vec![hostile_instance(9)],
            next_page_token: String::new(),
        }))
    }
    async fn get_instance(&self, request: Request<GetInstanceRequest>) -> Reply<GetInstanceResponse> {
        let event = |seconds, nanos, from: InstanceStatus, to: InstanceStatus| InstanceEvent {
            time: ts(seconds, nanos),
            from_status: from as i32,
            to_status: to as i32,
            attempt: 1,
            scheduler_id: "axd-1".into(),
            worker_id: "w1".into(),
            reason: String::new(),
        };
        Ok(Response::new(GetInstanceResponse {
            instance: Some(Instance {
                id: request.get_ref().id,
                task_name: "nightly".into(),
                status: InstanceStatus::Running as i32,
                source: InstanceSource::Manual as i32,
                params: "{\"x\":1}".into(),
                ..Instance::default()
            }),
            events: vec![
                event(1_767_261_600, 0, InstanceStatus::Unspecified, InstanceStatus::Pending),
                event(1_767_261_601, 204_000_000, InstanceStatus::Pending, InstanceStatus::Dispatched),
                event(1_767_261_601, 304_000_000, InstanceStatus::Dispatched, InstanceStatus::Running),
            ],
        }))
    }
    async fn cancel_instance(&self, _: Request<CancelInstanceRequest>) -> Reply<CancelInstanceResponse> {
        Err(Status::failed_precondition("instance 9 is already SUCCESS"))
    }
    async fn retry_instance(&self, _: Request<RetryInstanceRequest>) -> Reply<RetryInstanceResponse> {
        Err(Status::failed_precondition(HOSTILE))
    }
    async fn get_instance_logs(&self, _: Request<GetInstanceLogsRequest>) -> Reply<GetInstanceLogsResponse> {
        let line = LogLine {
            seq: 1,
            attempt: 1,
            level: LogLevel::Error as i32,
            time: ts(1_767_261_600, 0),
            message: HOSTILE.into(),
        };
        Ok(Response::new(GetInstanceLogsResponse { lines: vec![line], dropped: 0 }))
    }
    async fn explain_task(&self, _: Request<ExplainTaskRequest>) -> Reply<ExplainTaskResponse> {
        Ok(Response::new(ExplainTaskResponse {
            task: Some(Task {
                spec: Some(TaskSpec { name: HOSTILE.into(), app: HOSTILE.into(), ..TaskSpec::default() }),
                ..Task::default()
            }),
            at: ts(1_767_261_600, 0),
            findings: vec![ExplainFinding {
                kind: ExplainFindingKind::NoWorker as i32,
                time: ts(1_767_261_600, 0),
                message: HOSTILE.into(),
                instance_id: 9,
            }],
            recent: vec![ExplainedFire {
                instance: Some(hostile_instance(9)),
                waited_for: HOSTILE.into(),
                ..ExplainedFire::default()
            }],
            workers: Some(ExplainWorkers::default()),
            ..ExplainTaskResponse::default()
        }))
    }
    async fn list_workers(&self, _: Request<ListWorkersRequest>) -> Reply<ListWorkersResponse> {
        Err(Status::unimplemented("fake"))
    }
    async fn list_schedulers(&self, _: Request<ListSchedulersRequest>) -> Reply<ListSchedulersResponse> {
        Err(Status::unimplemented("fake"))
    }
    async fn list_audit_entries(&self, _: Request<ListAuditEntriesRequest>) -> Reply<ListAuditEntriesResponse> {
        Err(Status::unimplemented("not faked"))
    }
    async fn create_alert_rule(
        &self,
        _: Request<ax_proto::v1::CreateAlertRuleRequest>,
    ) -> Reply<ax_proto::v1::CreateAlertRuleResponse> {
        Err(Status::unimplemented("not faked"))
    }
    async fn list_alert_rules(
        &self,
        _: Request<ax_proto::v1::ListAlertRulesRequest>,
    ) -> Reply<ax_proto::v1::ListAlertRulesResponse> {
        Err(Status::unimplemented("not faked"))
    }
    async fn delete_alert_rule(
        &self,
        _: Request<ax_proto::v1::DeleteAlertRuleRequest>,
    ) -> Reply<ax_proto::v1::DeleteAlertRuleResponse> {
        Err(Status::unimplemented("not faked"))
    }
    async fn test_alert_rule(
        &self,
        _: Request<ax_proto::v1::TestAlertRuleRequest>,
    ) -> Reply<ax_proto::v1::TestAlertRuleResponse> {
        Err(Status::unimplemented("not faked"))
    }
    async fn list_alert_deliveries(
        &self,
        _: Request<ax_proto::v1::ListAlertDeliveriesRequest>,
    ) -> Reply<ax_proto::v1::ListAlertDeliveriesResponse> {
        Err(Status::unimplemented("not faked"))
    }
    async fn get_cluster_stats(&self, request: Request<GetClusterStatsRequest>) -> Reply<GetClusterStatsResponse> {
        let has_cert = request.peer_certs().is_some_and(|certs| !certs.is_empty());
        self.seen.lock().expect("lock").client_cert = has_cert;
        Ok(Response::new(GetClusterStatsResponse {
            tasks: 3,
            enabled_tasks: 2,
            instances: vec![
                StatusCount { status: InstanceStatus::Pending as i32, count: 5 },
                StatusCount { status: InstanceStatus::Running as i32, count: 1 },
            ],
            workers: 1,
            schedulers: 1,
            answered_by: None,
        }))
    }
}

/// A running fake axd with its certificates; stops when dropped.
struct Harness {
    dir: PathBuf,
    addr: SocketAddr,
    seen: Arc<Mutex<Seen>>,
    _stop: oneshot::Sender<()>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Harness {
    /// Writes certificates with `axctl certs init` and serves the fake with mTLS on 127.0.0.1:0.
    async fn start(test: &str) -> Harness {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = std::env::temp_dir().join(format!("axctl-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = axctl_raw(&[], &["certs", "init", dir.to_str().expect("utf-8 path"), "--viewer", "bob"]).await;
        assert!(out.status.success(), "certs init failed: {}", String::from_utf8_lossy(&out.stderr));

        let read = |name: &str| std::fs::read(dir.join(name)).expect("certificate file");
        let tls = ServerTlsConfig::new()
            .identity(Identity::from_pem(read("server.pem"), read("server.key")))
            .client_ca_root(Certificate::from_pem(read("ca.pem")));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let fake = Fake::default();
        let seen = fake.seen.clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let server = Server::builder()
            .tls_config(tls)
            .expect("tls config")
            .add_service(AdminServiceServer::new(fake))
            .serve_with_incoming_shutdown(TcpIncoming::from(listener), async {
                let _ = stopped.await;
            });
        tokio::spawn(server);
        Harness { dir, addr, seen, _stop: stop }
    }

    /// The environment that points axctl at the fake with the admin certificate.
    fn env(&self) -> Vec<(String, String)> {
        let path = |name: &str| self.dir.join(name).display().to_string();
        vec![
            ("AX_ENDPOINT".into(), format!("https://localhost:{}", self.addr.port())),
            ("AX_CA".into(), path("ca.pem")),
            ("AX_CERT".into(), path("admin-admin.pem")),
            ("AX_KEY".into(), path("admin-admin.key")),
        ]
    }

    async fn axctl(&self, args: &[&str]) -> Output {
        Output::from(axctl_raw(&self.env(), args).await)
    }
}

/// The command that runs the binary with only the given AX_* variables set.
fn axctl_command(env: &[(String, String)], args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_axctl"));
    for name in ["AX_ENDPOINT", "AX_CA", "AX_CERT", "AX_KEY"] {
        command.env_remove(name);
    }
    command.envs(env.iter().map(|(k, v)| (k, v))).args(args);
    command
}

/// Runs the binary with only the given AX_* variables set.
async fn axctl_raw(env: &[(String, String)], args: &[&str]) -> std::process::Output {
    axctl_command(env, args).output().await.expect("run axctl")
}

/// Runs the binary with stdout and stderr into one file, as `axctl ... >log 2>&1` does; returns
/// what the file holds.
async fn axctl_one_stream(env: &[(String, String)], args: &[&str], file: &Path) -> String {
    let out = std::fs::File::create(file).expect("create the output file");
    let err = out.try_clone().expect("clone the output file");
    let status = axctl_command(env, args).stdout(out).stderr(err).status().await.expect("run axctl");
    assert!(status.success(), "{args:?}: {status:?}");
    std::fs::read_to_string(file).expect("read the output file")
}

/// A finished axctl run.
struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl From<std::process::Output> for Output {
    fn from(out: std::process::Output) -> Self {
        Output {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Output {
    fn json(&self) -> Value {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", self.stdout))
    }
}

#[tokio::test]
async fn cluster_stats_over_mtls_prints_every_status() {
    let fake = Harness::start("stats").await;
    let stats = fake.axctl(&["cluster", "stats", "-o", "json"]).await.json();
    assert_eq!(stats["tasks"], 3);
    assert_eq!(stats["enabled_tasks"], 2);
    assert_eq!(stats["instances"]["PENDING"], 5);
    assert_eq!(stats["instances"]["RUNNING"], 1);
    assert_eq!(stats["instances"]["SKIPPED"], 0);
    assert!(fake.seen.lock().expect("lock").client_cert, "the admin certificate was presented");
}

#[tokio::test]
async fn server_errors_print_the_code_and_message_and_exit_1() {
    let fake = Harness::start("errors").await;
    let out = fake.axctl(&["schedule", "preview", "--cron", "0 25 * * *", "-o", "json"]).await;
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr.trim_end(),
        "error: InvalidArgument: task.schedule.cron.expression: field 2 (hours) = 25 is out of range 0-23"
    );
    let out = fake.axctl(&["instance", "cancel", "9"]).await;
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stderr.trim_end(), "error: FailedPrecondition: instance 9 is already SUCCESS");
}

#[tokio::test]
async fn create_sends_the_spec_and_prints_task_and_preview() {
    let fake = Harness::start("create").await;
    let args = [
        "task",
        "create",
        "nightly",
        "--app",
        "demo",
        "--handler",
        "report",
        "--cron",
        "0 2 * * *",
        "--tz",
        "Europe/London",
        "--timeout",
        "1h30m",
        "--label",
        "team=ops",
        "-o",
        "json",
    ];
    let out = fake.axctl(&args).await.json();
    let sent = fake.seen.lock().expect("lock").created.clone().expect("create was called");
    assert_eq!(sent.name, "nightly");
    assert_eq!(sent.timeout, Some(secs(5400)));
    assert!(
        matches!(sent.schedule.and_then(|s| s.kind), Some(schedule::Kind::Cron(c)) if c.time_zone == "Europe/London")
    );
    assert_eq!(out["task"]["schedule"]["kind"], "CRON");
    assert_eq!(out["task"]["timeout"], "1h30m");
    assert_eq!(out["task"]["misfire_policy"], "FIRE_ONCE");
    assert_eq!(out["task"]["labels"]["team"], "ops");
    assert_eq!(out["preview"]["fires"][0]["time"], "2026-01-01T02:00:00Z");
    assert_eq!(out["preview"]["warnings"][0], "this is a test warning");

    let table = fake.axctl(&["task", "create", "t2", "--app", "demo", "--handler", "h", "--manual"]).await;
    assert_eq!(table.code, Some(0), "{}", table.stderr);
    assert!(table.stdout.contains("warning: this is a test warning"), "{}", table.stdout);
    assert!(table.stderr.contains("warning: this is a test warning"), "piped stdout: warnings repeated on stderr");
}

#[tokio::test]
async fn update_with_only_retries_keeps_the_stored_backoff() {
    let fake = Harness::start("update").await;
    fake.axctl(&["task", "update", "nightly", "--retries", "7", "-o", "json"]).await.json();
    let sent = fake.seen.lock().expect("lock").updated.clone().expect("update was called");
    assert_eq!(sent.name, "nightly");
    assert_eq!(sent.update_mask.expect("mask").paths, ["retry_policy"]);
    let policy = sent.task.and_then(|t| t.retry_policy).expect("retry policy");
    assert_eq!(policy.max_retries, 7);
    assert_eq!(
        policy.backoff,
        Some(Backoff { kind: Some(backoff::Kind::List(ListBackoff { delays: vec![secs(5)] })) })
    );

    let out = fake.axctl(&["task", "update", "missing", "--backoff", "1s"]).await;
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.starts_with("error: NotFound: task \"missing\""), "{}", out.stderr);
}

#[tokio::test]
async fn instance_get_reports_the_time_between_events() {
    let fake = Harness::start("instance").await;
    let out = fake.axctl(&["instance", "get", "42", "-o", "json"]).await.json();
    assert_eq!(out["instance"]["id"], 42);
    assert_eq!(out["instance"]["status"], "RUNNING");
    assert_eq!(out["instance"]["source"], "MANUAL");
    assert_eq!(out["instance"]["params"]["x"], 1);
    let events = out["events"].as_array().expect("events");
    assert_eq!(events[0]["from_status"], Value::Null);
    assert_eq!(events[0]["since_previous"], Value::Null);
    assert_eq!(events[1]["from_status"], "PENDING");
    assert_eq!(events[1]["since_previous"], "1s204ms");
    assert_eq!(events[2]["since_previous"], "100ms");

    let table = fake.axctl(&["instance", "get", "42"]).await;
    assert!(table.stdout.contains("PENDING -> DISPATCHED"), "{}", table.stdout);
    assert!(table.stdout.contains("+1.204s"), "{}", table.stdout);
}

#[tokio::test]
async fn delete_reports_canceled_instances() {
    let fake = Harness::start("delete").await;
    let out = fake.axctl(&["task", "delete", "nightly", "-o", "json"]).await.json();
    assert_eq!(out, serde_json::json!({"deleted": "nightly", "canceled_instances": 3}));
}

#[tokio::test]
async fn connection_failures_name_the_endpoint() {
    let fake = Harness::start("connect").await;
    // No client certificate: the server refuses the handshake.
    let mut env = fake.env();
    env.retain(|(k, _)| k == "AX_ENDPOINT" || k == "AX_CA");
    let endpoint = env[0].1.clone();
    let out = Output::from(axctl_raw(&env, &["cluster", "stats"]).await);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains(&endpoint), "{}", out.stderr);
    // Nothing listening.
    drop(fake);
    let out = Output::from(axctl_raw(&[], &["--endpoint", "http://127.0.0.1:9", "cluster", "stats"]).await);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.starts_with("error: cannot connect to http://127.0.0.1:9"), "{}", out.stderr);
}

/// A second `certs init` into the same directory must not silently replace keys in use.
#[tokio::test]
async fn certs_init_refuses_to_overwrite_without_force() {
    let fake = Harness::start("certs").await;
    let dir: &Path = &fake.dir;
    let out = Output::from(axctl_raw(&[], &["certs", "init", dir.to_str().expect("utf-8")]).await);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("refusing to overwrite"), "{}", out.stderr);
    let out =
        Output::from(axctl_raw(&[], &["certs", "init", dir.to_str().expect("utf-8"), "--force", "-o", "json"]).await);
    let json = out.json();
    // CA, server, worker-demo and admin-admin, each .pem and .key; the admin's .p12 and .p12.pass.
    assert_eq!(json["files"].as_array().map(Vec::len), Some(10));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        for secret in ["admin-admin.key", "admin-admin.p12", "admin-admin.p12.pass"] {
            let mode = std::fs::metadata(dir.join(secret)).expect(secret).permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{secret}");
        }
    }
}

#[tokio::test]
async fn usage_errors_name_the_flag_and_value_and_exit_1() {
    let out =
        Output::from(axctl_raw(&[], &["task", "create", "x", "--app", "a", "--handler", "h", "--every", "10x"]).await);
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stdout, "");
    assert!(out.stderr.starts_with("error: invalid value '10x' for '--every <DUR>'"), "{}", out.stderr);
    let out = Output::from(axctl_raw(&[], &["task", "update", "x"]).await);
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.starts_with("error: nothing to update"), "{}", out.stderr);
}

/// The control characters (other than the line breaks axctl lays out) in a text.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars().filter(|c| c.is_control() && *c != '\n').collect()
}

#[tokio::test]
async fn server_text_cannot_drive_the_terminal_but_json_keeps_it_exact() {
    let fake = Harness::start("hostile").await;
    for args in [
        &["instance", "logs", "9"][..],
        &["instance", "list"],
        &["task", "trigger", "nightly"],
        &["task", "explain", "x"],
    ] {
        let out = fake.axctl(args).await;
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
        assert_eq!(raw_controls(&out.stdout), [], "{args:?}: raw control characters on stdout:\n{}", out.stdout);
        assert!(out.stdout.contains(HOSTILE_ESCAPED), "{args:?}: the text is shown escaped:\n{}", out.stdout);
        assert!(!out.stdout.lines().any(|l| l.starts_with("warning: injected")), "{args:?}:\n{}", out.stdout);
    }
    // Errors carry the server's message to stderr.
    let out = fake.axctl(&["instance", "retry", "9"]).await;
    assert_eq!(out.code, Some(1));
    assert_eq!(raw_controls(&out.stderr), [], "raw control characters on stderr:\n{}", out.stderr);
    assert_eq!(out.stderr, format!("error: FailedPrecondition: {HOSTILE_ESCAPED}\n"));

    let logs = fake.axctl(&["instance", "logs", "9", "-o", "json"]).await.json();
    assert_eq!(logs["lines"][0]["message"], HOSTILE, "JSON is exact");
    let listed = fake.axctl(&["instance", "list", "-o", "json"]).await.json();
    assert_eq!(listed["instances"][0]["message"], HOSTILE);
    let explained = fake.axctl(&["task", "explain", "x", "-o", "json"]).await.json();
    assert_eq!(explained["findings"][0]["message"], HOSTILE);
    assert_eq!(explained["findings"][0]["kind"], "NO_WORKER");
    assert_eq!(explained["recent"][0]["waited_for"], HOSTILE);
}

/// `axctl ... >log 2>&1`: the report's last line ends before the warnings repeated on stderr.
#[tokio::test]
async fn warnings_on_stderr_start_a_line_of_their_own() {
    let fake = Harness::start("newline").await;
    let file = fake.dir.join("one-stream.log");
    let args = ["task", "create", "t2", "--app", "demo", "--handler", "h", "--every", "2s"];
    let text = axctl_one_stream(&fake.env(), &args, &file).await;
    assert!(text.ends_with("\nwarning: this is a test warning\nwarning: this is a test warning\n"), "{text}");
    for line in text.lines() {
        assert!(line.find("warning:").is_none_or(|at| at == 0), "a warning joined a line: {line:?}");
    }
}

#[tokio::test]
async fn previews_show_the_wall_clock_with_the_zone_abbreviation_and_offset() {
    let fake = Harness::start("preview").await;
    let out = fake.axctl(&["schedule", "preview", "--cron", "0 2 * * *", "--tz", "Europe/London"]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("  2026-01-01T02:00:00Z  2026-01-01 02:00:00 GMT (+00:00)\n"), "{}", out.stdout);
    let json = fake.axctl(&["schedule", "preview", "--cron", "0 2 * * *", "--tz", "Europe/London", "-o", "json"]).await;
    assert_eq!(json.json()["preview"]["fires"][0]["local_time"], "2026-01-01T02:00:00+00:00", "JSON is as sent");
}
