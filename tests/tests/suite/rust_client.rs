//! The Rust client (ax-client) against a running axd, on every backend: a task declared from code
//! (created, then brought up to date), triggers with idempotency keys (one instance per key), and a
//! delayed trigger.

use std::time::Duration;

use ax_client::{Client, Trigger};
use ax_proto::v1::InstanceStatus as S;
use ax_tests::{
    TestDb,
    axd::Axd,
    client::wait_status,
    fleet::{Fleet, connected},
    on_every_backend,
};

async fn the_rust_client_declares_tasks_and_triggers_them_once_per_key(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut ax = Client::connect(&axd.endpoint).await.expect("connect");
    let spec = || ax_client::TaskSpec { app: "app".into(), handler: "run".into(), ..ax_client::manual("invoice") };
    let first = ax.upsert_task(spec()).await.expect("create");
    let again = ax.upsert_task(ax_client::TaskSpec { params: r#"{"ms":1}"#.into(), ..spec() }).await.expect("update");
    assert_eq!(again.id, first.id, "the same task, brought up to date");
    assert_eq!(again.spec.as_ref().map(|s| s.params.as_str()), Some(r#"{"ms":1}"#));
    let fleet = Fleet::default();
    fleet.start(&axd.endpoint, "app", "w1", 4, &[]);
    connected(&axd.admin().await, "app", &["w1"]).await;
    let t = ax
        .trigger(Trigger::new("invoice").params(&serde_json::json!({"ms": 2})).expect("json").key("order-7"))
        .await
        .expect("trigger");
    assert!(t.created);
    let twice = ax.trigger(Trigger::new("invoice").key("order-7")).await.expect("again");
    assert_eq!((twice.instance.id, twice.created), (t.instance.id, false), "one instance per key");
    let mut admin = axd.admin().await;
    wait_status(&mut admin, t.instance.id, S::Success, Duration::from_secs(30)).await;
    let later = ax.trigger(Trigger::new("invoice").key("later").after(Duration::from_secs(3600))).await.expect("later");
    let i = ax.instance(later.instance.id).await.expect("get");
    let wait = i.available_time.expect("available").seconds - i.create_time.expect("created").seconds;
    assert!((3599..=3601).contains(&wait), "{wait}");
    assert_eq!(i.status, S::Pending as i32);
    let e = ax.trigger(Trigger::new("missing")).await.expect_err("no such task");
    assert!(matches!(e, ax_client::Error::Rpc(ref s) if s.code() == tonic::Code::NotFound), "{e}");
    fleet.stop_all();
    axd.stop().await;
}

on_every_backend!(the_rust_client_declares_tasks_and_triggers_them_once_per_key);
