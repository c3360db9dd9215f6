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

/// Whoever may insert into ax_intake could make every axd that claims a row read hundreds of
/// megabytes of params (issue 33): a row whose params are over the limit is refused with its size,
/// computed by the database, and on PostgreSQL its params are never read (MariaDB's TEXT column
/// refuses such a row itself); the rows beside it are consumed.
async fn oversized_params_are_refused_without_being_read(db: &TestDb) {
    let dir = std::env::temp_dir().join(format!("ax-intake-big-{}-{:?}", std::process::id(), db.db));
    std::fs::create_dir_all(&dir).expect("dir");
    let mut axd = ax_tests::procs::AxdProcess::start(
        &["--listen", "127.0.0.1:0", "--database-url", &db.url],
        &dir.join("axd.log"),
    )
    .await;
    let mut admin = pb::admin_service_client::AdminServiceClient::new(
        ax_tests::axd::channel(&format!("http://{}", axd.addr)).await,
    );
    create(&mut admin, spec("invoice", "app", "run", manual())).await;
    if db.db == Db::MySql {
        // ax_intake.params is TEXT there: at most 65,535 bytes, so the database itself refuses a
        // row over the limit.
        let mut c = sqlx::MySqlConnection::connect(&db.url).await.expect("connect");
        let e = sqlx::query("INSERT INTO ax_intake (task_name, params) VALUES ('invoice', REPEAT('x', 70000))")
            .execute(&mut c)
            .await
            .expect_err("over TEXT's size");
        assert!(e.to_string().contains("too long"), "{e}");
        let _ = axd.terminate().await;
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    // 100 MB, made by the database itself.
    let repeat = match db.db {
        Db::Sqlite => "printf('%.*c', 100000000, 'x')",
        _ => "repeat('x', 100000000)",
    };
    let bytes = 100_000_000;
    db.execute(&format!("INSERT INTO ax_intake (task_name, params) VALUES ('invoice', {repeat})")).await;
    db.execute("INSERT INTO ax_intake (task_name, params) VALUES ('invoice', '{\"ok\":1}')").await;
    eventually(LONG, "both rows taken up", || async {
        (db.scalar("SELECT COUNT(*) FROM ax_intake WHERE error IS NULL").await == 0).then_some(())
    })
    .await;
    let why = format!("params: is {bytes} bytes, at most 65536 allowed");
    assert_eq!(db.scalar(&format!("SELECT COUNT(*) FROM ax_intake WHERE error = '{why}'")).await, 1, "refused: {why}");
    let list = instances(&admin).await;
    assert_eq!(list.iter().map(|i| i.params.as_str()).collect::<Vec<_>>(), [r#"{"ok":1}"#], "the other row's instance");
    // On PostgreSQL the size comes from the value's header and the refusal's update keeps the
    // value where it is stored. (SQLite rewrites the whole record when it writes the error, so
    // axd's memory does hold it there; whoever can write the SQLite file owns axd's data anyway.)
    if db.db == Db::Postgres {
        let peak = ax_tests::procs::proc_status_kib(axd.child.id().expect("axd runs"), "VmHWM").expect("VmHWM");
        assert!(peak < 80_000, "axd never held the 100 MB params: peak RSS {peak} KiB");
    }
    let _ = axd.terminate().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_params_are_refused_without_being_read_on_sqlite() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    oversized_params_are_refused_without_being_read(&db).await;
    db.cleanup().await;
}

on_server_backends!(
    an_application_transaction_creates_its_instance_only_when_it_commits,
    oversized_params_are_refused_without_being_read,
);
