//! SQLite backend: the embedded default for a single axd.
//!
//! Write transactions start with `BEGIN IMMEDIATE`, which takes SQLite's single write lock up front:
//! one writer at a time is what makes claims exclusive here (there is no `FOR UPDATE`), and taking
//! the lock first avoids the busy-upgrade deadlock of deferred transactions. WAL mode lets readers
//! (the admin API) run beside the writer.

use std::{str::FromStr, time::Duration};

use async_trait::async_trait;
use sqlx::{
    Row as _, Sqlite,
    query::Query,
    sqlite::{SqliteArguments, SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous},
};

use super::{
    ConnectOptions, Notice, Pool,
    dialect::{Dialect, SQLITE},
    exec::{BoxFuture, Conn, Driver, Exec, unsupported},
    migrations::embed_migrations,
    value::{Kind, Value},
};
use crate::error::StoreResult;

/// A pool on an SQLite file.
#[derive(Debug, Clone)]
pub struct SqlitePool {
    pool: sqlx::SqlitePool,
}

impl SqlitePool {
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
            let pool = sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(opts.max_connections.max(2))
                .acquire_timeout(opts.acquire_timeout)
                .connect_with(o.clone())
                .await;
            match pool {
                Ok(pool) => return Ok(SqlitePool { pool }),
                Err(sqlx::Error::Database(e)) if attempt < 10 && e.message().contains("locked") => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(20 * attempt)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// SQLite has no lock for the migrator to take. One process migrates at a time through this mutex;
/// a second process (SQLite is for one axd, but a restart may overlap) that loses the race sees
/// "already exists", re-reads the applied versions and succeeds on a retry.
async fn run_migrations(pool: &sqlx::SqlitePool) -> crate::error::StoreResult<()> {
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

#[async_trait]
impl Pool for SqlitePool {
    async fn begin(&self) -> StoreResult<Box<dyn Exec>> {
        Ok(Box::new(Conn::Tx(Sqlite::begin(&self.pool).await?)))
    }

    async fn conn(&self) -> StoreResult<Box<dyn Exec>> {
        Ok(Box::new(Conn::<Sqlite>::Pooled(self.pool.acquire().await?)))
    }

    async fn migrate(&self) -> StoreResult<()> {
        run_migrations(&self.pool).await
    }

    /// No notifications on this backend: loops poll (see `poll_interval`).
    async fn listen(&self, _on: &(dyn Fn(Notice) + Send + Sync)) -> StoreResult<bool> {
        Ok(false)
    }

    async fn close(&self) {
        self.pool.close().await
    }
}

impl Driver for Sqlite {
    const DIALECT: &'static Dialect = &SQLITE;

    fn bind<'q>(q: Query<'q, Self, SqliteArguments<'q>>, v: &'q Value<'_>) -> Query<'q, Self, SqliteArguments<'q>> {
        match v {
            Value::I64(x) => q.bind(*x),
            Value::OptI64(x) => q.bind(*x),
            Value::I32(x) => q.bind(*x),
            Value::Bool(x) => q.bind(*x),
            Value::Str(x) => q.bind(x.as_ref()),
            Value::OptStr(x) => q.bind(x.as_deref()),
            other => unsupported("SQLite", other),
        }
    }

    fn decode(row: &sqlx::sqlite::SqliteRow, i: usize, kind: Kind) -> Result<Value<'static>, sqlx::Error> {
        Ok(match kind {
            Kind::I64 => Value::I64(row.try_get(i)?),
            Kind::OptI64 => Value::OptI64(row.try_get(i)?),
            Kind::I32 => Value::I32(row.try_get(i)?),
            Kind::Bool => Value::Bool(row.try_get(i)?),
            Kind::Str => Value::Str(std::borrow::Cow::Owned(row.try_get(i)?)),
            Kind::OptStr => Value::OptStr(row.try_get::<Option<String>, _>(i)?.map(std::borrow::Cow::Owned)),
        })
    }

    fn rows_affected(r: &sqlx::sqlite::SqliteQueryResult) -> u64 {
        r.rows_affected()
    }

    fn last_insert_id(r: &sqlx::sqlite::SqliteQueryResult) -> Option<i64> {
        Some(r.last_insert_rowid())
    }

    fn begin(pool: &sqlx::SqlitePool) -> BoxFuture<'_, Result<sqlx::Transaction<'static, Self>, sqlx::Error>> {
        Box::pin(pool.begin_with("BEGIN IMMEDIATE"))
    }
}
