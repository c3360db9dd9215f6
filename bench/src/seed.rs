//! Bulk set-up straight into the database (faster than the API for hundreds of thousands of rows):
//! PENDING instances with their key rows and creation events, as the trigger would have written them.

use sqlx::QueryBuilder;

use crate::DbKind;

/// Inserts `n` PENDING instances of task `task_id` (app `app`, handler `handler`, JSON `params`),
/// available at `now_us`, each with its creation event, in batches.
#[allow(clippy::too_many_arguments)]
pub async fn pending_instances(
    kind: DbKind,
    url: &str,
    task_id: i64,
    task: &str,
    app: &str,
    handler: &str,
    params: &str,
    n: usize,
    now_us: i64,
) -> anyhow::Result<()> {
    macro_rules! seed {
        ($pool:expr, $db:ty) => {{
            let pool = $pool;
            // The default backoff, as axd stores it ('' since migration 18).
            let backoff = "";
            let mut done = 0usize;
            while done < n {
                let chunk = (n - done).min(1000);
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(
                    "INSERT INTO ax_instance (task_id, task_name, app, handler, params, idempotency_key, source, fire_at, \
                     available_at, ready_at, status, attempt, max_retries, failures, backoff, routing, message, \
                     output, progress_percent, progress_message, created_at, updated_at) ",
                );
                qb.push_values(done..done + chunk, |mut b, i| {
                    b.push_bind(task_id)
                        .push_bind(task.to_owned())
                        .push_bind(app.to_owned())
                        .push_bind(handler.to_owned())
                        .push_bind(params.to_owned())
                        .push_bind(format!("bench:{task_id}:{i}"))
                        .push_bind("MANUAL")
                        .push_bind(now_us)
                        .push_bind(now_us)
                        .push_bind(now_us)
                        .push_bind("PENDING")
                        .push_bind(0_i32)
                        .push_bind(0_i32)
                        .push_bind(0_i32)
                        .push_bind(backoff)
                        .push_bind("LEAST_LOADED")
                        .push_bind("")
                        .push_bind("")
                        .push_bind(0_i32)
                        .push_bind("")
                        .push_bind(now_us)
                        .push_bind(now_us);
                });
                qb.build().execute(&pool).await?;
                done += chunk;
            }
            // task_id is an integer: formatting it into the statement is safe.
            sqlx::query(&format!(
                "INSERT INTO ax_instance_event (instance_id, at, from_status, to_status, attempt, scheduler_id, worker_id, reason) \
                 SELECT id, created_at, NULL, 'PENDING', 0, 'ax-bench', '', 'pre-created by ax-bench' FROM ax_instance \
                 WHERE task_id = {task_id}"
            ))
            .execute(&pool)
            .await?;
            sqlx::query(&format!(
                "INSERT INTO ax_instance_key (task_id, idempotency_key, task_name, instance_id) \
                 SELECT task_id, idempotency_key, task_name, id FROM ax_instance WHERE task_id = {task_id}"
            ))
            .execute(&pool)
            .await?;
            // Statistics as autovacuum would have them in steady state.
            sqlx::query(analyze(kind)).execute(&pool).await?;
            pool.close().await;
        }};
    }
    match kind {
        DbKind::Sqlite => seed!(sqlx::SqlitePool::connect(url).await?, sqlx::Sqlite),
        DbKind::Postgres => seed!(sqlx::PgPool::connect(url).await?, sqlx::Postgres),
        DbKind::Mysql => seed!(sqlx::MySqlPool::connect(url).await?, sqlx::MySql),
    }
    Ok(())
}

/// The statement that refreshes the planner's statistics of ax's tables.
fn analyze(kind: DbKind) -> &'static str {
    match kind {
        DbKind::Sqlite | DbKind::Postgres => "ANALYZE",
        DbKind::Mysql => "ANALYZE TABLE ax_task, ax_instance, ax_instance_key, ax_instance_event",
    }
}

/// The run's events: (event rows, events of every trail — the rows plus those the instance rows
/// hold, `trail` bits 1, 2, 4 and 8), to check every trail is complete.
pub async fn event_count(kind: DbKind, url: &str) -> anyhow::Result<(i64, i64)> {
    let rows = "SELECT COUNT(*) FROM ax_instance_event";
    let sum = "COALESCE(SUM((trail & 1) + (trail & 2) / 2 + (trail & 4) / 4 + (trail & 8) / 8), 0)";
    let (r, h): (i64, i64) = match kind {
        DbKind::Sqlite => {
            let p = sqlx::SqlitePool::connect(url).await?;
            let held = format!("SELECT {sum} FROM ax_instance");
            (sqlx::query_scalar(rows).fetch_one(&p).await?, sqlx::query_scalar(&held).fetch_one(&p).await?)
        }
        DbKind::Postgres => {
            let p = sqlx::PgPool::connect(url).await?;
            let held = format!("SELECT ({sum})::bigint FROM ax_instance");
            (sqlx::query_scalar(rows).fetch_one(&p).await?, sqlx::query_scalar(&held).fetch_one(&p).await?)
        }
        DbKind::Mysql => {
            let p = sqlx::MySqlPool::connect(url).await?;
            let held = format!("SELECT CAST({sum} AS SIGNED) FROM ax_instance");
            (sqlx::query_scalar(rows).fetch_one(&p).await?, sqlx::query_scalar(&held).fetch_one(&p).await?)
        }
    };
    Ok((r, r + h))
}

/// Whether any instance of `app` is not final yet. Two index probes (the ready and the held
/// instances, which ax indexes for its own claims), so polling it costs the database almost nothing.
pub async fn any_unfinished(pool: &AnyPool, app: &str) -> anyhow::Result<bool> {
    const Q: &str = "SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM ax_instance WHERE status = 'PENDING' AND app = ? LIMIT 1) AS a) \
                     + (SELECT COUNT(*) FROM (SELECT 1 FROM ax_instance WHERE status IN ('DISPATCHED', 'RUNNING') LIMIT 1) AS b)";
    const PG: &str = "SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM ax_instance WHERE status = 'PENDING' AND app = $1 LIMIT 1) AS a) \
                      + (SELECT COUNT(*) FROM (SELECT 1 FROM ax_instance WHERE status IN ('DISPATCHED', 'RUNNING') LIMIT 1) AS b)";
    let n: i64 = match pool {
        AnyPool::Sqlite(p) => sqlx::query_scalar(Q).bind(app).fetch_one(p).await?,
        AnyPool::Postgres(p) => sqlx::query_scalar(PG).bind(app).fetch_one(p).await?,
        AnyPool::Mysql(p) => sqlx::query_scalar(Q).bind(app).fetch_one(p).await?,
    };
    Ok(n > 0)
}

/// A pool of the right kind for `url`.
pub enum AnyPool {
    Sqlite(sqlx::SqlitePool),
    /// PostgreSQL.
    Postgres(sqlx::PgPool),
    Mysql(sqlx::MySqlPool),
}

impl AnyPool {
    /// Connects.
    pub async fn connect(kind: DbKind, url: &str) -> anyhow::Result<AnyPool> {
        Ok(match kind {
            DbKind::Sqlite => AnyPool::Sqlite(sqlx::SqlitePool::connect(url).await?),
            DbKind::Postgres => AnyPool::Postgres(sqlx::PgPool::connect(url).await?),
            DbKind::Mysql => AnyPool::Mysql(sqlx::MySqlPool::connect(url).await?),
        })
    }

    /// Closes every connection (a meter that needs the database to itself is started after).
    pub async fn close(self) {
        match self {
            AnyPool::Sqlite(p) => p.close().await,
            AnyPool::Postgres(p) => p.close().await,
            AnyPool::Mysql(p) => p.close().await,
        }
    }
}

/// A task to clone from a template: its name, cron expression (None: the template's) and next
/// fire time in microseconds.
pub struct TaskClone {
    /// Unique name.
    pub name: String,
    /// Cron expression, for cron templates.
    pub cron: Option<String>,
    /// Next fire time.
    pub next_fire_us: i64,
}

impl TaskClone {
    /// Clones `prefix-1 .. prefix-(n-1)` of a cron template, spread over each minute: clone `i` fires
    /// at second `i % 60` of every minute, first after `after`.
    pub fn spread_over_minute(prefix: &str, n: usize, after: chrono::DateTime<chrono::Utc>) -> Vec<TaskClone> {
        use chrono::Timelike as _;
        let base = after.with_nanosecond(0).unwrap_or(after) + chrono::Duration::seconds(1);
        (1..n)
            .map(|i| {
                let second = (i % 60) as i64;
                let next = base + chrono::Duration::seconds((second - i64::from(base.second())).rem_euclid(60));
                TaskClone {
                    name: format!("{prefix}-{i}"),
                    cron: Some(format!("{second} * * * * *")),
                    next_fire_us: next.timestamp_micros(),
                }
            })
            .collect()
    }
}

/// Inserts copies of task `template` (created through the API, so every column holds what axd
/// itself writes) that differ in name, cron expression and next fire time, 400 per statement (SQLite
/// allows at most 500 terms in a compound SELECT):
/// registering a million tasks through the API would take longer than the benchmark.
pub async fn clone_tasks(kind: DbKind, url: &str, template: i64, clones: &[TaskClone]) -> anyhow::Result<()> {
    const COPIED: &str = "t.app, t.handler, t.description, t.schedule_kind, COALESCE(v.c, t.cron_expr), \
        t.cron_dialect, t.time_zone, t.interval_us, t.start_at, t.params, t.enabled, v.f, t.misfire_policy, \
        t.misfire_threshold_us, t.max_catch_up, t.concurrency_policy, t.routing, t.timeout_us, t.max_retries, \
        t.backoff, t.labels, t.version, t.created_at, t.updated_at";
    macro_rules! clone {
        ($pool:expr, $db:ty) => {{
            let pool = $pool;
            for chunk in clones.chunks(400) {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(
                    "INSERT INTO ax_task (name, app, handler, description, schedule_kind, cron_expr, cron_dialect, \
                     time_zone, interval_us, start_at, params, enabled, next_fire_at, misfire_policy, \
                     misfire_threshold_us, max_catch_up, concurrency_policy, routing, timeout_us, max_retries, \
                     backoff, labels, version, created_at, updated_at) SELECT v.n, ",
                );
                qb.push(COPIED).push(" FROM ax_task t JOIN (");
                for (i, c) in chunk.iter().enumerate() {
                    qb.push(if i == 0 { "SELECT " } else { " UNION ALL SELECT " });
                    qb.push_bind(c.name.clone()).push(if i == 0 { " AS n, " } else { ", " });
                    qb.push_bind(c.cron.clone()).push(if i == 0 { " AS c, " } else { ", " });
                    qb.push_bind(c.next_fire_us).push(if i == 0 { " AS f" } else { "" });
                }
                qb.push(") v ON 1 = 1 WHERE t.id = ").push_bind(template);
                qb.build().execute(&pool).await?;
            }
            sqlx::query(analyze(kind)).execute(&pool).await?;
            pool.close().await;
        }};
    }
    match kind {
        DbKind::Sqlite => clone!(sqlx::SqlitePool::connect(url).await?, sqlx::Sqlite),
        DbKind::Postgres => clone!(sqlx::PgPool::connect(url).await?, sqlx::Postgres),
        DbKind::Mysql => clone!(sqlx::MySqlPool::connect(url).await?, sqlx::MySql),
    }
    Ok(())
}

/// For the first attempt of each instance fired in [from, until): DISPATCHED time − fire time, µs
/// (from its event row, or from the instance row when the row holds that event: `trail` bit 1).
pub async fn dispatch_delays(pool: &AnyPool, from_us: i64, until_us: i64) -> anyhow::Result<Vec<i64>> {
    const Q: &str = "SELECT e.at - i.fire_at FROM ax_instance_event e JOIN ax_instance i ON i.id = e.instance_id \
                     WHERE e.to_status = 'DISPATCHED' AND e.attempt = 1 AND i.fire_at >= ? AND i.fire_at < ? \
                     UNION ALL SELECT dispatched_at - fire_at FROM ax_instance \
                     WHERE (trail & 1) = 1 AND attempt = 1 AND fire_at >= ? AND fire_at < ?";
    const PG: &str = "SELECT e.at - i.fire_at FROM ax_instance_event e JOIN ax_instance i ON i.id = e.instance_id \
                      WHERE e.to_status = 'DISPATCHED' AND e.attempt = 1 AND i.fire_at >= $1 AND i.fire_at < $2 \
                      UNION ALL SELECT dispatched_at - fire_at FROM ax_instance \
                      WHERE (trail & 1) = 1 AND attempt = 1 AND fire_at >= $1 AND fire_at < $2";
    Ok(match pool {
        AnyPool::Sqlite(p) => {
            sqlx::query_scalar(Q).bind(from_us).bind(until_us).bind(from_us).bind(until_us).fetch_all(p).await?
        }
        AnyPool::Postgres(p) => sqlx::query_scalar(PG).bind(from_us).bind(until_us).fetch_all(p).await?,
        AnyPool::Mysql(p) => {
            sqlx::query_scalar(Q).bind(from_us).bind(until_us).bind(from_us).bind(until_us).fetch_all(p).await?
        }
    })
}

/// Instances whose fire time is in [from, until).
pub async fn instances_fired_between(pool: &AnyPool, from_us: i64, until_us: i64) -> anyhow::Result<u64> {
    const Q: &str = "SELECT COUNT(*) FROM ax_instance WHERE fire_at >= ? AND fire_at < ?";
    const PG: &str = "SELECT COUNT(*) FROM ax_instance WHERE fire_at >= $1 AND fire_at < $2";
    let n: i64 = match pool {
        AnyPool::Sqlite(p) => sqlx::query_scalar(Q).bind(from_us).bind(until_us).fetch_one(p).await?,
        AnyPool::Postgres(p) => sqlx::query_scalar(PG).bind(from_us).bind(until_us).fetch_one(p).await?,
        AnyPool::Mysql(p) => sqlx::query_scalar(Q).bind(from_us).bind(until_us).fetch_one(p).await?,
    };
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Moves every one-time task's fire (and its schedule's instant) to `at_us`.
pub async fn move_one_time_fires(pool: &AnyPool, at_us: i64) -> anyhow::Result<()> {
    const Q: &str = "UPDATE ax_task SET start_at = ?, next_fire_at = ? WHERE schedule_kind = 'ONE_TIME'";
    const PG: &str = "UPDATE ax_task SET start_at = $1, next_fire_at = $2 WHERE schedule_kind = 'ONE_TIME'";
    match pool {
        AnyPool::Sqlite(p) => {
            sqlx::query(Q).bind(at_us).bind(at_us).execute(p).await?;
        }
        AnyPool::Postgres(p) => {
            sqlx::query(PG).bind(at_us).bind(at_us).execute(p).await?;
        }
        AnyPool::Mysql(p) => {
            sqlx::query(Q).bind(at_us).bind(at_us).execute(p).await?;
        }
    }
    Ok(())
}

/// Whether a one-time task has yet to fire or one of their instances is not final: index probes
/// (ax's due-task and active-instance indexes). The first is a MIN, which every planner answers
/// from the due-task index: `WHERE next_fire_at IS NOT NULL LIMIT 1` was planned as a scan of
/// every task (statistics taken while all were due), ~4 s of the database's time in a
/// 100,000-task run.
pub async fn one_time_unfinished(pool: &AnyPool) -> anyhow::Result<bool> {
    const Q: &str = "SELECT (CASE WHEN (SELECT MIN(next_fire_at) FROM ax_task) IS NULL THEN 0 ELSE 1 END) \
                     + (SELECT COUNT(*) FROM (SELECT 1 FROM ax_instance WHERE status IN ('PENDING', 'DISPATCHED', 'RUNNING') \
                     AND source <> 'MANUAL' LIMIT 1) AS b)";
    let n: i64 = match pool {
        AnyPool::Sqlite(p) => sqlx::query_scalar(Q).fetch_one(p).await?,
        AnyPool::Postgres(p) => sqlx::query_scalar(Q).fetch_one(p).await?,
        AnyPool::Mysql(p) => sqlx::query_scalar(Q).fetch_one(p).await?,
    };
    Ok(n > 0)
}
