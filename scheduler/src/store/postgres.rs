//! PostgreSQL backend (>= 12): claims use `FOR UPDATE SKIP LOCKED`, so any number of axd share the
//! work without waiting on each other's locks.

use std::str::FromStr;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use super::{ConnectOptions, migrations::embed_migrations};

/// A store on a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to `opts.url`.
    pub async fn connect(opts: &ConnectOptions) -> crate::error::StoreResult<Self> {
        let o = PgConnectOptions::from_str(&opts.url)?.application_name("axd");
        Self::connect_with(o, opts).await
    }

    /// Connects with explicit options (tests use this to pick a schema).
    pub async fn connect_with(o: PgConnectOptions, opts: &ConnectOptions) -> crate::error::StoreResult<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(opts.max_connections)
            .acquire_timeout(opts.acquire_timeout)
            .connect_with(o)
            .await?;
        Ok(PgStore { pool })
    }

    /// The pool (for LISTEN/NOTIFY).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

fn rewrite(sql: &str) -> String {
    super::sql::substitute(
        sql,
        &[
            ("{SKIP_LOCKED}", " FOR UPDATE SKIP LOCKED"),
            ("{FOR_UPDATE}", " FOR UPDATE"),
            ("{RETURNING_ID}", " RETURNING id"),
            ("{NOW_US}", "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"),
        ],
        true,
    )
}

/// The migrator holds a PostgreSQL advisory lock while it runs, so axd processes starting together
/// apply each migration once.
async fn run_migrations(pool: &PgPool) -> crate::error::StoreResult<()> {
    super::migrations::migrator(&embed_migrations!("postgres")).run(pool).await?;
    Ok(())
}

const UPSERT_SCHEDULER: &str = "INSERT INTO ax_scheduler (scheduler_id, host, address, version, started_at, heartbeat_at) \
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scheduler_id) DO UPDATE SET host = excluded.host, \
    address = excluded.address, version = excluded.version, heartbeat_at = excluded.heartbeat_at";

/// Bulk update of lifecycle columns: `UPDATE ... FROM (SELECT ... UNION ALL SELECT ...) AS v`.
const BULK_UPDATE_PREFIX: &str = "UPDATE ax_instance SET status = v.status, attempt = v.attempt, failures = v.failures, available_at = v.available_at, worker_id = v.worker_id, session_id = v.session_id, scheduler_id = v.scheduler_id, lease_expires_at = v.lease_expires_at, deadline_at = v.deadline_at, started_at = v.started_at, finished_at = v.finished_at, message = v.message, output = v.output, updated_at = v.updated_at FROM (";
const BULK_UPDATE_SUFFIX: &str = ") AS v WHERE ax_instance.id = v.id";

mod imp {
    use super::*;

    type Pool = PgPool;

    /// NOTIFY inside the transaction: PostgreSQL delivers it only if the transaction commits.
    async fn notify(tx: &mut Tx, notice: Notice) -> StoreResult<()> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(notice.channel())
            .bind(notice.payload())
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    async fn listen_impl(pool: &Pool, on: &(dyn Fn(Notice) + Send + Sync)) -> StoreResult<bool> {
        let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
        listener.listen_all(Notice::CHANNELS).await?;
        loop {
            let n = listener.recv().await?;
            if let Some(notice) = Notice::parse(n.channel(), n.payload()) {
                on(notice);
            }
        }
    }

    async fn begin(pool: &PgPool) -> StoreResult<Tx> {
        Ok(pool.begin().await?)
    }

    async fn insert_id(
        tx: &mut Tx,
        q: sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments>,
    ) -> StoreResult<i64> {
        let row = q.fetch_one(&mut **tx).await?;
        Ok(row.try_get(0)?)
    }

    async fn insert_instance_rows(
        tx: &mut Tx,
        rows: &[InstanceRow<'_>],
        now: Ts,
    ) -> StoreResult<Vec<(i64, i64, String)>> {
        insert_instance_rows_returning(tx, rows, now).await
    }

    crate::store::sql::impl_store!(PgStore, sqlx::Postgres, Backend::Postgres);
}
