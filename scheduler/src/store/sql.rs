//! The statements every backend shares, written once.
//!
//! `impl_store!` expands in each backend module (`sqlite.rs`, `postgres.rs`, `mysql.rs`) with that
//! module's concrete sqlx types. The module supplies the dialect through a few items the expansion
//! calls by name:
//! - `fn rewrite(&str) -> String`: fills the tokens below and, for PostgreSQL, numbers placeholders;
//! - `async fn begin(&Pool) -> Tx`: a write transaction (SQLite: `BEGIN IMMEDIATE`);
//! - `async fn insert_id(&mut Tx, Query) -> i64`: runs an INSERT and returns the new id;
//! - `async fn run_migrations(&Pool)`: applies the embedded migrations under a database-wide lock;
//! - `async fn notify(&mut Tx, Notice)` and `async fn listen_impl(&Pool, on)`: NOTIFY/LISTEN on
//!   PostgreSQL, nothing elsewhere;
//! - `UPSERT_SCHEDULER`: the dialect's insert-or-update of `ax_scheduler`;
//! - the hot-path hooks `insert_instances_with_keys`, `set_next_fires`, `existing_keys`,
//!   `insert_events`, `lock_instances`, `write_instances`, `select_ready` and `mark_dispatched`:
//!   SQLite and MySQL take the portable multi-row statements with `portable_hot_path!(Db)`, which
//!   also needs `async fn insert_instance_rows(&mut Tx, &[&Row], now) -> Vec<(id, task_id, key)>`
//!   (the dialect's way to get the new ids); PostgreSQL binds arrays;
//! - the name of the row getter: `try_get`, or `try_get_unchecked` on MySQL, whose case-sensitive
//!   (`utf8mb4_bin`) text columns sqlx 0.8 reports as binary and would refuse to read as `String`.
//!
//! Tokens: `{TASK_COLUMNS}`, `{INSTANCE_COLUMNS}`, `{EVENT_COLUMNS}`, `{SKIP_LOCKED}` (row lock that
//! skips locked rows; empty on SQLite, whose write transactions are already exclusive),
//! `{FOR_UPDATE}` (row lock that waits), `{RETURNING_ID}`, `{NOW_US}` (the database clock in
//! microseconds) and `{READY_INDEX}` (SQLite: `INDEXED BY ax_instance_ready`, see `sqlite.rs`).

/// Replaces tokens and (for PostgreSQL) turns `?` placeholders into `$1, $2, ...`.
pub(crate) fn substitute(sql: &str, tokens: &[(&str, &str)], numbered: bool) -> String {
    let mut s = sql
        .replace("{TASK_COLUMNS}", super::rows::TASK_COLUMNS)
        .replace("{INSTANCE_COLUMNS}", super::rows::INSTANCE_COLUMNS)
        .replace("{EVENT_COLUMNS}", super::rows::EVENT_COLUMNS);
    for (k, v) in tokens {
        s = s.replace(k, v);
    }
    if !numbered {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut n = 0;
    let mut in_str = false;
    for c in s.chars() {
        match c {
            '\'' => {
                in_str = !in_str;
                out.push(c);
            }
            '?' if !in_str => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    out
}

/// A statement with the dialect applied once and cached for the life of the process.
macro_rules! sql {
    ($s:expr) => {{
        static SQL: std::sync::LazyLock<&'static str> =
            std::sync::LazyLock::new(|| Box::leak(rewrite($s).into_boxed_str()));
        *SQL
    }};
}
pub(crate) use sql;

/// The largest batch of rows written by one multi-row statement (well under every backend's limit
/// on bound parameters).
pub(crate) const BATCH: usize = 500;

/// Shared implementation of [`crate::store::Store`]; see the module doc.
macro_rules! impl_store {
    ($store:ty, $db:ty, $backend:expr, $get:ident) => {
        use std::collections::HashMap;

        use async_trait::async_trait;
        use sqlx::{QueryBuilder, Row as _};

        use crate::{
            error::{StoreError, StoreResult},
            lifecycle::{Batch, Ctx},
            model::{
                Instance, InstanceEvent, InstanceSource, InstanceStatus, LogLine, SchedulerRecord, Task,
                TaskEvent, TaskEventKind, Ts, WorkerRecord, from_micros, to_micros,
            },
            store::{
                AcceptOutcome, Actor, AppDemand, Assignment, Backend, CancelOutcome, ClusterStats, Command,
                CompleteOutcome, InstanceFilter, ManualTrigger, NewInstance, NewTask, PlanDecision, Planner,
                Notice, ReadyInstance, Reopened, RetryOutcome, SessionRef, SessionSync, Store, SweepReport, TaskUpdate, TriggerRound,
                WorkerOp, WorkerOpOutcome,
                rows::{EventRaw, InstanceRaw, TaskRaw, decode_labels, decode_list, encode_labels, encode_list},
                sql::{BATCH, sql},
            },
        };

        type Tx = sqlx::Transaction<'static, $db>;
        type DbRow = <$db as sqlx::Database>::Row;

        fn read_task(r: &DbRow) -> StoreResult<Task> {
            TaskRaw {
                id: r.$get(0)?,
                name: r.$get(1)?,
                app: r.$get(2)?,
                handler: r.$get(3)?,
                description: r.$get(4)?,
                schedule_kind: r.$get(5)?,
                cron_expr: r.$get(6)?,
                cron_dialect: r.$get(7)?,
                time_zone: r.$get(8)?,
                interval_us: r.$get(9)?,
                start_at: r.$get(10)?,
                params: r.$get(11)?,
                enabled: r.$get(12)?,
                next_fire_at: r.$get(13)?,
                misfire_policy: r.$get(14)?,
                misfire_threshold_us: r.$get(15)?,
                max_catch_up: r.$get(16)?,
                concurrency_policy: r.$get(17)?,
                routing: r.$get(18)?,
                timeout_us: r.$get(19)?,
                max_retries: r.$get(20)?,
                backoff: r.$get(21)?,
                labels: r.$get(22)?,
                version: r.$get(23)?,
                created_at: r.$get(24)?,
                updated_at: r.$get(25)?,
            }
            .into_task()
        }

        fn read_instance(r: &DbRow) -> StoreResult<Instance> {
            InstanceRaw {
                id: r.$get(0)?,
                task_id: r.$get(1)?,
                task_name: r.$get(2)?,
                app: r.$get(3)?,
                handler: r.$get(4)?,
                params: r.$get(5)?,
                idempotency_key: r.$get(6)?,
                source: r.$get(7)?,
                fire_at: r.$get(8)?,
                available_at: r.$get(9)?,
                status: r.$get(10)?,
                attempt: r.$get(11)?,
                max_retries: r.$get(12)?,
                failures: r.$get(13)?,
                timeout_us: r.$get(14)?,
                backoff: r.$get(15)?,
                routing: r.$get(16)?,
                worker_id: r.$get(17)?,
                session_id: r.$get(18)?,
                scheduler_id: r.$get(19)?,
                lease_expires_at: r.$get(20)?,
                deadline_at: r.$get(21)?,
                started_at: r.$get(22)?,
                finished_at: r.$get(23)?,
                message: r.$get(24)?,
                output: r.$get(25)?,
                progress_percent: r.$get(26)?,
                progress_message: r.$get(27)?,
                created_at: r.$get(28)?,
                updated_at: r.$get(29)?,
            }
            .into_instance()
        }

        fn read_event(r: &DbRow) -> StoreResult<InstanceEvent> {
            EventRaw {
                id: r.$get(0)?,
                instance_id: r.$get(1)?,
                at: r.$get(2)?,
                from_status: r.$get(3)?,
                to_status: r.$get(4)?,
                attempt: r.$get(5)?,
                scheduler_id: r.$get(6)?,
                worker_id: r.$get(7)?,
                reason: r.$get(8)?,
            }
            .into_event()
        }

        fn read_worker(r: &DbRow) -> StoreResult<WorkerRecord> {
            const T: &str = "ax_worker";
            let handlers: String = r.$get(3)?;
            let labels: String = r.$get(7)?;
            let n = |v: i32| u32::try_from(v).unwrap_or(0);
            Ok(WorkerRecord {
                session_id: r.$get(0)?,
                worker_id: r.$get(1)?,
                app: r.$get(2)?,
                handlers: decode_list(T, &handlers)?,
                capacity: n(r.$get(4)?),
                credits: n(r.$get(5)?),
                in_flight: n(r.$get(6)?),
                labels: decode_labels(T, &labels)?,
                scheduler_id: r.$get(8)?,
                client: r.$get(9)?,
                connected_at: from_micros(r.$get(10)?),
                last_seen_at: from_micros(r.$get(11)?),
            })
        }

        const WORKER_COLUMNS: &str = "session_id, worker_id, app, handlers, capacity, credits, in_flight, labels, \
            scheduler_id, client, connected_at, last_seen_at";

        /// One row for `ax_instance_event`.
        #[derive(Debug, Clone)]
        pub(crate) struct NewEvent {
            pub instance_id: i64,
            pub at: Ts,
            pub from: Option<InstanceStatus>,
            pub to: InstanceStatus,
            pub attempt: u32,
            pub scheduler_id: String,
            pub worker_id: String,
            pub reason: String,
        }

        #[allow(dead_code)]
        async fn insert_events_generic(tx: &mut Tx, events: &[NewEvent]) -> StoreResult<()> {
            for chunk in events.chunks(BATCH) {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(
                    "INSERT INTO ax_instance_event (instance_id, at, from_status, to_status, attempt, scheduler_id, worker_id, reason) ",
                );
                qb.push_values(chunk, |mut b, e| {
                    b.push_bind(e.instance_id)
                        .push_bind(to_micros(e.at))
                        .push_bind(e.from.map(|s| s.as_str()))
                        .push_bind(e.to.as_str())
                        .push_bind(i32::try_from(e.attempt).unwrap_or(i32::MAX))
                        .push_bind(e.scheduler_id.clone())
                        .push_bind(e.worker_id.clone())
                        .push_bind(e.reason.clone());
                });
                qb.build().execute(&mut **tx).await?;
            }
            Ok(())
        }

        async fn insert_task_event(
            tx: &mut Tx,
            task_id: i64,
            task_name: &str,
            at: Ts,
            kind: TaskEventKind,
            actor: &str,
            message: &str,
        ) -> StoreResult<()> {
            sqlx::query(sql!(
                "INSERT INTO ax_task_event (task_id, task_name, at, kind, actor, message) VALUES (?, ?, ?, ?, ?, ?)"
            ))
            .bind(task_id)
            .bind(task_name)
            .bind(to_micros(at))
            .bind(kind.as_str())
            .bind(actor)
            .bind(message)
            .execute(&mut **tx)
            .await?;
            Ok(())
        }

        /// An instance row to insert, with everything copied from its task.
        #[derive(Debug, Clone)]
        pub(crate) struct InstanceRow<'a> {
            pub task: &'a Task,
            pub new: &'a NewInstance,
        }

        fn bind_instance_row(b: &mut sqlx::query_builder::Separated<'_, '_, $db, &'static str>, row: &InstanceRow<'_>, now: Ts) {
            let t = row.task;
            let n = row.new;
            let finished = n.status.is_terminal().then(|| to_micros(now));
            b.push_bind(t.id)
                .push_bind(t.name.clone())
                .push_bind(t.config.app.clone())
                .push_bind(t.config.handler.clone())
                .push_bind(n.params.clone())
                .push_bind(n.key.clone())
                .push_bind(n.source.as_str())
                .push_bind(to_micros(n.fire_at))
                .push_bind(to_micros(n.available_at))
                .push_bind(n.status.as_str())
                .push_bind(i32::try_from(t.config.retry.max_retries).unwrap_or(i32::MAX))
                .push_bind(t.config.timeout.map(crate::model::duration_micros))
                .push_bind(crate::store::rows::encode_backoff(&t.config.retry.backoff))
                .push_bind(t.config.routing.as_str())
                .push_bind(finished)
                .push_bind(if n.status.is_terminal() { n.reason.clone() } else { String::new() })
                .push_bind(to_micros(now))
                .push_bind(to_micros(now));
        }

        const INSERT_INSTANCE_HEAD: &str = "INSERT INTO ax_instance (task_id, task_name, app, handler, params, \
            idempotency_key, source, fire_at, available_at, status, max_retries, timeout_us, backoff, routing, \
            finished_at, message, created_at, updated_at, attempt, failures, output, progress_percent, progress_message) ";

        /// Inserts instances with `INSERT ... RETURNING` (PostgreSQL, SQLite).
        #[allow(dead_code)]
        async fn insert_instance_rows_returning(
            tx: &mut Tx,
            rows: &[&InstanceRow<'_>],
            now: Ts,
        ) -> StoreResult<Vec<(i64, i64, String)>> {
            let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(INSERT_INSTANCE_HEAD);
            qb.push_values(rows, |mut b, row| {
                bind_instance_row(&mut b, row, now);
                b.push_unseparated(", 0, 0, '', 0, ''");
            });
            qb.push(" RETURNING id, task_id, idempotency_key");
            qb.build()
                .fetch_all(&mut **tx)
                .await?
                .iter()
                .map(|r| Ok((r.$get(0)?, r.$get(1)?, r.$get(2)?)))
                .collect()
        }

        /// Which of the rows' (task, key) pairs exist, with a row-value `IN` list.
        #[allow(dead_code)]
        async fn existing_keys_generic(
            tx: &mut Tx,
            rows: &[InstanceRow<'_>],
        ) -> StoreResult<std::collections::HashSet<(i64, String)>> {
            let mut qb: QueryBuilder<'_, $db> =
                QueryBuilder::new("SELECT task_id, idempotency_key FROM ax_instance_key WHERE (task_id, idempotency_key) IN ");
            push_key_pairs(&mut qb, rows.iter().map(|r| (r.task.id, r.new.key.as_str())));
            qb.build().fetch_all(&mut **tx).await?.iter().map(|r| Ok((r.$get(0)?, r.$get(1)?))).collect()
        }

        /// Creates the instances whose (task, idempotency key) is new, with their key rows, and
        /// returns (id, task_id, key) of those created. The trigger holds its tasks locked, so two
        /// of its rounds cannot create the same key; two manual triggers racing with one key make
        /// the later one fail with [`StoreError::UniqueViolation`] on the key's primary key.
        async fn create_instances(tx: &mut Tx, rows: &[InstanceRow<'_>], now: Ts) -> StoreResult<Vec<(i64, i64, String)>> {
            let mut out = Vec::with_capacity(rows.len());
            for chunk in rows.chunks(BATCH) {
                let existing = existing_keys(tx, chunk).await?;
                let fresh: Vec<&InstanceRow<'_>> =
                    chunk.iter().filter(|r| !existing.contains(&(r.task.id, r.new.key.clone()))).collect();
                if fresh.is_empty() {
                    continue;
                }
                out.extend(insert_instances_with_keys(tx, &fresh, now).await?);
            }
            Ok(out)
        }

        /// Sets tasks' next fire times, one statement per [`BATCH`] tasks (a `CASE` on the id).
        #[allow(dead_code)]
        async fn set_next_fires_generic(tx: &mut Tx, next: &[(i64, Option<i64>)]) -> StoreResult<()> {
            for chunk in next.chunks(BATCH) {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new("UPDATE ax_task SET next_fire_at = CASE id");
                for (id, at) in chunk {
                    qb.push(" WHEN ").push_bind(*id).push(" THEN ").push_bind(*at);
                }
                qb.push(" END WHERE id IN ");
                push_ids(&mut qb, &chunk.iter().map(|(id, _)| *id).collect::<Vec<_>>());
                qb.build().execute(&mut **tx).await?;
            }
            Ok(())
        }

        /// FIXED_DELAY: when a scheduled instance reaches a final state, the next fire is `interval`
        /// after that moment. Runs in the transaction that finalizes the instances, one statement
        /// for a whole group commit (a statement per instance cost the writer a round trip for every
        /// scheduled run, whatever its task's kind).
        #[allow(dead_code)]
        async fn schedule_after_completion(tx: &mut Tx, finals: &[&Instance], now: Ts) -> StoreResult<()> {
            let mut tasks: Vec<i64> =
                finals.iter().filter(|i| crate::lifecycle::drives_fixed_delay(i)).map(|i| i.task_id).collect();
            tasks.sort_unstable();
            tasks.dedup();
            for chunk in tasks.chunks(BATCH) {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new("UPDATE ax_task SET next_fire_at = ");
                qb.push_bind(to_micros(now));
                qb.push(" + interval_us WHERE schedule_kind = 'FIXED_DELAY' AND enabled AND next_fire_at IS NULL AND id IN ");
                push_ids(&mut qb, chunk);
                qb.build().execute(&mut **tx).await?;
            }
            Ok(())
        }

        async fn fetch_task_by_id(tx: &mut Tx, id: i64) -> StoreResult<Option<Task>> {
            sqlx::query(sql!("SELECT {TASK_COLUMNS} FROM ax_task WHERE id = ?"))
                .bind(id)
                .fetch_optional(&mut **tx)
                .await?
                .map(|r| read_task(&r))
                .transpose()
        }


        fn push_ids(qb: &mut QueryBuilder<'_, $db>, ids: &[i64]) {
            qb.push("(");
            let mut sep = qb.separated(", ");
            for id in ids {
                sep.push_bind(*id);
            }
            qb.push(")");
        }

        /// Pushes `((task_id, key), ...)` for a row-value `IN`.
        fn push_key_pairs<'k>(qb: &mut QueryBuilder<'_, $db>, keys: impl Iterator<Item = (i64, &'k str)>) {
            qb.push("(");
            let mut sep = qb.separated(", ");
            for (task_id, key) in keys {
                sep.push("(").push_bind_unseparated(task_id).push_unseparated(", ");
                sep.push_bind_unseparated(key.to_owned()).push_unseparated(")");
            }
            qb.push(")");
        }

        fn push_strs(qb: &mut QueryBuilder<'_, $db>, v: &[String]) {
            qb.push("(");
            let mut sep = qb.separated(", ");
            for s in v {
                sep.push_bind(s.clone());
            }
            qb.push(")");
        }

        fn i32_of(v: u32) -> i32 {
            i32::try_from(v).unwrap_or(i32::MAX)
        }





        /// Locks instances by id (in id order, so concurrent writers cannot deadlock).
        #[allow(dead_code)]
        async fn lock_instances_generic(tx: &mut Tx, ids: &[i64]) -> StoreResult<HashMap<i64, Instance>> {
            let mut out = HashMap::with_capacity(ids.len());
            for chunk in ids.chunks(BATCH) {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(sql!("SELECT {INSTANCE_COLUMNS} FROM ax_instance WHERE id IN "));
                push_ids(&mut qb, chunk);
                qb.push(sql!(" ORDER BY id{FOR_UPDATE}"));
                for r in qb.build().fetch_all(&mut **tx).await? {
                    let i = read_instance(&r)?;
                    out.insert(i.id, i);
                }
            }
            Ok(out)
        }

        /// Claims instances matching `sql` (one `?` for now, one for the limit), skipping rows
        /// other axd hold.
        async fn claim_instances(tx: &mut Tx, sql: &'static str, now: Ts, limit: u32) -> StoreResult<Vec<Instance>> {
            sqlx::query(sql).bind(to_micros(now)).bind(i64::from(limit)).fetch_all(&mut **tx).await?.iter().map(read_instance).collect()
        }

        /// Writes the lifecycle columns of changed instances in one statement per chunk.
        #[allow(dead_code)]
        async fn write_instances_generic(tx: &mut Tx, rows: &[&Instance]) -> StoreResult<()> {
            for chunk in rows.chunks(BATCH / 2) {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(BULK_UPDATE_PREFIX);
                let mut first = true;
                for i in chunk {
                    qb.push(if first { "SELECT " } else { " UNION ALL SELECT " });
                    let mut sep = qb.separated(", ");
                    if first {
                        // Names for the derived table's columns come from the first branch.
                        sep.push_bind(i.id).push_unseparated(" AS id");
                        sep.push_bind(i.status.as_str()).push_unseparated(" AS status");
                        sep.push_bind(i32_of(i.attempt)).push_unseparated(" AS attempt");
                        sep.push_bind(i32_of(i.failures)).push_unseparated(" AS failures");
                        sep.push_bind(to_micros(i.available_at)).push_unseparated(" AS available_at");
                        sep.push_bind(i.worker_id.clone()).push_unseparated(" AS worker_id");
                        sep.push_bind(i.session_id.clone()).push_unseparated(" AS session_id");
                        sep.push_bind(i.scheduler_id.clone()).push_unseparated(" AS scheduler_id");
                        sep.push_bind(i.lease_expires_at.map(to_micros)).push_unseparated(" AS lease_expires_at");
                        sep.push_bind(i.deadline_at.map(to_micros)).push_unseparated(" AS deadline_at");
                        sep.push_bind(i.started_at.map(to_micros)).push_unseparated(" AS started_at");
                        sep.push_bind(i.finished_at.map(to_micros)).push_unseparated(" AS finished_at");
                        sep.push_bind(i.message.clone()).push_unseparated(" AS message");
                        sep.push_bind(i.output.clone()).push_unseparated(" AS output");
                        sep.push_bind(to_micros(i.updated_at)).push_unseparated(" AS updated_at");
                    } else {
                        sep.push_bind(i.id)
                            .push_bind(i.status.as_str())
                            .push_bind(i32_of(i.attempt))
                            .push_bind(i32_of(i.failures))
                            .push_bind(to_micros(i.available_at))
                            .push_bind(i.worker_id.clone())
                            .push_bind(i.session_id.clone())
                            .push_bind(i.scheduler_id.clone())
                            .push_bind(i.lease_expires_at.map(to_micros))
                            .push_bind(i.deadline_at.map(to_micros))
                            .push_bind(i.started_at.map(to_micros))
                            .push_bind(i.finished_at.map(to_micros))
                            .push_bind(i.message.clone())
                            .push_bind(i.output.clone())
                            .push_bind(to_micros(i.updated_at));
                    }
                    first = false;
                }
                qb.push(BULK_UPDATE_SUFFIX);
                qb.build().execute(&mut **tx).await?;
            }
            Ok(())
        }

        async fn insert_commands(tx: &mut Tx, commands: &[Command], now: Ts) -> StoreResult<()> {
            for chunk in commands.chunks(BATCH) {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(
                    "INSERT INTO ax_command (scheduler_id, session_id, instance_id, attempt, kind, reason, created_at) ",
                );
                qb.push_values(chunk, |mut b, c| {
                    b.push_bind(c.scheduler_id.clone())
                        .push_bind(c.session_id.clone())
                        .push_bind(c.instance_id)
                        .push_bind(i32_of(c.attempt))
                        .push_bind("CANCEL")
                        .push_bind(c.reason.clone())
                        .push_bind(to_micros(now));
                });
                qb.build().execute(&mut **tx).await?;
            }
            Ok(())
        }

        /// Writes what a batch of transitions decided: changed rows, events, cancels and the next
        /// fire of FIXED_DELAY tasks whose instance finished.
        async fn persist(tx: &mut Tx, rows: &HashMap<i64, Instance>, batch: Batch, ctx: Ctx<'_>) -> StoreResult<()> {
            let t0 = std::time::Instant::now();
            let changed: Vec<&Instance> = batch.changed.iter().filter_map(|id| rows.get(id)).collect();
            write_instances(tx, &changed).await?;
            let t1 = t0.elapsed();
            let events: Vec<NewEvent> = batch
                .events
                .into_iter()
                .map(|e| NewEvent {
                    instance_id: e.instance_id,
                    at: e.at,
                    from: e.from,
                    to: e.to,
                    attempt: e.attempt,
                    scheduler_id: ctx.scheduler_id.to_owned(),
                    worker_id: e.worker_id,
                    reason: e.reason,
                })
                .collect();
            insert_events(tx, &events).await?;
            let t2 = t0.elapsed();
            insert_commands(tx, &batch.commands, ctx.now).await?;
            tracing::debug!(rows = changed.len(), events = events.len(), write = ?t1, events_took = ?(t2 - t1), "persist");
            let finals: Vec<&Instance> = batch.finalized.iter().filter_map(|id| rows.get(id)).collect();
            schedule_after_completion(tx, &finals, ctx.now).await?;
            if batch.earliest_requeue.is_some() || !batch.finalized.is_empty() {
                // Available again, or a FIXED_DELAY task may have a new next fire.
                notify(tx, Notice::Work).await?;
            }
            let mut targets: Vec<&str> = batch.commands.iter().map(|c| c.scheduler_id.as_str()).collect();
            targets.sort_unstable();
            targets.dedup();
            for t in targets {
                notify(tx, Notice::Commands(t.to_owned())).await?;
            }
            Ok(())
        }

        /// PENDING instances of `app` available by `now` for these handlers, oldest first, locked
        /// (skipping rows other axd hold).
        #[allow(dead_code)]
        async fn select_ready_generic(tx: &mut Tx, app: &str, handlers: &[String], now: Ts, limit: u32) -> StoreResult<Vec<Instance>> {
            let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(sql!(
                "SELECT {INSTANCE_COLUMNS} FROM ax_instance{READY_INDEX} WHERE status = 'PENDING' AND app = "
            ));
            qb.push_bind(app.to_owned()).push(" AND available_at <= ").push_bind(to_micros(now));
            qb.push(" AND handler IN ");
            push_strs(&mut qb, handlers);
            qb.push(" ORDER BY available_at LIMIT ").push_bind(i64::from(limit));
            qb.push(sql!("{SKIP_LOCKED}"));
            qb.build().fetch_all(&mut **tx).await?.iter().map(read_instance).collect()
        }

        /// Marks claimed instances DISPATCHED to one session.
        #[allow(dead_code)]
        async fn mark_dispatched_generic(
            tx: &mut Tx,
            session: &str,
            worker: &str,
            scheduler_id: &str,
            lease_until: Ts,
            now: Ts,
            ids: &[i64],
        ) -> StoreResult<()> {
            for chunk in ids.chunks(BATCH) {
                let mut qb: QueryBuilder<'_, $db> =
                    QueryBuilder::new("UPDATE ax_instance SET status = 'DISPATCHED', attempt = attempt + 1, session_id = ");
                qb.push_bind(session.to_owned())
                    .push(", worker_id = ")
                    .push_bind(worker.to_owned())
                    .push(", scheduler_id = ")
                    .push_bind(scheduler_id.to_owned())
                    .push(", lease_expires_at = ")
                    .push_bind(to_micros(lease_until))
                    // Never earlier than the row's last change (see lifecycle::Ctx::after).
                    .push(", updated_at = CASE WHEN updated_at > ")
                    .push_bind(to_micros(now))
                    .push(" THEN updated_at ELSE ")
                    .push_bind(to_micros(now))
                    // Locked by this transaction's claim: the id alone is enough.
                    .push(" END WHERE id IN ");
                push_ids(&mut qb, chunk);
                qb.build().execute(&mut **tx).await?;
            }
            Ok(())
        }


        #[async_trait]
        impl Store for $store {
            fn backend(&self) -> Backend {
                $backend
            }

            async fn migrate(&self) -> StoreResult<()> {
                run_migrations(&self.pool).await
            }

            async fn db_now(&self) -> StoreResult<Ts> {
                let us: i64 = sqlx::query_scalar(sql!("SELECT {NOW_US}")).fetch_one(&self.pool).await?;
                Ok(from_micros(us))
            }

            async fn close(&self) {
                self.pool.close().await;
            }

            async fn listen(&self, on: &(dyn Fn(Notice) + Send + Sync)) -> StoreResult<bool> {
                listen_impl(&self.pool, on).await
            }

            async fn create_task(&self, task: &NewTask, now: Ts, actor: &Actor<'_>) -> StoreResult<Task> {
                let raw = TaskRaw::from_config(0, &task.name, &task.config);
                let mut tx = begin(&self.pool).await?;
                let q = sqlx::query(sql!(
                    "INSERT INTO ax_task (name, app, handler, description, schedule_kind, cron_expr, cron_dialect, \
                     time_zone, interval_us, start_at, params, enabled, next_fire_at, misfire_policy, \
                     misfire_threshold_us, max_catch_up, concurrency_policy, routing, timeout_us, max_retries, backoff, \
                     labels, version, created_at, updated_at) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?){RETURNING_ID}"
                ))
                .bind(raw.name.clone())
                .bind(raw.app)
                .bind(raw.handler)
                .bind(raw.description)
                .bind(raw.schedule_kind)
                .bind(raw.cron_expr)
                .bind(raw.cron_dialect)
                .bind(raw.time_zone)
                .bind(raw.interval_us)
                .bind(raw.start_at)
                .bind(raw.params)
                .bind(raw.enabled)
                .bind(task.next_fire_at.map(to_micros))
                .bind(raw.misfire_policy)
                .bind(raw.misfire_threshold_us)
                .bind(raw.max_catch_up)
                .bind(raw.concurrency_policy)
                .bind(raw.routing)
                .bind(raw.timeout_us)
                .bind(raw.max_retries)
                .bind(raw.backoff)
                .bind(raw.labels)
                .bind(to_micros(now))
                .bind(to_micros(now));
                let id = insert_id(&mut tx, q).await?;
                insert_task_event(&mut tx, id, &raw.name, now, TaskEventKind::Created, actor.caller, "created").await?;
                let created = fetch_task_by_id(&mut tx, id)
                    .await?
                    .ok_or_else(|| StoreError::Corrupt { table: "ax_task", reason: format!("task {id} vanished") })?;
                notify(&mut tx, Notice::Tasks).await?;
                tx.commit().await?;
                Ok(created)
            }

            async fn get_task(&self, name: &str) -> StoreResult<Option<Task>> {
                sqlx::query(sql!("SELECT {TASK_COLUMNS} FROM ax_task WHERE name = ?"))
                    .bind(name)
                    .fetch_optional(&self.pool)
                    .await?
                    .map(|r| read_task(&r))
                    .transpose()
            }

            async fn list_tasks(&self, app: Option<&str>, after_name: Option<&str>, limit: u32) -> StoreResult<Vec<Task>> {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(sql!("SELECT {TASK_COLUMNS} FROM ax_task WHERE 1 = 1"));
                if let Some(app) = app {
                    qb.push(" AND app = ").push_bind(app.to_owned());
                }
                if let Some(after) = after_name {
                    qb.push(" AND name > ").push_bind(after.to_owned());
                }
                qb.push(" ORDER BY name LIMIT ").push_bind(i64::from(limit));
                qb.build().fetch_all(&self.pool).await?.iter().map(read_task).collect()
            }

            async fn update_task(&self, u: &TaskUpdate, now: Ts, actor: &Actor<'_>) -> StoreResult<Option<Task>> {
                let raw = TaskRaw::from_config(u.id, "", &u.config);
                let mut tx = begin(&self.pool).await?;
                let (set_next, next) = match u.next_fire_at {
                    Some(n) => (true, n.map(to_micros)),
                    None => (false, None),
                };
                let res = sqlx::query(sql!(
                    "UPDATE ax_task SET app = ?, handler = ?, description = ?, schedule_kind = ?, cron_expr = ?, \
                     cron_dialect = ?, time_zone = ?, interval_us = ?, start_at = ?, params = ?, enabled = ?, \
                     next_fire_at = CASE WHEN ? THEN ? ELSE next_fire_at END, misfire_policy = ?, \
                     misfire_threshold_us = ?, max_catch_up = ?, concurrency_policy = ?, routing = ?, timeout_us = ?, \
                     max_retries = ?, backoff = ?, labels = ?, version = version + 1, updated_at = ? \
                     WHERE id = ? AND version = ?"
                ))
                .bind(raw.app)
                .bind(raw.handler)
                .bind(raw.description)
                .bind(raw.schedule_kind)
                .bind(raw.cron_expr)
                .bind(raw.cron_dialect)
                .bind(raw.time_zone)
                .bind(raw.interval_us)
                .bind(raw.start_at)
                .bind(raw.params)
                .bind(raw.enabled)
                .bind(set_next)
                .bind(next)
                .bind(raw.misfire_policy)
                .bind(raw.misfire_threshold_us)
                .bind(raw.max_catch_up)
                .bind(raw.concurrency_policy)
                .bind(raw.routing)
                .bind(raw.timeout_us)
                .bind(raw.max_retries)
                .bind(raw.backoff)
                .bind(raw.labels)
                .bind(to_micros(now))
                .bind(u.id)
                .bind(u.expected_version)
                .execute(&mut *tx)
                .await?;
                if res.rows_affected() == 0 {
                    return Ok(None);
                }
                let task = fetch_task_by_id(&mut tx, u.id).await?;
                if let Some(t) = &task {
                    insert_task_event(&mut tx, t.id, &t.name, now, u.event.0, actor.caller, &u.event.1).await?;
                }
                notify(&mut tx, Notice::Tasks).await?;
                tx.commit().await?;
                Ok(task)
            }

            async fn delete_task(&self, name: &str, now: Ts, actor: &Actor<'_>) -> StoreResult<Option<u64>> {
                let mut tx = begin(&self.pool).await?;
                let Some(row) = sqlx::query(sql!("SELECT id FROM ax_task WHERE name = ?{FOR_UPDATE}"))
                    .bind(name)
                    .fetch_optional(&mut *tx)
                    .await?
                else {
                    return Ok(None);
                };
                let id: i64 = row.try_get(0)?;
                let pending = sqlx::query(sql!(
                    "SELECT id, attempt FROM ax_instance WHERE task_id = ? AND status = 'PENDING'{FOR_UPDATE}"
                ))
                .bind(id)
                .fetch_all(&mut *tx)
                .await?;
                let reason = format!("task deleted by {}", actor.caller);
                let mut events = Vec::with_capacity(pending.len());
                for r in &pending {
                    let iid: i64 = r.$get(0)?;
                    let attempt: i32 = r.$get(1)?;
                    sqlx::query(sql!(
                        "UPDATE ax_instance SET status = 'CANCELED', finished_at = ?, updated_at = ?, message = ? \
                         WHERE id = ? AND status = 'PENDING'"
                    ))
                    .bind(to_micros(now))
                    .bind(to_micros(now))
                    .bind(reason.as_str())
                    .bind(iid)
                    .execute(&mut *tx)
                    .await?;
                    events.push(NewEvent {
                        instance_id: iid,
                        at: now,
                        from: Some(InstanceStatus::Pending),
                        to: InstanceStatus::Canceled,
                        attempt: u32::try_from(attempt).unwrap_or(0),
                        scheduler_id: actor.scheduler_id.to_owned(),
                        worker_id: String::new(),
                        reason: reason.clone(),
                    });
                }
                insert_events(&mut tx, &events).await?;
                sqlx::query(sql!("DELETE FROM ax_task WHERE id = ?")).bind(id).execute(&mut *tx).await?;
                insert_task_event(
                    &mut tx,
                    id,
                    name,
                    now,
                    TaskEventKind::Deleted,
                    actor.caller,
                    &format!("deleted; {} pending instance(s) canceled", pending.len()),
                )
                .await?;
                notify(&mut tx, Notice::Tasks).await?;
                tx.commit().await?;
                Ok(Some(pending.len() as u64))
            }

            async fn task_events(&self, task_id: i64, limit: u32) -> StoreResult<Vec<TaskEvent>> {
                let rows = sqlx::query(sql!(
                    "SELECT task_id, at, kind, actor, message FROM ax_task_event WHERE task_id = ? ORDER BY id DESC LIMIT ?"
                ))
                .bind(task_id)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        let kind: String = r.$get(2)?;
                        Ok(TaskEvent {
                            task_id: r.$get(0)?,
                            at: from_micros(r.$get(1)?),
                            kind: kind.parse().map_err(|e| StoreError::Corrupt { table: "ax_task_event", reason: e })?,
                            actor: r.$get(3)?,
                            message: r.$get(4)?,
                        })
                    })
                    .collect()
            }

            async fn next_wake_time(&self, lookahead: std::time::Duration) -> StoreResult<Option<Ts>> {
                let r = sqlx::query(sql!(
                    "SELECT (SELECT MIN(next_fire_at) FROM ax_task WHERE concurrency_policy = 'ALLOW' \
                     AND next_fire_at IS NOT NULL), (SELECT MIN(next_fire_at) FROM ax_task \
                     WHERE concurrency_policy = 'FORBID' AND next_fire_at IS NOT NULL)"
                ))
                .fetch_one(&self.pool)
                .await?;
                let allow: Option<i64> = r.$get(0)?;
                let forbid: Option<i64> = r.$get(1)?;
                let allow = allow.map(|t| crate::model::sub(from_micros(t), lookahead));
                let forbid = forbid.map(from_micros);
                Ok(match (allow, forbid) {
                    (Some(a), Some(f)) => Some(a.min(f)),
                    (a, f) => a.or(f),
                })
            }

            async fn trigger_due(
                &self,
                now: Ts,
                horizon: Ts,
                limit: u32,
                planner: &dyn Planner,
                scheduler_id: &str,
            ) -> StoreResult<TriggerRound> {
                let t0 = std::time::Instant::now();
                let mut tx = begin(&self.pool).await?;
                let rows = sqlx::query(sql!(
                    "SELECT {TASK_COLUMNS} FROM ax_task WHERE next_fire_at IS NOT NULL AND next_fire_at <= ? \
                     AND (concurrency_policy = 'ALLOW' OR next_fire_at <= ?) ORDER BY next_fire_at LIMIT ?{SKIP_LOCKED}"
                ))
                .bind(to_micros(horizon))
                .bind(to_micros(now))
                .bind(i64::from(limit))
                .fetch_all(&mut *tx)
                .await?;
                let mut round = TriggerRound { tasks: rows.len(), ..TriggerRound::default() };
                let mut tasks = Vec::with_capacity(rows.len());
                for r in &rows {
                    match read_task(r) {
                        Ok(t) => tasks.push(t),
                        Err(e) => {
                            // An unreadable row must not stall every other task: disable it, loudly.
                            let id: i64 = r.$get(0)?;
                            tracing::error!(task_id = id, error = %e, "disabling unreadable task");
                            sqlx::query(sql!("UPDATE ax_task SET enabled = FALSE, next_fire_at = NULL WHERE id = ?"))
                                .bind(id)
                                .execute(&mut *tx)
                                .await?;
                        }
                    }
                }
                let t_select = t0.elapsed();
                let mut planned: Vec<(usize, NewInstance)> = Vec::new();
                let mut next_fires: Vec<(i64, Option<i64>)> = Vec::with_capacity(tasks.len());
                for (ti, task) in tasks.iter().enumerate() {
                    match planner.plan(task) {
                        PlanDecision::Broken(why) => {
                            sqlx::query(sql!(
                                "UPDATE ax_task SET enabled = FALSE, next_fire_at = NULL, updated_at = ? WHERE id = ?"
                            ))
                            .bind(to_micros(now))
                            .bind(task.id)
                            .execute(&mut *tx)
                            .await?;
                            insert_task_event(
                                &mut tx,
                                task.id,
                                &task.name,
                                now,
                                TaskEventKind::ScheduleBroken,
                                scheduler_id,
                                &format!("disabled: {why}"),
                            )
                            .await?;
                        }
                        PlanDecision::Fire(plan) => {
                            let forbid = task.config.concurrency == crate::model::ConcurrencyPolicy::Forbid;
                            let mut active: Option<i64> = None;
                            if forbid && !plan.fires.is_empty() {
                                active = sqlx::query_scalar(sql!(
                                    "SELECT id FROM ax_instance WHERE task_id = ? \
                                     AND status IN ('PENDING', 'DISPATCHED', 'RUNNING') ORDER BY id LIMIT 1"
                                ))
                                .bind(task.id)
                                .fetch_optional(&mut *tx)
                                .await?;
                            }
                            let mut first_in_batch = true;
                            for f in &plan.fires {
                                let (status, reason) = if forbid && active.is_some() {
                                    (
                                        InstanceStatus::Skipped,
                                        format!(
                                            "not run: instance {} of this task is still active (concurrency FORBID)",
                                            active.unwrap_or_default()
                                        ),
                                    )
                                } else if forbid && !first_in_batch {
                                    (
                                        InstanceStatus::Skipped,
                                        "not run: an earlier fire of this round is still active (concurrency FORBID)"
                                            .to_owned(),
                                    )
                                } else {
                                    let why = match f.source {
                                        InstanceSource::CatchUp => format!(
                                            "misfire catch-up ({}) for the fire at {}",
                                            task.config.misfire_policy,
                                            f.fire_at.to_rfc3339()
                                        ),
                                        _ => format!("fired on schedule for {}", f.fire_at.to_rfc3339()),
                                    };
                                    (InstanceStatus::Pending, why)
                                };
                                first_in_batch = false;
                                planned.push((
                                    ti,
                                    NewInstance {
                                        fire_at: f.fire_at,
                                        available_at: f.fire_at,
                                        key: crate::schedule::fire_key(f.fire_at),
                                        source: f.source,
                                        status,
                                        params: task.config.params.clone(),
                                        reason,
                                    },
                                ));
                            }
                            next_fires.push((task.id, plan.next_fire_at.map(to_micros)));
                            for (kind, message) in &plan.events {
                                insert_task_event(&mut tx, task.id, &task.name, now, *kind, scheduler_id, message).await?;
                            }
                        }
                    }
                }
                let t_plan = t0.elapsed();
                set_next_fires(&mut tx, &next_fires).await?;
                let t_next = t0.elapsed();
                let rows: Vec<InstanceRow<'_>> =
                    planned.iter().map(|(ti, n)| InstanceRow { task: &tasks[*ti], new: n }).collect();
                let inserted = create_instances(&mut tx, &rows, now).await?;
                let t_create = t0.elapsed();
                let by_key: HashMap<(i64, &str), (usize, &NewInstance)> =
                    planned.iter().map(|(ti, n)| ((tasks[*ti].id, n.key.as_str()), (*ti, n))).collect();
                let mut events = Vec::with_capacity(inserted.len());
                for (id, task_id, key) in &inserted {
                    let Some((ti, n)) = by_key.get(&(*task_id, key.as_str())).copied() else { continue };
                    if n.status == InstanceStatus::Skipped {
                        round.skipped += 1;
                    } else {
                        round.created.push((*id, tasks[ti].config.app.clone(), n.available_at));
                    }
                    events.push(NewEvent {
                        instance_id: *id,
                        at: now,
                        from: None,
                        to: n.status,
                        attempt: 0,
                        scheduler_id: scheduler_id.to_owned(),
                        worker_id: String::new(),
                        reason: n.reason.clone(),
                    });
                }
                insert_events(&mut tx, &events).await?;
                if !round.created.is_empty() {
                    notify(&mut tx, Notice::Work).await?;
                }
                let t_events = t0.elapsed();
                tx.commit().await?;
                tracing::debug!(
                    tasks = round.tasks,
                    instances = events.len(),
                    took_us = t0.elapsed().as_micros() as u64,
                    select_us = t_select.as_micros() as u64,
                    plan_us = (t_plan - t_select).as_micros() as u64,
                    next_fires_us = (t_next - t_plan).as_micros() as u64,
                    instances_us = (t_create - t_next).as_micros() as u64,
                    events_us = (t_events - t_create).as_micros() as u64,
                    commit_us = (t0.elapsed() - t_events).as_micros() as u64,
                    "trigger_due"
                );
                Ok(round)
            }

            async fn trigger_manual(
                &self,
                task: &Task,
                trigger: &ManualTrigger,
                now: Ts,
                scheduler_id: &str,
            ) -> StoreResult<(Instance, bool)> {
                let new = NewInstance {
                    fire_at: now,
                    available_at: now,
                    key: trigger.key.clone(),
                    source: InstanceSource::Manual,
                    status: InstanceStatus::Pending,
                    params: trigger.params.clone(),
                    reason: format!("triggered by {}", trigger.actor),
                };
                let mut tx = begin(&self.pool).await?;
                let created = match create_instances(&mut tx, &[InstanceRow { task, new: &new }], now).await {
                    Ok(v) => v.first().map(|(id, _, _)| *id),
                    // Another trigger with the same key committed first: it made the one instance.
                    // The transaction is dropped (rolled back) unused.
                    Err(StoreError::UniqueViolation(_)) => None,
                    Err(e) => return Err(e),
                };
                if let Some(id) = created {
                    insert_events(
                        &mut tx,
                        &[NewEvent {
                            instance_id: id,
                            at: now,
                            from: None,
                            to: InstanceStatus::Pending,
                            attempt: 0,
                            scheduler_id: scheduler_id.to_owned(),
                            worker_id: String::new(),
                            reason: new.reason.clone(),
                        }],
                    )
                    .await?;
                    notify(&mut tx, Notice::Work).await?;
                    tx.commit().await?;
                } else {
                    drop(tx);
                }
                let row = sqlx::query(sql!(
                    "SELECT {INSTANCE_COLUMNS} FROM ax_instance WHERE id = \
                     (SELECT instance_id FROM ax_instance_key WHERE task_id = ? AND idempotency_key = ?)"
                ))
                .bind(task.id)
                .bind(trigger.key.as_str())
                .fetch_one(&self.pool)
                .await?;
                Ok((read_instance(&row)?, created.is_some()))
            }

            async fn get_instance(&self, id: i64) -> StoreResult<Option<Instance>> {
                sqlx::query(sql!("SELECT {INSTANCE_COLUMNS} FROM ax_instance WHERE id = ?"))
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?
                    .map(|r| read_instance(&r))
                    .transpose()
            }

            async fn list_instances(&self, f: &InstanceFilter) -> StoreResult<Vec<Instance>> {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(sql!("SELECT {INSTANCE_COLUMNS} FROM ax_instance"));
                if let Some(name) = &f.task_name {
                    // A task's instances by their key rows (indexed by task name and id); the page
                    // of ids is picked in a derived table and joined back.
                    qb.push(" JOIN (SELECT k.instance_id AS page_id FROM ax_instance_key k");
                    if f.status.is_some() {
                        qb.push(" JOIN ax_instance s ON s.id = k.instance_id");
                    }
                    qb.push(" WHERE k.task_name = ").push_bind(name.clone());
                    if let Some(s) = f.status {
                        qb.push(" AND s.status = ").push_bind(s.as_str());
                    }
                    if let Some(before) = f.before_id {
                        qb.push(" AND k.instance_id < ").push_bind(before);
                    }
                    qb.push(" ORDER BY k.instance_id DESC LIMIT ").push_bind(i64::from(f.limit));
                    qb.push(") page ON ax_instance.id = page.page_id");
                } else {
                    qb.push(" WHERE 1 = 1");
                    if let Some(s) = f.status {
                        qb.push(" AND status = ").push_bind(s.as_str());
                    }
                    if let Some(before) = f.before_id {
                        qb.push(" AND id < ").push_bind(before);
                    }
                }
                qb.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(f.limit));
                qb.build().fetch_all(&self.pool).await?.iter().map(read_instance).collect()
            }

            async fn instance_events(&self, id: i64) -> StoreResult<Vec<InstanceEvent>> {
                sqlx::query(sql!("SELECT {EVENT_COLUMNS} FROM ax_instance_event WHERE instance_id = ? ORDER BY id"))
                    .bind(id)
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(read_event)
                    .collect()
            }

            async fn cancel_instance(&self, id: i64, reason: &str, now: Ts, actor: &Actor<'_>) -> StoreResult<CancelOutcome> {
                let mut tx = begin(&self.pool).await?;
                let mut rows = lock_instances(&mut tx, &[id]).await?;
                let Some(inst) = rows.get_mut(&id) else { return Ok(CancelOutcome::NotFound) };
                let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
                let Some(fx) = crate::lifecycle::cancel(inst, reason, actor.caller, ctx) else {
                    return Ok(CancelOutcome::AlreadyFinal(inst.clone()));
                };
                let mut batch = Batch::default();
                batch.add(id, fx);
                persist(&mut tx, &rows, batch, ctx).await?;
                tx.commit().await?;
                Ok(CancelOutcome::Canceled(rows.remove(&id).expect("locked above")))
            }

            async fn retry_instance(&self, id: i64, now: Ts, actor: &Actor<'_>) -> StoreResult<RetryOutcome> {
                let mut tx = begin(&self.pool).await?;
                let mut rows = lock_instances(&mut tx, &[id]).await?;
                let Some(inst) = rows.get_mut(&id) else { return Ok(RetryOutcome::NotFound) };
                let ctx = Ctx { now, scheduler_id: actor.scheduler_id };
                let Some(fx) = crate::lifecycle::retry(inst, actor.caller, ctx) else {
                    return Ok(RetryOutcome::NotFinal(inst.clone()));
                };
                let mut batch = Batch::default();
                batch.add(id, fx);
                persist(&mut tx, &rows, batch, ctx).await?;
                tx.commit().await?;
                Ok(RetryOutcome::Retried(rows.remove(&id).expect("locked above")))
            }

            async fn instance_logs(&self, id: i64, after_seq: i64, limit: u32) -> StoreResult<(Vec<LogLine>, u64)> {
                let rows = sqlx::query(sql!(
                    "SELECT id, attempt, level, at, message FROM ax_instance_log WHERE instance_id = ? AND id > ? \
                     ORDER BY id LIMIT ?"
                ))
                .bind(id)
                .bind(after_seq)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?;
                let lines = rows
                    .iter()
                    .map(|r| {
                        Ok(LogLine {
                            seq: r.$get(0)?,
                            attempt: u32::try_from(r.$get::<i32, _>(1)?).unwrap_or(0),
                            level: r.$get(2)?,
                            at: from_micros(r.$get(3)?),
                            message: r.$get(4)?,
                        })
                    })
                    .collect::<StoreResult<Vec<_>>>()?;
                let dropped: Option<i64> = sqlx::query_scalar(sql!("SELECT log_dropped FROM ax_instance WHERE id = ?"))
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                Ok((lines, u64::try_from(dropped.unwrap_or(0)).unwrap_or(0)))
            }

            async fn heartbeat_scheduler(&self, s: &SchedulerRecord) -> StoreResult<()> {
                sqlx::query(sql!(UPSERT_SCHEDULER))
                    .bind(s.scheduler_id.as_str())
                    .bind(s.host.as_str())
                    .bind(s.address.as_str())
                    .bind(s.version.as_str())
                    .bind(to_micros(s.started_at))
                    .bind(to_micros(s.heartbeat_at))
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn remove_scheduler(&self, scheduler_id: &str) -> StoreResult<()> {
                sqlx::query(sql!("DELETE FROM ax_scheduler WHERE scheduler_id = ?"))
                    .bind(scheduler_id)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn list_schedulers(&self) -> StoreResult<Vec<SchedulerRecord>> {
                let rows = sqlx::query(sql!(
                    "SELECT scheduler_id, host, address, version, started_at, heartbeat_at FROM ax_scheduler ORDER BY scheduler_id"
                ))
                .fetch_all(&self.pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        Ok(SchedulerRecord {
                            scheduler_id: r.$get(0)?,
                            host: r.$get(1)?,
                            address: r.$get(2)?,
                            version: r.$get(3)?,
                            started_at: from_micros(r.$get(4)?),
                            heartbeat_at: from_micros(r.$get(5)?),
                        })
                    })
                    .collect()
            }

            async fn list_workers(&self, app: Option<&str>) -> StoreResult<Vec<WorkerRecord>> {
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(format!("SELECT {WORKER_COLUMNS} FROM ax_worker WHERE 1 = 1"));
                if let Some(app) = app {
                    qb.push(" AND app = ").push_bind(app.to_owned());
                }
                qb.push(" ORDER BY app, worker_id, session_id");
                qb.build().fetch_all(&self.pool).await?.iter().map(read_worker).collect()
            }

            async fn cluster_stats(&self, alive_since: Ts) -> StoreResult<ClusterStats> {
                let mut stats = ClusterStats::default();
                let (tasks, enabled): (i64, i64) = {
                    let r = sqlx::query(sql!(
                        "SELECT COUNT(*), COUNT(CASE WHEN enabled THEN 1 END) FROM ax_task"
                    ))
                    .fetch_one(&self.pool)
                    .await?;
                    (r.$get(0)?, r.$get(1)?)
                };
                stats.tasks = u64::try_from(tasks).unwrap_or(0);
                stats.enabled_tasks = u64::try_from(enabled).unwrap_or(0);
                for r in sqlx::query(sql!("SELECT status, COUNT(*) FROM ax_instance GROUP BY status"))
                    .fetch_all(&self.pool)
                    .await?
                {
                    let s: String = r.$get(0)?;
                    let n: i64 = r.$get(1)?;
                    let status: InstanceStatus =
                        s.parse().map_err(|e| StoreError::Corrupt { table: "ax_instance", reason: e })?;
                    stats.instances.insert(status, u64::try_from(n).unwrap_or(0));
                }
                let workers: i64 = sqlx::query_scalar(sql!(
                    "SELECT COUNT(*) FROM ax_worker w JOIN ax_scheduler s ON w.scheduler_id = s.scheduler_id \
                     WHERE s.heartbeat_at >= ?"
                ))
                .bind(to_micros(alive_since))
                .fetch_one(&self.pool)
                .await?;
                stats.workers = u64::try_from(workers).unwrap_or(0);
                let scheds: i64 = sqlx::query_scalar(sql!("SELECT COUNT(*) FROM ax_scheduler WHERE heartbeat_at >= ?"))
                    .bind(to_micros(alive_since))
                    .fetch_one(&self.pool)
                    .await?;
                stats.schedulers = u64::try_from(scheds).unwrap_or(0);
                Ok(stats)
            }

            async fn purge_dead_schedulers(&self, dead_before: Ts) -> StoreResult<u64> {
                let mut tx = begin(&self.pool).await?;
                let ids: Vec<String> = sqlx::query(sql!(
                    "SELECT scheduler_id FROM ax_scheduler WHERE heartbeat_at < ? ORDER BY scheduler_id LIMIT 100{SKIP_LOCKED}"
                ))
                .bind(to_micros(dead_before))
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|r| r.$get(0))
                .collect::<Result<_, _>>()?;
                for id in &ids {
                    sqlx::query(sql!("DELETE FROM ax_worker WHERE scheduler_id = ?")).bind(id.as_str()).execute(&mut *tx).await?;
                    sqlx::query(sql!("DELETE FROM ax_command WHERE scheduler_id = ?")).bind(id.as_str()).execute(&mut *tx).await?;
                    sqlx::query(sql!("DELETE FROM ax_scheduler WHERE scheduler_id = ?")).bind(id.as_str()).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(ids.len() as u64)
            }

            async fn open_session(
                &self,
                w: &WorkerRecord,
                in_flight: &[(i64, u32)],
                now: Ts,
                lease_until: Ts,
            ) -> StoreResult<Reopened> {
                let mut tx = begin(&self.pool).await?;
                sqlx::query(sql!(
                    "INSERT INTO ax_worker (session_id, worker_id, app, handlers, capacity, credits, in_flight, labels, \
                     scheduler_id, client, connected_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                ))
                .bind(w.session_id.as_str())
                .bind(w.worker_id.as_str())
                .bind(w.app.as_str())
                .bind(encode_list(&w.handlers))
                .bind(i32_of(w.capacity))
                .bind(i32_of(w.credits))
                .bind(i32_of(w.in_flight))
                .bind(encode_labels(&w.labels))
                .bind(w.scheduler_id.as_str())
                .bind(w.client.as_str())
                .bind(to_micros(w.connected_at))
                .bind(to_micros(w.last_seen_at))
                .execute(&mut *tx)
                .await?;
                let mut ids: Vec<i64> = in_flight.iter().map(|(id, _)| *id).collect();
                ids.sort_unstable();
                ids.dedup();
                let mut rows = lock_instances(&mut tx, &ids).await?;
                let ctx = Ctx { now, scheduler_id: &w.scheduler_id };
                let mut batch = Batch::default();
                let mut out = Reopened::default();
                let mut others = Vec::new();
                for &(id, attempt) in in_flight {
                    let Some(inst) = rows.get_mut(&id) else { continue };
                    let (ours, fx) = crate::lifecycle::readopt(inst, attempt, &w.worker_id, &w.app, &w.session_id, lease_until, ctx);
                    batch.add(id, fx);
                    if ours {
                        out.adopted.push((id, attempt));
                    } else if inst.app == w.app {
                        others.push((id, attempt));
                    }
                }
                // Released attempts that were assigned to this worker (their DISPATCHED event names
                // it): a result it still holds for them is recorded as a late result.
                for chunk in others.chunks(BATCH) {
                    let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(
                        "SELECT instance_id, attempt FROM ax_instance_event WHERE to_status = 'DISPATCHED' AND worker_id = ",
                    );
                    qb.push_bind(w.worker_id.clone()).push(" AND instance_id IN ");
                    push_ids(&mut qb, &chunk.iter().map(|(id, _)| *id).collect::<Vec<_>>());
                    let wanted: std::collections::HashSet<(i64, u32)> = chunk.iter().copied().collect();
                    for r in qb.build().fetch_all(&mut *tx).await? {
                        let key = (r.$get::<i64, _>(0)?, u32::try_from(r.$get::<i32, _>(1)?).unwrap_or(0));
                        if wanted.contains(&key) && !out.released_to_worker.contains(&key) {
                            out.released_to_worker.push(key);
                        }
                    }
                }
                persist(&mut tx, &rows, batch, ctx).await?;
                tx.commit().await?;
                Ok(out)
            }

            async fn close_session(&self, session_id: &str, reason: &str, now: Ts, grace_until: Ts, scheduler_id: &str) -> StoreResult<()> {
                let mut tx = begin(&self.pool).await?;
                let ids: Vec<i64> = sqlx::query_scalar(sql!(
                    "SELECT id FROM ax_instance WHERE session_id = ? AND status IN ('DISPATCHED', 'RUNNING') ORDER BY id"
                ))
                .bind(session_id)
                .fetch_all(&mut *tx)
                .await?;
                let mut rows = lock_instances(&mut tx, &ids).await?;
                let ctx = Ctx { now, scheduler_id };
                let mut batch = Batch::default();
                for (id, inst) in rows.iter_mut() {
                    batch.add(*id, crate::lifecycle::session_ended(inst, session_id, reason, grace_until, ctx));
                }
                persist(&mut tx, &rows, batch, ctx).await?;
                sqlx::query(sql!("DELETE FROM ax_worker WHERE session_id = ?")).bind(session_id).execute(&mut *tx).await?;
                tx.commit().await?;
                Ok(())
            }

            async fn sync_sessions(
                &self,
                sessions: &[SessionSync],
                renew: &[crate::registry::Renewal],
                lease_until: Ts,
            ) -> StoreResult<()> {
                if sessions.is_empty() {
                    return Ok(());
                }
                // The accepted attempts of live sessions: still DISPATCHED (Accepted not yet
                // written) or RUNNING, on one of these sessions. A row that moved to another live
                // session of this axd (the worker reconnected here) may be renewed through the old
                // session's list: it is held by a live stream either way.
                let mut pairs: Vec<(&str, i64)> =
                    renew.iter().flat_map(|r| r.instance_ids.iter().map(move |id| (r.session_id.as_str(), *id))).collect();
                pairs.sort_unstable_by_key(|(_, id)| *id);
                for chunk in pairs.chunks(BATCH) {
                    let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new("UPDATE ax_instance SET lease_expires_at = ");
                    qb.push_bind(to_micros(lease_until))
                        .push(" WHERE status IN ('DISPATCHED', 'RUNNING') AND lease_expires_at < ")
                        .push_bind(to_micros(lease_until))
                        .push(" AND id IN ");
                    push_ids(&mut qb, &chunk.iter().map(|(_, id)| *id).collect::<Vec<_>>());
                    let mut sids: Vec<String> = chunk.iter().map(|(s, _)| (*s).to_owned()).collect();
                    sids.sort_unstable();
                    sids.dedup();
                    qb.push(" AND session_id IN ");
                    push_strs(&mut qb, &sids);
                    qb.build().execute(&self.pool).await?;
                }
                // One commit per BATCH sessions, not one per session: at 10,000 streams the commits
                // were most of axd's heartbeat cost. (Chunks keep each transaction short.)
                for chunk in sessions.chunks(BATCH) {
                    let mut tx = begin(&self.pool).await?;
                    for s in chunk {
                        sqlx::query(sql!(
                            "UPDATE ax_worker SET credits = ?, in_flight = ?, last_seen_at = ? WHERE session_id = ?"
                        ))
                        .bind(i32_of(s.credits))
                        .bind(i32_of(s.in_flight))
                        .bind(to_micros(s.last_seen_at))
                        .bind(s.session_id.as_str())
                        .execute(&mut *tx)
                        .await?;
                    }
                    tx.commit().await?;
                }
                Ok(())
            }

            async fn claim_ready(
                &self,
                now: Ts,
                demand: &[AppDemand],
                lease_until: Ts,
                scheduler_id: &str,
                route: &mut (dyn for<'r> FnMut(&'r ReadyInstance) -> Option<SessionRef> + Send),
            ) -> StoreResult<Vec<Assignment>> {
                let t0 = std::time::Instant::now();
                let mut tx = begin(&self.pool).await?;
                let t_begin = t0.elapsed();
                let mut chosen: Vec<(Instance, SessionRef)> = Vec::new();
                for d in demand {
                    if d.limit == 0 || d.handlers.is_empty() {
                        continue;
                    }
                    for inst in select_ready(&mut tx, &d.app, &d.handlers, d.until.max(now), d.limit).await? {
                        let ready = ReadyInstance {
                            id: inst.id,
                            app: inst.app.clone(),
                            handler: inst.handler.clone(),
                            routing: inst.routing,
                            attempt: inst.attempt,
                            early: inst.available_at > now,
                        };
                        if let Some(s) = route(&ready) {
                            chosen.push((inst, s));
                        }
                    }
                }
                if chosen.is_empty() {
                    return Ok(Vec::new());
                }
                let t_select = t0.elapsed();
                let mut by_session: HashMap<String, (String, Vec<i64>)> = HashMap::new();
                for (inst, s) in &chosen {
                    by_session.entry(s.session_id.clone()).or_insert_with(|| (s.worker_id.clone(), Vec::new())).1.push(inst.id);
                }
                for (session, (worker, ids)) in &by_session {
                    mark_dispatched(&mut tx, session, worker, scheduler_id, lease_until, now, ids).await?;
                }
                let mut events = Vec::with_capacity(chosen.len());
                let mut out = Vec::with_capacity(chosen.len());
                for (mut inst, s) in chosen {
                    let at = now.max(inst.updated_at);
                    inst.status = InstanceStatus::Dispatched;
                    inst.attempt += 1;
                    inst.session_id = Some(s.session_id.clone());
                    inst.worker_id = Some(s.worker_id.clone());
                    inst.scheduler_id = Some(scheduler_id.to_owned());
                    inst.lease_expires_at = Some(lease_until);
                    inst.updated_at = at;
                    events.push(NewEvent {
                        instance_id: inst.id,
                        at,
                        from: Some(InstanceStatus::Pending),
                        to: InstanceStatus::Dispatched,
                        attempt: inst.attempt,
                        scheduler_id: scheduler_id.to_owned(),
                        worker_id: s.worker_id.clone(),
                        reason: if inst.available_at > now {
                            format!(
                                "assigned to worker {} (session {}) ahead of time, to start at {}",
                                s.worker_id,
                                s.session_id,
                                inst.available_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
                            )
                        } else {
                            format!("assigned to worker {} (session {})", s.worker_id, s.session_id)
                        },
                    });
                    out.push(Assignment { instance: inst, session_id: s.session_id });
                }
                let t_mark = t0.elapsed();
                insert_events(&mut tx, &events).await?;
                let t_events = t0.elapsed();
                tx.commit().await?;
                tracing::debug!(
                    rows = out.len(),
                    begin_us = t_begin.as_micros() as u64,
                    select_us = (t_select - t_begin).as_micros() as u64,
                    mark_us = (t_mark - t_select).as_micros() as u64,
                    events_us = (t_events - t_mark).as_micros() as u64,
                    commit_us = (t0.elapsed() - t_events).as_micros() as u64,
                    "claim_ready"
                );
                Ok(out)
            }

            async fn next_available(&self, apps: &[String]) -> StoreResult<Option<Ts>> {
                if apps.is_empty() {
                    return Ok(None);
                }
                let mut qb: QueryBuilder<'_, $db> =
                    QueryBuilder::new(sql!("SELECT MIN(available_at) FROM ax_instance{READY_INDEX} WHERE status = 'PENDING' AND app IN "));
                push_strs(&mut qb, apps);
                let v: Option<i64> = qb.build().fetch_one(&self.pool).await?.try_get(0)?;
                Ok(v.map(from_micros))
            }



            async fn apply_worker_ops(
                &self,
                ops: &[WorkerOp],
                now: Ts,
                lease_until: Ts,
                scheduler_id: &str,
            ) -> StoreResult<Vec<WorkerOpOutcome>> {
                let mut ids: Vec<i64> = ops.iter().map(WorkerOp::instance_id).collect();
                ids.sort_unstable();
                ids.dedup();
                let t0 = std::time::Instant::now();
                let mut tx = begin(&self.pool).await?;
                let t1 = t0.elapsed();
                let mut rows = lock_instances(&mut tx, &ids).await?;
                let t2 = t0.elapsed();
                let ctx = Ctx { now, scheduler_id };
                let mut batch = Batch::default();
                let mut outcomes = Vec::with_capacity(ops.len());
                for op in ops {
                    let id = op.instance_id();
                    let Some(inst) = rows.get_mut(&id) else {
                        let why = format!("instance {id} does not exist");
                        outcomes.push(match op {
                            WorkerOp::Accepted { .. } => WorkerOpOutcome::Accepted(AcceptOutcome::NotCurrent(why)),
                            WorkerOp::Result(_) => WorkerOpOutcome::Result(CompleteOutcome::Ignored(why)),
                            WorkerOp::Reject { .. } => WorkerOpOutcome::Rejected(false),
                        });
                        continue;
                    };
                    let (outcome, fx) = match op {
                        WorkerOp::Accepted { attempt, session_id, .. } => {
                            let (o, fx) = crate::lifecycle::accept(inst, *attempt, session_id, lease_until, ctx);
                            (WorkerOpOutcome::Accepted(o), fx)
                        }
                        WorkerOp::Result(c) => {
                            let (o, fx) = crate::lifecycle::complete(inst, c, ctx, fastrand::f64());
                            (WorkerOpOutcome::Result(o), fx)
                        }
                        WorkerOp::Reject { attempt, session_id, reason, .. } => {
                            let (o, fx) = crate::lifecycle::reject(inst, *attempt, session_id, reason, ctx);
                            (WorkerOpOutcome::Rejected(o), fx)
                        }
                    };
                    batch.add(id, fx);
                    outcomes.push(outcome);
                }
                let t3 = t0.elapsed();
                persist(&mut tx, &rows, batch, ctx).await?;
                let t4 = t0.elapsed();
                tx.commit().await?;
                tracing::debug!(ops = ops.len(), begin = ?t1, lock = ?(t2 - t1), decide = ?(t3 - t2), persist = ?(t4 - t3), commit = ?(t0.elapsed() - t4), "apply_worker_ops");
                Ok(outcomes)
            }

            async fn record_progress(&self, id: i64, attempt: u32, session_id: &str, percent: u32, message: &str, now: Ts) -> StoreResult<()> {
                sqlx::query(sql!(
                    "UPDATE ax_instance SET progress_percent = ?, progress_message = ?, updated_at = ? \
                     WHERE id = ? AND attempt = ? AND session_id = ? AND status IN ('DISPATCHED', 'RUNNING')"
                ))
                .bind(i32_of(percent.min(100)))
                .bind(message)
                .bind(to_micros(now))
                .bind(id)
                .bind(i32_of(attempt))
                .bind(session_id)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn append_log(&self, id: i64, attempt: u32, app: &str, level: &str, at: Ts, message: &str) -> StoreResult<()> {
                let mut tx = begin(&self.pool).await?;
                let kept = sqlx::query(sql!(
                    "UPDATE ax_instance SET log_count = log_count + 1 WHERE id = ? AND app = ? AND log_count < 1000"
                ))
                .bind(id)
                .bind(app)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if kept == 1 {
                    sqlx::query(sql!(
                        "INSERT INTO ax_instance_log (instance_id, attempt, level, at, message) VALUES (?, ?, ?, ?, ?)"
                    ))
                    .bind(id)
                    .bind(i32_of(attempt))
                    .bind(level)
                    .bind(to_micros(at))
                    .bind(message)
                    .execute(&mut *tx)
                    .await?;
                } else {
                    sqlx::query(sql!("UPDATE ax_instance SET log_dropped = log_dropped + 1 WHERE id = ? AND app = ?"))
                        .bind(id)
                        .bind(app)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(())
            }

            async fn sweep(&self, now: Ts, limit: u32, scheduler_id: &str) -> StoreResult<SweepReport> {
                let mut tx = begin(&self.pool).await?;
                let ctx = Ctx { now, scheduler_id };
                // Attempts never accepted in time, past their run deadline, or whose worker stopped
                // renewing the lease; each claimed with SKIP LOCKED so several axd share the work.
                let acks = claim_instances(
                    &mut tx,
                    sql!("SELECT {INSTANCE_COLUMNS} FROM ax_instance WHERE status = 'DISPATCHED' AND lease_expires_at < ? \
                          ORDER BY lease_expires_at LIMIT ?{SKIP_LOCKED}"),
                    now,
                    limit,
                )
                .await?;
                let timeouts = claim_instances(
                    &mut tx,
                    sql!("SELECT {INSTANCE_COLUMNS} FROM ax_instance WHERE status = 'RUNNING' AND deadline_at < ? \
                          ORDER BY deadline_at LIMIT ?{SKIP_LOCKED}"),
                    now,
                    limit,
                )
                .await?;
                let lost = claim_instances(
                    &mut tx,
                    sql!("SELECT {INSTANCE_COLUMNS} FROM ax_instance WHERE status = 'RUNNING' AND lease_expires_at < ? \
                          ORDER BY lease_expires_at LIMIT ?{SKIP_LOCKED}"),
                    now,
                    limit,
                )
                .await?;
                let report = SweepReport { ack_timeouts: acks.len(), timeouts: timeouts.len(), lost: lost.len(), purged: 0 };
                let mut rows: HashMap<i64, Instance> = HashMap::new();
                let mut batch = Batch::default();
                for i in acks {
                    let id = i.id;
                    let inst = rows.entry(id).or_insert(i);
                    batch.add(id, crate::lifecycle::expire_ack(inst, ctx));
                }
                for i in timeouts {
                    let id = i.id;
                    let inst = rows.entry(id).or_insert(i);
                    batch.add(id, crate::lifecycle::time_out(inst, ctx, fastrand::f64()));
                }
                for i in lost {
                    let id = i.id;
                    // A row timed out above is no longer RUNNING; `lose` leaves it alone.
                    let inst = rows.entry(id).or_insert(i);
                    batch.add(id, crate::lifecycle::lose(inst, ctx, fastrand::f64()));
                }
                persist(&mut tx, &rows, batch, ctx).await?;
                tx.commit().await?;
                Ok(report)
            }

            async fn next_deadline(&self) -> StoreResult<Option<Ts>> {
                let r = sqlx::query(sql!(
                    "SELECT (SELECT MIN(lease_expires_at) FROM ax_instance WHERE status IN ('DISPATCHED', 'RUNNING')), \
                     (SELECT MIN(deadline_at) FROM ax_instance WHERE status = 'RUNNING')"
                ))
                .fetch_one(&self.pool)
                .await?;
                let a: Option<i64> = r.$get(0)?;
                let b: Option<i64> = r.$get(1)?;
                Ok(match (a, b) {
                    (Some(a), Some(b)) => Some(from_micros(a.min(b))),
                    (a, b) => a.or(b).map(from_micros),
                })
            }

            async fn purge_finished(&self, before: Ts, limit: u32) -> StoreResult<u64> {
                let mut tx = begin(&self.pool).await?;
                let rows = sqlx::query(sql!(
                    "SELECT id, task_id, idempotency_key FROM ax_instance WHERE finished_at IS NOT NULL \
                     AND finished_at < ? ORDER BY id LIMIT ?{SKIP_LOCKED}"
                ))
                .bind(to_micros(before))
                .bind(i64::from(limit))
                .fetch_all(&mut *tx)
                .await?;
                if rows.is_empty() {
                    return Ok(0);
                }
                let mut ids = Vec::with_capacity(rows.len());
                let mut keys = Vec::with_capacity(rows.len());
                for r in &rows {
                    ids.push(r.$get::<i64, _>(0)?);
                    keys.push((r.$get::<i64, _>(1)?, r.$get::<String, _>(2)?));
                }
                // The keys go with their instances: after retention a key can be used again.
                for chunk in keys.chunks(BATCH) {
                    let mut qb: QueryBuilder<'_, $db> =
                        QueryBuilder::new("DELETE FROM ax_instance_key WHERE (task_id, idempotency_key) IN ");
                    push_key_pairs(&mut qb, chunk.iter().map(|(t, k)| (*t, k.as_str())));
                    qb.build().execute(&mut *tx).await?;
                }
                for table in ["DELETE FROM ax_instance_event WHERE instance_id IN ", "DELETE FROM ax_instance_log WHERE instance_id IN ", "DELETE FROM ax_instance WHERE id IN "] {
                    for chunk in ids.chunks(BATCH) {
                        let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new(table);
                        push_ids(&mut qb, chunk);
                        qb.build().execute(&mut *tx).await?;
                    }
                }
                tx.commit().await?;
                Ok(ids.len() as u64)
            }

            async fn take_commands(&self, scheduler_id: &str, limit: u32) -> StoreResult<Vec<Command>> {
                let mut tx = begin(&self.pool).await?;
                let rows = sqlx::query(sql!(
                    "SELECT id, session_id, instance_id, attempt, reason FROM ax_command WHERE scheduler_id = ? \
                     ORDER BY id LIMIT ?{SKIP_LOCKED}"
                ))
                .bind(scheduler_id)
                .bind(i64::from(limit))
                .fetch_all(&mut *tx)
                .await?;
                if rows.is_empty() {
                    return Ok(Vec::new());
                }
                let mut ids = Vec::with_capacity(rows.len());
                let mut out = Vec::with_capacity(rows.len());
                for r in &rows {
                    ids.push(r.$get::<i64, _>(0)?);
                    out.push(Command {
                        scheduler_id: scheduler_id.to_owned(),
                        session_id: r.$get(1)?,
                        instance_id: r.$get(2)?,
                        attempt: u32::try_from(r.$get::<i32, _>(3)?).unwrap_or(0),
                        reason: r.$get(4)?,
                    });
                }
                let mut qb: QueryBuilder<'_, $db> = QueryBuilder::new("DELETE FROM ax_command WHERE id IN ");
                push_ids(&mut qb, &ids);
                qb.build().execute(&mut *tx).await?;
                tx.commit().await?;
                Ok(out)
            }
        }
    };
}
pub(crate) use impl_store;

/// The hot-path hooks in their portable form, for backends without array parameters (SQLite and
/// MySQL): each one calls the multi-row `*_generic` statement that `impl_store!` defines.
/// PostgreSQL writes its own with `UNNEST` arrays instead.
macro_rules! portable_hot_path {
    ($db:ty) => {
        /// Inserts instances (a [`BATCH`] at most, keys checked to be new) with the backend's
        /// `insert_instance_rows`, then their key rows; returns (id, task_id, key).
        async fn insert_instances_with_keys(
            tx: &mut Tx,
            fresh: &[&InstanceRow<'_>],
            now: Ts,
        ) -> StoreResult<Vec<(i64, i64, String)>> {
            let created = insert_instance_rows(tx, fresh, now).await?;
            let names: HashMap<i64, &str> = fresh.iter().map(|r| (r.task.id, r.task.name.as_str())).collect();
            let mut qb: QueryBuilder<'_, $db> =
                QueryBuilder::new("INSERT INTO ax_instance_key (task_id, idempotency_key, task_name, instance_id) ");
            qb.push_values(&created, |mut b, (id, task_id, key)| {
                b.push_bind(*task_id)
                    .push_bind(key.clone())
                    .push_bind(names.get(task_id).copied().unwrap_or_default().to_owned())
                    .push_bind(*id);
            });
            qb.build().execute(&mut **tx).await?;
            Ok(created)
        }

        async fn set_next_fires(tx: &mut Tx, next: &[(i64, Option<i64>)]) -> StoreResult<()> {
            set_next_fires_generic(tx, next).await
        }

        async fn existing_keys(
            tx: &mut Tx,
            rows: &[InstanceRow<'_>],
        ) -> StoreResult<std::collections::HashSet<(i64, String)>> {
            existing_keys_generic(tx, rows).await
        }

        async fn insert_events(tx: &mut Tx, events: &[NewEvent]) -> StoreResult<()> {
            insert_events_generic(tx, events).await
        }

        async fn lock_instances(tx: &mut Tx, ids: &[i64]) -> StoreResult<HashMap<i64, Instance>> {
            lock_instances_generic(tx, ids).await
        }

        async fn write_instances(tx: &mut Tx, rows: &[&Instance]) -> StoreResult<()> {
            write_instances_generic(tx, rows).await
        }

        async fn select_ready(
            tx: &mut Tx,
            app: &str,
            handlers: &[String],
            now: Ts,
            limit: u32,
        ) -> StoreResult<Vec<Instance>> {
            select_ready_generic(tx, app, handlers, now, limit).await
        }

        async fn mark_dispatched(
            tx: &mut Tx,
            session: &str,
            worker: &str,
            scheduler_id: &str,
            lease_until: Ts,
            now: Ts,
            ids: &[i64],
        ) -> StoreResult<()> {
            mark_dispatched_generic(tx, session, worker, scheduler_id, lease_until, now, ids).await
        }
    };
}
pub(crate) use portable_hot_path;
