//! ceiling: the database's own ceiling for ax's claim pattern, with no axd in the way, so that the
//! other figures can be read as a fraction of what the database can do.
//!
//! N PENDING instances are seeded (with [`seed::pending_instances`], into ax's own schema, migrated
//! by ax's migrator) for one task, then C connections (`--clients`) each loop, until no row is left:
//! in one transaction, claim up to B (`--batch`) ready rows and mark them DISPATCHED. The claim
//! mirrors axd's dispatch (`select_ready` / `mark_dispatched` in the store): the same `WHERE status =
//! 'PENDING' AND app = ? AND available_at <= ? AND handler IN (...) ORDER BY ready_at`, so the
//! same index serves it (`ax_instance_ready_order`: partial on PostgreSQL and SQLite;
//! `ax_instance_ready_flag` on MySQL, led by a generated flag instead, asked as `ready_flag = 1`),
//! and the same columns are updated (status, attempt, session, worker, scheduler, lease,
//! updated_at), so the same indexes are maintained. A transaction the database aborts to break a
//! deadlock is retried and counted.
//! - PostgreSQL: one statement, `WITH c AS (SELECT id ... FOR UPDATE SKIP LOCKED) UPDATE ... FROM c`;
//! - MySQL/MariaDB: `SELECT id ... FOR UPDATE SKIP LOCKED`, then `UPDATE ... WHERE id IN (...)` in the
//!   same transaction;
//! - SQLite: `BEGIN IMMEDIATE` (its single write lock: there is no SKIP LOCKED, one writer at a
//!   time), select, update, commit.
//!
//! It is a ceiling, not a replay: only ids are read (axd reads the whole row to build the Assign) and
//! no event is written (axd writes one per instance in the same transaction). The time runs from
//! the moment every client holds its connection until the last one finds nothing left. The run
//! checks that every row was claimed exactly once.

use std::{
    str::FromStr,
    time::{Duration, Instant},
};

use anyhow::Context as _;
use ax_scheduler::store::{self, ConnectOptions};
use sqlx::QueryBuilder;

use crate::{DbKind, Report, env, seed};

/// App of the seeded instances (apart from any app a running axd serves).
const APP: &str = "bench-ceiling";
/// Handler of the seeded instances.
const HANDLER: &str = "noop";
/// How far ahead a claim sets the lease.
const LEASE_US: i64 = 60_000_000;

/// Sizes of a ceiling run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// PENDING rows to claim (smoke: 2,000).
    #[arg(short, long, visible_alias = "rows", default_value_t = 100_000)]
    pub n: usize,
    /// Concurrent connections, each claiming in a loop.
    #[arg(long, default_value_t = 4)]
    pub clients: u32,
    /// Rows claimed per transaction.
    #[arg(long, default_value_t = 100)]
    pub batch: u32,
}

/// Measures the claim ceiling on a fresh database.
pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    let n = if smoke { 2_000 } else { a.n };
    let db = ax_tests::TestDb::create(kind.test_db()).await.ok_or_else(|| anyhow::anyhow!("database unavailable"))?;
    let claims = measure_claims(kind, &db.url, n, a.clients, a.batch).await?;
    let env = env::detect(kind, &db.url).await?;
    db.cleanup().await;
    let statement = match kind {
        DbKind::Postgres => "WITH c AS (SELECT ... FOR UPDATE SKIP LOCKED) UPDATE ... FROM c",
        DbKind::Mysql => "SELECT ... FOR UPDATE SKIP LOCKED; UPDATE ... WHERE id IN (...)",
        DbKind::Sqlite => "BEGIN IMMEDIATE; SELECT ...; UPDATE ... WHERE id IN (...)",
    };
    let round = |x: f64, digits: i32| serde_json::json!((x * 10f64.powi(digits)).round() / 10f64.powi(digits));
    Ok(Report {
        scenario: "ceiling",
        env,
        figures: vec![
            ("rows".into(), n.into()),
            ("clients x batch".into(), format!("{} x {}", a.clients, a.batch).into()),
            ("claim".into(), statement.into()),
            ("seconds".into(), round(claims.seconds, 3)),
            ("rows/s".into(), round(claims.rows_per_sec(), 0)),
            ("batches/s".into(), round(claims.batches_per_sec(), 0)),
            ("deadlocks (retried)".into(), claims.deadlocks.into()),
            ("seed seconds".into(), round(claims.seed_seconds, 3)),
        ],
    })
}

/// What one ceiling measurement found.
#[derive(Debug, Clone)]
pub struct Claims {
    /// Rows claimed (all that were seeded).
    pub rows: u64,
    /// Transactions that claimed at least one row.
    pub batches: u64,
    /// Claim transactions the database aborted to break a deadlock (retried; not in `batches`).
    pub deadlocks: u64,
    /// Seconds from the start of the claims to the last client finding nothing left.
    pub seconds: f64,
    /// Seconds spent seeding (not part of the measurement).
    pub seed_seconds: f64,
}

impl Claims {
    /// Rows claimed per second.
    pub fn rows_per_sec(&self) -> f64 {
        self.rows as f64 / self.seconds
    }

    /// Claim transactions per second.
    pub fn batches_per_sec(&self) -> f64 {
        self.batches as f64 / self.seconds
    }
}

/// The claim ceiling, in rows per second, of the database at `url` (a database axd accepts; its
/// schema is migrated if it is not yet): seeds `rows` PENDING instances of a task of its own,
/// claims them all with `clients` connections and `batch` rows per transaction, and removes what it
/// added. Other scenarios may call it on their own database in the same run, as long as no worker
/// of app `bench-ceiling` is connected.
#[allow(dead_code)] // An entry point for other scenarios.
pub async fn measure(kind: DbKind, url: &str, rows: usize, clients: u32, batch: u32) -> anyhow::Result<f64> {
    Ok(measure_claims(kind, url, rows, clients, batch).await?.rows_per_sec())
}

/// Like [`measure`], with every figure.
pub async fn measure_claims(kind: DbKind, url: &str, rows: usize, clients: u32, batch: u32) -> anyhow::Result<Claims> {
    anyhow::ensure!(rows > 0, "rows must be at least 1");
    anyhow::ensure!(clients > 0, "--clients must be at least 1");
    anyhow::ensure!(batch > 0, "--batch must be at least 1");
    // ax's own schema, by ax's own migrator (nothing to do if axd already ran on this database).
    let schema = store::connect(&ConnectOptions::new(url.to_owned())).await.context("opening the store")?;
    schema.migrate().await.context("migrating")?;
    schema.close().await;

    let db = Db::connect(kind, url, clients).await?;
    let now_us = chrono::Utc::now().timestamp_micros();
    let name = format!("bench-ceiling-{now_us}");
    let task_id = db.insert_task(&name, now_us).await?;
    let seeded = Instant::now();
    seed::pending_instances(kind, url, task_id, &name, APP, HANDLER, "{}", rows, now_us).await?;
    let seed_seconds = seeded.elapsed().as_secs_f64();

    let result = db.claim_all(clients, batch).await;
    let checked = match &result {
        Ok(t) => db.check(task_id, rows, t.rows).await,
        Err(_) => Ok(()),
    };
    // Leave nothing behind, whatever happened.
    let removed = db.remove(task_id).await;
    let t = result?;
    checked?;
    removed?;
    db.close().await;
    Ok(Claims { rows: t.rows, batches: t.batches, deadlocks: t.deadlocks, seconds: t.seconds, seed_seconds })
}

/// `?` placeholders as PostgreSQL's `$1, $2, ...` (the statements here have no `?` in literals).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(ch);
        }
    }
    out
}

const INSERT_TASK: &str = "INSERT INTO ax_task (name, app, handler, description, schedule_kind, time_zone, params, \
    enabled, misfire_policy, misfire_threshold_us, max_catch_up, concurrency_policy, routing, max_retries, backoff, \
    labels, version, created_at, updated_at) \
    VALUES (?, ?, ?, ?, 'MANUAL', 'UTC', '{}', ?, 'FIRE_ONCE', 60000000, 1, 'ALLOW', 'LEAST_LOADED', 0, ?, '{}', 1, ?, ?)";

/// The default backoff, as axd stores it ('' since migration 18).
const BACKOFF: &str = "";

/// axd's ready-instance select (`select_ready`), reading ids only.
const SELECT_READY: &str = "SELECT id FROM ax_instance{INDEX} WHERE {PENDING} AND app = ? AND available_at <= ? \
    AND handler IN (?) ORDER BY ready_at LIMIT ?";

/// axd's claim on PostgreSQL in one statement: `select_ready` locking with SKIP LOCKED, and
/// `mark_dispatched`'s update of the locked rows.
const PG_CLAIM: &str = "WITH c AS (SELECT id FROM ax_instance WHERE status = 'PENDING' AND app = $1 \
    AND available_at <= $2 AND handler = ANY($3) ORDER BY ready_at LIMIT $4 FOR UPDATE SKIP LOCKED) \
    UPDATE ax_instance AS i SET status = 'DISPATCHED', attempt = i.attempt + 1, session_id = $5, worker_id = $6, \
    scheduler_id = $7, lease_expires_at = $8, updated_at = GREATEST(i.updated_at, $9) FROM c WHERE i.id = c.id";

/// A pool of the right kind for `url`.
enum Db {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
    Mysql(sqlx::MySqlPool),
}

/// What the claim loops did.
#[derive(Debug, Default)]
struct Tally {
    rows: u64,
    batches: u64,
    deadlocks: u64,
    seconds: f64,
}

/// One client's identity in the rows it claims.
struct Claimer {
    session: String,
    worker: String,
}

impl Claimer {
    fn new(client: u32) -> Claimer {
        Claimer { session: format!("ceiling-session-{client}"), worker: format!("ceiling-worker-{client}") }
    }
}

/// The time a claim runs at: axd compares with the database clock; on one machine this is the same.
fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// Whether the database aborted the transaction to break a deadlock or a serialization conflict
/// (SQLSTATE 40001, PostgreSQL's 40P01): a claimer retries it.
fn is_deadlock(e: &anyhow::Error) -> bool {
    match e.downcast_ref::<sqlx::Error>() {
        Some(sqlx::Error::Database(d)) => matches!(d.code().as_deref(), Some("40001" | "40P01")),
        _ => false,
    }
}

/// The claim loop of one client on SQLite or MySQL: begin (`sqlx::Connection::$begin`), select
/// (from `ax_instance$index` where `$pending`, axd's dialect's ready predicate, with `$lock`
/// appended), update by id, commit; until a select finds nothing. A transaction aborted by a
/// deadlock is retried and counted. Returns (rows, batches, deadlocks).
macro_rules! claim_loop {
    ($conn:expr, $db:ty, $begin:ident($($arg:expr)?), $index:expr, $pending:expr, $lock:expr, $client:expr, $batch:expr) => {{
        let mut conn = $conn;
        let me = Claimer::new($client);
        let select = format!("{}{}", SELECT_READY.replace("{INDEX}", $index).replace("{PENDING}", $pending), $lock);
        let (mut rows, mut batches, mut deadlocks) = (0u64, 0u64, 0u64);
        loop {
            let now = now_us();
            let claimed = async {
                let mut tx = sqlx::Connection::$begin(&mut *conn $(, $arg)?).await?;
                let ids: Vec<i64> = sqlx::query_scalar(&select)
                    .bind(APP)
                    .bind(now)
                    .bind(HANDLER)
                    .bind(i64::from($batch))
                    .fetch_all(&mut *tx)
                    .await?;
                if ids.is_empty() {
                    tx.rollback().await?;
                    return anyhow::Ok(0);
                }
                // mark_dispatched: the rows are held by this transaction, so the id alone is enough.
                let mut qb: QueryBuilder<'_, $db> =
                    QueryBuilder::new("UPDATE ax_instance SET status = 'DISPATCHED', attempt = attempt + 1, session_id = ");
                qb.push_bind(me.session.as_str())
                    .push(", worker_id = ")
                    .push_bind(me.worker.as_str())
                    .push(", scheduler_id = 'ax-bench', lease_expires_at = ")
                    .push_bind(now + LEASE_US)
                    .push(", updated_at = CASE WHEN updated_at > ")
                    .push_bind(now)
                    .push(" THEN updated_at ELSE ")
                    .push_bind(now)
                    .push(" END WHERE id IN (");
                let mut ids_list = qb.separated(", ");
                for id in &ids {
                    ids_list.push_bind(*id);
                }
                qb.push(")");
                let updated = qb.build().execute(&mut *tx).await?.rows_affected();
                anyhow::ensure!(updated == ids.len() as u64, "updated {updated} of {} claimed rows", ids.len());
                tx.commit().await?;
                Ok(updated)
            }
            .await;
            match claimed {
                Ok(0) => break,
                Ok(n) => {
                    rows += n;
                    batches += 1;
                }
                // The transaction was rolled back: its rows are PENDING again.
                Err(e) if is_deadlock(&e) => deadlocks += 1,
                Err(e) => return Err(e),
            }
        }
        anyhow::Ok((rows, batches, deadlocks))
    }};
}

impl Db {
    async fn connect(kind: DbKind, url: &str, clients: u32) -> anyhow::Result<Db> {
        let size = clients + 1;
        Ok(match kind {
            DbKind::Sqlite => {
                // As axd opens it (see the SQLite store).
                let o = sqlx::sqlite::SqliteConnectOptions::from_str(url)?
                    .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
                    .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(10));
                Db::Sqlite(sqlx::sqlite::SqlitePoolOptions::new().max_connections(size).connect_with(o).await?)
            }
            DbKind::Postgres => {
                Db::Postgres(sqlx::postgres::PgPoolOptions::new().max_connections(size).connect(url).await?)
            }
            // READ COMMITTED, as axd's own MySQL connections.
            DbKind::Mysql => Db::Mysql(
                sqlx::mysql::MySqlPoolOptions::new()
                    .max_connections(size)
                    .after_connect(|conn, _meta| {
                        Box::pin(async move {
                            sqlx::query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED").execute(conn).await?;
                            Ok(())
                        })
                    })
                    .connect(url)
                    .await?,
            ),
        })
    }

    /// A disabled MANUAL task for the seeded instances to belong to.
    async fn insert_task(&self, name: &str, now_us: i64) -> anyhow::Result<i64> {
        macro_rules! bound {
            ($q:expr) => {
                $q.bind(name)
                    .bind(APP)
                    .bind(HANDLER)
                    .bind("ax-bench ceiling")
                    .bind(false)
                    .bind(BACKOFF)
                    .bind(now_us)
                    .bind(now_us)
            };
        }
        let returning = format!("{INSERT_TASK} RETURNING id");
        Ok(match self {
            Db::Sqlite(p) => bound!(sqlx::query_scalar(&returning)).fetch_one(p).await?,
            Db::Postgres(p) => bound!(sqlx::query_scalar(&numbered(&returning))).fetch_one(p).await?,
            Db::Mysql(p) => i64::try_from(bound!(sqlx::query(INSERT_TASK)).execute(p).await?.last_insert_id())?,
        })
    }

    /// Runs `clients` claim loops at once until every ready row is claimed.
    async fn claim_all(&self, clients: u32, batch: u32) -> anyhow::Result<Tally> {
        let mut tasks = tokio::task::JoinSet::new();
        // Every client holds its connection before the clock starts.
        macro_rules! start_clients {
            ($pool:expr, |$client:ident, $conn:pat_param| $body:expr) => {{
                let mut conns = Vec::new();
                for _ in 0..clients {
                    conns.push($pool.acquire().await?);
                }
                let started = Instant::now();
                for ($client, $conn) in (0..clients).zip(conns) {
                    tasks.spawn(async move { $body });
                }
                started
            }};
        }
        let started = match self {
            Db::Sqlite(p) => start_clients!(p, |client, conn| claim_loop!(
                conn,
                sqlx::Sqlite,
                begin_with("BEGIN IMMEDIATE"),
                // As axd's select_ready: SQLite is told its index (see the SQLite store).
                store::dialect::SQLITE.ready_order_index,
                store::dialect::SQLITE.pending,
                "",
                client,
                batch
            )),
            Db::Mysql(p) => start_clients!(p, |client, conn| claim_loop!(
                conn,
                sqlx::MySql,
                begin(),
                store::dialect::MYSQL.ready_order_index,
                store::dialect::MYSQL.pending,
                store::dialect::MYSQL.skip_locked,
                client,
                batch
            )),
            Db::Postgres(p) => start_clients!(p, |client, mut conn| {
                let me = Claimer::new(client);
                let handlers = vec![HANDLER.to_owned()];
                let (mut rows, mut batches, mut deadlocks) = (0u64, 0u64, 0u64);
                loop {
                    let now = now_us();
                    // One statement: its own transaction.
                    let claimed = sqlx::query(PG_CLAIM)
                        .bind(APP)
                        .bind(now)
                        .bind(&handlers)
                        .bind(i64::from(batch))
                        .bind(me.session.as_str())
                        .bind(me.worker.as_str())
                        .bind("ax-bench")
                        .bind(now + LEASE_US)
                        .bind(now)
                        .execute(&mut *conn)
                        .await
                        .map_err(anyhow::Error::from);
                    match claimed {
                        Ok(done) if done.rows_affected() == 0 => break,
                        Ok(done) => {
                            rows += done.rows_affected();
                            batches += 1;
                        }
                        Err(e) if is_deadlock(&e) => deadlocks += 1,
                        Err(e) => return Err(e),
                    }
                }
                anyhow::Ok((rows, batches, deadlocks))
            }),
        };
        let mut tally = Tally::default();
        while let Some(done) = tasks.join_next().await {
            let (rows, batches, deadlocks) = done??;
            tally.rows += rows;
            tally.batches += batches;
            tally.deadlocks += deadlocks;
        }
        tally.seconds = started.elapsed().as_secs_f64();
        Ok(tally)
    }

    /// Checks that every seeded row was claimed, exactly once.
    async fn check(&self, task_id: i64, seeded: usize, claimed: u64) -> anyhow::Result<()> {
        const COUNT: &str =
            "SELECT COUNT(*) FROM ax_instance WHERE task_id = ? AND status = 'DISPATCHED' AND attempt = 1";
        let once: i64 = match self {
            Db::Sqlite(p) => sqlx::query_scalar(COUNT).bind(task_id).fetch_one(p).await?,
            Db::Postgres(p) => sqlx::query_scalar(&numbered(COUNT)).bind(task_id).fetch_one(p).await?,
            Db::Mysql(p) => sqlx::query_scalar(COUNT).bind(task_id).fetch_one(p).await?,
        };
        anyhow::ensure!(
            claimed == seeded as u64 && once == claimed as i64,
            "seeded {seeded} rows, the clients claimed {claimed}, {once} are DISPATCHED once"
        );
        Ok(())
    }

    /// Deletes the task, its instances, their key rows and their events.
    async fn remove(&self, task_id: i64) -> anyhow::Result<()> {
        // (statement, whether its table may be missing: ax_instance_key came with a later schema)
        let statements = [
            (
                "DELETE FROM ax_instance_event WHERE instance_id IN (SELECT id FROM ax_instance WHERE task_id = ?)",
                false,
            ),
            ("DELETE FROM ax_instance_key WHERE task_id = ?", true),
            ("DELETE FROM ax_instance WHERE task_id = ?", false),
            ("DELETE FROM ax_task WHERE id = ?", false),
        ];
        for (sql, optional) in statements {
            let done = match self {
                Db::Sqlite(p) => sqlx::query(sql).bind(task_id).execute(p).await.map(|_| ()),
                Db::Postgres(p) => sqlx::query(&numbered(sql)).bind(task_id).execute(p).await.map(|_| ()),
                Db::Mysql(p) => sqlx::query(sql).bind(task_id).execute(p).await.map(|_| ()),
            };
            if !optional {
                done?;
            }
        }
        Ok(())
    }

    async fn close(self) {
        match self {
            Db::Sqlite(p) => p.close().await,
            Db::Postgres(p) => p.close().await,
            Db::Mysql(p) => p.close().await,
        }
    }
}
