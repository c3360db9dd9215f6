//! Tasks as code (README "Tasks as code"): `axctl export` writes every task in the proto's canonical
//! JSON or YAML, and `axctl plan`/`axctl apply` read it back as no change at all on a database
//! holding every kind of task; a changed set is planned per field and applied in one call (all or
//! nothing, audited with its note), prune deletes only within the set's apps, and bad input is
//! refused naming the file, the task and the field with nothing changed.

use std::{collections::BTreeMap, path::Path, time::Duration};

use ax_proto::v1::{self as pb, schedule::Kind};
use ax_tests::{
    TestDb,
    axd::Axd,
    client::{cron, dur, manual, once_after, retries, spec},
    on_every_backend,
    procs::{CtlOutput, axctl},
};
use tonic::{Code, transport::Channel};

type Admin = pb::admin_service_client::AdminServiceClient<Channel>;

const SEC: Duration = Duration::from_secs(1);

fn ts_in(d: Duration) -> prost_types::Timestamp {
    let t = std::time::SystemTime::now() + d;
    let s = t.duration_since(std::time::UNIX_EPOCH).expect("after 1970");
    prost_types::Timestamp { seconds: s.as_secs() as i64, nanos: 0 }
}

/// One task of every schedule kind and every field a task can set.
fn every_kind() -> Vec<pb::TaskSpec> {
    let day = Duration::from_secs(86_400);
    let mut full = spec(
        "tc-cron",
        "tc",
        "reports.build",
        Kind::Cron(pb::CronSchedule {
            expression: "30 0 2 * * *".into(),
            time_zone: "Europe/Berlin".into(),
            dialect: pb::CronDialect::Quartz.into(),
        }),
    );
    full.description = "every field set".into();
    full.params = r#"{"customer_id": 42, "region": "eu"}"#.into();
    full.misfire_policy = pb::MisfirePolicy::FireAll.into();
    full.misfire_threshold = Some(dur(Duration::from_secs(90)));
    full.max_catch_up = 7;
    full.concurrency_policy = pb::ConcurrencyPolicy::Forbid.into();
    full.routing = pb::RoutingStrategy::Hash.into();
    full.hash_key = "customer_id".into();
    full.timeout = Some(dur(Duration::from_millis(1500)));
    full.retry_policy = Some(pb::RetryPolicy {
        max_retries: 3,
        backoff: Some(pb::Backoff {
            kind: Some(pb::backoff::Kind::Exponential(pb::ExponentialBackoff {
                initial: Some(dur(Duration::from_secs(2))),
                multiplier: 2.5,
                max: Some(dur(Duration::from_secs(60))),
                jitter: 0.1,
            })),
        }),
    });
    full.labels = [("team".to_owned(), "billing".to_owned()), ("tier".to_owned(), "1".to_owned())].into();
    full.selector = "region=eu".into();
    full.retry_on = pb::RetryTarget::Other.into();
    full.priority = 7;
    full.max_running = Some(2);
    full.max_pending = Some(50);
    full.cooldown_after = Some(3);
    full.cooldown = Some(dur(Duration::from_secs(30)));
    full.start_time = Some(ts_in(Duration::ZERO));
    full.end_time = Some(ts_in(400 * day));
    full.exclude_dates = vec!["2030-12-25".into(), "2030-12-26".into()];
    full.calendar = "tc-holidays".into();
    full.jitter = Some(dur(Duration::from_secs(5)));
    full.concurrency_key = "params.customer_id".into();
    full.concurrency_limit = Some(1);
    full.unique_key = "params.region".into();
    full.unique_for = Some(dur(Duration::from_secs(600)));
    full.must_finish_within = Some(dur(Duration::from_secs(3600)));
    full.search_params = vec!["params.customer_id".into()];

    let mut rate = spec(
        "tc-rate",
        "tc",
        "h",
        Kind::FixedRate(pb::IntervalSchedule { interval: Some(dur(Duration::from_secs(3))), start_at: None }),
    );
    rate.enabled = Some(false);
    rate.shards = 4;
    let delay = spec(
        "tc-delay",
        "tc",
        "h",
        Kind::FixedDelay(pb::IntervalSchedule { interval: Some(dur(Duration::from_secs(90))), start_at: None }),
    );
    let once = spec("tc-once", "tc", "h", once_after(Duration::from_secs(3600)));
    let mut first = spec("tc-first", "tc", "h", manual());
    first.retry_policy = Some(retries(2, Duration::from_secs(1)));
    first.on_success = vec!["tc-next".into()];
    first.on_failure = vec!["tc-alarm".into()];
    let next = spec("tc-next", "tc", "h", manual());
    let alarm = spec("tc-alarm", "tc", "h", manual());
    let mut dag = spec("tc-dag", "tc", "h", manual());
    dag.after_all = vec!["tc-first".into(), "tc-next".into()];
    let mut event = spec("tc-event", "tc", "h", manual());
    event.on_event = "order.paid".into();
    event.event_filter = "payload.method=card,payload.amount".into();
    let mut fan = spec("tc-fan", "tc", "h", cron("*/5 * * * *"));
    fan.routing = pb::RoutingStrategy::Broadcast.into();
    fan.extra_schedules = vec![
        pb::Schedule {
            kind: Some(Kind::FixedRate(pb::IntervalSchedule { interval: Some(dur(SEC * 6 * 3600)), start_at: None })),
        },
        pb::Schedule {
            kind: Some(Kind::Cron(pb::CronSchedule {
                expression: "0 0 12 * * *".into(),
                time_zone: "Asia/Tokyo".into(),
                dialect: 0,
            })),
        },
    ];
    // Created in this order: a chain names tasks that exist.
    vec![full, rate, delay, once, next, alarm, first, dag, event, fan]
}

async fn versions(admin: &mut Admin, app: &str) -> BTreeMap<String, i64> {
    let r = admin
        .list_tasks(pb::ListTasksRequest { app: app.into(), page_size: 1000, ..Default::default() })
        .await
        .expect("list tasks")
        .into_inner();
    r.tasks.iter().map(|t| (t.spec.as_ref().expect("spec").name.clone(), t.version)).collect()
}

async fn audit_of(admin: &mut Admin) -> Vec<pb::AuditEntry> {
    let r = admin
        .list_audit_entries(pb::ListAuditEntriesRequest { rpc: "ApplyTasks".into(), ..Default::default() })
        .await
        .expect("audit")
        .into_inner();
    r.entries
}

fn ok(out: &CtlOutput) -> &str {
    assert_eq!(out.code, 0, "{out:?}");
    &out.stdout
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_string_lossy().into_owned()
}

async fn export_then_apply_changes_nothing_and_a_changed_set_is_applied_whole(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let env = [("AX_ENDPOINT", axd.endpoint.as_str())];
    admin
        .create_calendar(pb::CreateCalendarRequest {
            calendar: Some(pb::Calendar {
                name: "tc-holidays".into(),
                dates: vec!["2030-01-01".into()],
                ..Default::default()
            }),
        })
        .await
        .expect("calendar");
    for s in every_kind() {
        admin
            .create_task(pb::CreateTaskRequest { task: Some(s.clone()) })
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}", s.name));
    }
    // A task of another app: outside the set's scope, prune leaves it.
    admin
        .create_task(pb::CreateTaskRequest { task: Some(spec("tc-elsewhere", "other", "h", manual())) })
        .await
        .expect("other app");
    let before = versions(&mut admin, "tc").await;
    assert_eq!(before.len(), 10);

    let dir = ax_tests::ScratchDir::new("taskfiles");
    let (yaml, json) = (path(&dir, "tc.yaml"), path(&dir, "tc.json"));
    ok(&axctl(&env, &["export", "--app", "tc", "--format", "yaml", "-f", &yaml]).await);
    let exported = ok(&axctl(&env, &["export", "--app", "tc", "--format", "json"]).await).to_owned();
    std::fs::write(&json, &exported).expect("write json");
    let doc: serde_json::Value = serde_json::from_str(&exported).expect("export is JSON");
    assert_eq!(doc["tasks"].as_array().map(Vec::len), Some(10), "{exported}");
    let full = doc["tasks"].as_array().and_then(|t| t.iter().find(|t| t["name"] == "tc-cron")).expect("tc-cron");
    assert_eq!(full["schedule"]["cron"]["time_zone"], "Europe/Berlin", "proto field names: {exported}");
    assert_eq!(full["timeout"], "1.500s", "canonical JSON durations: {exported}");
    assert!(
        exported.starts_with("{\n  \"tasks\": [\n    {\n      \"name\": \"tc-alarm\""),
        "fields in proto order: {exported}"
    );

    // Read back: no change, nothing written, nothing audited.
    for file in [&yaml, &json] {
        let out = axctl(&env, &["plan", "-f", file, "--prune", "--exit-code"]).await;
        assert!(ok(&out).contains("No changes: 10 task(s) as the files say."), "{out:?}");
        let out = axctl(&env, &["apply", "-f", file, "--prune"]).await;
        assert!(ok(&out).contains("No changes"), "{out:?}");
    }
    let out = axctl(&env, &["-o", "json", "plan", "-f", dir.to_str().expect("utf-8"), "--app", "tc"]).await;
    assert!(out.code != 0 && out.stderr.contains("is also defined in"), "a directory holding both files: {out:?}");
    assert_eq!(versions(&mut admin, "tc").await, before, "export then apply changed a task");
    assert!(audit_of(&mut admin).await.is_empty(), "a dry run or a no-op is not audited");

    // A changed set: one field of one task, a task added (chained), a task dropped (pruned).
    let mut changed = doc.clone();
    let tasks = changed["tasks"].as_array_mut().expect("tasks");
    tasks.retain(|t| t["name"] != "tc-delay");
    let cron = tasks.iter_mut().find(|t| t["name"] == "tc-cron").expect("tc-cron");
    cron["description"] = "changed by a commit".into();
    cron["schedule"]["cron"]["expression"] = "30 0 3 * * *".into();
    let next = tasks.iter_mut().find(|t| t["name"] == "tc-next").expect("tc-next");
    next["on_success"] = serde_json::json!(["tc-new"]);
    tasks.push(serde_json::json!({"name": "tc-new", "app": "tc", "handler": "h", "schedule": {"manual": {}}}));
    let changed_file = path(&dir, "changed.json");
    std::fs::write(&changed_file, serde_json::to_string_pretty(&changed).expect("json")).expect("write");
    let out = axctl(&env, &["plan", "-f", &changed_file, "--prune", "--exit-code"]).await;
    assert_eq!(out.code, 2, "--exit-code: the plan changes tasks: {out:?}");
    let plan = &out.stdout;
    assert!(plan.contains("~ update tc-cron (app tc): description, schedule"), "{plan}");
    assert!(plan.contains("next fire moves: "), "{plan}");
    assert!(
        plan.contains("~ update tc-next (app tc): on_success\n    edge added: tc-next -on_success-> tc-new"),
        "{plan}"
    );
    assert!(plan.contains("+ create tc-new (app tc)"), "{plan}");
    assert!(plan.contains("- delete tc-delay (app tc)"), "{plan}");
    assert!(plan.trim_end().ends_with("Plan: 1 to create, 2 to update, 1 to delete, 7 unchanged."), "{plan}");
    assert_eq!(versions(&mut admin, "tc").await, before, "plan changes nothing");

    let out = axctl(&env, &["apply", "-f", &changed_file, "--prune"]).await;
    assert!(out.code != 0 && out.stderr.contains("pass --yes to apply"), "{out:?}");
    let out =
        axctl(&env, &["-o", "json", "apply", "-f", &changed_file, "--prune", "--yes", "--note", "commit 1a2b3c"]).await;
    let applied = out.json();
    assert_eq!(applied["applied"], true, "{out:?}");
    assert_eq!(
        (applied["create"].as_u64(), applied["update"].as_u64(), applied["delete"].as_u64()),
        (Some(1), Some(2), Some(1))
    );
    let after = versions(&mut admin, "tc").await;
    assert!(after.contains_key("tc-new") && !after.contains_key("tc-delay"), "{after:?}");
    assert_eq!(after["tc-cron"], before["tc-cron"] + 1);
    assert_eq!(after["tc-rate"], before["tc-rate"], "an unchanged task is not written");
    assert_eq!(versions(&mut admin, "other").await.len(), 1, "prune stays within the set's apps");
    let task = admin.get_task(pb::GetTaskRequest { name: "tc-cron".into() }).await.expect("get").into_inner();
    assert_eq!(task.task.and_then(|t| t.spec).map(|s| s.description).as_deref(), Some("changed by a commit"));
    let audit = audit_of(&mut admin).await;
    assert_eq!(audit.len(), 1, "one audit entry per applied call: {audit:?}");
    assert_eq!(audit[0].app, "tc");
    assert_eq!(audit[0].detail, "1 created, 2 updated, 1 deleted, 7 unchanged; note: commit 1a2b3c", "{audit:?}");
    // Applying the same files again is a no-op.
    let out = axctl(&env, &["plan", "-f", &changed_file, "--prune", "--exit-code"]).await;
    assert!(ok(&out).contains("No changes: 10 task(s)"), "{out:?}");

    // Prune does not delete a task that a staying task's chain names: nothing changes.
    let mut no_new = changed.clone();
    no_new["tasks"].as_array_mut().expect("tasks").retain(|t| t["name"] != "tc-new");
    let no_new_file = path(&dir, "no-new.json");
    std::fs::write(&no_new_file, no_new.to_string()).expect("write");
    let out = axctl(&env, &["apply", "-f", &no_new_file, "--prune", "--yes"]).await;
    assert!(
        out.code != 0 && out.stderr.contains("prune would delete task \"tc-new\"") && out.stderr.contains("tc-next"),
        "{out:?}"
    );
    assert_eq!(versions(&mut admin, "tc").await, after, "a refused apply changes nothing");
    axd.stop().await;
}

async fn bad_sets_are_refused_naming_file_task_and_field_and_change_nothing(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let env = [("AX_ENDPOINT", axd.endpoint.as_str())];
    admin.create_task(pb::CreateTaskRequest { task: Some(spec("bs-keep", "bs", "h", manual())) }).await.expect("task");
    let dir = ax_tests::ScratchDir::new("badsets");
    let good = path(&dir, "a-good.yaml");
    std::fs::write(&good, "name: bs-new\napp: bs\nhandler: h\nschedule:\n  manual: {}\n").expect("write");
    // Server-side checks: the file and task come back in place of the request's index.
    let bad = path(&dir, "b-bad.yaml");
    std::fs::write(
        &bad,
        "tasks:\n- name: bs-keep\n  app: bs\n  handler: h\n  schedule:\n    manual: {}\n- name: bs-cron\n  app: bs\n  \
         handler: h\n  schedule:\n    cron:\n      expression: 61 * * * *\n",
    )
    .expect("write");
    let out = axctl(&env, &["apply", "-f", &good, "-f", &bad, "--yes"]).await;
    assert!(
        out.code != 0 && out.stderr.contains(&format!("{bad}: task \"bs-cron\": field schedule.cron.expression")),
        "{out:?}"
    );
    // Client-side checks: a field that TaskSpec does not have, a wrong type.
    let typo = path(&dir, "typo.json");
    std::fs::write(&typo, r#"[{"name": "bs-t", "app": "bs", "handler": "h", "shedule": {"manual": {}}}]"#)
        .expect("write");
    let out = axctl(&env, &["plan", "-f", &typo]).await;
    assert!(
        out.code != 0 && out.stderr.contains(&format!("{typo}: task \"bs-t\"")) && out.stderr.contains("shedule"),
        "{out:?}"
    );
    let wrong = path(&dir, "wrong.yaml");
    std::fs::write(&wrong, "name: bs-w\napp: bs\nhandler: h\ntimeout: soon\n").expect("write");
    let out = axctl(&env, &["plan", "-f", &wrong]).await;
    assert!(out.code != 0 && out.stderr.contains(&format!("{wrong}: task \"bs-w\": field timeout:")), "{out:?}");
    // A task in another app than --app, and prune of an app outside the caller's... named apps.
    let out = axctl(&env, &["plan", "-f", &good, "--app", "elsewhere"]).await;
    assert!(out.code != 0 && out.stderr.contains(&format!("{good}: task \"bs-new\": field app")), "{out:?}");
    // Over the wire: duplicates and an empty prune name their field.
    let dup = pb::ApplyTasksRequest {
        tasks: vec![spec("bs-d", "bs", "h", manual()), spec("bs-d", "bs", "h", manual())],
        ..Default::default()
    };
    let e = admin.apply_tasks(dup).await.expect_err("duplicate");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("tasks[1].name:"), "{e:?}");
    let e = admin.apply_tasks(pb::ApplyTasksRequest { prune: true, ..Default::default() }).await.expect_err("no scope");
    assert!(e.message().starts_with("apps:"), "{e:?}");
    let names: Vec<String> = versions(&mut admin, "bs").await.into_keys().collect();
    assert_eq!(names, ["bs-keep"], "nothing was created by a refused set");
    axd.stop().await;
}

/// Several schedules: what a task's extra schedules may be, refused naming the field.
async fn extra_schedules_are_checked_naming_the_field(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let every = |s: u64| pb::Schedule {
        kind: Some(Kind::FixedRate(pb::IntervalSchedule { interval: Some(dur(SEC * s as u32)), start_at: None })),
    };
    let with = |schedule: Kind, extra: Vec<pb::Schedule>| pb::TaskSpec {
        extra_schedules: extra,
        ..spec("xs", "xs", "h", schedule)
    };
    let once = pb::Schedule { kind: Some(once_after(Duration::from_secs(60))) };
    let cases = [
        (with(cron("0 * * * *"), vec![once]), "task.extra_schedules[0]", "must be a cron or fixed_rate"),
        (with(manual(), vec![every(60)]), "task.schedule", "must be a cron or fixed_rate schedule when"),
        (with(cron("0 * * * *"), vec![every(60), every(60)]), "task.extra_schedules[1]", "is the same as"),
        (
            with(cron("0 * * * *"), vec![pb::Schedule { kind: Some(cron("0 * * * *")) }]),
            "task.extra_schedules[0]",
            "is the same as schedule",
        ),
        (with(cron("0 * * * *"), (1..=9).map(|s| every(s * 60)).collect()), "task.extra_schedules", "at most 8"),
        (
            with(cron("0 * * * *"), vec![pb::Schedule { kind: Some(cron("61 * * * *")) }]),
            "task.extra_schedules[0].cron.expression",
            "out of range",
        ),
    ];
    for (task, field, why) in cases {
        let e = admin.create_task(pb::CreateTaskRequest { task: Some(task.clone()) }).await.expect_err("refused");
        assert_eq!(e.code(), Code::InvalidArgument, "{task:?}");
        assert!(e.message().starts_with(&format!("{field}: ")) && e.message().contains(why), "{field}: {e:?}");
    }
    // A good one: its preview merges the fires, and a trigger may not set the tag axd sets.
    let good = with(cron("0 0 * * * *"), vec![every(20 * 60)]);
    let created = admin.create_task(pb::CreateTaskRequest { task: Some(good) }).await.expect("create").into_inner();
    let preview = created.preview.expect("preview");
    assert!(preview.description.starts_with("fires of 2 schedules merged"), "{preview:?}");
    let trigger = pb::TriggerTaskRequest {
        name: "xs".into(),
        tags: [("ax.schedule".to_owned(), "schedule".to_owned())].into(),
        ..Default::default()
    };
    let e = admin.trigger_task(trigger).await.expect_err("reserved tag");
    assert!(e.message().starts_with("tags[\"ax.schedule\"]:"), "{e:?}");
    // ... but a filter may name it.
    let by_schedule = pb::ListInstancesRequest {
        task_name: "xs".into(),
        tags: [("ax.schedule".to_owned(), "extra_schedules[0]".to_owned())].into(),
        ..Default::default()
    };
    admin.list_instances(by_schedule).await.expect("a filter by ax.schedule");
    // Adding a schedule moves the next fire: a yearly task given one every 90 s fires within 90 s.
    let mut yearly = with(cron("0 0 0 1 1 *"), Vec::new());
    yearly.name = "xs-yearly".into();
    admin.create_task(pb::CreateTaskRequest { task: Some(yearly) }).await.expect("create");
    let change = pb::UpdateTaskRequest {
        name: "xs-yearly".into(),
        task: Some(pb::TaskSpec { extra_schedules: vec![every(90)], ..Default::default() }),
        update_mask: Some(prost_types::FieldMask { paths: vec!["extra_schedules".into()] }),
    };
    let updated = admin.update_task(change).await.expect("update").into_inner().task.expect("task");
    let next = updated.next_fire_time.expect("a next fire").seconds;
    let soon = ts_in(Duration::from_secs(91)).seconds;
    assert!(next <= soon, "the next fire is the new schedule's: {next} > {soon}");
    axd.stop().await;
}

on_every_backend!(
    export_then_apply_changes_nothing_and_a_changed_set_is_applied_whole,
    bad_sets_are_refused_naming_file_task_and_field_and_change_nothing,
    extra_schedules_are_checked_naming_the_field
);
