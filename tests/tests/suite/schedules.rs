//! Schedules and chains against a running axd with SDK workers, on every backend: pauses with a note
//! (task get, list, events and explain say who, why and until when), delayed triggers, backfills,
//! shared calendars, chains and DAG runs with their links, and the refusal of bad input (each
//! INVALID_ARGUMENT names its field, and nothing is stored). The engine's rules are checked with an
//! injected clock in tests/tests/suite/schedules_store.rs; several axd in tests/tests/suite/schedules_cluster.rs.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_tests::{
    TestDb,
    axd::Axd,
    client::{create, cron, dur, manual, spec, trigger, utc, wait_status},
    eventually, on_every_backend,
};
use ax_worker::{Context, HandlerError, Worker};
use tonic::{Code, transport::Channel};

const LONG: Duration = Duration::from_secs(30);

type Admin = pb::admin_service_client::AdminServiceClient<Channel>;

/// One run of handler `step`: the task, the instance and its params.
#[derive(Debug, Clone)]
struct Step {
    task: String,
    instance: i64,
    params: String,
}

/// A worker of app `app` serving handler `step`: it records each run, fails when the params say
/// `"fail": true`, and returns `{"<task>": <instance id>}` as its output.
fn steps(endpoint: &str) -> (Arc<Mutex<Vec<Step>>>, tokio::sync::oneshot::Sender<()>) {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let seen = runs.clone();
    let worker = Worker::builder()
        .endpoint(endpoint)
        .app("app")
        .worker_id("w1")
        .capacity(8)
        .handler("step", move |ctx: Context| {
            let seen = seen.clone();
            async move {
                seen.lock().expect("lock").push(Step {
                    task: ctx.task_name.clone(),
                    instance: ctx.instance_id,
                    params: ctx.params_raw.clone(),
                });
                let p: serde_json::Value = serde_json::from_str(&ctx.params_raw).unwrap_or_default();
                if p["fail"] == true {
                    return Err(HandlerError::fatal("failing as asked"));
                }
                Ok(serde_json::json!({ ctx.task_name.clone(): ctx.instance_id }))
            }
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    (runs, stop)
}

fn step_task(name: &str) -> pb::TaskSpec {
    spec(name, "app", "step", manual())
}

async fn instances(admin: &Admin, task: &str) -> Vec<pb::Instance> {
    let r = pb::ListInstancesRequest { task_name: task.into(), page_size: 1000, ..Default::default() };
    admin.clone().list_instances(r).await.expect("list").into_inner().instances
}

async fn task(admin: &Admin, name: &str) -> pb::GetTaskResponse {
    admin.clone().get_task(pb::GetTaskRequest { name: name.into() }).await.expect("get task").into_inner()
}

/// The only instance of `task`, once it has reached `status`.
async fn only(admin: &Admin, task: &str, status: S) -> pb::Instance {
    eventually(LONG, &format!("an instance of {task} in {status:?}"), || async {
        let list = instances(admin, task).await;
        (list.len() == 1 && list[0].status == status as i32).then(|| list[0].clone())
    })
    .await
}

async fn pause_with_a_note_holds_the_schedule_and_says_who_why_and_until_when(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("ticker", "app", "step", cron("* * * * * *"))).await;
    let until = chrono::Utc::now() + chrono::Duration::hours(1);
    let until_pb = prost_types::Timestamp { seconds: until.timestamp(), nanos: 0 };
    let r = pb::PauseTaskRequest { name: "ticker".into(), note: "db migration".into(), until: Some(until_pb) };
    let paused = admin.pause_task(r).await.expect("pause").into_inner().task.expect("task");
    let p = paused.pause.expect("pause");
    assert_eq!((p.note.as_str(), p.actor.as_str()), ("db migration", "anonymous"));
    assert_eq!(p.until.map(|u| u.seconds), Some(until.timestamp()));
    assert!(utc(paused.next_fire_time.as_ref().expect("next fire")) >= utc(&until_pb), "no fire before the end");
    // Rounds of the trigger pass; the paused task creates nothing (the fires that ran before the
    // pause, if any, are the only ones).
    let before = instances(&admin, "ticker").await.len();
    let mut reports = axd.running.trigger_reports.clone();
    let seen = reports.borrow_and_update().rounds;
    eventually(LONG, "three trigger rounds", || {
        let r = reports.borrow().rounds;
        async move { (r >= seen + 3).then_some(()) }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(instances(&admin, "ticker").await.len(), before, "no fire while paused");
    let got = task(&admin, "ticker").await;
    assert_eq!(got.task.and_then(|t| t.pause).map(|p| p.note), Some("db migration".into()));
    assert!(got.events.iter().any(|e| e.kind == "PAUSED" && e.message.contains("db migration")), "{:?}", got.events);
    let listed = admin.list_tasks(pb::ListTasksRequest::default()).await.expect("list").into_inner().tasks;
    assert!(listed[0].pause.is_some(), "task list carries the pause");
    let explained = admin
        .explain_task(pb::ExplainTaskRequest { name: "ticker".into(), ..Default::default() })
        .await
        .expect("explain")
        .into_inner();
    let f = explained.findings.iter().find(|f| f.kind == pb::ExplainFindingKind::Paused as i32).expect("PAUSED");
    assert!(f.message.contains("db migration") && f.message.contains("anonymous"), "{}", f.message);
    // Resumed, it fires again from now; the fires of the pause are counted, not caught up.
    let resumed = admin.resume_task(pb::ResumeTaskRequest { name: "ticker".into() }).await.expect("resume");
    assert!(resumed.into_inner().task.expect("task").pause.is_none());
    eventually(LONG, "a fire after the resume", || async {
        (instances(&admin, "ticker").await.len() > before).then_some(())
    })
    .await;
    let got = task(&admin, "ticker").await;
    let resumed = got.events.iter().find(|e| e.kind == "RESUMED").expect("RESUMED event");
    assert!(
        resumed.message.starts_with("resumed by anonymous; ") && resumed.message.contains("not run"),
        "{}",
        resumed.message
    );
    axd.stop().await;
}

async fn a_trigger_can_run_later_and_one_too_far_in_the_past_is_refused(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, step_task("later")).await;
    let (runs, stop) = steps(&axd.endpoint);
    let r = pb::TriggerTaskRequest {
        name: "later".into(),
        idempotency_key: "in-2s".into(),
        when: Some(pb::trigger_task_request::When::Delay(dur(Duration::from_secs(2)))),
        ..Default::default()
    };
    let i = admin.trigger_task(r).await.expect("trigger").into_inner().instance.expect("instance");
    let created = utc(i.create_time.as_ref().expect("created"));
    let available = utc(i.available_time.as_ref().expect("available"));
    assert_eq!((available - created).num_milliseconds(), 2000, "due two seconds after it was created");
    assert_eq!(utc(i.trigger_time.as_ref().expect("trigger time")), available);
    let done = wait_status(&mut admin, i.id, S::Success, LONG).await;
    assert!(utc(done.start_time.as_ref().expect("started")) >= available, "it did not start early");
    assert_eq!(runs.lock().expect("lock").len(), 1);
    // A time in the past within the misfire threshold runs at once; beyond it is refused.
    let past = |secs: i64| {
        let t = chrono::Utc::now() - chrono::Duration::seconds(secs);
        pb::TriggerTaskRequest {
            name: "later".into(),
            idempotency_key: format!("past-{secs}"),
            when: Some(pb::trigger_task_request::When::RunAt(prost_types::Timestamp {
                seconds: t.timestamp(),
                nanos: 0,
            })),
            ..Default::default()
        }
    };
    let soon = admin.trigger_task(past(10)).await.expect("10 s ago").into_inner().instance.expect("i");
    wait_status(&mut admin, soon.id, S::Success, LONG).await;
    let e = admin.trigger_task(past(3600)).await.expect_err("an hour ago");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("run_at: ") && e.message().contains("misfire threshold 1m"), "{}", e.message());
    assert_eq!(instances(&admin, "later").await.len(), 2, "nothing was created");
    let _ = stop.send(());
    axd.stop().await;
}

async fn backfill_over_the_api_creates_the_missing_fires_once(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("hourly", "app", "step", cron("0 0 * * * *"))).await;
    let now = chrono::Utc::now();
    let hour = |h: i64| {
        let t = now - chrono::Duration::hours(h);
        prost_types::Timestamp { seconds: t.timestamp() - t.timestamp() % 3600, nanos: 0 }
    };
    let req =
        |dry_run| pb::BackfillTaskRequest { name: "hourly".into(), from: Some(hour(5)), to: Some(hour(1)), dry_run };
    let dry = admin.backfill_task(req(true)).await.expect("dry run").into_inner();
    assert_eq!((dry.fires.len(), dry.created), (4, 4));
    assert!(instances(&admin, "hourly").await.is_empty(), "a dry run creates nothing");
    let done = admin.backfill_task(req(false)).await.expect("backfill").into_inner();
    assert_eq!(done.created, 4);
    let list = instances(&admin, "hourly").await;
    assert_eq!(list.len(), 4);
    assert!(list.iter().all(|i| i.source == pb::InstanceSource::Backfill as i32));
    let again = admin.backfill_task(req(false)).await.expect("again").into_inner();
    assert_eq!(again.created, 0, "running it twice creates nothing new");
    assert_eq!(instances(&admin, "hourly").await.len(), 4);
    let got = task(&admin, "hourly").await;
    assert!(got.events.iter().any(|e| e.kind == "BACKFILLED"), "{:?}", got.events);
    axd.stop().await;
}

async fn calendars_are_shared_and_one_in_use_cannot_be_deleted(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let cal = |dates: &[&str]| pb::Calendar {
        name: "holidays".into(),
        description: "public".into(),
        dates: dates.iter().map(|d| (*d).to_owned()).collect(),
        ..Default::default()
    };
    let made = admin
        .create_calendar(pb::CreateCalendarRequest { calendar: Some(cal(&["2027-01-01", "2026-12-25", "2026-12-25"])) })
        .await
        .expect("create")
        .into_inner()
        .calendar
        .expect("calendar");
    assert_eq!(made.dates, ["2026-12-25", "2027-01-01"], "sorted, without duplicates");
    let e = admin.create_calendar(pb::CreateCalendarRequest { calendar: Some(cal(&[])) }).await.expect_err("twice");
    assert_eq!(e.code(), Code::AlreadyExists);
    let mut s = spec("daily", "app", "step", cron("0 0 9 * * *"));
    s.calendar = "holidays".into();
    s.exclude_dates = vec!["2026-11-11".into()];
    let t = create(&mut admin, s).await;
    assert_eq!(t.spec.as_ref().map(|s| s.calendar.as_str()), Some("holidays"));
    let got = admin.get_calendar(pb::GetCalendarRequest { name: "holidays".into() }).await.expect("get").into_inner();
    assert_eq!(got.tasks, ["daily"]);
    let e = admin.delete_calendar(pb::DeleteCalendarRequest { name: "holidays".into() }).await.expect_err("in use");
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert!(e.message().contains("daily"), "{}", e.message());
    let updated = admin
        .update_calendar(pb::UpdateCalendarRequest { calendar: Some(cal(&["2026-12-24"])) })
        .await
        .expect("update")
        .into_inner()
        .calendar
        .expect("calendar");
    assert_eq!(updated.dates, ["2026-12-24"]);
    let listed = admin.list_calendars(pb::ListCalendarsRequest {}).await.expect("list").into_inner().calendars;
    assert_eq!(listed.len(), 1);
    // The preview of a task leaves its calendar's dates out: a daily fire on 24 December is skipped.
    let preview = admin
        .preview_schedule(pb::PreviewScheduleRequest {
            schedule: Some(pb::Schedule { kind: Some(cron("0 0 9 * * *")) }),
            from: Some(prost_types::Timestamp { seconds: 1_797_984_000, nanos: 0 }), // 2026-12-23T00:00:00Z
            count: 2,
            calendar: "holidays".into(),
            ..Default::default()
        })
        .await
        .expect("preview")
        .into_inner()
        .preview
        .expect("preview");
    let days: Vec<String> =
        preview.fires.iter().map(|f| utc(f.time.as_ref().expect("t")).format("%Y-%m-%d").to_string()).collect();
    assert_eq!(days, ["2026-12-23", "2026-12-25"]);
    admin.delete_task(pb::DeleteTaskRequest { name: "daily".into() }).await.expect("delete task");
    admin.delete_calendar(pb::DeleteCalendarRequest { name: "holidays".into() }).await.expect("unused now");
    axd.stop().await;
}

async fn a_chain_runs_the_next_task_with_the_output_and_links_both_ways(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut load = step_task("load");
    load.params = r#"{"dest":"s3"}"#.into();
    create(&mut admin, load).await;
    create(&mut admin, step_task("page")).await;
    let mut extract = step_task("extract");
    extract.on_success = vec!["load".into()];
    extract.on_failure = vec!["page".into()];
    create(&mut admin, extract).await;
    let (runs, stop) = steps(&axd.endpoint);
    let first = trigger(&mut admin, "extract", "k1").await;
    let l = only(&admin, "load", S::Success).await;
    let params: serde_json::Value = serde_json::from_str(&l.params).expect("json");
    assert_eq!(params, serde_json::json!({"dest": "s3", "extract": first}), "the output merged over the params");
    assert_eq!((l.chained_from, l.run_id, l.source), (first, first, pb::InstanceSource::Chain as i32));
    assert_eq!(l.idempotency_key, format!("chain:{first}"));
    let up = admin.get_instance(pb::GetInstanceRequest { id: l.id }).await.expect("get").into_inner();
    assert_eq!(up.upstream.len(), 1);
    assert_eq!(up.upstream[0].instance.as_ref().map(|i| i.id), Some(first));
    assert_eq!(up.upstream[0].kind, pb::LinkKind::OnSuccess as i32);
    let down = admin.get_instance(pb::GetInstanceRequest { id: first }).await.expect("get").into_inner();
    assert_eq!(down.downstream.iter().map(|d| d.instance.as_ref().map(|i| i.id)).collect::<Vec<_>>(), [Some(l.id)]);
    let run = admin.get_run(pb::GetRunRequest { run_id: first }).await.expect("run").into_inner();
    assert_eq!(run.instances.iter().map(|i| i.task_name.as_str()).collect::<Vec<_>>(), ["extract", "load"]);
    assert_eq!(run.edges.len(), 1);
    assert!(instances(&admin, "page").await.is_empty(), "a success fires no on-failure chain");
    // A failure fires the on-failure chain.
    let failing = ax_tests::client::trigger_with(&mut admin, "extract", "k2", r#"{"fail":true}"#).await;
    let p = only(&admin, "page", S::Success).await;
    let params: serde_json::Value = serde_json::from_str(&p.params).expect("json");
    assert_eq!(params["failure"]["instance_id"].as_i64(), Some(failing));
    assert_eq!(instances(&admin, "load").await.len(), 1);
    let ran: Vec<Step> = runs.lock().expect("lock").iter().filter(|r| r.task == "load").cloned().collect();
    assert_eq!(ran.len(), 1);
    assert_eq!(ran[0].instance, l.id);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&ran[0].params).expect("json")["extract"],
        first,
        "the worker got it"
    );
    let e = admin.get_run(pb::GetRunRequest { run_id: l.id }).await.expect_err("not a first instance");
    assert_eq!(e.code(), Code::NotFound);
    let _ = stop.send(());
    axd.stop().await;
}

async fn a_dag_runs_its_join_once_all_upstreams_of_the_run_succeeded(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, step_task("start")).await;
    for name in ["left", "right"] {
        let mut s = step_task(name);
        s.after_all = vec!["start".into()];
        create(&mut admin, s).await;
    }
    let mut join = step_task("join");
    join.after_all = vec!["left".into(), "right".into()];
    create(&mut admin, join).await;
    let (runs, stop) = steps(&axd.endpoint);
    let root = trigger(&mut admin, "start", "r1").await;
    let j = only(&admin, "join", S::Success).await;
    assert_eq!(
        (j.run_id, j.source, j.idempotency_key.clone()),
        (root, pb::InstanceSource::Dag as i32, format!("run:{root}"))
    );
    let params: serde_json::Value = serde_json::from_str(&j.params).expect("json");
    assert!(params.get("left").is_some() && params.get("right").is_some(), "both outputs merged: {params}");
    let run = admin.get_run(pb::GetRunRequest { run_id: root }).await.expect("run").into_inner();
    assert_eq!(run.instances.len(), 4);
    let into_join = run.edges.iter().filter(|e| e.to_instance_id == j.id).count();
    assert_eq!(into_join, 2, "the join links from both upstreams");
    assert_eq!(runs.lock().expect("lock").iter().filter(|r| r.task == "join").count(), 1);
    let _ = stop.send(());
    axd.stop().await;
}

/// What an INVALID_ARGUMENT from CreateTask names.
async fn refused(admin: &mut Admin, s: pb::TaskSpec, field: &str) {
    let e = admin.create_task(pb::CreateTaskRequest { task: Some(s) }).await.expect_err("refused");
    assert_eq!(e.code(), Code::InvalidArgument, "{field}: {}", e.message());
    assert!(e.message().starts_with(&format!("{field}: ")), "{field}: {}", e.message());
}

async fn bad_schedule_input_is_refused_naming_the_field_and_stores_nothing(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, step_task("a")).await;
    let mut b = step_task("b");
    b.on_success = vec!["a".into()];
    create(&mut admin, b).await;
    let ts = |d: chrono::Duration| {
        let t = chrono::Utc::now() + d;
        Some(prost_types::Timestamp { seconds: t.timestamp(), nanos: 0 })
    };
    let every_minute = || spec("bad", "app", "step", cron("0 * * * * *"));
    let mut s = every_minute();
    (s.start_time, s.end_time) = (ts(chrono::Duration::days(2)), ts(chrono::Duration::days(1)));
    refused(&mut admin, s, "task.end_time").await;
    let mut s = every_minute();
    s.end_time = ts(chrono::Duration::days(-1));
    refused(&mut admin, s, "task.end_time").await;
    let mut s = every_minute();
    s.jitter = Some(dur(Duration::from_secs(60)));
    refused(&mut admin, s, "task.jitter").await;
    let mut s = step_task("bad");
    s.jitter = Some(dur(Duration::from_secs(1)));
    refused(&mut admin, s, "task.jitter").await;
    let mut s = every_minute();
    s.calendar = "nope".into();
    refused(&mut admin, s, "task.calendar").await;
    let mut s = every_minute();
    s.exclude_dates = vec!["2026-12-25".into(), "2026-13-01".into()];
    refused(&mut admin, s, "task.exclude_dates[1]").await;
    let mut s = step_task("bad");
    s.on_success = vec!["missing".into()];
    refused(&mut admin, s, "task.on_success[0]").await;
    let mut s = step_task("bad");
    s.after_all = vec!["bad".into()];
    refused(&mut admin, s, "task.after_all").await;
    let mut s = step_task("bad");
    s.concurrency_policy = pb::ConcurrencyPolicy::BufferOne as i32;
    s.shards = 2;
    refused(&mut admin, s, "task.concurrency_policy").await;
    let mut s = step_task("bad");
    s.after_all = vec!["a".into(), "b".into()];
    let e = admin.create_task(pb::CreateTaskRequest { task: Some(s) }).await;
    assert!(e.is_ok(), "b chains to a: a and b share an ancestor (b), so a join of both can run");
    admin.delete_task(pb::DeleteTaskRequest { name: "bad".into() }).await.expect("delete");
    create(&mut admin, step_task("c")).await;
    let mut s = step_task("bad");
    s.after_all = vec!["a".into(), "c".into()];
    refused(&mut admin, s, "task.after_all").await;
    let update = |name: &str, t: pb::TaskSpec, path: &str| pb::UpdateTaskRequest {
        name: name.into(),
        task: Some(t),
        update_mask: Some(prost_types::FieldMask { paths: vec![path.into()] }),
    };
    let mut a = step_task("a");
    a.on_success = vec!["b".into()];
    let e = admin.update_task(update("a", a, "on_success")).await.expect_err("cycle");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(e.message(), "task.on_success: would make a cycle: a -> b -> a");
    // Backfill and trigger.
    let backfill = |from, to| pb::BackfillTaskRequest { name: "a".into(), from, to, dry_run: false };
    let e = admin.backfill_task(backfill(ts(chrono::Duration::hours(-1)), ts(chrono::Duration::hours(-2)))).await;
    assert!(e.expect_err("reversed").message().starts_with("to: "));
    create(&mut admin, spec("secondly", "app", "step", cron("* * * * * *"))).await;
    let e = admin
        .backfill_task(pb::BackfillTaskRequest {
            name: "secondly".into(),
            from: ts(chrono::Duration::hours(-2)),
            to: ts(chrono::Duration::hours(-1)),
            dry_run: true,
        })
        .await
        .expect_err("over the cap");
    assert!(e.message().starts_with("to: the range holds more than 1000 fires"), "{}", e.message());
    let e = admin.backfill_task(backfill(ts(chrono::Duration::hours(-2)), ts(chrono::Duration::hours(-1)))).await;
    assert!(e.expect_err("manual").message().starts_with("name: "));
    let r = pb::TriggerTaskRequest { name: "a".into(), idempotency_key: "chain:1".into(), ..Default::default() };
    let e = admin.trigger_task(r).await.expect_err("reserved");
    assert!(e.message().starts_with("idempotency_key: ") && e.message().contains("reserved"), "{}", e.message());
    let r = pb::PauseTaskRequest { name: "a".into(), note: String::new(), until: None };
    assert!(admin.pause_task(r).await.expect_err("no note").message().starts_with("note: "));
    let r = pb::PauseTaskRequest { name: "a".into(), note: "x".into(), until: ts(chrono::Duration::hours(-1)) };
    assert!(admin.pause_task(r).await.expect_err("past").message().starts_with("until: "));
    // Nothing was stored by any of them.
    let tasks = admin.list_tasks(pb::ListTasksRequest::default()).await.expect("list").into_inner().tasks;
    let names: Vec<&str> = tasks.iter().filter_map(|t| t.spec.as_ref()).map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "secondly"]);
    assert!(tasks.iter().all(|t| t.pause.is_none()));
    assert!(instances(&admin, "a").await.is_empty());
    let deleted = admin.delete_task(pb::DeleteTaskRequest { name: "a".into() }).await.expect_err("named by b");
    assert_eq!(deleted.code(), Code::FailedPrecondition);
    assert!(deleted.message().contains("named by the chains or DAG edges") && deleted.message().contains('b'));
    axd.stop().await;
}

on_every_backend!(
    pause_with_a_note_holds_the_schedule_and_says_who_why_and_until_when,
    a_trigger_can_run_later_and_one_too_far_in_the_past_is_refused,
    backfill_over_the_api_creates_the_missing_fires_once,
    calendars_are_shared_and_one_in_use_cannot_be_deleted,
    a_chain_runs_the_next_task_with_the_output_and_links_both_ways,
    a_dag_runs_its_join_once_all_upstreams_of_the_run_succeeded,
    bad_schedule_input_is_refused_naming_the_field_and_stores_nothing,
);
