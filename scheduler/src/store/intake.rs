//! Operations on `ax_intake`, the table applications insert instances into from their own
//! transactions (README "Delayed enqueue from code").

use std::time::Duration;

use super::{Intake, value::Stmt};
use crate::{
    error::StoreResult,
    model::{Ts, from_micros},
};

/// A committed row of `ax_intake`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntakeRow {
    pub id: i64,
    /// The task to create an instance of.
    pub task_name: String,
    /// Its params (`None`: the task's, or too large to read: see `params_bytes`).
    pub params: Option<String>,
    /// The size of params larger than [`crate::validate::MAX_PARAMS_BYTES`], which are not read.
    pub params_bytes: Option<i64>,
    /// Its idempotency key (`None`: `intake:<id>`).
    pub key: Option<String>,
    /// When it runs.
    pub run_at: Option<Ts>,
    /// Or this long after `created_at`.
    pub delay: Option<Duration>,
    /// When the application inserted it (database clock).
    pub created_at: Ts,
    /// The app its task must belong to (`None`: a trusted writer's row, the task's own app).
    pub app: Option<String>,
    /// The database role or account that inserted it (empty on SQLite).
    pub inserted_by: String,
    /// An event row: the event's name (`task_name` is then empty, `params` the payload, the key
    /// the event id; README "Events").
    pub event_name: Option<String>,
}

impl Intake<'_> {
    /// Locks up to `limit` rows not refused yet, oldest first, skipping rows other axd hold (and
    /// rows of transactions that have not committed: those are not visible yet). Params larger
    /// than allowed are not read (whoever may insert rows could make every axd that claims them
    /// read hundreds of megabytes): only their size is.
    pub async fn claim_intake(&mut self, limit: u32) -> StoreResult<Vec<IntakeRow>> {
        let d = self.tx.dialect();
        let size = d.octet_length("params");
        let max = crate::validate::MAX_PARAMS_BYTES;
        let s = Stmt::new(format!(
            "SELECT id, task_name, CASE WHEN {size} > {max} THEN NULL ELSE params END, \
             CASE WHEN {size} > {max} THEN {size} ELSE NULL END, idempotency_key, run_at_us, delay_us, \
             created_at, app, inserted_by, event_name FROM ax_intake WHERE error IS NULL ORDER BY id LIMIT ?{}",
            d.skip_locked
        ))
        .bind(i64::from(limit));
        self.tx
            .fetch(s, "ax_intake", |r| {
                Ok(IntakeRow {
                    id: r.take()?,
                    task_name: r.take()?,
                    params: r.take()?,
                    params_bytes: r.take()?,
                    key: r.take()?,
                    run_at: r.take::<Option<i64>>()?.map(from_micros),
                    delay: r.take::<Option<i64>>()?.map(|us| Duration::from_micros(u64::try_from(us).unwrap_or(0))),
                    created_at: from_micros(r.take()?),
                    app: r.take()?,
                    inserted_by: r.take()?,
                    event_name: r.take()?,
                })
            })
            .await
    }

    /// Deletes consumed rows.
    pub async fn delete_intake(&mut self, ids: &[i64]) -> StoreResult<()> {
        for chunk in ids.chunks(super::BATCH) {
            let mut s = Stmt::new("DELETE FROM ax_intake WHERE id IN ");
            s.push_list(chunk.iter().copied());
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// Marks a row refused, with why (it stays for the application to read, and is not read again).
    pub async fn refuse_intake(&mut self, id: i64, error: &str) -> StoreResult<()> {
        self.tx.execute(Stmt::new("UPDATE ax_intake SET error = ? WHERE id = ?").bind(error).bind(id)).await?;
        Ok(())
    }
}
