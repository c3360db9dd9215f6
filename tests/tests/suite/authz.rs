//! Roles, app scopes, the trust domain and the audit trail on a real axd with mTLS: every
//! AdminService RPC × role (viewer, operator, admin) × target in scope / out of scope, checking
//! the gRPC code, that a denial names the missing role or app, that nothing was written on a
//! denial, and that every mutating call left one audit entry.

use std::time::Duration;

use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
use ax_scheduler::{
    config::Options,
    loops::sweeper::{Sweeper, SweeperConfig},
    store::AuditEntry,
};
use ax_tests::{
    TestDb,
    axd::Axd,
    certs::TestCa,
    client::{RawWorker, hello, manual, spec},
    on_every_backend,
    procs::axctl,
};
use tonic::{Code, transport::Channel};

type Client = AdminServiceClient<Channel>;

const TD: &str = "corp.test";

/// Every AdminService RPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rpc {
    CreateTask,
    GetTask,
    ListTasks,
    UpdateTask,
    DeleteTask,
    ApplyTasks,
    EnableTask,
    DisableTask,
    TriggerTask,
    PreviewSchedule,
    ListInstances,
    GetInstance,
    CancelInstance,
    RetryInstance,
    BulkInstances,
    GetInstanceLogs,
    WatchInstance,
    PublishEvent,
    ListWorkers,
    ListSchedulers,
    GetClusterStats,
    ListAuditEntries,
    ExplainTask,
    PauseTask,
    ResumeTask,
    BackfillTask,
    GetRun,
    CreateCalendar,
    UpdateCalendar,
    GetCalendar,
    ListCalendars,
    DeleteCalendar,
    CreateAlertRule,
    ListAlertRules,
    DeleteAlertRule,
    TestAlertRule,
    ListAlertDeliveries,
    SetAppLimit,
    ListAppLimits,
    DeleteAppLimit,
}

const RPCS: [Rpc; 40] = [
    Rpc::CreateTask,
    Rpc::GetTask,
    Rpc::ListTasks,
    Rpc::UpdateTask,
    Rpc::DeleteTask,
    Rpc::ApplyTasks,
    Rpc::EnableTask,
    Rpc::DisableTask,
    Rpc::TriggerTask,
    Rpc::PreviewSchedule,
    Rpc::ListInstances,
    Rpc::GetInstance,
    Rpc::CancelInstance,
    Rpc::RetryInstance,
    Rpc::BulkInstances,
    Rpc::GetInstanceLogs,
    Rpc::WatchInstance,
    Rpc::PublishEvent,
    Rpc::ListWorkers,
    Rpc::ListSchedulers,
    Rpc::GetClusterStats,
    Rpc::ListAuditEntries,
    Rpc::ExplainTask,
    Rpc::PauseTask,
    Rpc::ResumeTask,
    Rpc::BackfillTask,
    Rpc::GetRun,
    Rpc::CreateCalendar,
    Rpc::UpdateCalendar,
    Rpc::GetCalendar,
    Rpc::ListCalendars,
    Rpc::DeleteCalendar,
    Rpc::CreateAlertRule,
    Rpc::ListAlertRules,
    Rpc::DeleteAlertRule,
    Rpc::TestAlertRule,
    Rpc::ListAlertDeliveries,
    Rpc::SetAppLimit,
    Rpc::ListAppLimits,
    Rpc::DeleteAppLimit,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Viewer,
    Operator,
    Admin,
}

impl Rpc {
    /// The least role the call needs.
    fn needs(self) -> Role {
        match self {
            Rpc::CreateTask
            | Rpc::UpdateTask
            | Rpc::DeleteTask
            | Rpc::ApplyTasks
            | Rpc::CreateCalendar
            | Rpc::UpdateCalendar
            | Rpc::DeleteCalendar
            | Rpc::CreateAlertRule
            | Rpc::DeleteAlertRule
            | Rpc::SetAppLimit
            | Rpc::DeleteAppLimit => Role::Admin,
            Rpc::EnableTask
            | Rpc::DisableTask
            | Rpc::TriggerTask
            | Rpc::PublishEvent
            | Rpc::CancelInstance
            | Rpc::RetryInstance
            | Rpc::BulkInstances
            | Rpc::PauseTask
            | Rpc::ResumeTask
            | Rpc::BackfillTask
            | Rpc::TestAlertRule => Role::Operator,
            _ => Role::Viewer,
        }
    }

    /// Whether the call changes something (and is audited).
    fn mutating(self) -> bool {
        self.needs() > Role::Viewer
    }

    /// How the call treats the app of its target: `Some(true)`: denied out of scope;
    /// `Some(false)`: it has no target app and is allowed either way; `None`: it needs scope `*`.
    fn scoped(self) -> Option<bool> {
        match self {
            Rpc::PreviewSchedule
            | Rpc::ListSchedulers
            | Rpc::ListInstances
            | Rpc::ListAuditEntries
            | Rpc::GetCalendar
            | Rpc::ListCalendars
            | Rpc::ListAlertDeliveries
            | Rpc::ListAppLimits => Some(false),
            // Calendars are shared by every app: changing one needs scope `*`.
            Rpc::GetClusterStats | Rpc::CreateCalendar | Rpc::UpdateCalendar | Rpc::DeleteCalendar => None,
            _ => Some(true),
        }
    }
}

/// Objects of one app, made fresh by the root admin for each call that changes them.
struct Target {
    app: &'static str,
    task: String,
    pending: i64,
    finished: i64,
    /// A disabled yearly cron task (a backfill needs a schedule that fires; it never fires itself).
    yearly: String,
    /// A calendar (of no app).
    calendar: String,
    /// An alert rule of the app (its webhook on a closed loopback port).
    rule: String,
}

/// The alert rule `name` of `app`, watching final failures, posting to a closed loopback port.
fn rule_spec(name: &str, app: &str) -> pb::AlertRuleSpec {
    pb::AlertRuleSpec {
        name: name.into(),
        app: app.into(),
        events: vec!["final_failure".into()],
        url: "http://127.0.0.1:9/hook".into(),
        secret: "0123456789abcdef".into(),
        ..Default::default()
    }
}

async fn prepare(root: &mut Client, app: &'static str, n: usize) -> Target {
    let task = format!("{app}-{n}");
    // Subscribed to event "ping": a PublishEvent that is let through creates an instance of it.
    let mut subscribed = spec(&task, app, "h", manual());
    subscribed.on_event = "ping".into();
    root.create_task(pb::CreateTaskRequest { task: Some(subscribed) }).await.expect("create");
    let trigger = |key: &str| pb::TriggerTaskRequest {
        name: task.clone(),
        idempotency_key: key.into(),
        params: None,
        when: None,
        wait: None,
        tags: Default::default(),
    };
    let pending = root.trigger_task(trigger("p")).await.expect("trigger").into_inner().instance.expect("i").id;
    let finished = root.trigger_task(trigger("f")).await.expect("trigger").into_inner().instance.expect("i").id;
    root.cancel_instance(pb::CancelInstanceRequest { id: finished, reason: "fixture".into() }).await.expect("cancel");
    let yearly = format!("{app}-{n}-yearly");
    let mut s = spec(&yearly, app, "h", ax_tests::client::cron("0 0 0 1 1 *"));
    s.enabled = Some(false);
    root.create_task(pb::CreateTaskRequest { task: Some(s) }).await.expect("create yearly");
    let calendar = format!("cal-{n}");
    let c = pb::Calendar { name: calendar.clone(), dates: vec!["2026-12-25".into()], ..Default::default() };
    root.create_calendar(pb::CreateCalendarRequest { calendar: Some(c) }).await.expect("create calendar");
    let rule = format!("rule-{app}-{n}");
    root.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(rule_spec(&rule, app)) })
        .await
        .expect("create rule");
    let limit = pb::AppLimit { app: app.into(), per_second: 100.0, burst: 10, ..Default::default() };
    root.set_app_limit(pb::SetAppLimitRequest { limit: Some(limit) }).await.expect("set the app's limit");
    Target { app, task, pending, finished, yearly, calendar, rule }
}

/// Calls `rpc` on `t`'s objects; `Ok(summary)` lists the apps of what it returned.
async fn call(c: &mut Client, rpc: Rpc, t: &Target, n: usize) -> Result<Vec<String>, tonic::Status> {
    let name = t.task.clone();
    let apps_of_tasks = |ts: &[pb::Task]| ts.iter().map(|t| t.spec.as_ref().expect("spec").app.clone()).collect();
    Ok(match rpc {
        Rpc::CreateTask => {
            let s = spec(&format!("new-{}-{n}", t.app), t.app, "h", manual());
            c.create_task(pb::CreateTaskRequest { task: Some(s) }).await?;
            vec![]
        }
        Rpc::GetTask => {
            let r = c.get_task(pb::GetTaskRequest { name }).await?.into_inner();
            apps_of_tasks(&[r.task.expect("task")])
        }
        Rpc::ListTasks => {
            let r = c.list_tasks(pb::ListTasksRequest { app: t.app.into(), ..Default::default() }).await?;
            apps_of_tasks(&r.into_inner().tasks)
        }
        Rpc::UpdateTask => {
            let task = pb::TaskSpec { description: format!("changed {n}"), ..Default::default() };
            let mask = prost_types::FieldMask { paths: vec!["description".into()] };
            c.update_task(pb::UpdateTaskRequest { name, task: Some(task), update_mask: Some(mask) }).await?;
            vec![]
        }
        Rpc::DeleteTask => {
            c.delete_task(pb::DeleteTaskRequest { name }).await?;
            vec![]
        }
        Rpc::ApplyTasks => {
            // Creates the task that CreateTask would.
            let s = spec(&format!("new-{}-{n}", t.app), t.app, "h", manual());
            c.apply_tasks(pb::ApplyTasksRequest { tasks: vec![s], ..Default::default() }).await?;
            vec![]
        }
        Rpc::EnableTask => {
            c.enable_task(pb::EnableTaskRequest { name }).await?;
            vec![]
        }
        Rpc::DisableTask => {
            c.disable_task(pb::DisableTaskRequest { name }).await?;
            vec![]
        }
        Rpc::TriggerTask => {
            c.trigger_task(pb::TriggerTaskRequest { name, ..Default::default() }).await?;
            vec![]
        }
        Rpc::PreviewSchedule => {
            let r = pb::PreviewScheduleRequest {
                schedule: Some(pb::Schedule { kind: Some(ax_tests::client::cron("0 * * * *")) }),
                ..Default::default()
            };
            c.preview_schedule(r).await?;
            vec![]
        }
        Rpc::ListInstances => {
            let r = c.list_instances(pb::ListInstancesRequest { task_name: name, ..Default::default() }).await?;
            r.into_inner().instances.iter().map(|i| i.app.clone()).collect()
        }
        Rpc::GetInstance => {
            let r = c.get_instance(pb::GetInstanceRequest { id: t.pending }).await?.into_inner();
            vec![r.instance.expect("instance").app]
        }
        Rpc::CancelInstance => {
            c.cancel_instance(pb::CancelInstanceRequest { id: t.pending, reason: "matrix".into() }).await?;
            vec![]
        }
        Rpc::RetryInstance => {
            c.retry_instance(pb::RetryInstanceRequest { id: t.finished }).await?;
            vec![]
        }
        Rpc::BulkInstances => {
            let r = pb::BulkInstancesRequest {
                action: pb::BulkAction::Cancel.into(),
                selector: Some(pb::InstanceSelector { app: t.app.into(), ids: vec![t.pending], ..Default::default() }),
                max_instances: 10,
                ..Default::default()
            };
            c.bulk_instances(r).await?;
            vec![]
        }
        Rpc::GetInstanceLogs => {
            c.get_instance_logs(pb::GetInstanceLogsRequest { id: t.pending, ..Default::default() }).await?;
            vec![]
        }
        Rpc::WatchInstance => {
            // Allowed: the first update comes at once (the stream is then dropped).
            let mut watch =
                c.watch_instance(pb::WatchInstanceRequest { id: t.pending, logs: true }).await?.into_inner();
            let first = tokio_stream::StreamExt::next(&mut watch).await.expect("a first update")?;
            first.instance.iter().map(|i| i.app.clone()).collect()
        }
        Rpc::PublishEvent => {
            let r = pb::PublishEventRequest { app: t.app.into(), name: "ping".into(), ..Default::default() };
            c.publish_event(r).await?;
            vec![]
        }
        Rpc::ListWorkers => {
            let r = c.list_workers(pb::ListWorkersRequest { app: t.app.into() }).await?;
            r.into_inner().workers.iter().map(|w| w.app.clone()).collect()
        }
        Rpc::ListSchedulers => {
            c.list_schedulers(pb::ListSchedulersRequest {}).await?;
            vec![]
        }
        Rpc::GetClusterStats => {
            c.get_cluster_stats(pb::GetClusterStatsRequest {}).await?;
            vec![]
        }
        Rpc::ListAuditEntries => {
            let r = c.list_audit_entries(pb::ListAuditEntriesRequest::default()).await?;
            r.into_inner().entries.iter().map(|e| e.app.clone()).collect()
        }
        Rpc::ExplainTask => {
            let r = c.explain_task(pb::ExplainTaskRequest { name, ..Default::default() }).await?.into_inner();
            vec![r.task.expect("task").spec.expect("spec").app]
        }
        Rpc::PauseTask => {
            c.pause_task(pb::PauseTaskRequest { name, note: "matrix".into(), until: None }).await?;
            vec![]
        }
        Rpc::ResumeTask => {
            c.resume_task(pb::ResumeTaskRequest { name }).await?;
            vec![]
        }
        Rpc::BackfillTask => {
            let at = |seconds| Some(prost_types::Timestamp { seconds, nanos: 0 });
            // 2019-12-31 .. 2021-01-02: the yearly fires of 2020 and 2021.
            let r = pb::BackfillTaskRequest {
                name: t.yearly.clone(),
                from: at(1_577_750_400),
                to: at(1_609_545_600),
                dry_run: false,
            };
            assert_eq!(c.backfill_task(r).await?.into_inner().created, 2);
            vec![]
        }
        Rpc::GetRun => {
            let r = c.get_run(pb::GetRunRequest { run_id: t.pending }).await?.into_inner();
            r.instances.iter().map(|i| i.app.clone()).collect()
        }
        Rpc::CreateCalendar => {
            let cal = pb::Calendar { name: format!("new-cal-{n}"), ..Default::default() };
            c.create_calendar(pb::CreateCalendarRequest { calendar: Some(cal) }).await?;
            vec![]
        }
        Rpc::UpdateCalendar => {
            let cal = pb::Calendar { name: t.calendar.clone(), dates: vec!["2027-01-01".into()], ..Default::default() };
            c.update_calendar(pb::UpdateCalendarRequest { calendar: Some(cal) }).await?;
            vec![]
        }
        Rpc::GetCalendar => {
            c.get_calendar(pb::GetCalendarRequest { name: t.calendar.clone() }).await?;
            vec![]
        }
        Rpc::ListCalendars => {
            c.list_calendars(pb::ListCalendarsRequest {}).await?;
            vec![]
        }
        Rpc::DeleteCalendar => {
            c.delete_calendar(pb::DeleteCalendarRequest { name: t.calendar.clone() }).await?;
            vec![]
        }
        Rpc::CreateAlertRule => {
            let rule = rule_spec(&format!("new-rule-{}-{n}", t.app), t.app);
            c.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(rule) }).await?;
            vec![]
        }
        Rpc::ListAlertRules => {
            let r = c.list_alert_rules(pb::ListAlertRulesRequest { app: t.app.into() }).await?.into_inner();
            r.rules.iter().map(|r| r.app.clone()).collect()
        }
        Rpc::DeleteAlertRule => {
            c.delete_alert_rule(pb::DeleteAlertRuleRequest { name: t.rule.clone() }).await?;
            vec![]
        }
        Rpc::TestAlertRule => {
            c.test_alert_rule(pb::TestAlertRuleRequest { name: t.rule.clone() }).await?;
            vec![]
        }
        Rpc::ListAlertDeliveries => {
            let r = pb::ListAlertDeliveriesRequest { rule: t.rule.clone(), ..Default::default() };
            c.list_alert_deliveries(r).await?.into_inner().deliveries.iter().map(|d| d.app.clone()).collect()
        }
        Rpc::SetAppLimit => {
            let limit = pb::AppLimit { app: t.app.into(), per_second: 5.0, burst: 1, ..Default::default() };
            c.set_app_limit(pb::SetAppLimitRequest { limit: Some(limit) }).await?;
            vec![]
        }
        Rpc::ListAppLimits => {
            let r = c.list_app_limits(pb::ListAppLimitsRequest {}).await?.into_inner();
            r.limits.iter().map(|l| l.app.clone()).collect()
        }
        Rpc::DeleteAppLimit => {
            c.delete_app_limit(pb::DeleteAppLimitRequest { app: t.app.into() }).await?;
            vec![]
        }
    })
}

/// The matrix covers every method AdminService has: a new RPC without a row fails here.
#[test]
fn the_matrix_has_a_row_for_every_admin_service_method() {
    use prost::Message;
    let set = prost_types::FileDescriptorSet::decode(ax_proto::FILE_DESCRIPTOR_SET).expect("descriptor set");
    let mut methods: Vec<String> = set
        .file
        .iter()
        .flat_map(|f| &f.service)
        .filter(|s| s.name() == "AdminService")
        .flat_map(|s| s.method.iter().map(|m| m.name().to_owned()))
        .collect();
    methods.sort();
    let mut rows: Vec<String> = RPCS.iter().map(|r| format!("{r:?}")).collect();
    rows.sort();
    assert!(methods.len() > 30, "AdminService read from the descriptor: {methods:?}");
    assert_eq!(rows, methods, "a row of the matrix per AdminService method");
}

/// What a call on `t` (case `n`) could change, read by the root admin: the store's counts (tasks,
/// enabled tasks, instances per status, which any create, delete, trigger, retry, backfill,
/// cancel, enable or disable anywhere moves), the case's own objects in full, and the names its
/// create calls would use. Its size does not grow with the cases before it.
async fn snapshot(root: &mut Client, t: &Target, n: usize) -> String {
    let stats = root.get_cluster_stats(pb::GetClusterStatsRequest {}).await.expect("stats").into_inner();
    let mut out = format!("{} {} {:?}\n", stats.tasks, stats.enabled_tasks, stats.instances);
    let new_task = format!("new-{}-{n}", t.app);
    for name in [&t.task, &t.yearly, &new_task] {
        let got = root.get_task(pb::GetTaskRequest { name: name.clone() }).await;
        out += &format!("{:?}\n", got.map(|r| r.into_inner().task).map_err(|e| e.code()));
    }
    for id in [t.pending, t.finished] {
        let got = root.get_instance(pb::GetInstanceRequest { id }).await.expect("instance").into_inner();
        out += &format!("{:?} {:?}\n", got.instance, got.events);
    }
    for name in [t.calendar.clone(), format!("new-cal-{n}")] {
        let got = root.get_calendar(pb::GetCalendarRequest { name }).await;
        out += &format!("{:?}\n", got.map(|r| r.into_inner()).map_err(|e| e.code()));
    }
    let rules = root.list_alert_rules(pb::ListAlertRulesRequest { app: t.app.into() }).await.expect("rules");
    let mut rules: Vec<String> = rules.into_inner().rules.iter().map(|r| format!("{r:?}")).collect();
    rules.sort();
    out += &format!("{rules:?}\n");
    let deliveries = pb::ListAlertDeliveriesRequest { rule: t.rule.clone(), ..Default::default() };
    let deliveries = root.list_alert_deliveries(deliveries).await.expect("deliveries").into_inner().deliveries;
    out += &format!("{} deliveries\n", deliveries.len());
    let limits = root.list_app_limits(pb::ListAppLimitsRequest {}).await.expect("limits").into_inner().limits;
    out += &format!("{:?}\n", limits.iter().find(|l| l.app == t.app).map(|l| (l.per_second, l.burst)));
    out
}

async fn audit(root: &mut Client, rpc: Rpc) -> Vec<pb::AuditEntry> {
    let r = pb::ListAuditEntriesRequest { rpc: format!("{rpc:?}"), page_size: 1000, ..Default::default() };
    root.list_audit_entries(r).await.expect("audit").into_inner().entries
}

/// An axd with mTLS, the trust domain [`TD`] and scopes for root (`*`) and for alice, olga and
/// val (`billing`), the certificates of every caller the tests use, and root's client.
struct Secured {
    dir: std::path::PathBuf,
    ca: TestCa,
    axd: Axd,
    addr: String,
    root: Client,
}

const ROLES: [(Role, &str, &str); 3] =
    [(Role::Viewer, "viewer", "val"), (Role::Operator, "operator", "olga"), (Role::Admin, "admin", "alice")];

impl Secured {
    async fn start(db: &TestDb, test: &str) -> Secured {
        let dir = std::env::temp_dir().join(format!("ax-authz-{test}-{}-{:?}", std::process::id(), db.db));
        let _ = std::fs::remove_dir_all(&dir);
        let ca = TestCa::create(&dir);
        for (_, role, name) in ROLES {
            ca.issue(name, &format!("spiffe://{TD}/{role}/{name}"));
        }
        ca.issue("root", &format!("spiffe://{TD}/admin/root"));
        ca.issue("unscoped", &format!("spiffe://{TD}/admin/unscoped"));
        ca.issue("worker", &format!("spiffe://{TD}/worker/billing"));
        ca.issue("default-td", "spiffe://ax/admin/root");
        ca.issue("query", &format!("spiffe://{TD}/admin/root?y=1#z"));
        let axd = Axd::start(db, |o: &mut Options| {
            o.tls_cert = Some(dir.join("server.pem"));
            o.tls_key = Some(dir.join("server.key"));
            o.tls_client_ca = Some(dir.join("ca.pem"));
            o.trust_domain = Some(TD.into());
            o.scope = Some(vec!["root=*".into(), "alice=billing".into(), "olga=billing".into(), "val=billing".into()]);
            // The alert rules' webhooks are on a closed loopback port: nothing leaves the machine.
            o.alert_allow_private_targets = Some(true);
        })
        .await;
        let addr = axd.running.addr.to_string();
        let root = Client::new(ca.channel(&addr, "root").await);
        Secured { dir, ca, axd, addr, root }
    }

    async fn client(&self, stem: &str) -> Client {
        Client::new(self.ca.channel(&self.addr, stem).await)
    }

    async fn stop(self) {
        tokio::time::timeout(Duration::from_secs(10), self.axd.stop()).await.expect("stops");
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every AdminService RPC called by one role's caller, on a target in scope and one out of scope
/// (80 cases; one test per role, so that the three run side by side): the code, the reason a
/// denial names, nothing written on a denial, one audit entry per mutating call and none per read.
async fn every_rpc_by_a_role_in_and_out_of_scope(db: &TestDb, role: Role) {
    let (role, _, who) = ROLES.into_iter().find(|(r, _, _)| *r == role).expect("a role of ROLES");
    let mut s = Secured::start(db, who).await;
    let root = &mut s.root;
    let mut c = Client::new(s.ca.channel(&s.addr, who).await);
    let mut n = 0;
    for rpc in RPCS {
        for in_scope in [true, false] {
            n += 1;
            let app = if in_scope { "billing" } else { "reports" };
            let t = prepare(root, app, n).await;
            let case = format!("{rpc:?} by {who} ({role:?}) on {app}");
            let role_ok = role >= rpc.needs();
            let scope_ok = match rpc.scoped() {
                Some(true) => in_scope,
                Some(false) => true,
                None => false,
            };
            let audited_before = audit(root, rpc).await.len();
            // What a denial must leave as it was; a call that may go through changes it.
            let before = if role_ok && scope_ok { None } else { Some(snapshot(root, &t, n).await) };
            let got = call(&mut c, rpc, &t, n).await;
            match got {
                Ok(apps) => {
                    assert!(role_ok && scope_ok, "{case}: allowed but must be denied");
                    assert!(apps.iter().all(|a| a == "billing"), "{case}: returned objects of {apps:?}");
                }
                Err(e) => {
                    assert!(!(role_ok && scope_ok), "{case}: denied but must be allowed: {e:?}");
                    assert_eq!(e.code(), Code::PermissionDenied, "{case}: {e:?}");
                    let why = if !role_ok {
                        format!("needs role {}", format!("{:?}", rpc.needs()).to_lowercase())
                    } else if rpc.scoped() == Some(true) {
                        format!("app \"{app}\"")
                    } else {
                        "scope \"*\"".to_owned()
                    };
                    assert!(e.message().contains(&why), "{case}: {:?} does not say {why:?}", e.message());
                    let before = before.expect("taken for every call that must be denied");
                    assert_eq!(snapshot(root, &t, n).await, before, "{case}: a denied call changed something");
                }
            }
            let entries = audit(root, rpc).await;
            if rpc.mutating() {
                assert_eq!(entries.len(), audited_before + 1, "{case}: one audit entry per call");
                let e = &entries[0];
                assert!(e.actor.ends_with(&format!("/{who}")), "{case}: {e:?}");
                assert_eq!(e.outcome, if role_ok && scope_ok { "ok" } else { "denied" }, "{case}: {e:?}");
                if rpc == Rpc::UpdateTask && role_ok && scope_ok {
                    assert!(e.before_json.contains("\"description\":\"\""), "{case}: {e:?}");
                    assert!(e.after_json.contains(&format!("changed {n}")), "{case}: {e:?}");
                }
            } else {
                assert_eq!(entries.len(), audited_before, "{case}: reads are not audited");
            }
        }
    }
    s.stop().await;
}

/// What the matrix does not cover: lists without a filter, callers without a scope or of another
/// trust domain, moving a task between apps, answers that could tell which names exist out of
/// scope, webhook tokens, workers' identities, and axctl's audit list.
async fn scopes_identities_and_the_audit_trail(db: &TestDb) {
    let s = Secured::start(db, "scopes").await;
    let mut root = s.root.clone();
    // Objects of both apps; alice deletes a task in scope (ok) and then one out of it (denied).
    let mut n = 1;
    let billing = prepare(&mut root, "billing", n).await;
    n += 1;
    let reports = prepare(&mut root, "reports", n).await;
    let mut alice = s.client("alice").await;
    alice.delete_task(pb::DeleteTaskRequest { name: billing.yearly.clone() }).await.expect("in scope");
    let e = alice.delete_task(pb::DeleteTaskRequest { name: reports.yearly.clone() }).await.expect_err("out of scope");
    assert_eq!(e.code(), Code::PermissionDenied);

    // Lists without a filter return only objects of the scope.
    let mut val = s.client("val").await;
    let tasks = val.list_tasks(pb::ListTasksRequest::default()).await.expect("list").into_inner().tasks;
    assert!(!tasks.is_empty() && tasks.iter().all(|t| t.spec.as_ref().expect("spec").app == "billing"));
    let all = val.list_instances(pb::ListInstancesRequest::default()).await.expect("li").into_inner().instances;
    assert!(!all.is_empty() && all.iter().all(|i| i.app == "billing"));
    let seen = val.list_audit_entries(pb::ListAuditEntriesRequest::default()).await.expect("audit");
    let seen = seen.into_inner().entries;
    assert!(!seen.is_empty() && seen.iter().all(|e| e.app == "billing"), "{seen:?}");
    // A name without a scope sees nothing and may change nothing (deny by default).
    let mut unscoped = s.client("unscoped").await;
    assert!(unscoped.list_tasks(pb::ListTasksRequest::default()).await.expect("list").into_inner().tasks.is_empty());
    let e = unscoped.get_task(pb::GetTaskRequest { name: "billing-1".into() }).await.expect_err("no scope");
    assert_eq!(e.code(), Code::PermissionDenied);

    // Other identities get nothing: a worker, the default trust domain, a query and fragment.
    for stem in ["worker", "default-td", "query"] {
        let mut c = s.client(stem).await;
        let e = c.list_tasks(pb::ListTasksRequest::default()).await.expect_err(stem);
        assert_eq!(e.code(), Code::PermissionDenied, "{stem}: {e:?}");
    }

    // Moving a task to another app needs scope on both.
    n += 1;
    let t = prepare(&mut root, "billing", n).await;
    let before = snapshot(&mut root, &t, n).await;
    let move_it = pb::UpdateTaskRequest {
        name: t.task.clone(),
        task: Some(pb::TaskSpec { app: "reports".into(), ..Default::default() }),
        update_mask: Some(prost_types::FieldMask { paths: vec!["app".into()] }),
    };
    let e = alice.update_task(move_it).await.expect_err("out of scope after the change");
    assert_eq!(e.code(), Code::PermissionDenied);
    assert!(e.message().contains("app \"reports\""), "{}", e.message());
    assert_eq!(snapshot(&mut root, &t, n).await, before);

    // No answer tells a scoped caller which names exist in other apps (issue 33): a chain or an
    // alert rule naming a task of an app out of scope fails exactly as one naming no task, and a
    // shared calendar lists only the tasks of the caller's apps.
    n += 1;
    let hidden = prepare(&mut root, "reports", n).await;
    let fail_of = |e: tonic::Status, name: &str| (e.code(), e.message().replace(name, "NAME"));
    let chained = |to: &str| {
        let mut s = spec(&format!("chain-{to}"), "billing", "h", manual());
        s.on_success = vec![to.to_owned()];
        pb::CreateTaskRequest { task: Some(s) }
    };
    let hidden_err = alice.create_task(chained(&hidden.task)).await.expect_err("out of scope");
    let missing_err = alice.create_task(chained("no-such-task")).await.expect_err("missing");
    assert_eq!(fail_of(hidden_err, &hidden.task), fail_of(missing_err, "no-such-task"));
    let rule = |task: &str| pb::CreateAlertRuleRequest {
        rule: Some(pb::AlertRuleSpec {
            name: format!("rule-{task}"),
            app: "billing".into(),
            task: task.to_owned(),
            events: vec!["final_failure".into()],
            url: "https://hooks.example.com/x".into(),
            secret: "0123456789abcdef".into(),
            ..Default::default()
        }),
    };
    let hidden_err = alice.create_alert_rule(rule(&hidden.task)).await.expect_err("out of scope");
    let missing_err = alice.create_alert_rule(rule("no-such-task")).await.expect_err("missing");
    assert_eq!(fail_of(hidden_err, &hidden.task), fail_of(missing_err, "no-such-task"));
    let on_cal = |name: &str, app: &str| {
        let mut s = spec(name, app, "h", ax_tests::client::cron("0 0 0 1 1 *"));
        s.calendar = hidden.calendar.clone();
        pb::CreateTaskRequest { task: Some(s) }
    };
    root.create_task(on_cal("cal-user-billing", "billing")).await.expect("billing task on the calendar");
    root.create_task(on_cal("cal-user-reports", "reports")).await.expect("reports task on the calendar");
    let got = val.get_calendar(pb::GetCalendarRequest { name: hidden.calendar.clone() }).await.expect("get calendar");
    assert_eq!(got.into_inner().tasks, vec!["cal-user-billing".to_owned()], "only the tasks of the viewer's apps");

    // Webhook URLs often hold the receiver's token: whole only for who may manage the rules, and
    // never in the audit trail, which viewers read (issue 33).
    let secret_url = "http://127.0.0.1:9/hook/T0K3N?sig=s3cr3t";
    let mut with_token = rule_spec("with-token", "billing");
    with_token.url = secret_url.into();
    root.create_alert_rule(pb::CreateAlertRuleRequest { rule: Some(with_token) }).await.expect("rule with a token");
    root.test_alert_rule(pb::TestAlertRuleRequest { name: "with-token".into() }).await.expect("a delivery");
    let urls = async |c: &mut Client| {
        let rules = c.list_alert_rules(pb::ListAlertRulesRequest { app: "billing".into() }).await.expect("rules");
        let rule = rules.into_inner().rules.into_iter().find(|r| r.name == "with-token").expect("listed").url;
        let r = pb::ListAlertDeliveriesRequest { rule: "with-token".into(), ..Default::default() };
        let deliveries = c.list_alert_deliveries(r).await.expect("deliveries").into_inner().deliveries;
        (rule, deliveries.into_iter().map(|d| d.url).collect::<Vec<_>>())
    };
    let redacted = "http://127.0.0.1:9/[redacted]".to_owned();
    assert_eq!(urls(&mut val).await, (redacted.clone(), vec![redacted.clone()]), "a viewer sees no token");
    assert_eq!(urls(&mut alice).await, (secret_url.to_owned(), vec![secret_url.to_owned()]), "an admin sees it");
    let created = audit(&mut root, Rpc::CreateAlertRule).await;
    let entry = created.iter().find(|e| e.after_json.contains("with-token")).expect("audited");
    assert!(!entry.after_json.contains("T0K3N") && entry.after_json.contains(&redacted), "{}", entry.after_json);

    // Workers of the trust domain connect for their own app only.
    let ch = s.ca.channel(&s.addr, "worker").await;
    RawWorker::connect(ch.clone(), hello("billing", "w1", "h", 1, 1)).await.expect("own app, own trust domain");
    let Err(refused) = RawWorker::connect(ch, hello("reports", "w1", "h", 1, 1)).await else {
        panic!("a billing worker connected for reports")
    };
    assert_eq!(refused.code(), Code::PermissionDenied);

    // axctl lists the audit trail with filters, as JSON.
    let env = |stem: &str| {
        [
            ("AX_ENDPOINT", format!("https://localhost:{}", s.axd.running.addr.port())),
            ("AX_CA", s.dir.join("ca.pem").display().to_string()),
            ("AX_CERT", s.dir.join(format!("{stem}.pem")).display().to_string()),
            ("AX_KEY", s.dir.join(format!("{stem}.key")).display().to_string()),
        ]
    };
    let env = env("root");
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let actor = format!("spiffe://{TD}/admin/alice");
    let out =
        axctl(&env, &["-o", "json", "audit", "list", "--rpc", "DeleteTask", "--identity", &actor, "--limit", "1"])
            .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j = out.json();
    assert_eq!(j["entries"].as_array().map(Vec::len), Some(1), "{j}");
    assert_eq!(j["entries"][0]["rpc"], "DeleteTask");
    assert_eq!(j["entries"][0]["actor"], actor.as_str());
    assert_eq!(j["entries"][0]["outcome"], "denied", "the newest: out of scope: {j}");
    assert!(j["entries"][0]["before"].is_null(), "nothing was deleted: {j}");
    let token = j["next_page_token"].as_str().unwrap_or_default().to_owned();
    assert!(!token.is_empty(), "more than one page: {j}");
    let out = axctl(
        &env,
        &[
            "-o",
            "json",
            "audit",
            "list",
            "--rpc",
            "DeleteTask",
            "--identity",
            &actor,
            "--limit",
            "1",
            "--page-token",
            &token,
        ],
    )
    .await;
    let j = out.json();
    assert_eq!(j["entries"][0]["outcome"], "ok", "{j}");
    assert_eq!(j["entries"][0]["app"], "billing", "{j}");
    assert!(j["entries"][0]["before"]["name"].is_string(), "before is embedded JSON: {j}");
    let out = axctl(&env, &["audit", "list", "--target", "task/billing-1"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("task/billing-1") && !out.stdout.contains("task/reports"), "{}", out.stdout);
    let bad =
        axctl(&env, &["audit", "list", "--since", "2030-01-01T00:00:00Z", "--until", "2020-01-01T00:00:00Z"]).await;
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("end_time"), "{}", bad.stderr);

    s.stop().await;
}

async fn audit_entries_past_retention_are_purged(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let core = axd.running.core.clone();
    let now = core.clock.now();
    let entry = |age: Duration, target: &str| AuditEntry {
        id: 0,
        at: ax_scheduler::model::sub(now, age),
        actor: "anonymous".into(),
        rpc: "DeleteTask".into(),
        target: target.into(),
        app: "billing".into(),
        outcome: "ok".into(),
        detail: String::new(),
        before: Some("{}".into()),
        after: None,
    };
    core.pools.admin.insert_audit(&entry(Duration::from_secs(7200), "task/old")).await.expect("old");
    core.pools.admin.insert_audit(&entry(Duration::from_secs(60), "task/new")).await.expect("new");
    let sweeper = Sweeper::new(
        core.clone(),
        SweeperConfig {
            batch: 10,
            retention: Duration::from_secs(86_400),
            housekeeping_every: Duration::from_secs(60),
            audit_retention: Duration::from_secs(3600),
        },
    );
    sweeper.housekeeping().await.expect("housekeeping");
    let mut admin = axd.admin().await;
    let left = admin.list_audit_entries(pb::ListAuditEntriesRequest::default()).await.expect("list").into_inner();
    let targets: Vec<&str> = left.entries.iter().map(|e| e.target.as_str()).collect();
    assert_eq!(targets, ["task/new"]);
    axd.stop().await;
}

async fn plaintext_on_loopback_is_anonymous_and_may_do_everything(db: &TestDb) {
    let axd = Axd::start(db, |o: &mut Options| o.scope = Some(vec!["alice=billing".into()])).await;
    let mut admin = axd.admin().await;
    admin.create_task(pb::CreateTaskRequest { task: Some(spec("t", "reports", "h", manual())) }).await.expect("create");
    admin.get_cluster_stats(pb::GetClusterStatsRequest {}).await.expect("stats");
    admin.delete_task(pb::DeleteTaskRequest { name: "t".into() }).await.expect("delete");
    let e = admin.list_audit_entries(pb::ListAuditEntriesRequest::default()).await.expect("audit").into_inner();
    let rpcs: Vec<(&str, &str, &str)> =
        e.entries.iter().map(|e| (e.rpc.as_str(), e.actor.as_str(), e.outcome.as_str())).collect();
    assert_eq!(rpcs, [("DeleteTask", "anonymous", "ok"), ("CreateTask", "anonymous", "ok")]);
    let e = admin
        .list_audit_entries(pb::ListAuditEntriesRequest { page_token: "x".into(), ..Default::default() })
        .await
        .expect_err("bad token");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("page_token:"), "{}", e.message());
    axd.stop().await;
}

/// Every mutating call and every denial logs one info line naming identity, RPC, target and
/// outcome; reads that are allowed log nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_calls_and_denials_log_one_line_each() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = std::env::temp_dir().join(format!("ax-authz-log-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ca = TestCa::create(&dir);
    ca.issue("alice", "spiffe://ax/admin/alice");
    ca.issue("val", "spiffe://ax/viewer/val");
    let db = format!("sqlite://{}", dir.join("ax.db").display());
    let (cert, key, client_ca) = (dir.join("server.pem"), dir.join("server.key"), dir.join("ca.pem"));
    let log = dir.join("axd.log");
    let mut axd = ax_tests::procs::AxdProcess::start(
        &[
            "--database-url",
            &db,
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            cert.to_str().expect("utf8"),
            "--tls-key",
            key.to_str().expect("utf8"),
            "--tls-client-ca",
            client_ca.to_str().expect("utf8"),
            "--scope",
            "alice=billing",
            "--scope",
            "val=billing",
        ],
        &log,
    )
    .await;
    let addr = axd.addr.to_string();
    let mut alice = Client::new(ca.channel(&addr, "alice").await);
    let mut val = Client::new(ca.channel(&addr, "val").await);
    alice.create_task(pb::CreateTaskRequest { task: Some(spec("t", "billing", "h", manual())) }).await.expect("create");
    val.get_task(pb::GetTaskRequest { name: "t".into() }).await.expect("a read in scope");
    val.delete_task(pb::DeleteTaskRequest { name: "t".into() }).await.expect_err("viewer deletes");
    alice.get_cluster_stats(pb::GetClusterStatsRequest {}).await.expect_err("needs scope *");

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("GetClusterStats") || tokio::time::Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let lines = |rpc: &str| text.lines().filter(|l| l.contains(&format!("rpc=\"{rpc}\""))).collect::<Vec<_>>();
    let created = lines("CreateTask");
    assert_eq!(created.len(), 1, "{text}");
    assert!(created[0].contains("INFO") && created[0].contains("identity=spiffe://ax/admin/alice"), "{text}");
    assert!(created[0].contains("target=task/t") && created[0].contains("outcome=ok"), "{text}");
    let deleted = lines("DeleteTask");
    assert_eq!(deleted.len(), 1, "{text}");
    assert!(
        deleted[0].contains("admin call denied") && deleted[0].contains("identity=spiffe://ax/viewer/val"),
        "{text}"
    );
    assert!(deleted[0].contains("outcome=denied") && deleted[0].contains("needs role admin"), "{text}");
    let stats = lines("GetClusterStats");
    assert_eq!(stats.len(), 1, "{text}");
    assert!(stats[0].contains("admin call denied") && stats[0].contains("scope"), "{text}");
    assert!(lines("GetTask").is_empty(), "allowed reads are not logged: {text}");
    axd.terminate().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The matrix runs each role on one backend: a call is allowed or denied before it reaches the
/// store, so the three backends would repeat the same decisions (three times the longest tests of
/// the suite). The admin, whose calls all go through, runs on PostgreSQL; the operator on MariaDB;
/// the viewer, denied most calls and so snapshotted most, on SQLite. Every RPC's own effect is
/// tested on every backend by its feature's tests, and the audit trail by
/// `scopes_identities_and_the_audit_trail` below.
mod matrix {
    use ax_tests::{Db, TestDb};

    async fn on(db: Db, role: super::Role) {
        let Some(db) = TestDb::create(db).await else { return };
        super::every_rpc_by_a_role_in_and_out_of_scope(&db, role).await;
        db.cleanup().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_rpc_by_a_viewer_in_and_out_of_scope_on_sqlite() {
        on(Db::Sqlite, super::Role::Viewer).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_rpc_by_an_operator_in_and_out_of_scope_on_mariadb() {
        on(Db::MySql, super::Role::Operator).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_rpc_by_an_admin_in_and_out_of_scope_on_postgres() {
        on(Db::Postgres, super::Role::Admin).await;
    }
}

on_every_backend!(
    scopes_identities_and_the_audit_trail,
    audit_entries_past_retention_are_purged,
    plaintext_on_loopback_is_anonymous_and_may_do_everything,
);
