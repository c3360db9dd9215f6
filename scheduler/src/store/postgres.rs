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
            ("{READY_INDEX}", ""),
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
    super::migrations::migrator(&embed_migrations!("postgres"), true).run(pool).await?;
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

    // PostgreSQL gets whole batches as arrays: one constant statement per operation, prepared
    // once per connection, whatever the batch size (IN lists and UNION ALL would be a new
    // statement to parse and plan for every size).

    /// Instances and their key rows in one statement. The multi-row VALUES form (17 parameters a
    /// row, a new statement for every batch size) took 11-80 ms for 500 fires under load.
    async fn insert_instances_with_keys(
        tx: &mut Tx,
        fresh: &[&InstanceRow<'_>],
        now: Ts,
    ) -> StoreResult<Vec<(i64, i64, String)>> {
        let col = |f: &dyn Fn(&InstanceRow<'_>) -> String| fresh.iter().map(|r| f(r)).collect::<Vec<_>>();
        let finished = |r: &InstanceRow<'_>| r.new.status.is_terminal().then(|| to_micros(now));
        let rows = sqlx::query(
            "WITH i AS (\
               INSERT INTO ax_instance (task_id, task_name, app, handler, params, idempotency_key, source, fire_at, \
                 available_at, status, max_retries, timeout_us, backoff, routing, finished_at, message, created_at, \
                 updated_at, attempt, failures, output, progress_percent, progress_message) \
               SELECT v.*, $17, $17, 0, 0, '', 0, '' FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], \
                 $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], $10::text[], $11::int[], \
                 $12::bigint[], $13::text[], $14::text[], $15::bigint[], $16::text[]) AS v \
               RETURNING id, task_id, task_name, idempotency_key) \
             INSERT INTO ax_instance_key (task_id, idempotency_key, task_name, instance_id) \
             SELECT task_id, idempotency_key, task_name, id FROM i RETURNING instance_id, task_id, idempotency_key",
        )
        .bind(fresh.iter().map(|r| r.task.id).collect::<Vec<_>>())
        .bind(col(&|r| r.task.name.clone()))
        .bind(col(&|r| r.task.config.app.clone()))
        .bind(col(&|r| r.task.config.handler.clone()))
        .bind(col(&|r| r.new.params.clone()))
        .bind(col(&|r| r.new.key.clone()))
        .bind(fresh.iter().map(|r| r.new.source.as_str()).collect::<Vec<_>>())
        .bind(fresh.iter().map(|r| to_micros(r.new.fire_at)).collect::<Vec<_>>())
        .bind(fresh.iter().map(|r| to_micros(r.new.available_at)).collect::<Vec<_>>())
        .bind(fresh.iter().map(|r| r.new.status.as_str()).collect::<Vec<_>>())
        .bind(
            fresh
                .iter()
                .map(|r| i32::try_from(r.task.config.retry.max_retries).unwrap_or(i32::MAX))
                .collect::<Vec<_>>(),
        )
        .bind(fresh.iter().map(|r| r.task.config.timeout.map(crate::model::duration_micros)).collect::<Vec<_>>())
        .bind(col(&|r| crate::store::rows::encode_backoff(&r.task.config.retry.backoff)))
        .bind(fresh.iter().map(|r| r.task.config.routing.as_str()).collect::<Vec<_>>())
        .bind(fresh.iter().map(|r| finished(r)).collect::<Vec<_>>())
        .bind(col(&|r| if r.new.status.is_terminal() { r.new.reason.clone() } else { String::new() }))
        .bind(to_micros(now))
        .fetch_all(&mut **tx)
        .await?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))).collect()
    }

    /// Next fire times of a whole trigger batch as arrays (NULL: the task has no more fires).
    async fn set_next_fires(tx: &mut Tx, next: &[(i64, Option<i64>)]) -> StoreResult<()> {
        if next.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "UPDATE ax_task AS t SET next_fire_at = v.at FROM UNNEST($1::bigint[], $2::bigint[]) AS v(id, at) \
             WHERE t.id = v.id",
        )
        .bind(next.iter().map(|(id, _)| *id).collect::<Vec<_>>())
        .bind(next.iter().map(|(_, at)| *at).collect::<Vec<_>>())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// A row-value `IN` list of hundreds of pairs was planned as a scan (~60 ms for 500 keys);
    /// joining the arrays probes the primary key once per pair.
    async fn existing_keys(
        tx: &mut Tx,
        rows: &[InstanceRow<'_>],
    ) -> StoreResult<std::collections::HashSet<(i64, String)>> {
        let tasks: Vec<i64> = rows.iter().map(|r| r.task.id).collect();
        let keys: Vec<&str> = rows.iter().map(|r| r.new.key.as_str()).collect();
        sqlx::query(
            "SELECT k.task_id, k.idempotency_key FROM UNNEST($1::BIGINT[], $2::TEXT[]) AS v(task_id, idempotency_key) \
             JOIN ax_instance_key k ON k.task_id = v.task_id AND k.idempotency_key = v.idempotency_key",
        )
        .bind(&tasks)
        .bind(&keys)
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
    }

    async fn insert_events(tx: &mut Tx, events: &[NewEvent]) -> StoreResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO ax_instance_event (instance_id, at, from_status, to_status, attempt, scheduler_id, worker_id, reason) \
             SELECT * FROM UNNEST($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[])",
        )
        .bind(events.iter().map(|e| e.instance_id).collect::<Vec<_>>())
        .bind(events.iter().map(|e| to_micros(e.at)).collect::<Vec<_>>())
        .bind(events.iter().map(|e| e.from.map(|s| s.as_str())).collect::<Vec<_>>())
        .bind(events.iter().map(|e| e.to.as_str()).collect::<Vec<_>>())
        .bind(events.iter().map(|e| i32::try_from(e.attempt).unwrap_or(i32::MAX)).collect::<Vec<_>>())
        .bind(events.iter().map(|e| e.scheduler_id.as_str()).collect::<Vec<_>>())
        .bind(events.iter().map(|e| e.worker_id.as_str()).collect::<Vec<_>>())
        .bind(events.iter().map(|e| e.reason.as_str()).collect::<Vec<_>>())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn lock_instances(tx: &mut Tx, ids: &[i64]) -> StoreResult<HashMap<i64, Instance>> {
        let rows =
            sqlx::query(sql!("SELECT {INSTANCE_COLUMNS} FROM ax_instance WHERE id = ANY($1) ORDER BY id FOR UPDATE"))
                .bind(ids)
                .fetch_all(&mut **tx)
                .await?;
        let mut out = HashMap::with_capacity(rows.len());
        for r in &rows {
            let i = read_instance(r)?;
            out.insert(i.id, i);
        }
        Ok(out)
    }

    async fn write_instances(tx: &mut Tx, rows: &[&Instance]) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "UPDATE ax_instance AS i SET status = v.status, attempt = v.attempt, failures = v.failures, \
             available_at = v.available_at, worker_id = v.worker_id, session_id = v.session_id, \
             scheduler_id = v.scheduler_id, lease_expires_at = v.lease_expires_at, deadline_at = v.deadline_at, \
             started_at = v.started_at, finished_at = v.finished_at, message = v.message, output = v.output, \
             updated_at = v.updated_at \
             FROM UNNEST($1::bigint[], $2::text[], $3::int[], $4::int[], $5::bigint[], $6::text[], $7::text[], $8::text[], \
                         $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[], $14::text[], $15::bigint[]) \
               AS v(id, status, attempt, failures, available_at, worker_id, session_id, scheduler_id, lease_expires_at, \
                    deadline_at, started_at, finished_at, message, output, updated_at) \
             WHERE i.id = v.id",
        )
        .bind(rows.iter().map(|i| i.id).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.status.as_str()).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i32::try_from(i.attempt).unwrap_or(i32::MAX)).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i32::try_from(i.failures).unwrap_or(i32::MAX)).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| to_micros(i.available_at)).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.worker_id.as_deref()).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.session_id.as_deref()).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.scheduler_id.as_deref()).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.lease_expires_at.map(to_micros)).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.deadline_at.map(to_micros)).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.started_at.map(to_micros)).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.finished_at.map(to_micros)).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.message.as_str()).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| i.output.as_str()).collect::<Vec<_>>())
        .bind(rows.iter().map(|i| to_micros(i.updated_at)).collect::<Vec<_>>())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn select_ready(
        tx: &mut Tx,
        app: &str,
        handlers: &[String],
        now: Ts,
        limit: u32,
    ) -> StoreResult<Vec<Instance>> {
        sqlx::query(sql!(
            "SELECT {INSTANCE_COLUMNS} FROM ax_instance WHERE status = 'PENDING' AND app = $1 AND available_at <= $2 \
             AND handler = ANY($3) ORDER BY available_at LIMIT $4 FOR UPDATE SKIP LOCKED"
        ))
        .bind(app)
        .bind(to_micros(now))
        .bind(handlers)
        .bind(i64::from(limit))
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(read_instance)
        .collect()
    }

    /// The rows are locked by this transaction's claim, so their status cannot have changed: the
    /// statement filters by id alone (a status condition tempts the planner into scanning the whole
    /// ready index when its statistics are stale).
    async fn mark_dispatched(
        tx: &mut Tx,
        session: &str,
        worker: &str,
        scheduler_id: &str,
        lease_until: Ts,
        now: Ts,
        ids: &[i64],
    ) -> StoreResult<()> {
        sqlx::query(
            "UPDATE ax_instance SET status = 'DISPATCHED', attempt = attempt + 1, session_id = $1, worker_id = $2, \
             scheduler_id = $3, lease_expires_at = $4, updated_at = GREATEST(updated_at, $5) \
             WHERE id = ANY($6)",
        )
        .bind(session)
        .bind(worker)
        .bind(scheduler_id)
        .bind(to_micros(lease_until))
        .bind(to_micros(now))
        .bind(ids)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    crate::store::sql::impl_store!(PgStore, sqlx::Postgres, Backend::Postgres, try_get);
}
