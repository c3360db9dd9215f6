//! MySQL (>= 8.0.1) and MariaDB (>= 10.6) backend: claims use `FOR UPDATE SKIP LOCKED`.
//!
//! Neither has `UPDATE ... RETURNING` (and MySQL has no `INSERT ... RETURNING`), so new ids come
//! from `LAST_INSERT_ID()` and batch inserts read their rows back from that id on. Sessions use
//! time zone +00:00 so that `UNIX_TIMESTAMP(NOW(6))` is exact, and READ COMMITTED isolation.

use std::str::FromStr;

use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions};

use super::{ConnectOptions, migrations::embed_migrations};

/// A store on a MySQL or MariaDB database.
#[derive(Debug, Clone)]
pub struct MySqlStore {
    pool: MySqlPool,
}

impl MySqlStore {
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
        let pool = MySqlPoolOptions::new()
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
        Ok(MySqlStore { pool })
    }
}

fn rewrite(sql: &str) -> String {
    super::sql::substitute(
        sql,
        &[
            ("{SKIP_LOCKED}", " FOR UPDATE SKIP LOCKED"),
            ("{READY_INDEX}", ""),
            ("{FOR_UPDATE}", " FOR UPDATE"),
            ("{RETURNING_ID}", ""),
            ("{NOW_US}", "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)"),
        ],
        false,
    )
}

/// Applies migrations while holding a named lock (`GET_LOCK`) on one connection, so axd processes
/// starting together apply each migration once. (sqlx's own MySQL lock waits with timeout -1, which
/// MariaDB does not treat as "forever", and ignores the result, so ax takes and checks the lock.)
async fn run_migrations(pool: &MySqlPool) -> crate::error::StoreResult<()> {
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

const UPSERT_SCHEDULER: &str = "INSERT INTO ax_scheduler (scheduler_id, host, address, version, started_at, heartbeat_at) \
    VALUES (?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE host = VALUES(host), address = VALUES(address), \
    version = VALUES(version), heartbeat_at = VALUES(heartbeat_at)";

/// Bulk update of lifecycle columns: MySQL has no `UPDATE ... FROM`, so it joins a derived table.
const BULK_UPDATE_PREFIX: &str = "UPDATE ax_instance AS i JOIN (";
const BULK_UPDATE_SUFFIX: &str = ") AS v ON i.id = v.id SET i.status = v.status, i.attempt = v.attempt, i.failures = v.failures, i.available_at = v.available_at, i.worker_id = v.worker_id, i.session_id = v.session_id, i.scheduler_id = v.scheduler_id, i.lease_expires_at = v.lease_expires_at, i.deadline_at = v.deadline_at, i.started_at = v.started_at, i.finished_at = v.finished_at, i.message = v.message, i.output = v.output, i.updated_at = v.updated_at";

mod imp {
    use super::*;

    type Pool = MySqlPool;

    /// No notifications on this backend: loops poll (see `poll_interval`).
    async fn notify(_tx: &mut Tx, _notice: Notice) -> StoreResult<()> {
        Ok(())
    }

    async fn listen_impl(_pool: &Pool, _on: &(dyn Fn(Notice) + Send + Sync)) -> StoreResult<bool> {
        Ok(false)
    }

    async fn begin(pool: &MySqlPool) -> StoreResult<Tx> {
        Ok(pool.begin().await?)
    }

    async fn insert_id(
        tx: &mut Tx,
        q: sqlx::query::Query<'_, sqlx::MySql, sqlx::mysql::MySqlArguments>,
    ) -> StoreResult<i64> {
        let res = q.execute(&mut **tx).await?;
        i64::try_from(res.last_insert_id())
            .map_err(|_| StoreError::Corrupt { table: "(insert)", reason: "id out of range".to_owned() })
    }

    /// Inserts instances and returns (id, task_id, key) of each. MySQL has no `INSERT … RETURNING`:
    /// the rows are read back from the first id the statement generated (`LAST_INSERT_ID()`) on,
    /// a short primary-key range, matched by their (task, key) (ids of one statement need not be
    /// consecutive under `innodb_autoinc_lock_mode = 2`). A racing transaction that inserted an
    /// instance with one of the same (task, key) pairs and committed first shows up in that range
    /// too; its key row is committed, so this transaction's key insert would fail: that is reported
    /// as the unique violation it is.
    async fn insert_instance_rows(
        tx: &mut Tx,
        rows: &[&InstanceRow<'_>],
        now: Ts,
    ) -> StoreResult<Vec<(i64, i64, String)>> {
        let mut qb: QueryBuilder<'_, sqlx::MySql> = QueryBuilder::new(INSERT_INSTANCE_HEAD);
        qb.push_values(rows, |mut b, row| {
            bind_instance_row(&mut b, row, now);
            b.push_unseparated(", 0, 0, '', 0, ''");
        });
        let first = insert_id(tx, qb.build()).await?;
        let mut qb: QueryBuilder<'_, sqlx::MySql> =
            QueryBuilder::new("SELECT id, task_id, idempotency_key FROM ax_instance WHERE id >= ");
        qb.push_bind(first).push(" AND (task_id, idempotency_key) IN ");
        push_key_pairs(&mut qb, rows.iter().map(|r| (r.task.id, r.new.key.as_str())));
        let out: Vec<(i64, i64, String)> = qb
            .build()
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|r| Ok((r.try_get_unchecked(0)?, r.try_get_unchecked(1)?, r.try_get_unchecked(2)?)))
            .collect::<StoreResult<_>>()?;
        if out.len() > rows.len() {
            return Err(StoreError::UniqueViolation(format!(
                "ax_instance_key: {} of {} (task, idempotency key) pairs were created by a concurrent trigger",
                out.len() - rows.len(),
                rows.len()
            )));
        }
        if out.len() != rows.len() {
            return Err(StoreError::Corrupt {
                table: "ax_instance",
                reason: format!("inserted {} instances but read back {}", rows.len(), out.len()),
            });
        }
        Ok(out)
    }

    crate::store::sql::portable_hot_path!(sqlx::MySql);

    crate::store::sql::impl_store!(MySqlStore, sqlx::MySql, Backend::MySql, try_get_unchecked);
}
