//! Concurrency keys and uniqueness windows (README "Concurrency keys and unique triggers"): the
//! running count per key value the claim checks under its task's limit row, and `ax_unique`, the
//! value each triggered instance of a task with a uniqueness window holds until the window ends.

use std::collections::HashMap;

use super::{
    BATCH, Backend, Limits,
    value::{Stmt, Value},
};
use crate::{
    error::StoreResult,
    model::{Ts, to_micros},
};

/// Who holds a uniqueness value ([`Limits::take_unique`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniqueHold {
    /// The value is this transaction's now (it was free, or its window had ended): create the
    /// instance and record it with [`Limits::hold_unique`].
    Taken,
    /// An instance created less than the window ago holds it, until this time.
    HeldBy(i64, Ts),
}

impl Limits<'_> {
    /// Per value among `values`, the instances of task `task_id` with that concurrency value that
    /// are DISPATCHED or RUNNING (values with none are left out).
    pub async fn count_by_key(&mut self, task_id: i64, values: &[String]) -> StoreResult<HashMap<String, u64>> {
        let mut values: Vec<&str> = values.iter().map(String::as_str).collect();
        values.sort_unstable();
        values.dedup();
        let mut out = HashMap::new();
        for chunk in values.chunks(BATCH) {
            // Constant statuses, so that the partial index of keyed active instances serves it.
            let mut s = Stmt::new(
                "SELECT concurrency_value, COUNT(*) FROM ax_instance WHERE status IN ('DISPATCHED', 'RUNNING') \
                 AND task_id = ? AND concurrency_value IN ",
            )
            .bind(task_id);
            s.push_list(chunk.iter().map(|v| Value::from(*v))).push(" GROUP BY concurrency_value");
            let rows = self
                .tx
                .fetch(s, "ax_instance", |r| Ok((r.take::<String>()?, u64::try_from(r.take::<i64>()?).unwrap_or(0))))
                .await?;
            out.extend(rows);
        }
        Ok(out)
    }

    /// Takes `value` of task `task_id`'s uniqueness key for a trigger at `now` until `until`,
    /// unless an instance's window holds it. The row is locked until the transaction ends, so a
    /// concurrent trigger with the same value waits and then finds it held.
    pub async fn take_unique(&mut self, task_id: i64, value: &str, now: Ts, until: Ts) -> StoreResult<UniqueHold> {
        let (now, until) = (to_micros(now), to_micros(until));
        let insert = "INSERT INTO ax_unique (task_id, key_value, instance_id, until_at) VALUES (?, ?, NULL, ?)";
        let s = match self.tx.dialect().backend {
            // The assignments run in order: instance_id's condition reads the old until_at.
            Backend::MySql => Stmt::new(format!(
                "{insert} ON DUPLICATE KEY UPDATE instance_id = IF(until_at <= ?, NULL, instance_id), \
                 until_at = IF(until_at <= ?, VALUES(until_at), until_at)"
            ))
            .bind(task_id)
            .bind(value)
            .bind(until)
            .bind(now)
            .bind(now),
            Backend::Postgres | Backend::Sqlite => Stmt::new(format!(
                "{insert} ON CONFLICT (task_id, key_value) DO UPDATE SET instance_id = NULL, \
                 until_at = excluded.until_at WHERE ax_unique.until_at <= ?"
            ))
            .bind(task_id)
            .bind(value)
            .bind(until)
            .bind(now),
        };
        self.tx.execute(s).await?;
        let mut s = Stmt::new("SELECT instance_id, until_at FROM ax_unique WHERE task_id = ? AND key_value = ?")
            .bind(task_id)
            .bind(value);
        s.push(self.tx.dialect().for_update);
        let row = self.tx.fetch(s, "ax_unique", |r| Ok((r.take::<Option<i64>>()?, r.take::<i64>()?))).await?.pop();
        Ok(match row {
            Some((Some(id), until)) => UniqueHold::HeldBy(id, crate::model::from_micros(until)),
            _ => UniqueHold::Taken,
        })
    }

    /// Records the instance that holds a value [`take_unique`](Self::take_unique) took; `None`
    /// gives the value up (no instance was created for it).
    pub async fn hold_unique(&mut self, task_id: i64, value: &str, instance_id: Option<i64>) -> StoreResult<()> {
        let s = match instance_id {
            Some(id) => Stmt::new("UPDATE ax_unique SET instance_id = ? WHERE task_id = ? AND key_value = ?").bind(id),
            None => Stmt::new("DELETE FROM ax_unique WHERE instance_id IS NULL AND task_id = ? AND key_value = ?"),
        };
        self.tx.execute(s.bind(task_id).bind(value)).await?;
        Ok(())
    }

    /// Deletes uniqueness rows whose window ended before `before`, at most `limit`; how many.
    pub async fn purge_unique(&mut self, before: Ts, limit: u32) -> StoreResult<u64> {
        // A subquery with LIMIT is refused by MariaDB in IN; a DELETE ... LIMIT by PostgreSQL.
        let s = match self.tx.dialect().backend {
            Backend::MySql => Stmt::new("DELETE FROM ax_unique WHERE until_at < ? LIMIT ?")
                .bind(to_micros(before))
                .bind(i64::from(limit)),
            Backend::Postgres | Backend::Sqlite => Stmt::new(
                "DELETE FROM ax_unique WHERE (task_id, key_value) IN \
                 (SELECT task_id, key_value FROM ax_unique WHERE until_at < ? LIMIT ?)",
            )
            .bind(to_micros(before))
            .bind(i64::from(limit)),
        };
        self.tx.execute(s).await
    }
}
