//! Operations on `ax_scheduler`, `ax_worker` and `ax_command`, and the cluster's counts.

use super::{
    BATCH, Cluster, ClusterStats, Command, Instances, SessionSync,
    tables::WorkerRaw,
    value::{Stmt, Value},
};
use crate::{
    error::{StoreError, StoreResult},
    model::{InstanceStatus, SchedulerRecord, Ts, WorkerRecord, from_micros, to_micros},
};

impl Cluster<'_> {
    /// Registers (or refreshes) an axd.
    pub async fn upsert_scheduler(&mut self, s: &SchedulerRecord) -> StoreResult<()> {
        let stmt = Stmt::new(self.tx.dialect().upsert_scheduler)
            .bind(s.scheduler_id.as_str())
            .bind(s.host.as_str())
            .bind(s.address.as_str())
            .bind(s.version.as_str())
            .bind(to_micros(s.started_at))
            .bind(to_micros(s.heartbeat_at));
        self.tx.execute(stmt).await?;
        Ok(())
    }

    /// Removes an axd's registration.
    pub async fn delete_scheduler(&mut self, scheduler_id: &str) -> StoreResult<()> {
        self.tx.execute(Stmt::new("DELETE FROM ax_scheduler WHERE scheduler_id = ?").bind(scheduler_id)).await?;
        Ok(())
    }

    /// Every registered axd.
    pub async fn list_schedulers(&mut self) -> StoreResult<Vec<SchedulerRecord>> {
        let s = Stmt::new(
            "SELECT scheduler_id, host, address, version, started_at, heartbeat_at FROM ax_scheduler ORDER BY scheduler_id",
        );
        self.tx
            .fetch(s, "ax_scheduler", |r| {
                Ok(SchedulerRecord {
                    scheduler_id: r.take()?,
                    host: r.take()?,
                    address: r.take()?,
                    version: r.take()?,
                    started_at: from_micros(r.take()?),
                    heartbeat_at: from_micros(r.take()?),
                })
            })
            .await
    }

    /// Removes up to 100 axd whose heartbeat is older than `dead_before`, with their worker
    /// sessions and undelivered commands; how many.
    pub async fn purge_dead_schedulers(&mut self, dead_before: Ts) -> StoreResult<u64> {
        let s = Stmt::new(format!(
            "SELECT scheduler_id FROM ax_scheduler WHERE heartbeat_at < ? ORDER BY scheduler_id LIMIT 100{}",
            self.tx.dialect().skip_locked
        ))
        .bind(to_micros(dead_before));
        let ids: Vec<String> = self.tx.fetch(s, "ax_scheduler", |r| r.take()).await?;
        for id in &ids {
            self.close_session_log_of(id).await?;
            for table in ["ax_worker", "ax_command", "ax_scheduler"] {
                self.tx
                    .execute(Stmt::new(format!("DELETE FROM {table} WHERE scheduler_id = ?")).bind(id.as_str()))
                    .await?;
            }
        }
        Ok(ids.len() as u64)
    }

    /// Records a new worker session.
    pub async fn insert_worker(&mut self, w: &WorkerRecord) -> StoreResult<()> {
        let mut s = Stmt::new(format!("INSERT INTO ax_worker ({}) VALUES ", WorkerRaw::columns()));
        s.push_list(WorkerRaw::from_record(w).into_values());
        self.tx.execute(s).await?;
        self.open_session_log(w).await?;
        Ok(())
    }

    /// Removes a worker session.
    pub async fn delete_worker(&mut self, session_id: &str) -> StoreResult<()> {
        self.tx.execute(Stmt::new("DELETE FROM ax_worker WHERE session_id = ?").bind(session_id)).await?;
        Ok(())
    }

    /// Refreshes the live numbers of sessions.
    pub async fn update_workers(&mut self, sessions: &[SessionSync]) -> StoreResult<()> {
        for s in sessions {
            let stmt =
                Stmt::new("UPDATE ax_worker SET credits = ?, in_flight = ?, last_seen_at = ? WHERE session_id = ?")
                    .bind(s.credits)
                    .bind(s.in_flight)
                    .bind(to_micros(s.last_seen_at))
                    .bind(s.session_id.as_str());
            self.tx.execute(stmt).await?;
        }
        Ok(())
    }

    /// Worker sessions (optionally of one app) held by an axd that heartbeated at or after
    /// `alive_since`: the sessions of a dead axd are gone, even before their rows are purged.
    pub async fn live_workers(&mut self, app: Option<&str>, alive_since: Ts) -> StoreResult<Vec<WorkerRecord>> {
        let alive: std::collections::HashSet<String> = self
            .list_schedulers()
            .await?
            .into_iter()
            .filter(|s| s.heartbeat_at >= alive_since)
            .map(|s| s.scheduler_id)
            .collect();
        Ok(self.list_workers(app).await?.into_iter().filter(|w| alive.contains(&w.scheduler_id)).collect())
    }

    /// Worker sessions, optionally of one app.
    pub async fn list_workers(&mut self, app: Option<&str>) -> StoreResult<Vec<WorkerRecord>> {
        let mut s = Stmt::new(format!("SELECT {} FROM ax_worker WHERE 1 = 1", WorkerRaw::columns()));
        if let Some(app) = app {
            s.push(" AND app = ").push_bind(app);
        }
        s.push(" ORDER BY app, worker_id, session_id");
        self.tx.fetch(s, WorkerRaw::TABLE, |r| WorkerRaw::read(r)?.into_record()).await
    }

    /// Queues Cancel commands for the axd holding the streams.
    pub async fn insert_commands(&mut self, commands: &[Command], now: Ts) -> StoreResult<()> {
        for chunk in commands.chunks(BATCH) {
            let mut s = Stmt::new(
                "INSERT INTO ax_command (scheduler_id, session_id, instance_id, attempt, kind, reason, created_at) VALUES ",
            );
            s.push_rows(chunk.iter().map(|c| {
                vec![
                    Value::from(c.scheduler_id.as_str()),
                    Value::from(c.session_id.as_str()),
                    Value::I64(c.instance_id),
                    Value::from(c.attempt),
                    Value::from("CANCEL"),
                    Value::from(c.reason.as_str()),
                    Value::I64(to_micros(now)),
                ]
            }));
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// Takes (and deletes) up to `limit` commands for this axd.
    pub async fn take_commands(&mut self, scheduler_id: &str, limit: u32) -> StoreResult<Vec<Command>> {
        let s = Stmt::new(format!(
            "SELECT id, session_id, instance_id, attempt, reason FROM ax_command WHERE scheduler_id = ? \
             ORDER BY id LIMIT ?{}",
            self.tx.dialect().skip_locked
        ))
        .bind(scheduler_id)
        .bind(i64::from(limit));
        let taken = self
            .tx
            .fetch(s, "ax_command", |r| {
                let id: i64 = r.take()?;
                let command = Command {
                    scheduler_id: scheduler_id.to_owned(),
                    session_id: r.take()?,
                    instance_id: r.take()?,
                    attempt: u32::try_from(r.take::<i32>()?).unwrap_or(0),
                    reason: r.take()?,
                };
                Ok((id, command))
            })
            .await?;
        let (ids, out): (Vec<i64>, Vec<Command>) = taken.into_iter().unzip();
        if !ids.is_empty() {
            let mut s = Stmt::new("DELETE FROM ax_command WHERE id IN ");
            s.push_list(ids);
            self.tx.execute(s).await?;
        }
        Ok(out)
    }
}

impl Instances<'_> {
    /// PENDING instances per app (the dispatch backlog), apps in order.
    pub async fn pending_by_app(&mut self) -> StoreResult<Vec<(String, u64)>> {
        let s = Stmt::new(format!(
            "SELECT app, COUNT(*) FROM ax_instance{} WHERE {} GROUP BY app ORDER BY app",
            self.tx.dialect().ready_order_index,
            self.tx.dialect().pending
        ));
        self.tx.fetch(s, "ax_instance", |r| Ok((r.take()?, u64::try_from(r.take::<i64>()?).unwrap_or(0)))).await
    }
}

impl Cluster<'_> {
    /// Counts. Schedulers are live if their heartbeat is newer than `alive_since`.
    pub async fn cluster_stats(&mut self, alive_since: Ts) -> StoreResult<ClusterStats> {
        let mut stats = ClusterStats::default();
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        let s = Stmt::new("SELECT COUNT(*), COUNT(CASE WHEN enabled THEN 1 END) FROM ax_task");
        let (tasks, enabled) = self.tx.fetch_one(s, "ax_task", |r| Ok((n(r.take()?), n(r.take()?)))).await?;
        (stats.tasks, stats.enabled_tasks) = (tasks, enabled);
        let s = Stmt::new("SELECT status, COUNT(*) FROM ax_instance GROUP BY status");
        let counts = self
            .tx
            .fetch(s, "ax_instance", |r| {
                let status: String = r.take()?;
                let status: InstanceStatus =
                    status.parse().map_err(|e| StoreError::Corrupt { table: "ax_instance", reason: e })?;
                Ok((status, n(r.take()?)))
            })
            .await?;
        stats.instances.extend(counts);
        let s = Stmt::new(
            "SELECT COUNT(*) FROM ax_worker w JOIN ax_scheduler s ON w.scheduler_id = s.scheduler_id \
             WHERE s.heartbeat_at >= ?",
        )
        .bind(to_micros(alive_since));
        stats.workers = n(self.tx.fetch_one(s, "ax_worker", |r| r.take()).await?);
        let s = Stmt::new("SELECT COUNT(*) FROM ax_scheduler WHERE heartbeat_at >= ?").bind(to_micros(alive_since));
        stats.schedulers = n(self.tx.fetch_one(s, "ax_scheduler", |r| r.take()).await?);
        Ok(stats)
    }
}
