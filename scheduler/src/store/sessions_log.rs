//! What `axctl task explain` reads that nothing else does: `ax_session_log`, worker sessions as
//! history (a row is written when a session opens and closed when it ends, or when its axd is
//! forgotten, so that explain can say whether a worker of an app was connected at a past instant;
//! two writes per session, none per instance), and a task's instances triggered up to an instant.

use super::{
    Cluster, Instances,
    tables::{decode_labels, decode_list, encode_labels, encode_list},
    value::Stmt,
};
use crate::{
    error::StoreResult,
    model::{SessionSpan, Ts, WorkerRecord, from_micros, to_micros},
};

/// Most spans one query returns.
const SPAN_LIMIT: i64 = 1000;

impl Cluster<'_> {
    /// Records that a session opened (in the transaction that inserts its `ax_worker` row).
    pub(super) async fn open_session_log(&mut self, w: &WorkerRecord) -> StoreResult<()> {
        let s = Stmt::new(
            "INSERT INTO ax_session_log (session_id, worker_id, app, handlers, capacity, scheduler_id, \
             connected_at, closed_at, close_reason, labels) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, '', ?)",
        )
        .bind(w.session_id.as_str())
        .bind(w.worker_id.as_str())
        .bind(w.app.as_str())
        .bind(encode_list(&w.handlers))
        .bind(i32::try_from(w.capacity).unwrap_or(i32::MAX))
        .bind(w.scheduler_id.as_str())
        .bind(to_micros(w.connected_at))
        .bind(encode_labels(&w.labels));
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Records that a session ended at `at`, and why (a no-op if it was already recorded).
    pub async fn close_session_log(&mut self, session_id: &str, at: Ts, reason: &str) -> StoreResult<()> {
        let s = Stmt::new(
            "UPDATE ax_session_log SET closed_at = ?, close_reason = ? WHERE session_id = ? AND closed_at IS NULL",
        )
        .bind(to_micros(at))
        .bind(reason)
        .bind(session_id);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Closes the open sessions of an axd that is being forgotten, at each one's last sign of life
    /// (its `ax_worker.last_seen_at`; the connect time if that row is already gone).
    pub(super) async fn close_session_log_of(&mut self, scheduler_id: &str) -> StoreResult<()> {
        let s = Stmt::new(
            "UPDATE ax_session_log SET closed_at = COALESCE((SELECT w.last_seen_at FROM ax_worker w \
             WHERE w.session_id = ax_session_log.session_id), connected_at), close_reason = ? \
             WHERE scheduler_id = ? AND closed_at IS NULL",
        )
        .bind(format!("axd {scheduler_id} stopped heartbeating"))
        .bind(scheduler_id);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// The sessions of `app` that were open at some instant of `from..=to`, oldest first (at most
    /// 1000).
    pub async fn session_spans(&mut self, app: &str, from: Ts, to: Ts) -> StoreResult<Vec<SessionSpan>> {
        let s = Stmt::new(
            "SELECT session_id, worker_id, app, handlers, capacity, scheduler_id, connected_at, closed_at, \
             close_reason, labels FROM ax_session_log WHERE app = ? AND connected_at <= ? \
             AND (closed_at IS NULL OR closed_at >= ?) ORDER BY connected_at, session_id LIMIT ?",
        )
        .bind(app)
        .bind(to_micros(to))
        .bind(to_micros(from))
        .bind(SPAN_LIMIT);
        self.tx
            .fetch(s, "ax_session_log", |r| {
                let session_id: String = r.take()?;
                let worker_id: String = r.take()?;
                let app: String = r.take()?;
                let handlers: String = r.take()?;
                let capacity: i32 = r.take()?;
                let scheduler_id: String = r.take()?;
                let connected_at: i64 = r.take()?;
                let closed_at: Option<i64> = r.take()?;
                let close_reason: String = r.take()?;
                let labels: Option<String> = r.take()?;
                Ok(SessionSpan {
                    session_id,
                    worker_id,
                    app,
                    handlers: decode_list("ax_session_log", &handlers)?,
                    labels: match labels {
                        Some(l) => decode_labels("ax_session_log", &l)?,
                        None => Default::default(),
                    },
                    capacity: u32::try_from(capacity).unwrap_or(0),
                    scheduler_id,
                    connected_at: from_micros(connected_at),
                    closed_at: closed_at.map(from_micros),
                    close_reason,
                })
            })
            .await
    }

    /// Deletes ended sessions that ended before `before`; how many.
    pub async fn purge_session_log(&mut self, before: Ts) -> StoreResult<u64> {
        let s = Stmt::new("DELETE FROM ax_session_log WHERE closed_at IS NOT NULL AND closed_at < ?")
            .bind(to_micros(before));
        self.tx.execute(s).await
    }
}

impl Instances<'_> {
    /// The instances of the task named `task_name` triggered at or before `at`, newest first (at
    /// most `limit`): read through the task's key rows, newest id first.
    pub async fn instances_triggered_before(
        &mut self,
        task_name: &str,
        at: Ts,
        limit: u32,
    ) -> StoreResult<Vec<crate::model::Instance>> {
        let mut s = super::instances::select_instances("");
        s.push(
            " JOIN (SELECT k.instance_id AS page_id FROM ax_instance_key k JOIN ax_instance s ON s.id = k.instance_id \
             WHERE k.task_name = ",
        )
        .push_bind(task_name)
        .push(" AND s.fire_at <= ")
        .push_bind(to_micros(at))
        .push(" ORDER BY k.instance_id DESC LIMIT ")
        .push_bind(i64::from(limit))
        .push(") page ON ax_instance.id = page.page_id ORDER BY id DESC");
        self.read_instances(s).await
    }
}
