//! Input that a client could not read back, or that makes errors too large or a handler panic, is
//! refused at the gRPC boundary with INVALID_ARGUMENT naming the field, and nothing is stored
//! (issue 11, items 6, 11 and 12), on every backend.

use ax_proto::v1::{self as pb, scheduler_message::Msg as In, worker_message::Msg as Out};
use ax_tests::{
    TestDb,
    axd::{Axd, channel},
    client::{RawWorker, create, cron, hello, manual, spec, trigger},
    on_every_backend,
};
use tonic::{Code, Status, transport::Channel};

type Admin = pb::admin_service_client::AdminServiceClient<Channel>;

/// Asserts an INVALID_ARGUMENT whose message starts with `field: ` and holds `reason`, and that the
/// message is short (errors quote at most ~100 bytes of input).
#[track_caller]
fn refused(r: Result<impl std::fmt::Debug, Status>, field: &str, reason: &str) -> String {
    let s = r.expect_err("must be refused");
    assert_eq!(s.code(), Code::InvalidArgument, "{field}: {s:?}");
    let m = s.message().to_owned();
    assert!(m.starts_with(&format!("{field}: ")), "names {field}: {m}");
    assert!(m.contains(reason), "says {reason:?}: {m}");
    // Short whatever the input's size: a huge value is quoted clipped. (An unknown update_mask
    // field's answer also lists the ~40 updatable fields, about 450 bytes.)
    assert!(m.len() < 1000, "a short message ({} bytes): {m}", m.len());
    assert!(!m.contains('\u{1b}') && !m.contains('\0'), "no control characters echoed: {m:?}");
    m
}

async fn task_count(admin: &mut Admin) -> usize {
    let r = admin.list_tasks(pb::ListTasksRequest { page_size: 1000, ..Default::default() }).await.expect("list");
    r.into_inner().tasks.len()
}

fn nested(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

async fn params_a_client_cannot_parse_are_refused_and_nothing_is_stored(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let create_with = |f: &dyn Fn(&mut pb::TaskSpec)| {
        let mut s = spec("t", "app", "h", manual());
        f(&mut s);
        pb::CreateTaskRequest { task: Some(s) }
    };
    let deep = nested(30_000);
    let r = admin.create_task(create_with(&|s| s.params = deep.clone())).await;
    refused(r, "task.params", "more than 64 levels deep");
    let r = admin.create_task(create_with(&|s| s.params = r#"{"name":"\ud800"}"#.into())).await;
    refused(r, "task.params", "lone UTF-16 surrogate");
    let r = admin.create_task(create_with(&|s| s.description = "report\0".into())).await;
    refused(r, "task.description", "U+0000 (NUL)");
    let r = admin.create_task(create_with(&|s| s.description = "\u{1b}]0;owned\u{7}".into())).await;
    refused(r, "task.description", "U+001B (ESC)");
    let r =
        admin.create_task(create_with(&|s| drop(s.labels.insert("team".into(), "a\u{1b}[1A\u{1b}[2Kb".into())))).await;
    refused(r, "task.labels[\"team\"]", "U+001B (ESC)");
    assert_eq!(task_count(&mut admin).await, 0, "nothing was stored");

    // A task that exists keeps what it had when an update is refused.
    let before = create(&mut admin, spec("t", "app", "h", manual())).await;
    for (path, f) in [
        ("params", Box::new(|s: &mut pb::TaskSpec| s.params = nested(65)) as Box<dyn Fn(&mut pb::TaskSpec)>),
        ("description", Box::new(|s: &mut pb::TaskSpec| s.description = "tab\tok, bell\u{7} not".into())),
        ("labels", Box::new(|s: &mut pb::TaskSpec| drop(s.labels.insert("k".into(), "line\nbreak".into())))),
    ] {
        let mut s = pb::TaskSpec::default();
        f(&mut s);
        let r = admin
            .update_task(pb::UpdateTaskRequest {
                name: "t".into(),
                task: Some(s),
                update_mask: Some(prost_types::FieldMask { paths: vec![path.into()] }),
            })
            .await;
        let field = if path == "labels" { "task.labels[\"k\"]".to_owned() } else { format!("task.{path}") };
        refused(r, &field, if path == "params" { "levels deep" } else { "control characters" });
    }
    let after = admin.get_task(pb::GetTaskRequest { name: "t".into() }).await.expect("get").into_inner();
    let after = after.task.expect("task");
    assert_eq!(after.version, before.version, "no update landed");
    assert_eq!(after.spec, before.spec);

    // TriggerTask params get the same checks; no instance is created.
    for p in [nested(65), r#"["\udc00"]"#.to_owned()] {
        let r = admin
            .trigger_task(pb::TriggerTaskRequest {
                name: "t".into(),
                params: Some(p),
                idempotency_key: "k1".into(),
                when: None,
                wait: None,
                tags: Default::default(),
            })
            .await;
        refused(r, "params", "");
    }
    let listed = admin.list_instances(pb::ListInstancesRequest::default()).await.expect("list").into_inner();
    assert!(listed.instances.is_empty(), "no instance was stored: {:?}", listed.instances);

    // CancelInstance reasons are text for people too.
    let id = trigger(&mut admin, "t", "k2").await;
    let r = admin.cancel_instance(pb::CancelInstanceRequest { id, reason: "done\u{1b}[2J".into() }).await;
    refused(r, "reason", "U+001B (ESC)");
    let got = admin.get_instance(pb::GetInstanceRequest { id }).await.expect("get").into_inner();
    assert_eq!(got.instance.expect("instance").status, pb::InstanceStatus::Pending as i32, "not canceled");
    axd.stop().await;
}

async fn a_worker_s_hello_with_control_characters_is_refused_and_its_text_is_escaped(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut h = hello("app", "w1", "h", 1, 1);
    h.labels.insert("zone".into(), "eu\u{1b}]0;x\u{7}".into());
    refused(RawWorker::connect(channel(&axd.endpoint).await, h).await.map(|_| ()), "hello.labels[\"zone\"]", "ESC");
    let mut h = hello("app", "w1", "h", 1, 1);
    h.client = "sdk\n1.0".into();
    refused(RawWorker::connect(channel(&axd.endpoint).await, h).await.map(|_| ()), "hello.client", "newline");
    let workers = admin.list_workers(pb::ListWorkersRequest::default()).await.expect("workers").into_inner();
    assert!(workers.workers.is_empty(), "no session was recorded: {:?}", workers.workers);

    // What a running handler says is escaped, not refused: the session and the result survive.
    create(&mut admin, spec("t", "app", "h", manual())).await;
    let id = trigger(&mut admin, "t", "k").await;
    let (mut w, _) = RawWorker::connect(channel(&axd.endpoint).await, hello("app", "w2", "h", 1, 1)).await.expect("hi");
    let attempt = w
        .expect("the assignment", |m| match m {
            In::Assign(a) if a.instance_id == id => Some(a.attempt),
            _ => None,
        })
        .await;
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt })).await;
    let line = "\u{1b}[31mred\u{1b}[0m and NUL\0 and\ttab";
    w.send(Out::Log(pb::Log { instance_id: id, attempt, level: 0, message: line.into(), at: None })).await;
    w.send(Out::Result(pb::Result {
        instance_id: id,
        attempt,
        outcome: pb::Outcome::Success.into(),
        message: "ok\u{7}".into(),
        ..Default::default()
    }))
    .await;
    w.expect("the result ack", |m| matches!(m, In::ResultAck(a) if a.instance_id == id).then_some(())).await;
    let logs = admin.get_instance_logs(pb::GetInstanceLogsRequest { id, ..Default::default() }).await.expect("logs");
    let logs = logs.into_inner().lines;
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(logs[0].message, "\\u{1b}[31mred\\u{1b}[0m and NUL\\u{0} and\ttab");
    let got = admin.get_instance(pb::GetInstanceRequest { id }).await.expect("get").into_inner();
    let got = got.instance.expect("instance");
    assert_eq!((got.status, got.message.as_str()), (pb::InstanceStatus::Success as i32, "ok\\u{7}"));
    axd.stop().await;
}

async fn errors_about_huge_input_stay_short(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let huge = "Z".repeat(100 * 1024);
    let mut s = spec("t", "app", "h", cron("0 * * * *"));
    if let Some(pb::Schedule { kind: Some(pb::schedule::Kind::Cron(c)) }) = &mut s.schedule {
        c.time_zone = huge.clone();
    }
    let m = refused(
        admin.create_task(pb::CreateTaskRequest { task: Some(s) }).await,
        "task.schedule.cron.time_zone",
        "unknown time zone",
    );
    assert!(m.contains("… (102400 bytes)"), "{m}");
    let preview =
        |kind| pb::PreviewScheduleRequest { schedule: Some(pb::Schedule { kind: Some(kind) }), ..Default::default() };
    let zone = pb::CronSchedule { expression: "0 * * * *".into(), time_zone: huge.clone(), dialect: 0 };
    refused(admin.preview_schedule(preview(pb::schedule::Kind::Cron(zone))).await, "schedule.cron.time_zone", "bytes)");
    let expr = format!("@{huge}");
    let r = admin.preview_schedule(preview(cron(&expr))).await;
    refused(r, "schedule.cron.expression", "at most 256 allowed");
    refused(admin.preview_schedule(preview(cron("@\u{1b}[2J"))).await, "schedule.cron.expression", "nickname");
    refused(admin.get_task(pb::GetTaskRequest { name: huge.clone() }).await, "name", "at most 128");
    refused(
        admin
            .get_task(pb::GetTaskRequest { name: format!("a{huge}").chars().take(100).collect::<String>() + " x" })
            .await,
        "name",
        "contains ' '",
    );
    let r = admin
        .update_task(pb::UpdateTaskRequest {
            name: "t".into(),
            task: Some(pb::TaskSpec::default()),
            update_mask: Some(prost_types::FieldMask { paths: vec![huge.clone()] }),
        })
        .await;
    refused(r, "update_mask", "(102400 bytes)");
    let mut s = spec("t", "app", "h", manual());
    s.labels.insert(huge.clone(), "v".into());
    let key = format!("task.labels[{}]", ax_scheduler::validate::quote(&huge));
    assert!(key.ends_with("\"… (102400 bytes)]"), "{key}");
    refused(admin.create_task(pb::CreateTaskRequest { task: Some(s) }).await, &key, "at most 63");
    assert_eq!(task_count(&mut admin).await, 0);
    axd.stop().await;
}

async fn timestamps_and_durations_from_the_wire_are_range_checked(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let ts = |seconds, nanos| prost_types::Timestamp { seconds, nanos };
    let every = |interval: prost_types::Duration, start_at| {
        pb::schedule::Kind::FixedRate(pb::IntervalSchedule { interval: Some(interval), start_at })
    };
    let minute = prost_types::Duration { seconds: 60, nanos: 0 };
    let preview = |kind, from| pb::PreviewScheduleRequest {
        schedule: Some(pb::Schedule { kind: Some(kind) }),
        from,
        count: 5,
        ..Default::default()
    };
    // Near the end of chrono's range: this panicked inside chrono ("Local time out of range").
    let end_of_chrono = ts(chrono::DateTime::<chrono::Utc>::MAX_UTC.timestamp() - 3600, 0);
    let kiritimati =
        pb::CronSchedule { expression: "0 * * * *".into(), time_zone: "Pacific/Kiritimati".into(), dialect: 0 };
    let r = admin.preview_schedule(preview(pb::schedule::Kind::Cron(kiritimati.clone()), Some(end_of_chrono))).await;
    refused(r, "from", "9999-12-31T23:59:59Z");
    refused(admin.preview_schedule(preview(manual(), Some(ts(0, 2_000_000_000)))).await, "from", "nanos = 2000000000");
    refused(admin.preview_schedule(preview(manual(), Some(ts(-1, 0)))).await, "from", "out of range");
    // The last accepted instant, 14 hours ahead on the wall clock, is answered; nothing fires after
    // year 9999.
    let last =
        admin.preview_schedule(preview(pb::schedule::Kind::Cron(kiritimati), Some(ts(253_402_300_799, 0)))).await;
    refused(last, "schedule.cron.expression", "never fires after 9999-12-31T23:59:59+00:00");
    let r = admin.preview_schedule(preview(every(minute, Some(ts(253_402_300_000, 0))), Some(ts(253_402_300_000, 0))));
    let fires = r.await.expect("preview").into_inner().preview.expect("preview").fires;
    assert!(fires.iter().all(|f| f.time.as_ref().is_some_and(|t| t.seconds <= 253_402_300_799)), "{fires:?}");

    let create_with = |kind| pb::CreateTaskRequest { task: Some(spec("t", "app", "h", kind)) };
    // A fixed-rate start in year -257878 was accepted.
    let r = admin.create_task(create_with(every(minute, Some(ts(-8_200_000_000_000, 0))))).await;
    refused(r, "task.schedule.fixed_rate.start_at", "out of range");
    let r =
        admin.create_task(create_with(every(prost_types::Duration { seconds: 60, nanos: 2_000_000_000 }, None))).await;
    refused(r, "task.schedule.fixed_rate.interval", "nanos = 2000000000");
    let r = admin.create_task(create_with(every(prost_types::Duration { seconds: 60, nanos: -1 }, None))).await;
    refused(r, "task.schedule.fixed_rate.interval", "negative");
    let at = pb::schedule::Kind::OneTime(pb::OneTimeSchedule {
        when: Some(pb::one_time_schedule::When::At(ts(i64::MAX, 0))),
    });
    refused(admin.create_task(create_with(at)).await, "task.schedule.one_time.at", "out of range");
    let mut s = spec("t", "app", "h", manual());
    s.timeout = Some(prost_types::Duration { seconds: i64::MAX, nanos: 0 });
    refused(admin.create_task(pb::CreateTaskRequest { task: Some(s) }).await, "task.timeout", "out of range");
    assert_eq!(task_count(&mut admin).await, 0);
    axd.stop().await;
}

on_every_backend!(
    params_a_client_cannot_parse_are_refused_and_nothing_is_stored,
    a_worker_s_hello_with_control_characters_is_refused_and_its_text_is_escaped,
    errors_about_huge_input_stay_short,
    timestamps_and_durations_from_the_wire_are_range_checked,
);
