//! Operations on what an instance leaves behind: progress, log lines, and retention.

use super::{
    BATCH, Instances,
    tables::InstanceRaw,
    value::{Stmt, Value},
};
use crate::{
    error::StoreResult,
    model::{LogLine, Ts, from_micros, to_micros},
};

impl Instances<'_> {
    /// Latest progress of the current attempt, if the session holds it.
    pub async fn record_progress(
        &mut self,
        id: i64,
        attempt: u32,
        session_id: &str,
        percent: u32,
        message: &str,
        now: Ts,
    ) -> StoreResult<()> {
        let s = Stmt::new(
            "UPDATE ax_instance SET progress_percent = ?, progress_message = ?, updated_at = ? \
             WHERE id = ? AND attempt = ? AND session_id = ? AND status IN ('DISPATCHED', 'RUNNING')",
        )
        .bind(percent.min(100))
        .bind(message)
        .bind(to_micros(now))
        .bind(id)
        .bind(attempt)
        .bind(session_id);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Appends a log line of an instance of `app`: kept while the instance has fewer than 1000,
    /// counted as dropped after that.
    pub async fn append_log(
        &mut self,
        id: i64,
        attempt: u32,
        app: &str,
        level: &str,
        at: Ts,
        message: &str,
    ) -> StoreResult<()> {
        let kept = self
            .tx
            .execute(
                Stmt::new(
                    "UPDATE ax_instance SET log_count = log_count + 1 WHERE id = ? AND app = ? AND log_count < 1000",
                )
                .bind(id)
                .bind(app),
            )
            .await?;
        let s = if kept == 1 {
            Stmt::new("INSERT INTO ax_instance_log (instance_id, attempt, level, at, message) VALUES (?, ?, ?, ?, ?)")
                .bind(id)
                .bind(attempt)
                .bind(level)
                .bind(to_micros(at))
                .bind(message)
        } else {
            Stmt::new("UPDATE ax_instance SET log_dropped = log_dropped + 1 WHERE id = ? AND app = ?")
                .bind(id)
                .bind(app)
        };
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Log lines of an instance after `after_seq`, and the count of dropped lines.
    pub async fn instance_logs(&mut self, id: i64, after_seq: i64, limit: u32) -> StoreResult<(Vec<LogLine>, u64)> {
        let s = Stmt::new(
            "SELECT id, attempt, level, at, message FROM ax_instance_log WHERE instance_id = ? AND id > ? ORDER BY id LIMIT ?",
        )
        .bind(id)
        .bind(after_seq)
        .bind(i64::from(limit));
        let lines = self
            .tx
            .fetch(s, "ax_instance_log", |r| {
                Ok(LogLine {
                    seq: r.take()?,
                    attempt: u32::try_from(r.take::<i32>()?).unwrap_or(0),
                    level: r.take()?,
                    at: from_micros(r.take()?),
                    message: r.take()?,
                })
            })
            .await?;
        let s = Stmt::new("SELECT log_dropped FROM ax_instance WHERE id = ?").bind(id);
        let dropped: i64 = self.tx.fetch(s, InstanceRaw::TABLE, |r| r.take()).await?.pop().unwrap_or(0);
        Ok((lines, u64::try_from(dropped).unwrap_or(0)))
    }

    /// Deletes up to `limit` instances that finished before `before`, with their events, logs, links
    /// and key rows (after retention a key can be used again); how many.
    pub async fn purge_finished(&mut self, before: Ts, limit: u32) -> StoreResult<u64> {
        let s = Stmt::new(format!(
            "SELECT id, task_id, idempotency_key FROM ax_instance WHERE finished_at IS NOT NULL \
             AND finished_at < ? ORDER BY id LIMIT ?{}",
            self.tx.dialect().skip_locked
        ))
        .bind(to_micros(before))
        .bind(i64::from(limit));
        let rows = self.read_created(s).await?;
        self.delete_rows(&rows).await?;
        Ok(rows.len() as u64)
    }

    /// Deletes these instances and their children with their events, logs, links, key and
    /// uniqueness rows (a bulk delete: the caller locked them and checked they may go); how many
    /// rows, children included.
    pub async fn delete_instances(&mut self, ids: &[i64]) -> StoreResult<u64> {
        let mut rows = Vec::new();
        for chunk in ids.chunks(BATCH / 2) {
            let mut s = Stmt::new("SELECT id, task_id, idempotency_key FROM ax_instance WHERE id IN ");
            s.push_list(chunk.iter().copied()).push(" OR parent_id IN ").push_list(chunk.iter().copied());
            rows.extend(self.read_created(s).await?);
        }
        for chunk in rows.chunks(BATCH) {
            let mut s = Stmt::new("DELETE FROM ax_unique WHERE instance_id IN ");
            s.push_list(chunk.iter().map(|(id, _, _)| *id));
            self.tx.execute(s).await?;
        }
        self.delete_rows(&rows).await?;
        Ok(rows.len() as u64)
    }

    /// Deletes instance rows (id, task id, idempotency key) with their key rows, links, events and
    /// log lines.
    async fn delete_rows(&mut self, rows: &[(i64, i64, String)]) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        for chunk in rows.chunks(BATCH) {
            let mut s = Stmt::new("DELETE FROM ax_instance_key WHERE (task_id, idempotency_key) IN ");
            s.push_row_list(chunk.iter().map(|(_, t, k)| vec![Value::I64(*t), Value::from(k.as_str())]));
            self.tx.execute(s).await?;
        }
        for chunk in rows.chunks(BATCH / 2) {
            let mut s = Stmt::new("DELETE FROM ax_instance_link WHERE from_id IN ");
            s.push_list(chunk.iter().map(|(id, _, _)| *id))
                .push(" OR to_id IN ")
                .push_list(chunk.iter().map(|(id, _, _)| *id));
            self.tx.execute(s).await?;
        }
        for table in [
            "ax_instance_event WHERE instance_id",
            "ax_instance_log WHERE instance_id",
            "ax_instance_tag WHERE instance_id",
            "ax_instance WHERE id",
        ] {
            for chunk in rows.chunks(BATCH) {
                let mut s = Stmt::new(format!("DELETE FROM {table} IN "));
                s.push_list(chunk.iter().map(|(id, _, _)| *id));
                self.tx.execute(s).await?;
            }
        }
        Ok(())
    }
}
