//! Enqueue from the application's own transaction, on PostgreSQL and MariaDB: a row inserted into
//! ax_intake by a transaction that rolls back creates nothing; one that commits creates exactly one
//! instance, which runs; the same key from two committed transactions is one instance. The rows are
//! written with ax-client's `intake` helpers, through the application's sqlx transaction.

use std::time::Duration;

use ax_client::intake::{Enqueue, enqueue_mysql, enqueue_postgres};
use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{create, manual, spec, wait_status},
    eventually,
    fleet::{Fleet, connected},
    on_server_backends,
};
use sqlx::Connection as _;

const LONG: Duration = Duration::from_secs(30);

/// Runs `orders` and the intake row in one application transaction: the order row, then the row of
/// `ax_intake`; commits when `commit`, else rolls back.
async fn order(db: &TestDb, id: i64, row: &Enqueue, commit: bool) {
    match db.db {
        Db::Postgres => {
            let mut c = sqlx::PgConnection::connect(&db.url).await.expect("connect");
            let mut tx = c.begin().await.expect("begin");
            sqlx::query("INSERT INTO orders (id) VALUES ($1)").bind(id).execute(&mut *tx).await.expect("order");
            enqueue_postgres(&mut tx, row).await.expect("enqueue");
            if commit { tx.commit().await.expect("commit") } else { tx.rollback().await.expect("rollback") }
        }
        Db::MySql => {
            let mut c = sqlx::MySqlConnection::connect(&db.url).await.expect("connect");
            let mut tx = c.begin().await.expect("begin");
            sqlx::query("INSERT INTO orders (id) VALUES (?)").bind(id).execute(&mut *tx).await.expect("order");
            enqueue_mysql(&mut tx, row).await.expect("enqueue");
            if commit { tx.commit().await.expect("commit") } else { tx.rollback().await.expect("rollback") }
        }
        Db::Sqlite => unreachable!("server backends only"),
    }
}

async fn instances(
    admin: &pb::admin_service_client::AdminServiceClient<tonic::transport::Channel>,
) -> Vec<pb::Instance> {
    let r = pb::ListInstancesRequest { task_name: "invoice".into(), page_size: 100, ..Default::default() };
    admin.clone().list_instances(r).await.expect("list").into_inner().instances
}

async fn an_application_transaction_creates_its_instance_only_when_it_commits(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("invoice", "app", "run", manual())).await;
    db.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY)").await;
    let fleet = Fleet::default();
    fleet.start(&axd.endpoint, "app", "w1", 4, &[]);
    connected(&admin, "app", &["w1"]).await;
    // Rolled back: no order, no intake row, no instance.
    let row = |key: &str| Enqueue {
        idempotency_key: Some(key.into()),
        params: Some(format!(r#"{{"order":"{key}"}}"#)),
        ..Enqueue::new("invoice")
    };
    order(db, 1, &row("order-1"), false).await;
    // Committed: exactly one instance, which runs.
    order(db, 2, &row("order-2"), true).await;
    let i = eventually(LONG, "the committed order's instance", || async {
        let list = instances(&admin).await;
        (!list.is_empty()).then(|| list[0].clone())
    })
    .await;
    assert_eq!((i.idempotency_key.as_str(), i.source), ("order-2", pb::InstanceSource::Intake as i32));
    assert_eq!(i.params, r#"{"order":"order-2"}"#);
    wait_status(&mut admin, i.id, S::Success, LONG).await;
    // The same key from another committed transaction: still one instance.
    order(db, 3, &row("order-2"), true).await;
    // A delayed row: due a minute after its insert.
    order(db, 4, &Enqueue { delay: Some(Duration::from_secs(60)), ..row("order-4") }, true).await;
    eventually(LONG, "every committed row consumed", || async {
        (db.scalar("SELECT COUNT(*) FROM ax_intake").await == 0).then_some(())
    })
    .await;
    let list = instances(&admin).await;
    let keys: Vec<&str> = list.iter().map(|i| i.idempotency_key.as_str()).collect();
    assert_eq!(keys, ["order-4", "order-2"], "one instance per committed key, none for the rolled-back one");
    let delayed = &list[0];
    let (created, due) =
        (delayed.create_time.as_ref().expect("c").seconds, delayed.available_time.as_ref().expect("a").seconds);
    assert!((58..=61).contains(&(due - created)), "due a minute after the insert: {}", due - created);
    assert_eq!(db.scalar("SELECT COUNT(*) FROM orders").await, 3, "the application's own rows, as committed");
    fleet.stop_all();
    axd.stop().await;
}

on_server_backends!(an_application_transaction_creates_its_instance_only_when_it_commits);
