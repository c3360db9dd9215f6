//! The write path on PostgreSQL. The group commit reads its rows without a lock and writes each only
//! if it is still the version it read (`transitions::apply_worker_ops`): a change another
//! transaction commits in between must win, exactly as it would over locked rows. An instance
//! row's and a task row's next version stays on its page (migrations 19 and 20), and a claimed
//! instance's enters no index of its task's instances (migration 22).

use std::time::Duration;

use ax_scheduler::{
    lifecycle::{CompleteOutcome, WorkerOpOutcome},
    model::{InstanceStatus, Ts, add},
    routing::RoutingState,
    traces::Traces,
    transitions::apply_worker_ops,
};
use ax_tests::{Db, TestDb, eventually};
use chrono::{TimeZone, Utc};
use sqlx::{Connection as _, Executor as _};

use crate::store_contract::{
    apply_kept, claim_for_s1, claim_rows_for_s1, claimed_instance, config, create, every_second, pending_instances,
    success_of_s1, trigger,
};

fn t0() -> Ts {
    Utc.with_ymd_and_hms(2026, 6, 1, 10, 0, 0).single().expect("instant")
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_loses_to_a_take_back_that_commits_after_the_rows_were_read() {
    let Some(db) = TestDb::create(Db::Postgres).await else { return };
    let store = db.store().await;
    let inst = claimed_instance(&store, "raced").await;

    // Another axd takes the attempt back (as the sweeper does for a lost worker) and holds its
    // transaction open.
    let mut other = sqlx::PgConnection::connect(&db.url).await.expect("connect");
    other.execute("BEGIN").await.expect("begin");
    let take_back = format!(
        "UPDATE ax_instance SET status = 'PENDING', session_id = NULL, worker_id = NULL, \
         lease_expires_at = NULL, trail = 0 WHERE id = {}",
        inst.id
    );
    assert_eq!(other.execute(take_back.as_str()).await.expect("take back").rows_affected(), 1);

    // The worker's result: read before the take-back commits, written after.
    let ops = vec![success_of_s1(inst.id)];
    let now = add(t0(), secs(5));
    let writer_store = store.clone();
    let write = tokio::spawn(async move {
        apply_worker_ops(
            &writer_store,
            &ops,
            Default::default(),
            now,
            add(now, secs(60)),
            "axd-test",
            &Traces::off(),
            &RoutingState::default(),
        )
        .await
    });
    // Commit the take-back once the group commit waits for it (a lock wait on the run's database).
    let waiting =
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
    eventually(Duration::from_secs(10), "the group commit waits for the take-back", || {
        let db = &db;
        async move { (db.scalar(waiting).await > 0).then_some(()) }
    })
    .await;
    other.execute("COMMIT").await.expect("commit");

    let outcomes = write.await.expect("join").expect("apply");
    assert!(
        matches!(&outcomes[0], WorkerOpOutcome::Result(CompleteOutcome::Ignored(_))),
        "the result of an attempt taken back is ignored: {outcomes:?}"
    );
    let row = store.get_instance(inst.id).await.expect("get").expect("instance");
    assert_eq!(row.status, InstanceStatus::Pending, "the take-back stands");
    assert_eq!(row.output, "");
    db.cleanup().await;
}

/// The page of a row (its `ctid`'s block number).
const PAGE: &str = "(ctid::text::point)[0]::bigint";
/// The same, of the row aliased `t`.
const T_PAGE: &str = "(t.ctid::text::point)[0]::bigint";

/// Asserts that `table` keeps half of each page free (`fillfactor = 50`).
/// A group commit given the row its claim kept (axd's sessions keep them, `Session::keep_row`)
/// writes from that row without reading it — and only while the database still holds its version:
/// a row changed since is read again, and the change stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_row_stands_for_the_read_only_at_its_version() {
    let Some(db) = TestDb::create(Db::Postgres).await else { return };
    let store = db.store().await;
    let ids: Vec<i64> = pending_instances(&store, "kept", 2).await.iter().map(|i| i.id).collect();
    let claimed = claim_rows_for_s1(&store, 10).await;
    assert_eq!(claimed.iter().map(|a| a.instance.id).collect::<Vec<_>>(), ids);
    // Each kept row says something the database does not: a row written from it shows it.
    let kept = |n: usize| {
        let (mut row, version) = claimed[n].stored().expect("a claim on PostgreSQL keeps its rows");
        row.route.selector = "from-the-kept-row".into();
        std::collections::HashMap::from([(row.id, (row, version))])
    };
    let apply = |id: i64, rows| {
        let store = store.clone();
        async move { apply_kept(&store, &[success_of_s1(id)], rows, add(t0(), secs(2))).await }
    };
    let selector =
        |id: i64| format!("SELECT COUNT(*) FROM ax_instance WHERE id = {id} AND selector = 'from-the-kept-row'");
    let succeeded = |id: i64| format!("SELECT COUNT(*) FROM ax_instance WHERE id = {id} AND status = 'SUCCESS'");

    // Unchanged since the claim: written from the kept row.
    let out = apply(ids[0], kept(0)).await;
    assert!(matches!(out[..], [WorkerOpOutcome::Result(CompleteOutcome::Applied(_))]), "{out:?}");
    assert_eq!(db.scalar(&succeeded(ids[0])).await, 1);
    assert_eq!(db.scalar(&selector(ids[0])).await, 1, "the group commit wrote from the kept row");

    // Changed since the claim (a new version): read again, the kept row is not written.
    db.execute(&format!("UPDATE ax_instance SET progress_message = 'changed' WHERE id = {}", ids[1])).await;
    let out = apply(ids[1], kept(1)).await;
    assert!(matches!(out[..], [WorkerOpOutcome::Result(CompleteOutcome::Applied(_))]), "{out:?}");
    assert_eq!(db.scalar(&succeeded(ids[1])).await, 1);
    assert_eq!(db.scalar(&selector(ids[1])).await, 0, "a kept row of an older version was written");
    let changed = format!("SELECT COUNT(*) FROM ax_instance WHERE id = {} AND progress_message = 'changed'", ids[1]);
    assert_eq!(db.scalar(&changed).await, 1, "the change made since the claim stands");
    store.close().await;
    db.cleanup().await;
}

async fn assert_half_free(db: &TestDb, table: &str) {
    let options =
        format!("SELECT COUNT(*) FROM pg_class WHERE oid = '{table}'::regclass AND 'fillfactor=50' = ANY(reloptions)");
    assert_eq!(db.scalar(&options).await, 1, "{table}'s fillfactor");
}

/// Records the page of every row of `table` (in `before_{table}`); its rows fill more than one.
async fn note_pages(db: &TestDb, table: &str) {
    let pages = db.scalar(&format!("SELECT COUNT(DISTINCT {PAGE}) FROM {table}")).await;
    assert!(pages >= 2, "the rows of {table} fill {pages} page(s)");
    db.execute(&format!("CREATE TABLE before_{table} AS SELECT id, {PAGE} AS page FROM {table}")).await;
}

/// Rows of `table` (matching `filter`, on its alias `t`) whose current version is on another page
/// than [`note_pages`] recorded.
async fn moved(db: &TestDb, table: &str, filter: &str) -> i64 {
    db.scalar(&format!(
        "SELECT COUNT(*) FROM {table} t JOIN before_{table} b ON b.id = t.id WHERE {filter} AND {T_PAGE} <> b.page"
    ))
    .await
}

/// `ax_instance` keeps half of each page free (migration 19, `fillfactor = 50`), so the claim's new
/// row versions stay on their rows' pages: PostgreSQL then logs no lock of the old version and only
/// the changed bytes (README "Performance", "Four more levers"). With every page packed (fillfactor
/// 100) the rows of the first, full page move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_writes_the_instance_rows_next_versions_on_their_pages() {
    let Some(db) = TestDb::create(Db::Postgres).await else { return };
    let store = db.store().await;
    assert_half_free(&db, "ax_instance").await;
    // Enough rows to fill more than one page as the table packs them.
    let ids = pending_instances(&store, "paged", 60).await.into_iter().map(|i| i.id).collect::<Vec<_>>();
    note_pages(&db, "ax_instance").await;
    let mut claimed = claim_for_s1(&store, 100).await;
    claimed.sort_unstable();
    assert_eq!(claimed, ids, "one claim of all of them");
    let moved = moved(&db, "ax_instance", "t.status = 'DISPATCHED'").await;
    // A DISPATCHED version is longer than the PENDING one (session, worker, lease), so the last
    // rows of a page may not fit beside the others' new versions; packed pages move nearly all.
    assert!(moved * 4 <= ids.len() as i64, "{moved} of {} rows' claimed versions left their page", ids.len());
    db.cleanup().await;
}

/// `ax_task` keeps half of each page free too (migration 20, `fillfactor = 50`): every fire writes a
/// new version of its task's row (the trigger locks it and sets its next fire), which then stays on
/// its page. With every page packed (fillfactor 100) nearly every fired task's row moves (53 of 60).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fire_writes_the_task_rows_next_versions_on_their_pages() {
    let Some(db) = TestDb::create(Db::Postgres).await else { return };
    let store = db.store().await;
    assert_half_free(&db, "ax_task").await;
    let n = 60;
    for i in 0..n {
        create(&store, &format!("paged-{i}"), config(every_second()), t0()).await;
    }
    note_pages(&db, "ax_task").await;
    // One round fires every task once (the look-ahead holds one fire) in one transaction.
    let round = trigger(&store, add(t0(), secs(1)), Duration::ZERO).await;
    assert_eq!((round.tasks, round.created.len()), (n, n), "one fire of each task");
    let moved = moved(&db, "ax_task", "TRUE").await;
    assert!(moved * 4 <= n as i64, "{moved} of {n} tasks' next versions left their page");
    db.cleanup().await;
}

/// Entries of `index`, live and dead, when it is a metapage and one leaf (`pageinspect`, created
/// in `public` when the database has not got it).
async fn index_entries(db: &TestDb, index: &str) -> i64 {
    db.execute("CREATE EXTENSION IF NOT EXISTS pageinspect SCHEMA public").await;
    let pages = db.scalar(&format!("SELECT pg_relation_size('{index}') / current_setting('block_size')::bigint")).await;
    assert_eq!(pages, 2, "{index} is a metapage and one leaf");
    db.scalar(&format!("SELECT COUNT(*) FROM public.bt_page_items('{index}', 1)")).await
}

/// A claim writes its instances' new versions into the primary key and the lease index only: the
/// task's index of its PENDING instances (migration 22) takes no entry from it, where the index of
/// a task's unfinished instances that it replaced took one per claimed instance (one of the
/// claim's three). The task's unfinished instances are still found, held ones included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_enters_no_index_of_the_tasks_instances() {
    let Some(db) = TestDb::create(Db::Postgres).await else { return };
    let store = db.store().await;
    let n = 40;
    let ids = pending_instances(&store, "indexed", n).await.into_iter().map(|i| i.id).collect::<Vec<_>>();
    let before = index_entries(&db, "ax_instance_task_pending").await;
    assert_eq!(before, n as i64, "one entry per PENDING instance");
    let half = claim_for_s1(&store, n as u32 / 2).await;
    assert_eq!(half.len(), n / 2, "one claim of half of them");
    assert_eq!(index_entries(&db, "ax_instance_task_pending").await, before, "the claim entered the task's index");
    let task = db.scalar("SELECT MIN(task_id) FROM ax_instance").await;
    let mut conn = store.conn().await.expect("connection");
    let unfinished = conn.instances().active_instances_of(task, 1000).await.expect("unfinished instances");
    assert_eq!(unfinished, ids, "the task's unfinished instances, PENDING and held, oldest first");
    db.cleanup().await;
}
