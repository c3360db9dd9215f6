//! SQLite backend: the embedded default for a single axd.
//!
//! Write transactions start with `BEGIN IMMEDIATE`, which takes SQLite's single write lock up front:
//! one writer at a time is what makes claims exclusive here (there is no `FOR UPDATE`), and taking
//! the lock first avoids the busy-upgrade deadlock of deferred transactions. WAL mode lets readers
//! (the admin API) run beside the writer.

use std::{str::FromStr, time::Duration};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

use super::{ConnectOptions, migrations::embed_migrations};

/// A store on an SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if needed) the database file named by `opts.url`.
    pub async fn connect(opts: &ConnectOptions) -> crate::error::StoreResult<Self> {
        let o = SqliteConnectOptions::from_str(&opts.url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        if let Some(dir) = o.get_filename().parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(|e| crate::error::StoreError::Unavailable(sqlx::Error::Io(e)))?;
        }
        // Opening a new database file from several connections at once can briefly report "database
        // is locked" while one of them switches it to WAL; that settles within milliseconds.
        let mut attempt = 0;
        loop {
            let pool = SqlitePoolOptions::new()
                .max_connections(opts.max_connections.max(2))
                .acquire_timeout(opts.acquire_timeout)
                .connect_with(o.clone())
                .await;
            match pool {
                Ok(pool) => return Ok(SqliteStore { pool }),
                Err(sqlx::Error::Database(e)) if attempt < 10 && e.message().contains("locked") => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(20 * attempt)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

fn rewrite(sql: &str) -> String {
    super::sql::substitute(
        sql,
        &[
            ("{SKIP_LOCKED}", ""),
            // With statistics (ANALYZE, PRAGMA optimize) showing every ready row alike, SQLite 3.46
            // scanned the table for the ready claim (15-60 ms per claim of 50,000 ready rows).
            ("{READY_INDEX}", " INDEXED BY ax_instance_ready"),
            ("{FOR_UPDATE}", ""),
            ("{RETURNING_ID}", " RETURNING id"),
            ("{NOW_US}", "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)"),
        ],
        false,
    )
}

/// SQLite has no lock for the migrator to take. One process migrates at a time through this mutex;
/// a second process (SQLite is for one axd, but a restart may overlap) that loses the race sees
/// "already exists", re-reads the applied versions and succeeds on a retry.
async fn run_migrations(pool: &SqlitePool) -> crate::error::StoreResult<()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _guard = LOCK.lock().await;
    let migrator = super::migrations::migrator(&embed_migrations!("sqlite"), true);
    let mut attempt = 0;
    loop {
        match migrator.run(pool).await {
            Ok(()) => return Ok(()),
            Err(e) if attempt < 3 => {
                attempt += 1;
                tracing::warn!(error = %e, "sqlite migration raced another process; retrying");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

const UPSERT_SCHEDULER: &str = "INSERT INTO ax_scheduler (scheduler_id, host, address, version, started_at, heartbeat_at) \
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scheduler_id) DO UPDATE SET host = excluded.host, \
    address = excluded.address, version = excluded.version, heartbeat_at = excluded.heartbeat_at";

/// Bulk update of lifecycle columns: `UPDATE ... FROM (SELECT ... UNION ALL SELECT ...) AS v`.
const BULK_UPDATE_PREFIX: &str = "UPDATE ax_instance SET status = v.status, attempt = v.attempt, failures = v.failures, available_at = v.available_at, worker_id = v.worker_id, session_id = v.session_id, scheduler_id = v.scheduler_id, lease_expires_at = v.lease_expires_at, deadline_at = v.deadline_at, started_at = v.started_at, finished_at = v.finished_at, message = v.message, output = v.output, updated_at = v.updated_at FROM (";
const BULK_UPDATE_SUFFIX: &str = ") AS v WHERE ax_instance.id = v.id";

mod imp {
    use super::*;

    type Pool = SqlitePool;

    /// No notifications on this backend: loops poll (see `poll_interval`).
    async fn notify(_tx: &mut Tx, _notice: Notice) -> StoreResult<()> {
        Ok(())
    }

    async fn listen_impl(_pool: &Pool, _on: &(dyn Fn(Notice) + Send + Sync)) -> StoreResult<bool> {
        Ok(false)
    }

    async fn begin(pool: &SqlitePool) -> StoreResult<Tx> {
        Ok(pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    async fn insert_id<'q>(
        tx: &mut Tx,
        q: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    ) -> StoreResult<i64> {
        let row = q.fetch_one(&mut **tx).await?;
        Ok(row.try_get(0)?)
    }

    async fn insert_instance_rows(
        tx: &mut Tx,
        rows: &[&InstanceRow<'_>],
        now: Ts,
    ) -> StoreResult<Vec<(i64, i64, String)>> {
        insert_instance_rows_returning(tx, rows, now).await
    }

    crate::store::sql::portable_hot_path!(sqlx::Sqlite);

    crate::store::sql::impl_store!(SqliteStore, sqlx::Sqlite, Backend::Sqlite, try_get);
}
