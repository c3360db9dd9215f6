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
    limit_set: Option<AppLimit>,
    limit_deleted: Option<String>,
    /// The status filter of the last ListInstances.
    listed_status: Option<i32>,
    triggered: Option<TriggerTaskRequest>,
    paused: Option<PauseTaskRequest>,
    backfilled: Option<BackfillTaskRequest>,
    calendar_created: Option<Calendar>,
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
        ..Task::default()
    }
}

fn preview() -> SchedulePreview {
    SchedulePreview {
        fires: vec![
            Fire {
                time: ts(1_767_232_800, 0),
                local_time: "2026-01-01T02:00:00+00:00".into(),
                run_time: ts(1_767_232_800, 0),
            },
            Fire {
                time: ts(1_767_319_200, 0),
                local_time: "2026-01-02T02:00:00+00:00".into(),
                run_time: ts(1_767_319_200, 0),
            },
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

/// The id of the fake's one fan-out parent: WAITING, with two children.
const PARENT_ID: i64 = 100;

/// The id of the fake's chained instance: created by instance 1's success, upstream of 13.
const CHAINED_ID: i64 = 12;

/// The parent's children, by shard index: one done on w1, one still pending for w2.
fn children() -> Vec<Instance> {
    let child = |id, index, status: InstanceStatus, worker: &str| Instance {
        id,
        parent_id: PARENT_ID,
        shard_index: index,
        shard_total: 2,
        task_name: "fanout".into(),
        status: status as i32,
        target_worker: format!("w{}", index + 1),
        worker_id: worker.into(),
        attempt: u32::from(!worker.is_empty()),
        ..Instance::default()
    };
    vec![child(101, 0, InstanceStatus::Success, "w1"), child(102, 1, InstanceStatus::Pending, "")]
}

/// The stored limits: billing's, and one whose setter's identity is hostile text.
fn stored_limits() -> Vec<AppLimit> {
    vec![
        AppLimit {
            app: "billing".into(),
            per_second: 2.5,
            burst: 5,
            tokens: 1.25,
            updated_by: "spiffe://ax/admin/admin".into(),
            update_time: ts(1_767_261_600, 0),
        },
        AppLimit {
            app: "reports".into(),
            per_second: 0.1,
            burst: 1,
            tokens: 0.0,
            updated_by: HOSTILE.into(),
            update_time: None,
        },
    ]
}

/// The one calendar: two dates, a description with hostile text.
fn holidays() -> Calendar {
    Calendar {
        name: "holidays".into(),
        description: HOSTILE.into(),
        dates: vec!["2026-12-25".into(), "2027-01-01".into()],
        created_by: "spiffe://ax/admin/admin".into(),
        create_time: ts(1_767_225_600, 0),
        updated_by: "spiffe://ax/admin/admin".into(),
        update_time: ts(1_767_225_600, 0),
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
    async fn trigger_task(&self, request: Request<TriggerTaskRequest>) -> Reply<TriggerTaskResponse> {
        let request = request.into_inner();
        self.seen.lock().expect("lock").triggered = Some(request.clone());
        if request.when.is_some() {
            // A delayed trigger: created now, to run ten minutes later.
            let instance = Instance {
                id: 11,
                task_name: "nightly".into(),
                status: InstanceStatus::Pending as i32,
                create_time: ts(1_767_261_600, 0),
                available_time: ts(1_767_262_200, 0),
                ..Instance::default()
            };
            return Ok(Response::new(TriggerTaskResponse { instance: Some(instance), created: true, done: false }));
        }
        Ok(Response::new(TriggerTaskResponse { instance: Some(hostile_instance(9)), created: false, done: false }))
    }
    async fn preview_schedule(&self, request: Request<PreviewScheduleRequest>) -> Reply<PreviewScheduleResponse> {
        match request.into_inner().schedule.and_then(|s| s.kind) {
            Some(schedule::Kind::Cron(cron)) if cron.expression == "0 25 * * *" => Err(Status::invalid_argument(
                "task.schedule.cron.expression: field 2 (hours) = 25 is out of range 0-23",
            )),
            _ => Ok(Response::new(PreviewScheduleResponse { preview: Some(preview()) })),
        }
    }
    async fn list_instances(&self, request: Request<ListInstancesRequest>) -> Reply<ListInstancesResponse> {
        self.seen.lock().expect("lock").listed_status = Some(request.get_ref().status);
        if request.get_ref().status == InstanceStatus::Waiting as i32 {
            let parent = Instance {
                id: PARENT_ID,
                task_name: "fanout".into(),
                status: InstanceStatus::Waiting as i32,
                ..Instance::default()
            };
            return Ok(Response::new(ListInstancesResponse {
                instances: vec![parent],
                next_page_token: String::new(),
            }));
        }
        Ok(Response::new(ListInstancesResponse {
            instances: vec![hostile_instance(9)],
            next_page_token: String::new(),
        }))
    }
    async fn get_instance(&self, request: Request<GetInstanceRequest>) -> Reply<GetInstanceResponse> {
        if request.get_ref().id == CHAINED_ID {
            let linked = |id, task: &str| Instance {
                id,
                task_name: task.into(),
                status: InstanceStatus::Success as i32,
                run_id: 1,
                ..Instance::default()
            };
            return Ok(Response::new(GetInstanceResponse {
                instance: Some(Instance { chained_from: 1, run_id: 1, ..linked(CHAINED_ID, "load") }),
                upstream: vec![InstanceLink { instance: Some(linked(1, "extract")), kind: LinkKind::OnSuccess as i32 }],
                downstream: vec![InstanceLink { instance: Some(linked(13, HOSTILE)), kind: LinkKind::AfterAll as i32 }],
                ..GetInstanceResponse::default()
            }));
        }
        if request.get_ref().id == PARENT_ID {
            let parent = Instance {
                id: PARENT_ID,
                task_name: "fanout".into(),
                status: InstanceStatus::Waiting as i32,
                source: InstanceSource::Schedule as i32,
                ..Instance::default()
            };
            return Ok(Response::new(GetInstanceResponse {
                instance: Some(parent),
                events: vec![],
                children: children(),
                ..GetInstanceResponse::default()
            }));
        }
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
            children: vec![],
            ..GetInstanceResponse::default()
        }))
    }
    async fn cancel_instance(&self, _: Request<CancelInstanceRequest>) -> Reply<CancelInstanceResponse> {
        Err(Status::failed_precondition("instance 9 is already SUCCESS"))
    }
    async fn retry_instance(&self, _: Request<RetryInstanceRequest>) -> Reply<RetryInstanceResponse> {
        Err(Status::failed_precondition(HOSTILE))
    }
    async fn bulk_instances(
        &self,
        _: Request<ax_proto::v1::BulkInstancesRequest>,
    ) -> Reply<ax_proto::v1::BulkInstancesResponse> {
        Err(Status::failed_precondition(HOSTILE))
    }
    async fn apply_tasks(
        &self,
        _: Request<ax_proto::v1::ApplyTasksRequest>,
    ) -> Reply<ax_proto::v1::ApplyTasksResponse> {
        Err(Status::failed_precondition(HOSTILE))
    }
    type WatchInstanceStream =
        tonic::codegen::tokio_stream::Empty<std::result::Result<ax_proto::v1::WatchInstanceResponse, Status>>;
    async fn watch_instance(&self, _: Request<ax_proto::v1::WatchInstanceRequest>) -> Reply<Self::WatchInstanceStream> {
        Err(Status::unimplemented("fake"))
    }
    async fn publish_event(
        &self,
        _: Request<ax_proto::v1::PublishEventRequest>,
    ) -> Reply<ax_proto::v1::PublishEventResponse> {
        Err(Status::unimplemented("fake"))
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
                fires: None,
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
        let worker = WorkerSession {
            session_id: "s1".into(),
            worker_id: "w1".into(),
            app: "billing".into(),
            handlers: vec!["report".into(), "send-invoice".into()],
            capacity: 4,
            credits: 4,
            // One streak that has not started a cooldown, one cooling down until 2100 (more than a
            // day from any test run, so shown with its date).
            cooldowns: vec![
                WorkerCooldown { handler: "report".into(), consecutive_failures: 2, until: None },
                WorkerCooldown { handler: "send-invoice".into(), consecutive_failures: 5, until: ts(4_102_444_800, 0) },
            ],
            ..WorkerSession::default()
        };
        Ok(Response::new(ListWorkersResponse { workers: vec![worker] }))
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
    /// Stores like axd: a rate out of range is refused naming the field, burst 0 becomes the rate
    /// rounded up, the bucket starts full.
    async fn set_app_limit(&self, request: Request<SetAppLimitRequest>) -> Reply<SetAppLimitResponse> {
        let limit = request.into_inner().limit.unwrap_or_default();
        self.seen.lock().expect("lock").limit_set = Some(limit.clone());
        if !(0.001..=100_000.0).contains(&limit.per_second) {
            return Err(Status::invalid_argument(format!(
                "limit.per_second: {} is out of range 0.001-100000",
                limit.per_second
            )));
        }
        let burst = if limit.burst == 0 { (limit.per_second.ceil() as u32).max(1) } else { limit.burst };
        let stored = AppLimit {
            burst,
            tokens: f64::from(burst),
            updated_by: "spiffe://ax/admin/admin".into(),
            update_time: ts(1_767_261_600, 0),
            ..limit
        };
        Ok(Response::new(SetAppLimitResponse { limit: Some(stored) }))
    }
    async fn list_app_limits(&self, _: Request<ListAppLimitsRequest>) -> Reply<ListAppLimitsResponse> {
        Ok(Response::new(ListAppLimitsResponse { limits: stored_limits() }))
    }
    /// Only billing has a limit; the NOT_FOUND for another app carries hostile text.
    async fn delete_app_limit(&self, request: Request<DeleteAppLimitRequest>) -> Reply<DeleteAppLimitResponse> {
        let app = request.into_inner().app;
        self.seen.lock().expect("lock").limit_deleted = Some(app.clone());
        if app != "billing" {
            return Err(Status::not_found(format!("rate limit of app \"{app}\" {HOSTILE}")));
        }
        Ok(Response::new(DeleteAppLimitResponse {}))
    }
    /// Stores the pause (the note is the server's to keep: here, hostile text comes back).
    async fn pause_task(&self, request: Request<PauseTaskRequest>) -> Reply<PauseTaskResponse> {
        let request = request.into_inner();
        self.seen.lock().expect("lock").paused = Some(request.clone());
        let mut task = stored_task(None);
        task.next_fire_time = request.until;
        task.pause = Some(TaskPause {
            actor: "spiffe://ax/admin/admin".into(),
            note: format!("{} {HOSTILE}", request.note),
            pause_time: ts(1_767_261_600, 0),
            until: request.until,
        });
        Ok(Response::new(PauseTaskResponse { task: Some(task) }))
    }
    async fn resume_task(&self, _: Request<ResumeTaskRequest>) -> Reply<ResumeTaskResponse> {
        Ok(Response::new(ResumeTaskResponse { task: Some(stored_task(None)) }))
    }
    /// Three hourly fires from `from`: the second had an instance; a dry run creates none.
    async fn backfill_task(&self, request: Request<BackfillTaskRequest>) -> Reply<BackfillTaskResponse> {
        let request = request.into_inner();
        self.seen.lock().expect("lock").backfilled = Some(request.clone());
        let from = request.from.map_or(0, |t| t.seconds);
        let fire =
            |n: i64, id: i64, created: bool| BackfilledFire { time: ts(from + 3600 * n, 0), instance_id: id, created };
        let fires = if request.dry_run {
            vec![fire(0, 0, true), fire(1, 5, false), fire(2, 0, true)]
        } else {
            vec![fire(0, 20, true), fire(1, 5, false), fire(2, 21, true)]
        };
        Ok(Response::new(BackfillTaskResponse { fires, created: 2 }))
    }
    async fn create_calendar(&self, request: Request<CreateCalendarRequest>) -> Reply<CreateCalendarResponse> {
        let calendar = request.into_inner().calendar.unwrap_or_default();
        self.seen.lock().expect("lock").calendar_created = Some(calendar.clone());
        let stored =
            Calendar { created_by: "spiffe://ax/admin/admin".into(), create_time: ts(1_767_261_600, 0), ..calendar };
        Ok(Response::new(CreateCalendarResponse { calendar: Some(stored) }))
    }
    async fn update_calendar(&self, request: Request<UpdateCalendarRequest>) -> Reply<UpdateCalendarResponse> {
        Ok(Response::new(UpdateCalendarResponse { calendar: request.into_inner().calendar }))
    }
    async fn get_calendar(&self, request: Request<GetCalendarRequest>) -> Reply<GetCalendarResponse> {
        if request.get_ref().name != "holidays" {
            return Err(Status::not_found(format!("calendar {:?} not found", request.get_ref().name)));
        }
        Ok(Response::new(GetCalendarResponse {
            calendar: Some(holidays()),
            tasks: vec!["nightly".into(), HOSTILE.into()],
        }))
    }
    async fn list_calendars(&self, _: Request<ListCalendarsRequest>) -> Reply<ListCalendarsResponse> {
        Ok(Response::new(ListCalendarsResponse { calendars: vec![holidays()] }))
    }
    async fn delete_calendar(&self, _: Request<DeleteCalendarRequest>) -> Reply<DeleteCalendarResponse> {
        Err(Status::failed_precondition("calendar \"holidays\" is used by task(s) nightly; change them first"))
    }
    /// Run 1: extract (1) -> load (12) on success, and load -> report (13) after all.
    async fn get_run(&self, request: Request<GetRunRequest>) -> Reply<GetRunResponse> {
        if request.get_ref().run_id != 1 {
            return Err(Status::not_found("run 2 (the id of the first instance of a run) not found"));
        }
        let node = |id, task: &str, status: InstanceStatus, from| Instance {
            id,
            task_name: task.into(),
            status: status as i32,
            run_id: 1,
            chained_from: from,
            ..Instance::default()
        };
        let edge = |from, to, kind: LinkKind| RunEdge { from_instance_id: from, to_instance_id: to, kind: kind as i32 };
        Ok(Response::new(GetRunResponse {
            run_id: 1,
            instances: vec![
                node(1, "extract", InstanceStatus::Success, 0),
                node(12, "load", InstanceStatus::Success, 1),
                node(13, HOSTILE, InstanceStatus::Pending, 12),
            ],
            edges: vec![edge(1, 12, LinkKind::OnSuccess), edge(12, 13, LinkKind::AfterAll)],
        }))
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
            .client_ca_root(Certificate::from_pem(read("client-ca.pem")));
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
            ("AX_CA".into(), path("server-ca.pem")),
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
    // The server CA (its certificate only), the client CA, server, worker-demo and admin-admin, each
    // .pem and .key; the admin's .p12 and .p12.pass.
    assert_eq!(json["files"].as_array().map(Vec::len), Some(11));
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

#[tokio::test]
async fn rate_limit_set_sends_the_limit_and_prints_it_as_stored() {
    let fake = Harness::start("limit-set").await;
    let out = fake.axctl(&["rate-limit", "set", "billing", "--per-second", "2.5"]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "rate limit of app billing: 2.5 starts per second, burst 3\n");
    let sent = fake.seen.lock().expect("lock").limit_set.take().expect("set was called");
    assert_eq!(sent, AppLimit { app: "billing".into(), per_second: 2.5, burst: 0, ..AppLimit::default() });

    let json =
        fake.axctl(&["-o", "json", "rate-limit", "set", "billing", "--per-second", "0.5", "--burst", "10"]).await;
    let json = json.json();
    assert_eq!(
        json,
        serde_json::json!({
            "app": "billing",
            "per_second": 0.5,
            "burst": 10,
            "tokens": 10.0,
            "updated_by": "spiffe://ax/admin/admin",
            "update_time": "2026-01-01T10:00:00Z"
        })
    );
    assert_eq!(fake.seen.lock().expect("lock").limit_set.take().map(|l| l.burst), Some(10));
}

#[tokio::test]
async fn rate_limit_errors_exit_1_and_bad_flags_send_nothing() {
    let fake = Harness::start("limit-errors").await;
    let out = fake.axctl(&["rate-limit", "set", "billing", "--per-second", "0"]).await;
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr, "error: InvalidArgument: limit.per_second: 0 is out of range 0.001-100000\n");

    let out = fake.axctl(&["rate-limit", "set", "billing", "--per-second", "fast"]).await;
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.starts_with("error: invalid value 'fast' for '--per-second <R>'"), "{}", out.stderr);
    let out = fake.axctl(&["rate-limit", "set", "billing", "--per-second", "1", "--burst", "-1"]).await;
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.starts_with("error: invalid value '-1' for '--burst <N>'"), "{}", out.stderr);
    assert_eq!(fake.seen.lock().expect("lock").limit_set.take().map(|l| l.per_second), Some(0.0), "only the first");
}

#[tokio::test]
async fn rate_limit_list_prints_a_table_and_json_with_server_text_escaped() {
    let fake = Harness::start("limit-list").await;
    let out = fake.axctl(&["rate-limit", "list"]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(raw_controls(&out.stdout), [], "raw control characters on stdout:\n{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "a header and one line per limit:\n{}", out.stdout);
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["APP", "PER", "SECOND", "BURST", "TOKENS", "UPDATED", "BY", "UPDATED"]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["billing", "2.5", "5", "1.25", "spiffe://ax/admin/admin", "2026-01-01T10:00:00Z"]
    );
    assert!(lines[2].starts_with("reports  0.1         1      0       "), "{}", lines[2]);
    assert!(lines[2].contains(HOSTILE_ESCAPED), "{}", lines[2]);

    let json = fake.axctl(&["rate-limit", "list", "-o", "json"]).await.json();
    let limits = json["limits"].as_array().expect("limits");
    assert_eq!(limits.len(), 2);
    assert_eq!(limits[0]["app"], "billing");
    assert_eq!(limits[0]["tokens"], 1.25);
    assert_eq!(limits[1]["updated_by"], HOSTILE, "JSON is exact");
    assert_eq!(limits[1]["update_time"], Value::Null);
}

#[tokio::test]
async fn rate_limit_delete_removes_and_reports_a_missing_limit_escaped() {
    let fake = Harness::start("limit-delete").await;
    let out = fake.axctl(&["rate-limit", "delete", "billing"]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "deleted rate limit of app billing\n");
    assert_eq!(fake.seen.lock().expect("lock").limit_deleted.take().as_deref(), Some("billing"));
    let json = fake.axctl(&["rate-limit", "delete", "billing", "-o", "json"]).await.json();
    assert_eq!(json, serde_json::json!({"deleted": "billing"}));

    let out = fake.axctl(&["rate-limit", "delete", "payments"]).await;
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stdout, "");
    assert_eq!(raw_controls(&out.stderr), [], "raw control characters on stderr:\n{}", out.stderr);
    assert_eq!(out.stderr, format!("error: NotFound: rate limit of app \"payments\" {HOSTILE_ESCAPED}\n"));
    assert_eq!(fake.seen.lock().expect("lock").limit_deleted.take().as_deref(), Some("payments"));
}

#[tokio::test]
async fn update_names_cleared_routing_and_limits_fields_in_the_mask() {
    let fake = Harness::start("update-limits").await;
    let args =
        ["task", "update", "nightly", "--max-running", "none", "--selector", "", "--priority", "4", "--cooldown", "0s"];
    let out = fake.axctl(&args).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let sent = fake.seen.lock().expect("lock").updated.clone().expect("update was called");
    assert_eq!(sent.update_mask.expect("mask").paths, ["selector", "priority", "max_running", "cooldown"]);
    let spec = sent.task.expect("spec");
    assert_eq!((spec.selector.as_str(), spec.priority, spec.max_running), ("", 4, None));
    assert_eq!(spec.cooldown, Some(secs(0)));
    // The stored task (all defaults) reads as its defaults.
    assert!(out.stdout.contains("\nmax running:     no limit\n"), "{}", out.stdout);
    assert!(out.stdout.contains("\ncooldown:        axd default\n"), "{}", out.stdout);
}

#[tokio::test]
async fn instance_get_of_a_parent_lists_its_children() {
    let fake = Harness::start("children").await;
    let id = PARENT_ID.to_string();
    let out = fake.axctl(&["instance", "get", &id]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("\nstatus:           WAITING\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "\nchildren: 2 (1 SUCCESS, 1 PENDING)\n  \
             ID   SHARD  WORKER       STATUS   ATTEMPT  MESSAGE\n  \
             101  0/2    w1           SUCCESS  1\n  \
             102  1/2    w2 (pinned)  PENDING  0\n\nevents:\n  none\n"
        ),
        "{}",
        out.stdout
    );
    let json = fake.axctl(&["instance", "get", &id, "-o", "json"]).await.json();
    assert_eq!(json["instance"]["status"], "WAITING");
    let children = json["children"].as_array().expect("children");
    assert_eq!(children.len(), 2);
    assert_eq!((children[1]["id"].as_i64(), children[1]["parent_id"].as_i64()), (Some(102), Some(PARENT_ID)));
    assert_eq!((&children[1]["shard_index"], &children[1]["target_worker"]), (&Value::from(1), &Value::from("w2")));
    // An ordinary instance has no children block and an empty list in JSON.
    let plain = fake.axctl(&["instance", "get", "42", "-o", "json"]).await.json();
    assert_eq!(plain["children"], serde_json::json!([]));
    assert!(!fake.axctl(&["instance", "get", "42"]).await.stdout.contains("children"));
}

#[tokio::test]
async fn worker_list_shows_cooldowns_and_failure_streaks() {
    let fake = Harness::start("workers").await;
    let out = fake.axctl(&["worker", "list"]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let header = out.stdout.lines().next().expect("header");
    assert!(header.ends_with("  COOLING"), "{header}");
    assert!(
        out.stdout.ends_with("  report: 2 failures; send-invoice until 2100-01-01T00:00:00Z (5 failures)\n"),
        "{}",
        out.stdout
    );
    let json = fake.axctl(&["worker", "list", "-o", "json"]).await.json();
    assert_eq!(
        json["workers"][0]["cooldowns"],
        serde_json::json!([
            {"handler": "report", "consecutive_failures": 2, "until": null},
            {"handler": "send-invoice", "consecutive_failures": 5, "until": "2100-01-01T00:00:00Z"}
        ])
    );
}

#[tokio::test]
async fn instance_list_filters_and_shows_waiting_parents() {
    let fake = Harness::start("list-waiting").await;
    let out = fake.axctl(&["instance", "list", "--status", "waiting"]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(fake.seen.lock().expect("lock").listed_status, Some(InstanceStatus::Waiting as i32));
    let row: Vec<&str> = out.stdout.lines().nth(1).expect("a row").split_whitespace().collect();
    assert_eq!(row[..3], ["100", "fanout", "WAITING"], "{}", out.stdout);
    let json = fake.axctl(&["instance", "list", "--status", "WAITING", "-o", "json"]).await.json();
    assert_eq!(json["instances"][0]["status"], "WAITING");
}

#[tokio::test]
async fn pause_sends_the_note_and_until_and_shows_who_why_and_until_when() {
    let fake = Harness::start("pause").await;
    let out = fake
        .axctl(&["task", "pause", "nightly", "--note", "db migration", "--until", "2026-01-01T12:00:00Z", "-o", "json"])
        .await
        .json();
    let sent = fake.seen.lock().expect("lock").paused.clone().expect("pause was called");
    assert_eq!((sent.name.as_str(), sent.note.as_str()), ("nightly", "db migration"));
    assert_eq!(sent.until, ts(1_767_268_800, 0));
    assert_eq!(out["task"]["pause"]["until"], "2026-01-01T12:00:00Z");
    assert_eq!(out["task"]["pause"]["note"], format!("db migration {HOSTILE}"), "JSON keeps server text exact");
    let text = fake.axctl(&["task", "pause", "nightly", "--note", "db migration"]).await;
    assert_eq!(text.code, Some(0), "{}", text.stderr);
    assert!(
        text.stdout
            .contains(&format!("\npaused by spiffe://ax/admin/admin until resumed: db migration {HOSTILE_ESCAPED}")),
        "{}",
        text.stdout
    );
    let missing = fake.axctl(&["task", "pause", "nightly"]).await;
    assert_eq!(missing.code, Some(1), "--note is required: {}", missing.stderr);
    assert!(missing.stderr.contains("--note"), "{}", missing.stderr);
    let resumed = fake.axctl(&["task", "resume", "nightly", "-o", "json"]).await.json();
    assert_eq!(resumed["task"]["pause"], Value::Null);
}

#[tokio::test]
async fn trigger_later_sends_run_at_or_delay() {
    let fake = Harness::start("trigger-later").await;
    let out = fake.axctl(&["task", "trigger", "nightly", "--after", "10m"]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout.lines().next(), Some("created instance 11, to run at 2026-01-01T10:10:00Z"));
    let sent = fake.seen.lock().expect("lock").triggered.clone().expect("trigger was called");
    assert_eq!(sent.when, Some(trigger_task_request::When::Delay(secs(600))));
    fake.axctl(&["task", "trigger", "nightly", "--at", "2026-01-01T10:10:00Z", "-o", "json"]).await.json();
    let sent = fake.seen.lock().expect("lock").triggered.clone().expect("trigger was called");
    assert_eq!(
        sent.when,
        Some(trigger_task_request::When::RunAt(prost_types::Timestamp { seconds: 1_767_262_200, nanos: 0 }))
    );
}

#[tokio::test]
async fn backfill_sends_the_range_and_lists_each_fire() {
    let fake = Harness::start("backfill").await;
    let args =
        ["task", "backfill", "nightly", "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T03:00:00Z", "--dry-run"];
    let out = fake.axctl(&args).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let sent = fake.seen.lock().expect("lock").backfilled.clone().expect("backfill was called");
    assert_eq!((sent.from, sent.to, sent.dry_run), (ts(1_767_225_600, 0), ts(1_767_236_400, 0), true));
    assert_eq!(
        out.stdout,
        "dry run: would create 2 of 3 fire(s) of task nightly (1 have an instance); nothing was created\n\
         FIRE TIME             INSTANCE\n\
         2026-01-01T00:00:00Z  -         would create\n\
         2026-01-01T01:00:00Z  5         existed\n\
         2026-01-01T02:00:00Z  -         would create\n"
    );
    let json = fake.axctl(&args[..7].iter().copied().chain(["-o", "json"]).collect::<Vec<_>>()).await.json();
    assert_eq!(json["created"], 2);
    assert_eq!(
        json["fires"][0],
        serde_json::json!({"time": "2026-01-01T00:00:00Z", "instance_id": 20, "created": true})
    );
}

#[tokio::test]
async fn calendars_are_created_listed_shown_and_refused_deletion_while_used() {
    let fake = Harness::start("calendars").await;
    let out = fake
        .axctl(&[
            "calendar",
            "create",
            "holidays",
            "--dates",
            "2026-12-25,2027-01-01",
            "--description",
            "public",
            "-o",
            "json",
        ])
        .await
        .json();
    let sent = fake.seen.lock().expect("lock").calendar_created.clone().expect("create was called");
    assert_eq!(sent.dates, ["2026-12-25", "2027-01-01"]);
    assert_eq!(out["dates"][1], "2027-01-01");
    let get = fake.axctl(&["calendar", "get", "holidays"]).await;
    assert_eq!(get.code, Some(0), "{}", get.stderr);
    assert!(get.stdout.contains(&format!("description:  {HOSTILE_ESCAPED}\n")), "{}", get.stdout);
    assert!(get.stdout.contains(&format!("used by:      nightly, {HOSTILE_ESCAPED}\n")), "{}", get.stdout);
    let list = fake.axctl(&["calendar", "list"]).await;
    assert!(
        list.stdout.starts_with(
            "NAME      DATES  FIRST       LAST        DESCRIPTION\nholidays  2      2026-12-25  2027-01-01  "
        ),
        "{}",
        list.stdout
    );
    let del = fake.axctl(&["calendar", "delete", "holidays"]).await;
    assert_eq!(del.code, Some(1));
    assert_eq!(
        del.stderr.trim_end(),
        "error: FailedPrecondition: calendar \"holidays\" is used by task(s) nightly; change them first"
    );
}

#[tokio::test]
async fn a_run_prints_as_a_tree_and_an_instance_shows_both_directions() {
    let fake = Harness::start("runs").await;
    let out = fake.axctl(&["run", "get", "1"]).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "run 1: 3 instance(s)\n1 extract SUCCESS\n└─ 12 load SUCCESS [on-success]\n   └─ 13 {HOSTILE_ESCAPED} PENDING [after-all]\n"
        )
    );
    let json = fake.axctl(&["run", "get", "1", "-o", "json"]).await.json();
    assert_eq!(json["edges"][1]["kind"], "AFTER_ALL");
    let missing = fake.axctl(&["run", "get", "2"]).await;
    assert_eq!(missing.code, Some(1));
    let get = fake.axctl(&["instance", "get", "12"]).await;
    assert_eq!(get.code, Some(0), "{}", get.stderr);
    assert!(get.stdout.contains("\nchained from:     1\n"), "{}", get.stdout);
    assert!(
        get.stdout.contains(
            "created by (upstream):\n  ID  TASK     STATUS   LINK        RUN\n  1   extract  SUCCESS  on-success  1\n"
        ),
        "{}",
        get.stdout
    );
    assert!(get.stdout.contains("created (downstream):\n  ID  TASK"), "{}", get.stdout);
    assert!(get.stdout.contains(HOSTILE_ESCAPED), "{}", get.stdout);
    let json = fake.axctl(&["instance", "get", "12", "-o", "json"]).await.json();
    assert_eq!(
        (&json["upstream"][0]["kind"], &json["downstream"][0]["instance"]["id"]),
        (&serde_json::json!("ON_SUCCESS"), &serde_json::json!(13))
    );
}
