//! Enqueue from the application's own transaction, on PostgreSQL and MariaDB: a row inserted into
//! ax_intake by a transaction that rolls back creates nothing; one that commits creates exactly one
//! instance, which runs; the same key from two committed transactions is one instance. The rows are
//! written with ax-client's `intake` helpers, through the application's sqlx transaction.

use std::time::Duration;

use ax_client::intake::{Enqueue, enqueue_mysql, enqueue_mysql_view, enqueue_postgres};
use ax_proto::v1::{self as pb, InstanceStatus as S};
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{create, instances_of, manual, spec, wait_status},
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
        let list = instances_of(&admin, "invoice").await;
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
    let list = instances_of(&admin, "invoice").await;
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
    let list = instances_of(&admin, "invoice").await;
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

/// `url` with its user replaced by `user` (no password: the test servers trust loopback).
fn as_user(url: &str, user: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("scheme");
    let rest = rest.split_once('@').map_or(rest, |(_, r)| r);
    format!("{scheme}://{user}@{rest}")
}

/// One string the database answers on `url` (PostgreSQL or MySQL); `CAST(x AS TEXT)` in `sql` is
/// said the way the backend says it.
async fn text(db: Db, url: &str, sql: &str) -> Result<String, sqlx::Error> {
    let sql = if db == Db::MySql { sql.replace(" AS TEXT)", " AS CHAR)") } else { sql.to_owned() };
    let sql = sql.as_str();
    match db {
        Db::Postgres => sqlx::query_scalar(sql).fetch_one(&mut sqlx::PgConnection::connect(url).await?).await,
        Db::MySql => sqlx::query_scalar(sql).fetch_one(&mut sqlx::MySqlConnection::connect(url).await?).await,
        Db::Sqlite => unreachable!("server backends only"),
    }
}

/// The error of intake row `id`, once axd has read it.
async fn refusal(db: &TestDb, id: i64) -> String {
    eventually(LONG, "the row refused", || async {
        text(
            db.db,
            &db.url,
            &format!("SELECT CAST(error AS TEXT) FROM ax_intake WHERE id = {id} AND error IS NOT NULL"),
        )
        .await
        .ok()
    })
    .await
}

/// Intake rows are bound to an app (issue 33, item 4). A role of the application's (not the owner
/// of axd's tables) may insert only rows naming an app granted to it — on PostgreSQL by row-level
/// security and `ax_intake_grant`, on MariaDB through the app's view `WITH CHECK OPTION` — cannot
/// say it is another role, and reads only its own rows; axd refuses a row whose task is in another
/// app than it names, and audits every row under the role that inserted it.
async fn intake_rows_are_bound_to_an_app_the_database_enforces(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("invoice", "billing", "run", manual())).await;
    create(&mut admin, spec("payroll", "hr", "run", manual())).await;
    let role = format!("ax_t_{}_app", std::process::id());
    let url = as_user(&db.url, &role);
    // The application's role: rights on the table (PostgreSQL, held by its policies) or on the
    // app's view only (MariaDB).
    match db.db {
        Db::Postgres => {
            let schema = text(db.db, &db.url, "SELECT current_schema()::text").await.expect("schema");
            db.execute(&format!("DROP ROLE IF EXISTS {role}")).await;
            db.execute(&format!("CREATE ROLE {role} LOGIN")).await;
            db.execute(&format!("GRANT USAGE ON SCHEMA {schema} TO {role}")).await;
            db.execute(&format!("GRANT SELECT, INSERT, DELETE ON ax_intake TO {role}")).await;
            db.execute(&format!("INSERT INTO ax_intake_grant (role_name, app) VALUES ('{role}', 'billing')")).await;
        }
        Db::MySql => {
            let schema = text(db.db, &db.url, "SELECT DATABASE()").await.expect("database");
            db.execute(&format!("DROP USER IF EXISTS '{role}'@'%'")).await;
            db.execute(&format!("CREATE USER '{role}'@'%'")).await;
            db.execute(
                "CREATE VIEW ax_intake_billing AS SELECT id, app, task_name, params, idempotency_key, run_at_us, \
                 delay_us, error FROM ax_intake WHERE app = 'billing' WITH CHECK OPTION",
            )
            .await;
            db.execute(&format!("GRANT SELECT, INSERT, DELETE ON {schema}.ax_intake_billing TO '{role}'@'%'")).await;
        }
        Db::Sqlite => unreachable!("server backends only"),
    }
    let insert = |row: Enqueue| {
        let url = url.clone();
        async move {
            match db.db {
                Db::Postgres => enqueue_postgres(&mut sqlx::PgConnection::connect(&url).await?, &row).await,
                _ => enqueue_mysql_view(&mut sqlx::MySqlConnection::connect(&url).await?, "ax_intake_billing", &row)
                    .await
                    .map(|id| i64::try_from(id).expect("id")),
            }
        }
    };
    // Its own app's task: one instance, audited under the role.
    let ok = insert(Enqueue { idempotency_key: Some("inv-1".into()), ..Enqueue::new("invoice").app("billing") })
        .await
        .expect("a row of a granted app");
    // What the database refuses: another app, no app, a forged inserted_by (PostgreSQL: the view
    // on MariaDB has no such column), the table itself (MariaDB).
    let denied = |e: Result<i64, sqlx::Error>, what: &str| {
        let e = e.expect_err(what).to_string();
        assert!(
            e.contains("row-level security") || e.contains("CHECK OPTION") || e.contains("command denied"),
            "{what}: {e}"
        );
    };
    denied(insert(Enqueue::new("payroll").app("hr")).await, "a row of an app not granted");
    denied(insert(Enqueue::new("invoice")).await, "a row without an app");
    match db.db {
        Db::Postgres => {
            let forged = sqlx::query(
                "INSERT INTO ax_intake (app, task_name, inserted_by) VALUES ('billing', 'invoice', 'postgres')",
            )
            .execute(&mut sqlx::PgConnection::connect(&url).await.expect("connect"))
            .await
            .map(|_| 0);
            denied(forged, "a row that names another role");
        }
        _ => {
            let table = enqueue_mysql(
                &mut sqlx::MySqlConnection::connect(&url).await.expect("connect"),
                &Enqueue::new("invoice").app("billing"),
            )
            .await
            .map(|_| 0);
            denied(table, "a row into the table itself");
        }
    }
    // A task of another app under a granted app: refused by axd, without saying it exists.
    let other = insert(Enqueue::new("payroll").app("billing")).await.expect("the database lets it in");
    assert_eq!(refusal(db, other).await, r#"task_name: no task named "payroll" in app "billing""#);
    // The trusted writer (the owner of axd's tables): a row without an app takes its task's app;
    // one naming an app is held to it.
    db.execute("INSERT INTO ax_intake (task_name, idempotency_key) VALUES ('payroll', 'pay-1')").await;
    db.execute("INSERT INTO ax_intake (app, task_name) VALUES ('hr', 'invoice')").await;
    let trusted_refused = text(db.db, &db.url, "SELECT CAST(MAX(id) AS TEXT) FROM ax_intake").await.expect("id");
    let trusted_refused: i64 = trusted_refused.parse().expect("id");
    assert_eq!(refusal(db, trusted_refused).await, r#"task_name: no task named "invoice" in app "hr""#);
    eventually(LONG, "both instances", || async {
        let has = |list: Vec<pb::Instance>, key: &str| list.iter().any(|i| i.idempotency_key == key);
        (has(instances_of(&admin, "invoice").await, "inv-1") && has(instances_of(&admin, "payroll").await, "pay-1"))
            .then_some(())
    })
    .await;
    // The role sees only its own rows (the refused one), and may delete them.
    let seen = text(
        db.db,
        &url,
        &format!(
            "SELECT CAST(COUNT(*) AS TEXT) FROM {}",
            match db.db {
                Db::Postgres => "ax_intake",
                _ => "ax_intake_billing",
            }
        ),
    )
    .await
    .expect("count");
    assert_eq!(seen, "1", "its own refused row only");
    // Every row is audited under who inserted it.
    let audit = admin
        .list_audit_entries(pb::ListAuditEntriesRequest { rpc: "Intake".into(), page_size: 20, ..Default::default() })
        .await
        .expect("audit")
        .into_inner()
        .entries;
    let line = |e: &pb::AuditEntry| format!("{} {} {} {}", e.actor, e.target, e.app, e.outcome);
    let lines: Vec<String> = audit.iter().map(line).collect();
    let by_role = |target: &str, app: &str, outcome: &str| {
        lines.iter().any(|l| {
            let mut f = l.split(' ');
            let actor = f.next().unwrap_or("");
            actor.starts_with(&format!("intake:{role}")) && f.collect::<Vec<_>>() == [target, app, outcome]
        })
    };
    let first =
        instances_of(&admin, "invoice").await.into_iter().find(|i| i.idempotency_key == "inv-1").expect("inv-1");
    assert!(by_role(&format!("instance/{}", first.id), "billing", "ok"), "the created instance: {lines:#?}");
    assert!(by_role(&format!("intake/{other}"), "billing", "invalid_argument"), "the refused row: {lines:#?}");
    let created = audit.iter().find(|e| e.target == format!("instance/{}", first.id)).expect("entry");
    assert_eq!(created.detail, format!(r#"from ax_intake row {ok} (key "inv-1")"#));
    assert_eq!(lines.len(), 4, "one entry per row read: {lines:#?}");
    match db.db {
        Db::Postgres => db.execute(&format!("DROP OWNED BY {role}; DROP ROLE {role}")).await,
        _ => db.execute(&format!("DROP USER '{role}'@'%'")).await,
    };
    axd.stop().await;
}

/// SQLite has no roles: a row naming an app is still held to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_naming_another_app_than_its_task_is_refused_on_sqlite() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("invoice", "billing", "run", manual())).await;
    db.execute("INSERT INTO ax_intake (app, task_name) VALUES ('hr', 'invoice')").await;
    assert_eq!(refusal_sqlite(&db).await, r#"task_name: no task named "invoice" in app "hr""#);
    axd.stop().await;
    db.cleanup().await;
}

async fn refusal_sqlite(db: &TestDb) -> String {
    eventually(LONG, "the row refused", || async {
        let mut c = sqlx::SqliteConnection::connect(&db.url).await.ok()?;
        sqlx::query_scalar("SELECT error FROM ax_intake WHERE error IS NOT NULL").fetch_optional(&mut c).await.ok()?
    })
    .await
}

on_server_backends!(
    an_application_transaction_creates_its_instance_only_when_it_commits,
    oversized_params_are_refused_without_being_read,
    intake_rows_are_bound_to_an_app_the_database_enforces,
);
