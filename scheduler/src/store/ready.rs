//! The dispatcher's operations on `ax_instance`: the ready instances of an app in claim order, marking
//! claimed ones DISPATCHED, and when the next one becomes due.

use super::{
    BATCH, Instances,
    instances::select_instances,
    value::{Row, Stmt, Value},
};
use crate::{
    error::StoreResult,
    model::{Instance, Ts, from_micros, to_micros},
    store::tables::InstanceRaw,
};

impl Instances<'_> {
    /// PENDING instances of `app` available by `until` for these handlers, in priority-aged order
    /// (`ready_at`, see [`crate::model::PRIORITY_STEP`]), locked (skipping rows other axd hold),
    /// narrowed by `filter`.
    pub async fn select_ready(
        &mut self,
        app: &str,
        handlers: &[String],
        until: Ts,
        limit: u32,
        filter: &ReadyFilter<'_>,
    ) -> StoreResult<Vec<Instance>> {
        let d = self.tx.dialect();
        let mut s = select_instances(&format!("{} WHERE {} AND app = ", d.ready_order_index, d.pending));
        s.push_bind(app).push(" AND available_at <= ").push_bind(to_micros(until)).push(" AND handler ");
        if d.arrays {
            s.push("= ANY(").push_bind(Value::Strs(handlers.iter().map(|h| h.as_str().into()).collect())).push(")");
        } else {
            s.push("IN ").push_list(handlers.iter().map(String::as_str));
        }
        s.push(" AND (target_worker IS NULL OR target_worker IN ").push_list(filter.workers.iter().map(String::as_str));
        s.push(")");
        if let Some(selectors) = filter.selectors {
            s.push(" AND (selector = '' OR selector IN ").push_list(selectors.iter().map(String::as_str)).push(")");
        }
        if !filter.skip_ids.is_empty() {
            s.push(" AND id NOT IN ").push_list(filter.skip_ids.iter().copied());
        }
        if !filter.skip_tasks.is_empty() {
            s.push(" AND task_id NOT IN ").push_list(filter.skip_tasks.iter().copied());
        }
        if !filter.skip_keys.is_empty() {
            s.push(" AND (concurrency_value IS NULL OR (task_id, concurrency_value) NOT IN (");
            for (n, (task, value)) in filter.skip_keys.iter().enumerate() {
                s.push(if n == 0 { "(" } else { ", (" })
                    .push_bind(*task)
                    .push(", ")
                    .push_bind(value.as_str())
                    .push(")");
            }
            s.push("))");
        }
        s.push(" ORDER BY ready_at LIMIT ").push_bind(i64::from(limit)).push(d.skip_locked);
        self.read_instances(s).await
    }

    /// Marks instances this transaction has locked DISPATCHED to one session, attempt + 1, at
    /// `now` (or their last change, if later); `trail`: the events the rows hold from now on (see
    /// [`crate::model::trail`]), the caller writes the others. The rows are locked by the claim, so the
    /// statement filters by id alone (a status condition tempts PostgreSQL's planner into scanning
    /// the whole ready index when its statistics are stale).
    ///
    /// On PostgreSQL returns each row's new version (`xmin`, as
    /// [`Instances::read_versioned`](super::Instances::read_versioned) reads it), so that the group
    /// commit of the attempt's first messages can write the row without reading it again; elsewhere
    /// nothing.
    #[allow(clippy::too_many_arguments)]
    pub async fn mark_dispatched(
        &mut self,
        session: &str,
        worker: &str,
        scheduler_id: &str,
        lease_until: Ts,
        now: Ts,
        trail: u8,
        ids: &[i64],
    ) -> StoreResult<Vec<(i64, i64)>> {
        let arrays = self.tx.dialect().arrays;
        let mut versions = Vec::new();
        let chunks: Vec<&[i64]> = if arrays { vec![ids] } else { ids.chunks(BATCH).collect() };
        for chunk in chunks {
            let mut s = Stmt::new("UPDATE ax_instance SET status = 'DISPATCHED', attempt = attempt + 1, session_id = ");
            s.push_bind(session)
                .push(", worker_id = ")
                .push_bind(worker)
                .push(", scheduler_id = ")
                .push_bind(scheduler_id);
            s.push(", lease_expires_at = ").push_bind(to_micros(lease_until));
            s.push(&format!(", trail = {trail}"));
            // Never earlier than the row's last change (see lifecycle::Ctx::after); before
            // updated_at, which MySQL's single-table UPDATE would read already set.
            s.push(", dispatched_at = CASE WHEN updated_at > ").push_bind(to_micros(now));
            s.push(" THEN updated_at ELSE ").push_bind(to_micros(now)).push(" END");
            s.push(", updated_at = CASE WHEN updated_at > ").push_bind(to_micros(now));
            s.push(" THEN updated_at ELSE ").push_bind(to_micros(now)).push(" END WHERE id ");
            if arrays {
                s.push("= ANY(").push_bind(Value::I64s(chunk.to_vec())).push(") RETURNING id, xmin::text::bigint");
                let pair = |r: &mut Row<'_>| -> StoreResult<(i64, i64)> { Ok((r.take()?, r.take()?)) };
                versions.extend(self.tx.fetch(s, InstanceRaw::TABLE, pair).await?);
            } else {
                s.push("IN ").push_list(chunk.iter().copied());
                self.tx.execute(s).await?;
            }
        }
        Ok(versions)
    }

    /// The earliest `available_at` of PENDING instances of these apps, read through the claim's
    /// index (`ready_at` order; migration 23 dropped the index by `available_at`): per app, the
    /// first row in `ready_at` order (one statement for all the apps), then — only for an app whose
    /// first row has a priority, so that rows of lower priority may be due before it — the earliest
    /// `available_at` among its rows ordered before that row's `available_at`. Exact, because a
    /// row's `ready_at` is never after its `available_at` (see [`crate::model::PRIORITY_STEP`]): a
    /// row due before the first row is ordered before the first row's `available_at`. Without
    /// priorities that is one index entry per app.
    pub async fn next_available(&mut self, apps: &[String]) -> StoreResult<Option<Ts>> {
        let (index, pending) = (self.tx.dialect().ready_order_index, self.tx.dialect().pending);
        let mut apps: Vec<&str> = apps.iter().map(String::as_str).collect();
        apps.sort_unstable();
        apps.dedup();
        let mut firsts: Vec<(String, i64, i64)> = Vec::with_capacity(apps.len());
        // SQLite allows 500 terms in a compound SELECT by default.
        for chunk in apps.chunks(100) {
            // Broadcast children of other workers and selectors no stream here matches are counted
            // too: the wake-up is then early, never late.
            let one = format!(
                "SELECT * FROM (SELECT app, ready_at, available_at FROM ax_instance{index} WHERE {pending} \
                 AND app = ? ORDER BY ready_at LIMIT 1) AS f"
            );
            let mut s = Stmt::new(vec![one; chunk.len()].join(" UNION ALL "));
            for app in chunk {
                s = s.bind(*app);
            }
            let row = |r: &mut Row<'_>| -> StoreResult<(String, i64, i64)> { Ok((r.take()?, r.take()?, r.take()?)) };
            firsts.extend(self.tx.fetch(s.replanned(), InstanceRaw::TABLE, row).await?);
        }
        let mut earliest: Option<i64> = None;
        for (app, ready, mut due) in firsts {
            if ready < due {
                let before = Stmt::new(format!(
                    "SELECT MIN(available_at) FROM ax_instance{index} WHERE {pending} AND app = ? \
                     AND ready_at < ?"
                ))
                .bind(app)
                .bind(due)
                .replanned();
                let min: Option<i64> = self.tx.fetch_one(before, InstanceRaw::TABLE, |r| r.take()).await?;
                due = min.map_or(due, |m| m.min(due));
            }
            earliest = Some(earliest.map_or(due, |e| e.min(due)));
        }
        Ok(earliest.map(from_micros))
    }
}

/// What the dispatcher leaves out of a claim (see [`Instances::select_ready`](super::Instances::select_ready)).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadyFilter<'a> {
    /// Workers with free credits here: a broadcast child pinned to another worker is left alone.
    pub workers: &'a [String],
    /// Selectors these streams can satisfy: an instance with another (non-empty) selector is left
    /// alone; `None`: every selector is read (routing checks it anyway).
    pub selectors: Option<&'a [String]>,
    /// Instances routing could not place lately.
    pub skip_ids: &'a [i64],
    /// Tasks at their running limit lately.
    pub skip_tasks: &'a [i64],
    /// (task, concurrency key value) pairs at their limit lately.
    pub skip_keys: &'a [(i64, String)],
}
