//! MySQL (>= 8.0.1) and MariaDB (>= 10.6) backend: claims use `FOR UPDATE SKIP LOCKED`.
//!
//! Neither has `UPDATE ... RETURNING` (and MySQL has no `INSERT ... RETURNING`), so new ids come
//! from `LAST_INSERT_ID()` and batch inserts read their rows back from that id on. Sessions use
//! time zone +00:00 so that `UNIX_TIMESTAMP(NOW(6))` is exact, and READ COMMITTED isolation.

use std::str::FromStr;

use sqlx::{
    MySql, Row as _,
    mysql::{MySqlArguments, MySqlConnectOptions},
    query::Query,
};

use super::{
    ConnectOptions,
    dialect::{Dialect, MYSQL},
    exec::{BoxFuture, Driver, SqlxPool, bind_scalars, getters, unsupported},
    migrations::embed_migrations,
    value::Value,
};
use crate::error::StoreResult;

/// A pool on a MySQL or MariaDB database.
pub type MySqlPool = SqlxPool<MySql>;

impl MySqlPool {
    /// Connects to `opts.url` (`mariadb://` is accepted as a synonym of `mysql://`).
    pub async fn connect(opts: &ConnectOptions) -> crate::error::StoreResult<Self> {
        let url = match opts.url.strip_prefix("mariadb:") {
            Some(rest) => format!("mysql:{rest}"),
            None => opts.url.clone(),
        };
        let o = MySqlConnectOptions::from_str(&url)?.timezone(Some("+00:00".to_owned())).charset("utf8mb4");
        Self::connect_with(o, opts).await
    }

    /// Connects with explicit options.
    pub async fn connect_with(o: MySqlConnectOptions, opts: &ConnectOptions) -> crate::error::StoreResult<Self> {
        let pool = sqlx::mysql::MySqlPoolOptions::new()
            .max_connections(opts.max_connections)
            .acquire_timeout(opts.acquire_timeout)
            // READ COMMITTED, as on PostgreSQL: ax locks what it changes (FOR UPDATE, SKIP LOCKED)
            // and needs no snapshot across statements. Under InnoDB's default REPEATABLE READ
            // the claims also take gap locks on the ready index, and concurrent claims (several
            // axd) deadlock on them.
            .after_connect(|conn, _meta| {
                Box::pin(async move {
                    sqlx::query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED").execute(conn).await?;
                    Ok(())
                })
            })
            .connect_with(o)
            .await?;
        Ok(SqlxPool::new(pool))
    }
}

/// Applies migrations while holding a named lock (`GET_LOCK`) on one connection, so axd processes
/// starting together apply each migration once. (sqlx's own MySQL lock waits with timeout -1, which
/// MariaDB does not treat as "forever", and ignores the result, so ax takes and checks the lock.)
async fn run_migrations(pool: &sqlx::MySqlPool) -> crate::error::StoreResult<()> {
    let mut conn = pool.acquire().await?;
    loop {
        let got: Option<i64> =
            sqlx::query_scalar("SELECT GET_LOCK(CONCAT('ax_migrate_', DATABASE()), 10)").fetch_one(&mut *conn).await?;
        if got == Some(1) {
            break;
        }
        tracing::info!("waiting for another axd to finish migrating");
    }
    let migrator = super::migrations::migrator(&embed_migrations!("mysql"), false);
    let result = migrator.run_direct(&mut *conn).await;
    let _ = sqlx::query("SELECT RELEASE_LOCK(CONCAT('ax_migrate_', DATABASE()))").execute(&mut *conn).await;
    result?;
    Ok(())
}

impl Driver for MySql {
    const DIALECT: &'static Dialect = &MYSQL;

    fn bind<'q>(q: Query<'q, Self, MySqlArguments>, v: &'q Value<'_>) -> Query<'q, Self, MySqlArguments> {
        bind_scalars!(q, v, other => unsupported("MySQL", other))
    }

    // Unchecked: sqlx 0.8 reports the case-sensitive (`utf8mb4_bin`) text columns as binary and
    // would refuse to read them as `String`.
    getters!(sqlx::mysql::MySqlRow, try_get_unchecked);

    fn rows_affected(r: &sqlx::mysql::MySqlQueryResult) -> u64 {
        r.rows_affected()
    }

    fn last_insert_id(r: &sqlx::mysql::MySqlQueryResult) -> Option<i64> {
        i64::try_from(r.last_insert_id()).ok()
    }

    fn migrate(pool: &sqlx::MySqlPool) -> BoxFuture<'_, StoreResult<()>> {
        Box::pin(run_migrations(pool))
    }
}
