//! Events (README "Events"): PublishEvent creates one instance per subscribed task of the app whose
//! filter holds, with the payload merged into its params, once per event id however many axd it is
//! published through; bad events and subscriptions are refused naming the field.

use ax_proto::v1 as pb;
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{create, manual, spec},
    on_every_backend,
    procs::axctl,
};
use tonic::Code;

fn publish(app: &str, name: &str, payload: &str, id: &str) -> pb::PublishEventRequest {
    pb::PublishEventRequest { app: app.into(), name: name.into(), payload: payload.into(), id: id.into() }
}

async fn an_event_creates_one_instance_per_subscribed_task_once_per_id(db: &TestDb) {
    let n = if db.db == Db::Sqlite { 1 } else { 3 };
    let mut axds = Vec::new();
    for _ in 0..n {
        axds.push(Axd::start(db, |_| {}).await);
    }
    let mut admin = axds[0].admin().await;
    let mut card = spec("charge", "shop", "run", manual());
    (card.on_event, card.event_filter) = ("order.paid".into(), "payload.type=card".into());
    card.params = r#"{"type":"none","retries":1}"#.into();
    create(&mut admin, card).await;
    let mut audit = spec("audit", "shop", "run", manual());
    audit.on_event = "order.paid".into();
    create(&mut admin, audit).await;
    let mut elsewhere = spec("elsewhere", "other", "run", manual());
    elsewhere.on_event = "order.paid".into();
    create(&mut admin, elsewhere).await;

    // The same event id through every axd at once: one set of instances.
    let mut calls = tokio::task::JoinSet::new();
    for k in 0..6 {
        let mut a = axds[k % n].admin().await;
        calls.spawn(async move {
            a.publish_event(publish("shop", "order.paid", r#"{"type":"card","amount":5}"#, "e1"))
                .await
                .expect("publish")
                .into_inner()
        });
    }
    let answers = calls.join_all().await;
    assert_eq!(answers.iter().filter(|r| r.created).count(), 1, "created once");
    let first = &answers[0];
    let names: Vec<&str> = first.instances.iter().map(|i| i.task_name.as_str()).collect();
    assert_eq!(names, ["audit", "charge"], "the app's subscribed tasks, in name order");
    for r in &answers {
        let ids: Vec<i64> = r.instances.iter().map(|i| i.id).collect();
        assert_eq!(ids, first.instances.iter().map(|i| i.id).collect::<Vec<_>>(), "the same instances every time");
    }
    let charge = &first.instances[1];
    assert_eq!(charge.params, r#"{"amount":5,"retries":1,"type":"card"}"#, "the payload over the task's params");
    assert_eq!(charge.idempotency_key, "event:e1");
    assert!(ax_tests::client::instances_of(&admin, "elsewhere").await.is_empty(), "another app's task gets nothing");

    // A payload the filter refuses: only the unfiltered task.
    let cash =
        admin.publish_event(publish("shop", "order.paid", r#"{"type":"cash"}"#, "")).await.expect("cash").into_inner();
    assert!(cash.created && !cash.id.is_empty());
    assert_eq!(cash.instances.iter().map(|i| i.task_name.as_str()).collect::<Vec<_>>(), ["audit"]);
    assert_eq!(cash.filtered_out, ["charge"]);
    // No subscriber: nothing, and OK.
    let none = admin.publish_event(publish("shop", "nobody.cares", "", "e3")).await.expect("none").into_inner();
    assert!(none.instances.is_empty() && !none.created);
    assert_eq!(ax_tests::client::instances_of(&admin, "audit").await.len(), 2);

    // axctl publishes and says what it made.
    let env = [("AX_ENDPOINT", axds[0].endpoint.as_str())];
    let out = axctl(
        &env,
        &["event", "publish", "order.paid", "--app", "shop", "--payload", r#"{"type":"card"}"#, "--id", "e9"],
    )
    .await;
    assert!(out.code == 0 && out.stdout.starts_with("event e9: created 2 instance(s)"), "{out:?}");
    let out = axctl(&env, &["event", "publish", "order.paid", "--app", "shop", "--id", "e9"]).await;
    assert!(out.code == 0 && out.stdout.contains("was published before"), "{out:?}");
    for a in axds {
        a.stop().await;
    }
}

/// Bad events and subscriptions are INVALID_ARGUMENT naming the field, and change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_events_and_subscriptions_are_refused_naming_the_field() {
    let Some(db) = TestDb::create(Db::Sqlite).await else { return };
    let axd = Axd::start(&db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut s = spec("sub", "shop", "run", manual());
    s.on_event = "order.paid".into();
    create(&mut admin, s).await;
    let cases = [
        (publish("", "order.paid", "", ""), "app"),
        (publish("shop", "", "", ""), "name"),
        (publish("shop", "bad name", "", ""), "name"),
        (publish("shop", &"n".repeat(129), "", ""), "name"),
        (publish("shop", "order.paid", "[1]", ""), "payload"),
        (publish("shop", "order.paid", "{", ""), "payload"),
        (publish("shop", "order.paid", "", "child:1"), "id"),
    ];
    for (req, field) in cases {
        let e = admin.publish_event(req.clone()).await.expect_err("refused");
        assert_eq!(e.code(), Code::InvalidArgument, "{req:?}: {e:?}");
        assert!(e.message().starts_with(field), "{req:?}: {}", e.message());
    }
    // Merged into a subscribed task's params, a payload over the limit: refused, nothing made.
    let mut big = spec("big", "shop", "run", manual());
    (big.on_event, big.params) = ("big.event".into(), format!(r#"{{"a":"{}"}}"#, "x".repeat(40_000)));
    create(&mut admin, big).await;
    let payload = format!(r#"{{"b":"{}"}}"#, "y".repeat(40_000));
    let e = admin.publish_event(publish("shop", "big.event", &payload, "")).await.expect_err("too big merged");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("payload: merged into task \"big\"'s params it makes 80"), "{}", e.message());
    assert!(ax_tests::client::instances_of(&admin, "big").await.is_empty());
    let mut bad = spec("bad", "shop", "run", manual());
    bad.event_filter = "payload.x".into();
    let e = admin.create_task(pb::CreateTaskRequest { task: Some(bad.clone()) }).await.expect_err("filter alone");
    assert!(e.message().starts_with("task.event_filter: is only used with on_event"), "{}", e.message());
    (bad.on_event, bad.event_filter) = ("x".into(), "type=card".into());
    let e = admin.create_task(pb::CreateTaskRequest { task: Some(bad.clone()) }).await.expect_err("no payload.");
    assert!(e.message().starts_with("task.event_filter") && e.message().contains("payload."), "{}", e.message());
    (bad.on_event, bad.event_filter) = ("has space".into(), String::new());
    let e = admin.create_task(pb::CreateTaskRequest { task: Some(bad) }).await.expect_err("bad name");
    assert!(e.message().starts_with("task.on_event"), "{}", e.message());
    assert!(ax_tests::client::instances_of(&admin, "sub").await.is_empty(), "nothing created");
    axd.stop().await;
    db.cleanup().await;
}

/// An event through ax_intake: the subscribed tasks' instances, once per event id, audited; a
/// bad event row stays with its reason.
async fn an_event_row_of_the_intake_table_creates_the_subscribed_instances(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    let mut card = spec("charge", "shop", "run", manual());
    (card.on_event, card.event_filter) = ("order.paid".into(), "payload.type=card".into());
    create(&mut admin, card).await;
    let mut audit = spec("audit", "shop", "run", manual());
    audit.on_event = "order.paid".into();
    create(&mut admin, audit).await;
    let insert = "INSERT INTO ax_intake (app, task_name, event_name, params, idempotency_key) VALUES ";
    db.execute(&format!(r#"{insert} ('shop', '', 'order.paid', '{{"type":"card"}}', 'e1')"#)).await;
    // The same id again, and a payload the filter refuses.
    db.execute(&format!(r#"{insert} ('shop', '', 'order.paid', '{{"type":"card"}}', 'e1')"#)).await;
    db.execute(&format!(r#"{insert} ('shop', '', 'order.paid', '{{"type":"cash"}}', 'e2')"#)).await;
    // Bad rows: a task name too, a payload that is not an object.
    db.execute(&format!(r#"{insert} ('shop', 'audit', 'order.paid', '{{}}', 'e3')"#)).await;
    db.execute(&format!(r#"{insert} ('shop', '', 'order.paid', '[1]', 'e4')"#)).await;
    ax_tests::eventually(std::time::Duration::from_secs(30), "every row read", || async {
        (db.scalar("SELECT COUNT(*) FROM ax_intake WHERE error IS NULL").await == 0).then_some(())
    })
    .await;
    let charge = ax_tests::client::instances_of(&admin, "charge").await;
    let audit = ax_tests::client::instances_of(&admin, "audit").await;
    assert_eq!(charge.len(), 1, "{charge:?}");
    assert_eq!(audit.len(), 2, "{audit:?}");
    assert_eq!(charge[0].idempotency_key, "event:e1");
    assert_eq!(
        db.scalar("SELECT COUNT(*) FROM ax_intake WHERE error LIKE 'task_name: must be empty%'").await,
        1,
        "the row naming a task too"
    );
    assert_eq!(
        db.scalar(
            "SELECT COUNT(*) FROM ax_intake WHERE error LIKE 'params: an event''s payload must be a JSON object%'"
        )
        .await,
        1
    );
    let noted =
        db.scalar("SELECT COUNT(*) FROM ax_audit WHERE rpc = 'Intake' AND detail LIKE 'event order.paid id%'").await;
    assert_eq!(noted, 3, "one audit entry per good event row");
    axd.stop().await;
}

on_every_backend!(
    an_event_creates_one_instance_per_subscribed_task_once_per_id,
    an_event_row_of_the_intake_table_creates_the_subscribed_instances,
);
