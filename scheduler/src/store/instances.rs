//! Operations on `ax_instance`, its key rows, events and logs.

use std::collections::{HashMap, HashSet};

use super::{
    BATCH, InstanceFilter, Instances, NewInstance, postgres,
    tables::{EventRaw, InstanceRaw, encode_backoff},
    value::{Kind, Row, Stmt, Value},
};
use crate::{
    error::{StoreError, StoreResult},
    model::{
        Instance, InstanceEvent, InstanceStatus, MAX_PRIORITY, PRIORITY_STEP, RetryOn, Task, Ts, duration_micros,
        from_micros, sub, to_micros,
    },
};

/// An instance to create: its task and what the trigger decided.
#[derive(Debug, Clone, Copy)]
pub struct InstanceRow<'a> {
    pub task: &'a Task,
    pub new: &'a NewInstance,
    /// The axd creating it, when the row holds its creation event ([`crate::model::trail::CREATED`]).
    pub creator: Option<&'a str>,
}

impl InstanceRaw {
    /// The stored form of a new instance, with everything copied from its task (id 0: the
    /// database assigns it).
    fn new_row(row: InstanceRow<'_>, now: Ts) -> InstanceRaw {
        let (t, n) = (row.task, row.new);
        let terminal = n.status.is_terminal();
        InstanceRaw {
            id: 0,
            task_id: t.id,
            task_name: t.name.clone(),
            app: t.config.app.clone(),
            handler: t.config.handler.clone(),
            params: n.params.clone(),
            idempotency_key: n.key.clone(),
            source: n.source.as_str().to_owned(),
            fire_at: to_micros(n.fire_at),
            available_at: to_micros(n.available_at),
            status: n.status.as_str().to_owned(),
            attempt: 0,
            max_retries: i32::try_from(t.config.retry.max_retries).unwrap_or(i32::MAX),
            failures: 0,
            timeout_us: t.config.timeout.map(duration_micros),
            backoff: encode_backoff(&t.config.retry.backoff),
            routing: t.config.routing.as_str().to_owned(),
            worker_id: None,
            session_id: None,
            scheduler_id: row.creator.map(str::to_owned),
            lease_expires_at: None,
            deadline_at: None,
            started_at: None,
            finished_at: terminal.then(|| to_micros(now)),
            message: if terminal { n.reason.clone() } else { String::new() },
            output: String::new(),
            progress_percent: 0,
            progress_message: String::new(),
            created_at: to_micros(now),
            updated_at: to_micros(now),
            trace_parent: n.trace_parent.clone(),
            priority: i32::from(n.route.priority),
            ready_at: to_micros(sub(n.available_at, PRIORITY_STEP * u32::from(n.route.priority.min(MAX_PRIORITY)))),
            selector: n.route.selector.clone(),
            retry_on: n.route.retry_on.unwrap_or(RetryOn::Other).as_str().to_owned(),
            hash_key: n.route.hash_key.clone(),
            parent_id: n.route.parent_id,
            shard_index: n.route.shard.map(|(i, _)| i32::try_from(i).unwrap_or(i32::MAX)),
            shard_total: n
                .route
                .shard
                .map(|(_, t)| t)
                .or(n.route.children)
                .map(|t| i32::try_from(t).unwrap_or(i32::MAX)),
            target_worker: n.route.target_worker.clone(),
            run_id: n.lineage.run_id,
            chained_from: n.lineage.chained_from,
            trail: if row.creator.is_some() { i32::from(crate::model::trail::CREATED) } else { 0 },
            dispatched_at: None,
            concurrency_value: n.route.concurrency_value.clone(),
        }
    }
}

pub(super) fn select_instances(filter: &str) -> Stmt<'static> {
    Stmt::new(format!("SELECT {} FROM ax_instance{filter}", InstanceRaw::columns()))
}

impl Instances<'_> {
    /// The instances a `SELECT` of [`InstanceRaw::columns`] returns.
    pub(super) async fn read_instances(&mut self, s: Stmt<'_>) -> StoreResult<Vec<Instance>> {
        self.tx.fetch(s, InstanceRaw::TABLE, |r| InstanceRaw::read(r)?.into_instance()).await
    }

    /// Which of these (task, idempotency key) pairs have an instance already.
    pub async fn existing_keys(&mut self, keys: &[(i64, &str)]) -> StoreResult<HashSet<(i64, String)>> {
        let mut out = HashSet::new();
        if keys.is_empty() {
            return Ok(out);
        }
        let kinds = [Kind::I64, Kind::Str];
        let pair = |r: &mut Row<'_>| -> StoreResult<(i64, String)> { Ok((r.take()?, r.take()?)) };
        if self.tx.dialect().arrays {
            // A row-value IN list of hundreds of pairs was planned as a scan (~60 ms for 500 keys);
            // joining the arrays probes the primary key once per pair.
            let rows = keys.iter().map(|(t, k)| vec![Value::I64(*t), Value::from(*k)]).collect();
            let s = postgres::unnest_stmt(
                "SELECT k.task_id, k.idempotency_key FROM {UNNEST} JOIN ax_instance_key k \
                 ON k.task_id = v.task_id AND k.idempotency_key = v.idempotency_key",
                &["task_id", "idempotency_key"],
                &kinds,
                rows,
            );
            out.extend(self.tx.fetch(s, "ax_instance_key", pair).await?);
            return Ok(out);
        }
        for chunk in keys.chunks(BATCH) {
            let mut s =
                Stmt::new("SELECT task_id, idempotency_key FROM ax_instance_key WHERE (task_id, idempotency_key) IN ");
            s.push_row_list(chunk.iter().map(|(t, k)| vec![Value::I64(*t), Value::from(*k)]));
            out.extend(self.tx.fetch(s, "ax_instance_key", pair).await?);
        }
        Ok(out)
    }

    /// Creates the instances whose (task, idempotency key) is new, with their key rows, and
    /// returns (id, task_id, key) of those created. The trigger holds its tasks locked, so two of
    /// its rounds cannot create the same key; two manual triggers racing with one key make the
    /// later one fail with [`StoreError::UniqueViolation`] on the key's primary key.
    pub async fn insert_instances(
        &mut self,
        rows: &[InstanceRow<'_>],
        now: Ts,
    ) -> StoreResult<Vec<(i64, i64, String)>> {
        let mut out = Vec::with_capacity(rows.len());
        for chunk in rows.chunks(BATCH) {
            let keys: Vec<(i64, &str)> = chunk.iter().map(|r| (r.task.id, r.new.key.as_str())).collect();
            let existing = self.existing_keys(&keys).await?;
            let fresh: Vec<InstanceRow<'_>> =
                chunk.iter().copied().filter(|r| !existing.contains(&(r.task.id, r.new.key.clone()))).collect();
            if fresh.is_empty() {
                continue;
            }
            let created = match self.tx.dialect().backend {
                super::Backend::Postgres => self.insert_instances_pg(&fresh, now).await?,
                super::Backend::Sqlite => {
                    let created = self.insert_instance_rows_returning(&fresh, now).await?;
                    self.insert_keys(&fresh, &created).await?;
                    created
                }
                super::Backend::MySql => {
                    let created = self.insert_instance_rows_mysql(&fresh, now).await?;
                    self.insert_keys(&fresh, &created).await?;
                    created
                }
            };
            self.insert_tags(&fresh, &created).await?;
            out.extend(created);
        }
        Ok(out)
    }

    fn instance_insert(fresh: &[InstanceRow<'_>], now: Ts) -> Stmt<'static> {
        let mut s = Stmt::new(format!("INSERT INTO ax_instance ({}) VALUES ", InstanceRaw::NAMES[1..].join(", ")));
        s.push_rows(fresh.iter().map(|r| InstanceRaw::new_row(*r, now).into_values().into_iter().skip(1).collect()));
        s
    }

    /// Instances and their key rows in one statement. The multi-row VALUES form (a new statement
    /// for every batch size) took 11-80 ms for 500 fires under load.
    async fn insert_instances_pg(
        &mut self,
        fresh: &[InstanceRow<'_>],
        now: Ts,
    ) -> StoreResult<Vec<(i64, i64, String)>> {
        let names = &InstanceRaw::NAMES[1..];
        let rows =
            fresh.iter().map(|r| InstanceRaw::new_row(*r, now).into_values().into_iter().skip(1).collect()).collect();
        let sql = format!(
            "WITH i AS (INSERT INTO ax_instance ({cols}) SELECT {cols} FROM {{UNNEST}} \
             RETURNING id, task_id, task_name, idempotency_key) \
             INSERT INTO ax_instance_key (task_id, idempotency_key, task_name, instance_id) \
             SELECT task_id, idempotency_key, task_name, id FROM i RETURNING instance_id, task_id, idempotency_key",
            cols = names.join(", ")
        );
        let s = postgres::unnest_stmt(&sql, names, &InstanceRaw::KINDS[1..], rows);
        self.read_created(s).await
    }

    pub(super) async fn read_created(&mut self, s: Stmt<'_>) -> StoreResult<Vec<(i64, i64, String)>> {
        self.tx.fetch(s, InstanceRaw::TABLE, |r| Ok((r.take()?, r.take()?, r.take()?))).await
    }

    /// `INSERT ... RETURNING` (SQLite).
    async fn insert_instance_rows_returning(
        &mut self,
        fresh: &[InstanceRow<'_>],
        now: Ts,
    ) -> StoreResult<Vec<(i64, i64, String)>> {
        let mut s = Self::instance_insert(fresh, now);
        s.push(" RETURNING id, task_id, idempotency_key");
        self.read_created(s).await
    }

    /// MySQL has no `INSERT … RETURNING`: the rows are read back from the first id the statement
    /// generated (`LAST_INSERT_ID()`) on, a short primary-key range, matched by their (task, key)
    /// (ids of one statement need not be consecutive under `innodb_autoinc_lock_mode = 2`). A
    /// racing transaction that inserted an instance with one of the same (task, key) pairs and
    /// committed first shows up in that range too; its key row is committed, so this
    /// transaction's key insert would fail: that is reported as the unique violation it is.
    async fn insert_instance_rows_mysql(
        &mut self,
        fresh: &[InstanceRow<'_>],
        now: Ts,
    ) -> StoreResult<Vec<(i64, i64, String)>> {
        let first = self.tx.insert_id(Self::instance_insert(fresh, now)).await?;
        let mut s = Stmt::new("SELECT id, task_id, idempotency_key FROM ax_instance WHERE id >= ");
        s.push_bind(first).push(" AND (task_id, idempotency_key) IN ");
        s.push_row_list(fresh.iter().map(|r| vec![Value::I64(r.task.id), Value::from(r.new.key.as_str())]));
        let out = self.read_created(s).await?;
        if out.len() > fresh.len() {
            return Err(StoreError::UniqueViolation(format!(
                "ax_instance_key: {} of {} (task, idempotency key) pairs were created by a concurrent trigger",
                out.len() - fresh.len(),
                fresh.len()
            )));
        }
        if out.len() != fresh.len() {
            return Err(StoreError::Corrupt {
                table: "ax_instance",
                reason: format!("inserted {} instances but read back {}", fresh.len(), out.len()),
            });
        }
        Ok(out)
    }

    async fn insert_keys(&mut self, fresh: &[InstanceRow<'_>], created: &[(i64, i64, String)]) -> StoreResult<()> {
        let names: HashMap<i64, &str> = fresh.iter().map(|r| (r.task.id, r.task.name.as_str())).collect();
        let mut s = Stmt::new("INSERT INTO ax_instance_key (task_id, idempotency_key, task_name, instance_id) VALUES ");
        s.push_rows(created.iter().map(|(id, task_id, key)| {
            vec![
                Value::I64(*task_id),
                Value::from(key.as_str()),
                Value::from(names.get(task_id).copied().unwrap_or_default()),
                Value::I64(*id),
            ]
        }));
        self.tx.execute(s).await?;
        Ok(())
    }

    /// The instance of a (task, idempotency key).
    pub async fn instance_by_key(&mut self, task_id: i64, key: &str) -> StoreResult<Option<Instance>> {
        let s = select_instances(
            " WHERE id = (SELECT instance_id FROM ax_instance_key WHERE task_id = ? AND idempotency_key = ?)",
        )
        .bind(task_id)
        .bind(key);
        Ok(self.read_instances(s).await?.pop())
    }

    /// One instance.
    pub async fn get_instance(&mut self, id: i64) -> StoreResult<Option<Instance>> {
        let s = select_instances(" WHERE id = ?").bind(id);
        Ok(self.read_instances(s).await?.pop())
    }

    /// Instances newest first.
    pub async fn list_instances(&mut self, f: &InstanceFilter) -> StoreResult<Vec<Instance>> {
        let mut s = select_instances("");
        if let Some(name) = &f.task_name {
            // A task's instances by their key rows (indexed by task name and id); the page of ids
            // is picked in a derived table and joined back.
            s.push(" JOIN (SELECT k.instance_id AS page_id FROM ax_instance_key k");
            if f.status.is_some()
                || f.apps.is_some()
                || f.triggered_since.is_some()
                || f.triggered_before.is_some()
                || !f.tags.is_empty()
            {
                s.push(" JOIN ax_instance s ON s.id = k.instance_id");
            }
            s.push(" WHERE k.task_name = ").push_bind(name.as_str());
            if let Some(st) = f.status {
                s.push(" AND s.status = ").push_bind(st.as_str());
            }
            push_apps(&mut s, "s.app", f.apps.as_deref());
            push_fire_window(&mut s, "s.fire_at", f);
            super::tags::push_tag_filters(&mut s, "s.id", &f.tags);
            if let Some(before) = f.before_id {
                s.push(" AND k.instance_id < ").push_bind(before);
            }
            s.push(" ORDER BY k.instance_id DESC LIMIT ").push_bind(i64::from(f.limit));
            s.push(") page ON ax_instance.id = page.page_id");
        } else {
            s.push(" WHERE 1 = 1");
            if let Some(st) = f.status {
                s.push(" AND status = ").push_bind(st.as_str());
            }
            push_apps(&mut s, "app", f.apps.as_deref());
            push_fire_window(&mut s, "fire_at", f);
            super::tags::push_tag_filters(&mut s, "id", &f.tags);
            if let Some(before) = f.before_id {
                s.push(" AND id < ").push_bind(before);
            }
        }
        s.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(f.limit));
        self.read_instances(s).await
    }

    /// The event trail of an instance, oldest first: its stored events, then those its row holds
    /// ([`crate::model::trail`]).
    pub async fn instance_events(&mut self, id: i64) -> StoreResult<Vec<InstanceEvent>> {
        // The row first: an event it holds that a concurrent change writes as a row after this read
        // is then among the stored events read below, and merged once.
        let held = self.get_instance(id).await?.map(|i| i.trail.held).unwrap_or_default();
        let s = Stmt::new(format!(
            "SELECT {} FROM ax_instance_event WHERE instance_id = ? ORDER BY id",
            EventRaw::columns()
        ))
        .bind(id);
        let stored = self.tx.fetch(s, EventRaw::TABLE, |r| EventRaw::read(r)?.into_event()).await?;
        Ok(crate::model::trail::merged(stored, &held))
    }

    /// Locks instances by id (in id order, so concurrent writers cannot deadlock).
    pub async fn lock_instances(&mut self, ids: &[i64]) -> StoreResult<HashMap<i64, Instance>> {
        let mut out = HashMap::with_capacity(ids.len());
        if ids.is_empty() {
            return Ok(out);
        }
        let lock = self.tx.dialect().for_update;
        let stmts: Vec<Stmt> = if self.tx.dialect().arrays {
            vec![select_instances(&format!(" WHERE id = ANY(?) ORDER BY id{lock}")).bind(Value::I64s(ids.to_vec()))]
        } else {
            ids.chunks(BATCH)
                .map(|chunk| {
                    let mut s = select_instances(" WHERE id IN ");
                    s.push_list(chunk.iter().copied()).push(&format!(" ORDER BY id{lock}"));
                    s
                })
                .collect()
        };
        for s in stmts {
            for i in self.read_instances(s).await? {
                out.insert(i.id, i);
            }
        }
        Ok(out)
    }

    /// Locks the PENDING instances of a task (waiting for other writers).
    pub async fn lock_pending_of_task(&mut self, task_id: i64) -> StoreResult<Vec<Instance>> {
        let s = select_instances(&format!(
            " WHERE task_id = ? AND status = 'PENDING' ORDER BY id{}",
            self.tx.dialect().for_update
        ))
        .bind(task_id);
        self.read_instances(s).await
    }

    /// The ids of the DISPATCHED or RUNNING instances held by a session.
    pub async fn held_by_session(&mut self, session_id: &str) -> StoreResult<Vec<i64>> {
        // Served by the held instances' lease index (migration 11 dropped the one by session: a
        // claim no longer writes an entry to it). Sorted here: an ORDER BY id could tempt the
        // planner into walking the primary key of the whole table.
        let s = Stmt::new("SELECT id FROM ax_instance WHERE session_id = ? AND status IN ('DISPATCHED', 'RUNNING')")
            .bind(session_id);
        let mut ids: Vec<i64> = self.tx.fetch(s, InstanceRaw::TABLE, |r| r.take()).await?;
        ids.sort_unstable();
        Ok(ids)
    }

    /// These instances, unlocked, with their row versions (PostgreSQL's `xmin`, which every update
    /// changes), for [`Instances::write_instances_if_unchanged`]. PostgreSQL only.
    pub async fn read_versioned(&mut self, ids: &[i64]) -> StoreResult<(HashMap<i64, Instance>, HashMap<i64, i64>)> {
        let mut rows = HashMap::with_capacity(ids.len());
        let mut versions = HashMap::with_capacity(ids.len());
        if ids.is_empty() {
            return Ok((rows, versions));
        }
        let s = Stmt::new(format!(
            "SELECT {}, xmin::text::bigint FROM ax_instance WHERE id = ANY(?)",
            InstanceRaw::columns()
        ))
        .bind(Value::I64s(ids.to_vec()));
        let read = self
            .tx
            .fetch(s, InstanceRaw::TABLE, |r| {
                let i = InstanceRaw::read(r)?.into_instance()?;
                Ok((i, r.take::<i64>()?))
            })
            .await?;
        for (i, version) in read {
            versions.insert(i.id, version);
            rows.insert(i.id, i);
        }
        Ok((rows, versions))
    }

    /// Writes the lifecycle columns (those `InstanceRaw` marks with `= expr`) of changed instances.
    pub async fn write_instances(&mut self, rows: &[&Instance]) -> StoreResult<()> {
        self.write_rows(rows, None).await
    }

    /// [`Instances::write_instances`] of rows [`Instances::read_versioned`] read at `versions`: if any
    /// is no longer that version, [`StoreError::Stale`] (roll back: some rows may be written).
    pub async fn write_instances_if_unchanged(
        &mut self,
        rows: &[&Instance],
        versions: &HashMap<i64, i64>,
    ) -> StoreResult<()> {
        self.write_rows(rows, Some(versions)).await
    }

    async fn write_rows(&mut self, rows: &[&Instance], versions: Option<&HashMap<i64, i64>>) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = std::iter::once("id").chain(InstanceRaw::WRITE_NAMES.iter().copied()).collect();
        fn values(i: &Instance) -> Vec<Value<'_>> {
            std::iter::once(Value::I64(i.id)).chain(InstanceRaw::write_values(i)).collect()
        }
        let set = &names[1..];
        if self.tx.dialect().arrays {
            let mut kinds: Vec<Kind> =
                std::iter::once(Kind::I64).chain(InstanceRaw::WRITE_KINDS.iter().copied()).collect();
            let mut columns = names.clone();
            if versions.is_some() {
                columns.push("version");
                kinds.push(Kind::I64);
            }
            let mut sql = self.tx.dialect().update_from_derived("ax_instance", set, "SELECT * FROM {UNNEST}");
            if versions.is_some() {
                sql.push_str(" AND ax_instance.xmin::text::bigint = v.version");
            }
            let mut s = Stmt::new(sql.replace("{UNNEST}", &postgres::unnest(&columns, &kinds)));
            s.args.push(Value::I64s(rows.iter().map(|i| i.id).collect()));
            s.args.extend(InstanceRaw::write_columns(rows));
            if let Some(v) = versions {
                let expected =
                    rows.iter().map(|i| v.get(&i.id).copied().ok_or(i.id)).collect::<Result<Vec<i64>, i64>>();
                let expected =
                    expected.map_err(|id| StoreError::Stale(format!("instance {id} was not read with its version")))?;
                s.args.push(Value::I64s(expected));
            }
            let written = self.tx.execute(s).await?;
            if versions.is_some() && written != rows.len() as u64 {
                return Err(StoreError::Stale(format!(
                    "{} of {} instance rows changed since they were read",
                    rows.len() as u64 - written,
                    rows.len()
                )));
            }
            return Ok(());
        }
        if versions.is_some() {
            return Err(StoreError::Stale("row versions are read on PostgreSQL only".into()));
        }
        for chunk in rows.chunks(BATCH / 2) {
            // A derived table of `SELECT ? AS id, ? AS status, ... UNION ALL SELECT ?, ?, ...`:
            // the first branch names the columns.
            let mut derived = Stmt::default();
            for (n, i) in chunk.iter().enumerate() {
                derived.push(if n == 0 { "SELECT " } else { " UNION ALL SELECT " });
                for (c, v) in values(i).into_iter().enumerate() {
                    if c > 0 {
                        derived.push(", ");
                    }
                    derived.push_bind(v);
                    if n == 0 {
                        derived.push(" AS ").push(names[c]);
                    }
                }
            }
            let mut s = Stmt::new(self.tx.dialect().update_from_derived("ax_instance", set, &derived.sql));
            s.args = derived.args;
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// Records events. In debug builds, checks each against the table of legal transitions
    /// ([`InstanceStatus::can_move_to`]).
    pub async fn insert_events(&mut self, events: &[InstanceEvent]) -> StoreResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        for e in events {
            debug_assert!(
                match e.from {
                    None => e.to.can_start_as(),
                    Some(from) => from.can_move_to(e.to),
                },
                "illegal transition {:?} -> {} of instance {}: {}",
                e.from,
                e.to,
                e.instance_id,
                e.reason
            );
        }
        let names = &EventRaw::NAMES[1..];
        fn row(e: &InstanceEvent) -> Vec<Value<'_>> {
            vec![
                Value::I64(e.instance_id),
                Value::I64(to_micros(e.at)),
                Value::from(e.from.map(|s| s.as_str())),
                Value::from(e.to.as_str()),
                Value::from(e.attempt),
                Value::from(e.scheduler_id.as_str()),
                Value::from(e.worker_id.as_str()),
                Value::from(e.reason.as_str()),
            ]
        }
        if self.tx.dialect().arrays {
            let sql = format!("INSERT INTO ax_instance_event ({}) SELECT * FROM {{UNNEST}}", names.join(", "));
            let mut s = Stmt::new(sql.replace("{UNNEST}", &postgres::unnest(names, &EventRaw::KINDS[1..])));
            let text = |f: fn(&InstanceEvent) -> &str| Value::Strs(events.iter().map(|e| f(e).into()).collect());
            s.args = vec![
                Value::I64s(events.iter().map(|e| e.instance_id).collect()),
                Value::I64s(events.iter().map(|e| to_micros(e.at)).collect()),
                Value::OptStrs(events.iter().map(|e| e.from.map(|s| s.as_str().into())).collect()),
                text(|e| e.to.as_str()),
                Value::I32s(events.iter().map(|e| i32::try_from(e.attempt).unwrap_or(i32::MAX)).collect()),
                text(|e| &e.scheduler_id),
                text(|e| &e.worker_id),
                text(|e| &e.reason),
            ];
            self.tx.execute(s).await?;
            return Ok(());
        }
        for chunk in events.chunks(BATCH) {
            let mut s = Stmt::new(format!("INSERT INTO ax_instance_event ({}) VALUES ", names.join(", ")));
            s.push_rows(chunk.iter().map(row));
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// Locks up to `limit` instances in `status` whose `column` (a lease or deadline) is before
    /// `now`, earliest first, skipping rows other axd hold.
    pub async fn claim_expired(
        &mut self,
        status: InstanceStatus,
        column: Expiry,
        now: Ts,
        limit: u32,
    ) -> StoreResult<Vec<Instance>> {
        let col = column.column();
        // The status is written into the statement, not bound: the partial indexes on leases and
        // deadlines (`WHERE status IN (...)`) serve only plans that can see it, and PostgreSQL's
        // generic plan for a bound status scanned the whole table (burn-down 10 % slower).
        let s = select_instances(&format!(
            " WHERE status = '{}' AND {col} < ? ORDER BY {col} LIMIT ?{}",
            status.as_str(),
            self.tx.dialect().skip_locked
        ))
        .bind(to_micros(now))
        .bind(i64::from(limit));
        self.read_instances(s).await
    }

    /// The earliest lease or run deadline of held instances.
    pub async fn next_deadline(&mut self) -> StoreResult<Option<Ts>> {
        let s = Stmt::new(
            "SELECT (SELECT MIN(lease_expires_at) FROM ax_instance WHERE status IN ('DISPATCHED', 'RUNNING')), \
             (SELECT MIN(deadline_at) FROM ax_instance WHERE status = 'RUNNING')",
        )
        .replanned();
        let (a, b): (Option<i64>, Option<i64>) =
            self.tx.fetch_one(s, InstanceRaw::TABLE, |r| Ok((r.take()?, r.take()?))).await?;
        Ok(match (a, b) {
            (Some(a), Some(b)) => Some(from_micros(a.min(b))),
            (a, b) => a.or(b).map(from_micros),
        })
    }

    /// Of these (instance, attempt) pairs, those whose DISPATCHED event names `worker_id`.
    pub async fn dispatched_to_worker(
        &mut self,
        worker_id: &str,
        pairs: &[(i64, u32)],
    ) -> StoreResult<Vec<(i64, u32)>> {
        let mut out = Vec::new();
        for chunk in pairs.chunks(BATCH) {
            let mut s = Stmt::new(
                "SELECT instance_id, attempt FROM ax_instance_event WHERE to_status = 'DISPATCHED' AND worker_id = ",
            );
            s.push_bind(worker_id).push(" AND instance_id IN ").push_list(chunk.iter().map(|(id, _)| *id));
            let wanted: HashSet<(i64, u32)> = chunk.iter().copied().collect();
            let keys = self
                .tx
                .fetch(s, EventRaw::TABLE, |r| Ok((r.take::<i64>()?, u32::try_from(r.take::<i32>()?).unwrap_or(0))))
                .await?;
            for key in keys {
                if wanted.contains(&key) && !out.contains(&key) {
                    out.push(key);
                }
            }
        }
        Ok(out)
    }

    /// Of these instances, those held now (DISPATCHED or RUNNING): their attempt and session.
    pub async fn held_attempts(&mut self, ids: &[i64]) -> StoreResult<HashMap<i64, (u32, String)>> {
        let mut out = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(BATCH) {
            let mut s = Stmt::new(
                "SELECT id, attempt, session_id FROM ax_instance WHERE status IN ('DISPATCHED', 'RUNNING') AND id IN ",
            );
            s.push_list(chunk.iter().copied());
            let rows = self
                .tx
                .fetch(s, InstanceRaw::TABLE, |r| {
                    let id: i64 = r.take()?;
                    let attempt = u32::try_from(r.take::<i32>()?).unwrap_or(0);
                    let session: Option<String> = r.take()?;
                    Ok((id, (attempt, session.unwrap_or_default())))
                })
                .await?;
            out.extend(rows);
        }
        Ok(out)
    }

    /// Extends, until `lease_until`, the leases of these (session, instance) pairs' attempts that
    /// are still held (DISPATCHED or RUNNING) by one of the sessions.
    pub async fn renew_leases(&mut self, pairs: &[(&str, i64)], lease_until: Ts) -> StoreResult<()> {
        for chunk in pairs.chunks(BATCH) {
            let mut s = Stmt::new("UPDATE ax_instance SET lease_expires_at = ");
            s.push_bind(to_micros(lease_until));
            s.push(" WHERE status IN ('DISPATCHED', 'RUNNING') AND lease_expires_at < ")
                .push_bind(to_micros(lease_until));
            s.push(" AND id IN ").push_list(chunk.iter().map(|(_, id)| *id));
            let mut sids: Vec<&str> = chunk.iter().map(|(s, _)| *s).collect();
            sids.sort_unstable();
            sids.dedup();
            s.push(" AND session_id IN ").push_list(sids);
            self.tx.execute(s).await?;
        }
        Ok(())
    }
}

/// A time column of held instances that the sweeper acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// `lease_expires_at`.
    Lease,
    /// `deadline_at` (the run timeout).
    Deadline,
}

impl Expiry {
    fn column(self) -> &'static str {
        match self {
            Expiry::Lease => "lease_expires_at",
            Expiry::Deadline => "deadline_at",
        }
    }
}

/// Narrows a query to the instances of `apps` (`None`: every app; none: nothing).
/// `AND column >= since AND column < before` for the bounds the filter has.
fn push_fire_window(s: &mut Stmt<'_>, column: &str, f: &InstanceFilter) {
    if let Some(t) = f.triggered_since {
        s.push(&format!(" AND {column} >= ")).push_bind(to_micros(t));
    }
    if let Some(t) = f.triggered_before {
        s.push(&format!(" AND {column} < ")).push_bind(to_micros(t));
    }
}

pub(super) fn push_apps<'a>(s: &mut Stmt<'a>, column: &str, apps: Option<&'a [String]>) {
    match apps {
        None => {}
        Some([]) => {
            s.push(" AND 1 = 0");
        }
        Some(apps) => {
            s.push(" AND ").push(column).push(" IN ").push_list(apps.iter().map(String::as_str));
        }
    }
}
