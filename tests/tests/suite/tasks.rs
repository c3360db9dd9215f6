//! Task administration against a running axd, on every backend: EnableTask, UpdateTask, an
//! explicit cron dialect, the idempotency key reaching the handler, and the default retry backoff.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use ax_proto::v1::{self as pb, InstanceStatus as S, scheduler_message::Msg as In, worker_message::Msg as Out};
use ax_tests::{
    TestDb,
    axd::{Axd, channel},
    client::{
        RawWorker, create, cron, get, hello, manual, once_after, result, retries, spec, trigger, trigger_with, utc,
        wait_status,
    },
    eventually, on_every_backend,
};
use ax_worker::{Context, HandlerError, Worker};
use chrono::{DateTime, Datelike, Utc, Weekday};
use tonic::transport::Channel;

const LONG: Duration = Duration::from_secs(20);

type Admin = pb::admin_service_client::AdminServiceClient<Channel>;

async fn instances(admin: &Admin, task: &str) -> Vec<pb::Instance> {
    let mut admin = admin.clone();
    let r = admin.list_instances(pb::ListInstancesRequest {
        task_name: task.into(),
        page_size: 1000,
        ..Default::default()
    });
    r.await.expect("list").into_inner().instances
}

async fn task_of(admin: &Admin, name: &str) -> (pb::Task, Vec<pb::TaskEvent>) {
    let r = admin.clone().get_task(pb::GetTaskRequest { name: name.into() }).await.expect("get task").into_inner();
    (r.task.expect("task"), r.events)
}

/// Heartbeat 2 s: a raw worker may stay silent for a few seconds while the test calls axd.
fn patient(o: &mut ax_scheduler::config::Options) {
    let secs = |n| Some(ax_scheduler::config::HumanDuration(Duration::from_secs(n)));
    o.heartbeat_interval = secs(2);
    o.ack_timeout = secs(10);
    o.lost_worker_grace = secs(10);
}

fn time(t: &Option<prost_types::Timestamp>) -> DateTime<Utc> {
    utc(t.as_ref().expect("time"))
}

async fn enable_task_resumes_a_disabled_task_without_running_the_fires_it_missed(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("paused", "app", "h", cron("* * * * * *"));
    s.enabled = Some(false);
    let created = create(&mut admin, s).await;
    assert_eq!(created.next_fire_time, None, "a disabled task does not fire");
    let mut once = spec("once", "app", "h", once_after(Duration::from_secs(1)));
    once.enabled = Some(false);
    create(&mut admin, once).await;
    // Two seconds of fires, and the one-time task's time, pass while both are disabled.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(instances(&admin, "paused").await.is_empty(), "nothing fired while disabled");

    let enabled =
        admin.enable_task(pb::EnableTaskRequest { name: "paused".into() }).await.expect("enable").into_inner().task;
    let enabled = enabled.expect("task");
    let (_, events) = task_of(&admin, "paused").await;
    let enabled_at = time(&events[0].time);
    assert_eq!(events[0].kind, "ENABLED");
    assert_eq!(enabled.version, created.version + 1);
    let next = time(&enabled.next_fire_time);
    assert!(
        next > enabled_at && next - enabled_at <= chrono::TimeDelta::seconds(1),
        "next fire {next}, enabled {enabled_at}"
    );
    let fired = eventually(LONG, "two fires after enabling", || async {
        let l = instances(&admin, "paused").await;
        (l.len() >= 2).then_some(l)
    })
    .await;
    for i in &fired {
        assert!(
            time(&i.trigger_time) > enabled_at,
            "fire {} was missed while disabled: not run",
            time(&i.trigger_time)
        );
        assert_eq!(i.source, pb::InstanceSource::Schedule as i32, "no catch-up for fires missed while disabled");
    }
    // Enabling an enabled task changes nothing.
    let again = admin.enable_task(pb::EnableTaskRequest { name: "paused".into() }).await.expect("enable").into_inner();
    assert_eq!(again.task.expect("task").version, enabled.version);
    admin.disable_task(pb::DisableTaskRequest { name: "paused".into() }).await.expect("disable");

    // A one-time task whose time passed while it was disabled stays done.
    let once = admin.enable_task(pb::EnableTaskRequest { name: "once".into() }).await.expect("enable").into_inner();
    let once = once.task.expect("task");
    assert!(once.spec.and_then(|s| s.enabled).unwrap_or(false));
    assert_eq!(once.next_fire_time, None, "its time has passed");
    assert!(instances(&admin, "once").await.is_empty());
    let err = admin.enable_task(pb::EnableTaskRequest { name: "nope".into() }).await.expect_err("unknown task");
    assert_eq!(err.code(), tonic::Code::NotFound);
    axd.stop().await;
}

async fn update_task_changes_what_the_next_instances_run_and_when(db: &TestDb) {
    let axd = Axd::start(db, patient).await;
    let mut admin = axd.admin().await;
    let mut s = spec("job", "raw", "h", manual());
    s.params = r#"{"v":1}"#.into();
    let v1 = create(&mut admin, s).await;
    let mut h = hello("raw", "raw-1", "h", 4, 4);
    h.handlers.push("h2".into());
    let (mut w, _) = RawWorker::connect(channel(&axd.endpoint).await, h).await.expect("connect");
    let update = |task: pb::TaskSpec, paths: &[&str]| pb::UpdateTaskRequest {
        name: "job".into(),
        task: Some(task),
        update_mask: Some(prost_types::FieldMask { paths: paths.iter().map(|p| (*p).to_owned()).collect() }),
    };

    // New params: the next instance's worker gets them; the description is not in the mask.
    let change = pb::TaskSpec { params: r#"{"v":2}"#.into(), description: "ignored".into(), ..Default::default() };
    let v2 = admin.update_task(update(change, &["params"])).await.expect("update").into_inner().task.expect("task");
    assert_eq!(v2.version, v1.version + 1);
    let spec2 = v2.spec.clone().expect("spec");
    assert_eq!((spec2.params.as_str(), spec2.description.as_str()), (r#"{"v":2}"#, ""));
    let id = trigger(&mut admin, "job", "after-params").await;
    let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    assert_eq!((a.instance_id, a.params.as_str(), a.handler.as_str()), (id, r#"{"v":2}"#, "h"));
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: a.attempt })).await;
    w.send(result(id, a.attempt, true)).await;

    // Another handler and a schedule: it starts firing by itself, and runs the new handler.
    let change = pb::TaskSpec {
        handler: "h2".into(),
        schedule: Some(pb::Schedule { kind: Some(cron("* * * * * *")) }),
        ..Default::default()
    };
    let v3 = admin.update_task(update(change, &["handler", "schedule"])).await.expect("update").into_inner();
    let v3 = v3.task.expect("task");
    assert_eq!(v3.version, v2.version + 1);
    assert!(v3.next_fire_time.is_some(), "a cron schedule fires by itself");
    let a = w
        .expect("a scheduled Assign", |m| match m {
            In::Assign(a) if a.idempotency_key.starts_with("fire:") => Some(a.clone()),
            _ => None,
        })
        .await;
    assert_eq!((a.handler.as_str(), a.params.as_str()), ("h2", r#"{"v":2}"#));
    let (_, events) = task_of(&admin, "job").await;
    let kinds: Vec<(&str, &str)> = events.iter().map(|e| (e.kind.as_str(), e.message.as_str())).collect();
    assert_eq!(
        kinds[..2],
        [("UPDATED", "changed: handler, schedule"), ("UPDATED", "changed: params")],
        "every change is recorded, newest first"
    );

    // Disabled through the mask: no next fire.
    let off = pb::TaskSpec { enabled: Some(false), ..Default::default() };
    let v4 = admin.update_task(update(off, &["enabled"])).await.expect("update").into_inner().task.expect("task");
    assert_eq!(v4.next_fire_time, None);

    // Refused changes name the field and change nothing.
    let refused = [
        (update(pb::TaskSpec::default(), &[]), "update_mask"),
        (update(pb::TaskSpec::default(), &["name"]), "update_mask"),
        (update(pb::TaskSpec { name: "other".into(), ..Default::default() }, &["params"]), "task.name"),
        (update(pb::TaskSpec { params: "{oops".into(), ..Default::default() }, &["params"]), "task.params"),
    ];
    for (req, field) in refused {
        let err = admin.update_task(req).await.expect_err("refused");
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
        assert!(err.message().starts_with(field), "{field}: {}", err.message());
    }
    let mut missing = update(pb::TaskSpec::default(), &["params"]);
    missing.name = "nope".into();
    assert_eq!(admin.update_task(missing).await.expect_err("unknown").code(), tonic::Code::NotFound);
    assert_eq!(task_of(&admin, "job").await.0.version, v4.version, "refused updates changed nothing");
    axd.stop().await;
}

async fn an_explicit_cron_dialect_decides_how_axd_reads_the_expression(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let cron_in = |expression: &str, dialect: pb::CronDialect| {
        pb::schedule::Kind::Cron(pb::CronSchedule {
            expression: expression.into(),
            time_zone: "UTC".into(),
            dialect: dialect as i32,
        })
    };
    let create_with = |name: &str, kind| {
        let mut admin = admin.clone();
        let s = spec(name, "app", "h", kind);
        async move { admin.create_task(pb::CreateTaskRequest { task: Some(s) }).await.map(|r| r.into_inner()) }
    };
    let dialect_of = |t: &pb::Task| match t.spec.as_ref().and_then(|s| s.schedule.as_ref()).and_then(|s| s.kind.clone())
    {
        Some(pb::schedule::Kind::Cron(c)) => c.dialect,
        other => panic!("not a cron schedule: {other:?}"),
    };
    // "0 0 12 * * 2" without `?`: detected as UNIX (2 = Tuesday), with a warning saying so.
    let detected =
        create_with("detected", cron_in("0 0 12 * * 2", pb::CronDialect::Unspecified)).await.expect("create");
    let task = detected.task.expect("task");
    assert_eq!(dialect_of(&task), pb::CronDialect::Unix as i32);
    assert_eq!(time(&task.next_fire_time).weekday(), Weekday::Tue);
    let warnings = detected.preview.expect("preview").warnings;
    assert!(warnings.iter().any(|w| w.contains("read as a unix expression")), "{warnings:?}");
    // The same expression told QUARTZ: 2 = Monday, stored as QUARTZ, no warning.
    let told = create_with("told", cron_in("0 0 12 * * 2", pb::CronDialect::Quartz)).await.expect("create");
    let task = told.task.expect("task");
    assert_eq!(dialect_of(&task), pb::CronDialect::Quartz as i32);
    assert_eq!(time(&task.next_fire_time).weekday(), Weekday::Mon);
    assert!(told.preview.expect("preview").warnings.is_empty());
    let (stored, _) = task_of(&admin, "told").await;
    assert_eq!(dialect_of(&stored), pb::CronDialect::Quartz as i32, "kept as told");
    assert_eq!(time(&stored.next_fire_time).weekday(), Weekday::Mon);
    // Told UNIX, a Quartz expression with a year is refused, naming the field.
    let err = create_with("unix-7", cron_in("0 0 12 ? * 2 2030", pb::CronDialect::Unix)).await.expect_err("7 fields");
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().contains("task.schedule.cron.expression") && err.message().contains("unix"), "{err:?}");
    // The dialect is honored when the schedule changes too.
    let change = pb::TaskSpec {
        schedule: Some(pb::Schedule { kind: Some(cron_in("0 0 12 * * 6", pb::CronDialect::Quartz)) }),
        ..Default::default()
    };
    let updated = admin
        .update_task(pb::UpdateTaskRequest {
            name: "detected".into(),
            task: Some(change),
            update_mask: Some(prost_types::FieldMask { paths: vec!["schedule".into()] }),
        })
        .await
        .expect("update")
        .into_inner()
        .task
        .expect("task");
    assert_eq!(time(&updated.next_fire_time).weekday(), Weekday::Fri, "Quartz 6 = Friday");
    axd.stop().await;
}

async fn handlers_get_the_instance_s_idempotency_key_on_every_attempt(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("keyed", "app", "rec", manual());
    s.retry_policy = Some(retries(1, Duration::ZERO));
    create(&mut admin, s).await;
    create(&mut admin, spec("ticking", "app", "rec", cron("* * * * * *"))).await;
    let seen: Arc<Mutex<Vec<(i64, u32, String)>>> = Arc::default();
    let log = seen.clone();
    let worker = Worker::builder()
        .endpoint(&axd.endpoint)
        .app("app")
        .capacity(2)
        .handler("rec", move |ctx: Context| {
            let log = log.clone();
            async move {
                log.lock().expect("lock").push((ctx.instance_id, ctx.attempt, ctx.idempotency_key.clone()));
                if ctx.task_name == "keyed" && ctx.attempt == 1 {
                    return Err(HandlerError::retryable("first attempt fails"));
                }
                Ok(())
            }
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    let id = trigger_with(&mut admin, "keyed", "order-42", "{}").await;
    let done = wait_status(&mut admin, id, S::Success, LONG).await;
    assert_eq!(done.attempt, 2);
    let fire = eventually(LONG, "a scheduled run", || async {
        let l = instances(&admin, "ticking").await;
        l.into_iter().find(|i| i.status == S::Success as i32)
    })
    .await;
    admin.disable_task(pb::DisableTaskRequest { name: "ticking".into() }).await.expect("disable");
    let seen = seen.lock().expect("lock").clone();
    let keyed: Vec<_> = seen.iter().filter(|(i, _, _)| *i == id).map(|(_, a, k)| (*a, k.as_str())).collect();
    assert_eq!(keyed, vec![(1, "order-42"), (2, "order-42")], "the caller's key, the same on every attempt");
    let scheduled = seen.iter().find(|(i, _, _)| *i == fire.id).map(|(_, _, k)| k.clone()).expect("ran");
    let at = time(&fire.trigger_time).to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
    assert_eq!(scheduled, format!("fire:{at}"), "a scheduled fire's key names its fire time");
    assert_eq!(scheduled, fire.idempotency_key);
    let _ = stop.send(());
    let _ = run.await;
    axd.stop().await;
}

async fn a_retry_without_a_backoff_waits_ten_seconds_give_or_take_ten_percent(db: &TestDb) {
    let axd = Axd::start(db, patient).await;
    let mut admin = axd.admin().await;
    let mut s = spec("flaky", "raw", "h", manual());
    s.retry_policy = Some(pb::RetryPolicy { max_retries: 3, backoff: None });
    create(&mut admin, s).await;
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("raw", "raw-1", "h", 2, 2)).await.expect("connect");
    let mut delays = Vec::new();
    for key in ["a", "b"] {
        let id = trigger(&mut admin, "flaky", key).await;
        let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
        w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: a.attempt })).await;
        w.send(result(id, a.attempt, false)).await;
        let pending = wait_status(&mut admin, id, S::Pending, LONG).await;
        let (_, events) = get(&mut admin, id).await;
        let retry = events.iter().rev().find(|e| e.to_status == S::Pending as i32).expect("retry event");
        assert!(retry.reason.starts_with("retry 1/3 in "), "{}", retry.reason);
        let delay = time(&pending.available_time) - time(&retry.time);
        let ms = delay.num_milliseconds();
        assert!((9_000..=11_000).contains(&ms), "the first retry waits 10 s ± 10 %: {ms} ms");
        delays.push(delay);
    }
    assert_ne!(delays[0], delays[1], "jitter: two retries do not wait exactly as long");
    axd.stop().await;
}

on_every_backend!(
    enable_task_resumes_a_disabled_task_without_running_the_fires_it_missed,
    update_task_changes_what_the_next_instances_run_and_when,
    an_explicit_cron_dialect_decides_how_axd_reads_the_expression,
    handlers_get_the_instance_s_idempotency_key_on_every_attempt,
    a_retry_without_a_backoff_waits_ten_seconds_give_or_take_ten_percent,
);

/// A deadlock between an admin write and another transaction: PostgreSQL aborts the call's
/// transaction (SQLSTATE 40P01), and axd runs the call again rather than answering ABORTED (MySQL's
/// deadlock, error 1213, is the same conflict to axd; CI once saw DisableTask answer ABORTED so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_transaction_a_deadlock_aborts_is_run_again() {
    let Some(db) = TestDb::create(ax_tests::Db::Postgres).await else { return };
    let axd = Axd::start(&db, |_| {}).await;
    let mut admin = axd.admin().await;
    let pool = sqlx::PgPool::connect(&db.url).await.expect("connect");
    // PostgreSQL looks for a deadlock once, when a wait reaches deadlock_timeout: the call's
    // backend after 1 s (the default), this side's after 5 s. Had this side begun to wait later
    // than the call's look (a very slow machine), the victim is this side: the round is run again.
    for round in 0..5 {
        let name = format!("contended-{round}");
        create(&mut admin, spec(&name, "app", "h", manual())).await;
        if !deadlock_with_a_disable(&pool, &admin, &name).await {
            continue;
        }
        let (task, events) = task_of(&admin, &name).await;
        let spec = task.spec.expect("spec");
        assert_eq!(spec.enabled, Some(false), "disabled by the second try");
        assert_eq!(spec.description, "changed beside", "the other transaction's write stands");
        assert_eq!(events.iter().filter(|e| e.message == "disabled").count(), 1, "one event: {events:?}");
        pool.close().await;
        axd.stop().await;
        db.cleanup().await;
        return;
    }
    panic!("in 5 rounds the call's transaction was never the deadlock's victim");
}

/// Makes a DisableTask of `name` deadlock with a transaction of the test's own; whether the call's
/// transaction was the victim (and the call still succeeded).
async fn deadlock_with_a_disable(pool: &sqlx::PgPool, admin: &Admin, name: &str) -> bool {
    use sqlx::{Connection as _, Executor as _};
    let mut other = pool.acquire().await.expect("connect");
    other.execute("SET deadlock_timeout = '5s'").await.expect("set");
    let mut tx = other.begin().await.expect("begin");
    tx.execute("LOCK TABLE ax_task_event IN SHARE MODE").await.expect("lock the events");
    let call = tokio::spawn({
        let (mut admin, name) = (admin.clone(), name.to_owned());
        async move { admin.disable_task(pb::DisableTaskRequest { name }).await }
    });
    let me: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut *tx).await.expect("pid");
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))";
    // The call holds the task's row and waits to insert its event.
    eventually(LONG, "the call to wait for this side's lock", || async {
        let n: i64 = sqlx::query_scalar(waiting).bind(me).fetch_one(pool).await.ok()?;
        (n > 0).then_some(())
    })
    .await;
    // Waits for the task's row: a deadlock. A version bump, as every axd writer makes.
    let update =
        sqlx::query("UPDATE ax_task SET description = 'changed beside', version = version + 1 WHERE name = $1")
            .bind(name)
            .execute(&mut *tx)
            .await;
    let victim = match update {
        Ok(_) => {
            tx.commit().await.expect("commit");
            true
        }
        Err(e) if e.as_database_error().and_then(|d| d.code()).as_deref() == Some("40P01") => {
            tx.rollback().await.expect("rollback");
            false
        }
        Err(e) => panic!("update: {e}"),
    };
    call.await.expect("join").expect("the call is run again, not answered ABORTED");
    victim
}
