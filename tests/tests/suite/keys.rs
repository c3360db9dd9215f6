//! Concurrency keys and uniqueness windows (README "Concurrency keys and unique triggers"): at most
//! N instances per value of a params field run at once across the cluster, and a trigger whose
//! value an instance triggered within the window holds returns that instance. Three axd on
//! PostgreSQL and MariaDB, one on SQLite (which serves one node); the window's end with an
//! injected clock on every backend; bad settings refused naming the field.

use std::{collections::HashMap, time::Duration};

use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_scheduler::{
    config::HumanDuration,
    grpc::convert::task_from_pb,
    loops::trigger::trigger_manual,
    model::add,
    store::{Actor, ManualTrigger, NewTask},
    traces::Traces,
};
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{create, dur, manual, spec, wait_status},
    eventually,
    fleet::{Fleet, connected},
    on_every_backend,
    procs::axctl,
};
use tonic::Code;

const LONG: Duration = Duration::from_secs(60);

/// Three axd on a server backend, one on SQLite, each with one worker (`w0`..) of app `app`.
async fn cluster(db: &TestDb, capacity: u32, fleet: &Fleet) -> Vec<Axd> {
    let n = if db.db == Db::Sqlite { 1 } else { 3 };
    let mut axds = Vec::new();
    for _ in 0..n {
        // A long grace keeps a held attempt's lease from running out on a loaded machine.
        axds.push(Axd::start(db, |o| o.lost_worker_grace = Some(HumanDuration(Duration::from_secs(10)))).await);
    }
    let ids: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
    for (a, id) in axds.iter().zip(&ids) {
        fleet.start(&a.endpoint, "app", id, capacity, &[]);
    }
    connected(&axds[0].admin().await, "app", &ids.iter().map(String::as_str).collect::<Vec<_>>()).await;
    axds
}

async fn trigger(axd: &Axd, task: &str, key: &str, params: &str) -> pb::TriggerTaskResponse {
    axd.admin()
        .await
        .trigger_task(pb::TriggerTaskRequest {
            name: task.into(),
            params: Some(params.into()),
            idempotency_key: key.into(),
            ..Default::default()
        })
        .await
        .expect("trigger")
        .into_inner()
}

/// Dispatched or running instances of `task`, per customer.
async fn busy_per_customer(axd: &Axd, task: &str) -> HashMap<String, usize> {
    let list = ax_tests::client::instances_of(&axd.admin().await, task).await;
    let mut out = HashMap::new();
    for i in list.iter().filter(|i| [S::Dispatched as i32, S::Running as i32].contains(&i.status)) {
        *out.entry(i.concurrency_value.clone()).or_default() += 1;
    }
    out
}

async fn a_concurrency_key_holds_per_value_across_axd(db: &TestDb) {
    // Gated: the first runs stay under way until the test has seen the limit hold per value.
    let fleet = Fleet::gated();
    let axds = cluster(db, 6, &fleet).await;
    let mut admin = axds[0].admin().await;
    let mut s = spec("keyed", "app", "run", manual());
    s.params = r#"{"customer":"a","ms":50}"#.into();
    (s.concurrency_key, s.concurrency_limit) = ("params.customer".into(), Some(2));
    create(&mut admin, s).await;
    let mut ids = Vec::new();
    for n in 0..12 {
        // Triggered through every axd in turn; customers a and b, six each.
        let customer = if n % 2 == 0 { "a" } else { "b" };
        let params = format!(r#"{{"customer":"{customer}","ms":50}}"#);
        let r = trigger(&axds[n % axds.len()], "keyed", &format!("k{n}"), &params).await;
        let inst = r.instance.expect("instance");
        assert_eq!(inst.concurrency_value, customer, "the instance carries its key's value");
        ids.push(inst.id);
    }
    eventually(LONG, "two runs per customer", || async { (fleet.active() >= 4).then_some(()) }).await;
    // Some dispatch rounds with free credits on every worker: no third run of a customer starts.
    let until = tokio::time::Instant::now() + Duration::from_millis(1500);
    while tokio::time::Instant::now() < until {
        let busy = busy_per_customer(&axds[0], "keyed").await;
        assert_eq!(
            busy,
            HashMap::from([("a".to_owned(), 2), ("b".to_owned(), 2)]),
            "dispatched or running per customer"
        );
        assert_eq!(fleet.active(), 4, "handlers under way at once (2 per customer)");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let explained = admin
        .explain_task(pb::ExplainTaskRequest { name: "keyed".into(), limit: 20, ..Default::default() })
        .await
        .expect("explain")
        .into_inner();
    let finding = explained
        .findings
        .iter()
        .find(|f| f.kind == pb::ExplainFindingKind::ConcurrencyKey as i32)
        .unwrap_or_else(|| panic!("a CONCURRENCY_KEY finding: {:#?}", explained.findings));
    assert!(
        finding.message.contains("params.customer = \"a\" is at its limit 2")
            || finding.message.contains("params.customer = \"b\" is at its limit 2"),
        "{}",
        finding.message
    );
    fleet.open_gate();
    for id in &ids {
        wait_status(&mut admin, *id, S::Success, LONG).await;
    }
    fleet.stop_all();
    for a in axds {
        a.stop().await;
    }
}

async fn a_uniqueness_window_returns_the_first_instance_across_axd(db: &TestDb) {
    let fleet = Fleet::gated();
    let axds = cluster(db, 2, &fleet).await;
    let mut admin = axds[0].admin().await;
    let mut s = spec("unique", "app", "run", manual());
    s.params = r#"{"order":{"id":0}}"#.into();
    (s.unique_key, s.unique_for) = ("params.order.id".into(), Some(dur(Duration::from_secs(3600))));
    create(&mut admin, s).await;
    // Twelve triggers of order 7 at once, through every axd, each with a key of its own.
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..12 {
        let mut a = axds[n % axds.len()].admin().await;
        calls.spawn(async move {
            a.trigger_task(pb::TriggerTaskRequest {
                name: "unique".into(),
                params: Some(r#"{"order":{"id":7},"n":1}"#.into()),
                idempotency_key: format!("u{n}"),
                ..Default::default()
            })
            .await
            .expect("trigger")
            .into_inner()
        });
    }
    let answers = calls.join_all().await;
    let first: Vec<i64> = answers.iter().map(|r| r.instance.as_ref().expect("instance").id).collect();
    assert!(first.iter().all(|id| *id == first[0]), "one instance for order 7: {first:?}");
    assert_eq!(answers.iter().filter(|r| r.created).count(), 1, "created once");
    // Another value makes its own; the same again (even with the first's own key) does not.
    let other = trigger(&axds[axds.len() - 1], "unique", "u-other", r#"{"order":{"id":8}}"#).await;
    assert!(other.created);
    assert_ne!(other.instance.expect("instance").id, first[0]);
    let again = trigger(&axds[0], "unique", "u-late", r#"{"order":{"id":7}}"#).await;
    assert_eq!((again.created, again.instance.expect("instance").id), (false, first[0]));
    // axctl sets the window and says why a trigger made nothing.
    let env = [("AX_ENDPOINT", axds[0].endpoint.as_str())];
    let flags = ["--unique-key", "params.order.id", "--unique-for", "1h", "--params", r#"{"order":{"id":0}}"#];
    let out =
        axctl(&env, &[&["task", "create", "u2", "--app", "app", "--handler", "run", "--manual"][..], &flags].concat())
            .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("\nunique:          params.order.id for 1h after each trigger\n"), "{}", out.stdout);
    let out = axctl(&env, &["task", "trigger", "u2", "--params", r#"{"order":{"id":1}}"#]).await;
    assert!(out.code == 0 && out.stdout.starts_with("created instance"), "{out:?}");
    let out = axctl(&env, &["task", "trigger", "u2", "--params", r#"{"order":{"id":1}}"#]).await;
    assert!(
        out.code == 0 && out.stdout.contains("uniqueness window holds the same value: existing instance"),
        "{out:?}"
    );
    // Intake rows of a held value create nothing either, and say why in the audit.
    db.execute(r#"INSERT INTO ax_intake (task_name, params) VALUES ('unique', '{"order":{"id":7}}')"#).await;
    db.execute(r#"INSERT INTO ax_intake (task_name, params) VALUES ('unique', '{"order":{"id":9}}')"#).await;
    db.execute(r#"INSERT INTO ax_intake (task_name, params) VALUES ('unique', '{"order":{"id":9}}')"#).await;
    eventually(LONG, "intake rows consumed", || async {
        (db.scalar("SELECT COUNT(*) FROM ax_intake").await == 0).then_some(())
    })
    .await;
    assert_eq!(ax_tests::client::instances_of(&admin, "unique").await.len(), 3, "orders 7, 8 and 9 once each");
    let held =
        db.scalar("SELECT COUNT(*) FROM ax_audit WHERE rpc = 'Intake' AND detail LIKE '%is held by instance%'").await;
    let batch =
        db.scalar("SELECT COUNT(*) FROM ax_audit WHERE rpc = 'Intake' AND detail LIKE '%an earlier row%'").await;
    // The two rows of order 9 may come in one batch or two.
    assert_eq!(held + batch, 2, "order 7's row and the second of order 9 made nothing");
    fleet.open_gate();
    fleet.stop_all();
    for a in axds {
        a.stop().await;
    }
}

/// The window ends with its time (an injected clock): a trigger then makes a new instance, which
/// holds the value anew.
async fn a_uniqueness_window_ends_with_its_time(db: &TestDb) {
    let store = db.store().await;
    let mut s = spec("w", "app", "run", manual());
    s.params = r#"{"k":1}"#.into();
    (s.unique_key, s.unique_for) = ("params.k".into(), Some(dur(Duration::from_secs(600))));
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-06-01T10:00:00Z").expect("t0").to_utc();
    let (name, config) = task_from_pb(&s, t0).expect("spec");
    let actor = Actor { scheduler_id: "axd-test", caller: "spiffe://ax/admin/test" };
    let task = store.create_task(&NewTask { name, config, next_fire_at: None }, t0, &actor).await.expect("create");
    let trig = |key: &str| ManualTrigger {
        params: r#"{"k":1}"#.into(),
        key: key.into(),
        actor: "test".into(),
        run_at: None,
        tags: Default::default(),
    };
    let at = |secs: u64| add(t0, Duration::from_secs(secs));
    let off = Traces::off();
    let (a, created) = trigger_manual(&store, &task, &trig("a"), at(0), "axd-test", &off).await.expect("a");
    assert!(created);
    let (b, created) = trigger_manual(&store, &task, &trig("b"), at(599), "axd-test", &off).await.expect("b");
    assert_eq!((b.id, created), (a.id, false), "inside the window: the first instance");
    let (c, created) = trigger_manual(&store, &task, &trig("c"), at(600), "axd-test", &off).await.expect("c");
    assert!(created && c.id != a.id, "the window has ended: a new instance");
    let (d, created) = trigger_manual(&store, &task, &trig("d"), at(1199), "axd-test", &off).await.expect("d");
    assert_eq!((d.id, created), (c.id, false), "the new instance holds the value for its own window");
    // A trigger whose idempotency key has an instance gets that one and leaves the value as it was.
    let (e, created) = trigger_manual(&store, &task, &trig("a"), at(1300), "axd-test", &off).await.expect("e");
    assert_eq!((e.id, created), (a.id, false));
    let (f, created) = trigger_manual(&store, &task, &trig("f"), at(1300), "axd-test", &off).await.expect("f");
    assert!(created && f.id != c.id && f.id != a.id, "c's window ended at 1200 s");
}

on_every_backend!(
    a_concurrency_key_holds_per_value_across_axd,
    a_uniqueness_window_returns_the_first_instance_across_axd,
    a_uniqueness_window_ends_with_its_time,
);

/// A change to a valid spec.
type Change = Box<dyn Fn(&mut pb::TaskSpec)>;

/// Bad settings and params are refused naming the field; nothing is created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_keys_are_refused_naming_the_field() {
    let Some(db) = TestDb::create(Db::Sqlite).await else { return };
    let axd = Axd::start(&db, |_| {}).await;
    let mut admin = axd.admin().await;
    let base = || {
        let mut s = spec("k", "app", "run", manual());
        s.params = r#"{"customer":"a"}"#.into();
        s
    };
    let cases: Vec<(&str, Change, &str, &str)> = vec![
        (
            "no field",
            Box::new(|s| (s.concurrency_key, s.concurrency_limit) = ("params.tenant".into(), Some(2))),
            "task.concurrency_key",
            "params has no field \"tenant\"",
        ),
        (
            "no prefix",
            Box::new(|s| (s.concurrency_key, s.concurrency_limit) = ("customer".into(), Some(2))),
            "task.concurrency_key",
            "must start with \"params.\"",
        ),
        (
            "no limit",
            Box::new(|s| s.concurrency_key = "params.customer".into()),
            "task.concurrency_limit",
            "is required with concurrency_key",
        ),
        (
            "no key",
            Box::new(|s| s.concurrency_limit = Some(2)),
            "task.concurrency_limit",
            "is only used with concurrency_key",
        ),
        (
            "limit 0",
            Box::new(|s| (s.concurrency_key, s.concurrency_limit) = ("params.customer".into(), Some(0))),
            "task.concurrency_limit",
            "out of range",
        ),
        (
            "window over a day",
            Box::new(|s| {
                (s.unique_key, s.unique_for) = ("params.customer".into(), Some(dur(Duration::from_secs(86_401))))
            }),
            "task.unique_for",
            "",
        ),
        (
            "no window",
            Box::new(|s| s.unique_key = "params.customer".into()),
            "task.unique_for",
            "is required with unique_key",
        ),
        (
            "unique no field",
            Box::new(|s| (s.unique_key, s.unique_for) = ("params.x.y".into(), Some(dur(Duration::from_secs(60))))),
            "task.unique_key",
            "params has no field \"x\"",
        ),
    ];
    for (what, change, field, why) in cases {
        let mut s = base();
        change(&mut s);
        let e = admin.create_task(pb::CreateTaskRequest { task: Some(s) }).await.expect_err(what);
        assert_eq!(e.code(), Code::InvalidArgument, "{what}: {e:?}");
        assert!(e.message().starts_with(field) && e.message().contains(why), "{what}: {}", e.message());
    }
    assert!(ax_tests::client::instances_of(&admin, "k").await.is_empty());
    let mut s = base();
    (s.concurrency_key, s.concurrency_limit) = ("params.customer".into(), Some(2));
    create(&mut admin, s).await;
    let e = admin
        .trigger_task(pb::TriggerTaskRequest {
            name: "k".into(),
            params: Some(r#"{"other":1}"#.into()),
            ..Default::default()
        })
        .await
        .expect_err("params without the key");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("params") && e.message().contains("no field \"customer\""), "{}", e.message());
    assert!(ax_tests::client::instances_of(&admin, "k").await.is_empty(), "nothing created");
    axd.stop().await;
    db.cleanup().await;
}
