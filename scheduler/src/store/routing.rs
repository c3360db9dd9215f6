//! Operations on the routing inputs that several axd must agree on: worker failure streaks
//! (`ax_worker_streak`), per-task running limits (`ax_task_limit`), per-app rate-limit buckets
//! (`ax_app_limit`), the children of a parent instance, and the coalesced fires of tasks.

use std::{collections::HashMap, num::NonZeroU32};

use super::{
    BATCH, Instances, Limits, Tasks,
    instances::{push_apps, select_instances},
    value::{Stmt, Value},
};
use crate::{
    error::{StoreError, StoreResult},
    model::{
        AppLimit, CooldownPolicy, Instance, InstanceStatus, Ts, WorkerStreak, duration_micros, from_micros, to_micros,
    },
};

/// What the claim may start of one task with a limit row (see [`Limits::lock_task_limits`](super::Limits::lock_task_limits)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskRoom {
    /// Most instances DISPATCHED or RUNNING at once.
    pub max_running: u32,
    /// DISPATCHED or RUNNING now.
    pub active: u32,
    /// For a task that runs its instances in order: its oldest instance that is not final.
    pub first_unfinished: Option<i64>,
    /// Most instances per value of its concurrency key DISPATCHED or RUNNING at once.
    pub key_limit: Option<u32>,
}

/// (app, worker id, handler): the key of a streak.
pub type StreakKey<'a> = (&'a str, &'a str, &'a str);

const STREAK_COLUMNS: &str = "app, worker_id, handler, failures, cooldown_until, cooldown_us, updated_at";

fn read_streak(r: &mut super::value::Row<'_>) -> StoreResult<WorkerStreak> {
    let app = r.take()?;
    let worker_id = r.take()?;
    let handler = r.take()?;
    let failures: i32 = r.take()?;
    let until: Option<i64> = r.take()?;
    let cooldown: Option<i64> = r.take()?;
    let _updated: i64 = r.take()?;
    Ok(WorkerStreak {
        app,
        worker_id,
        handler,
        failures: u32::try_from(failures).unwrap_or(0),
        cooldown_until: until.map(from_micros),
        cooldown: cooldown.map(|us| std::time::Duration::from_micros(u64::try_from(us).unwrap_or(0))),
    })
}

/// A streak's values in [`STREAK_COLUMNS`] order.
fn streak_row(st: &WorkerStreak, now: Ts) -> Vec<Value<'_>> {
    vec![
        Value::from(st.app.as_str()),
        Value::from(st.worker_id.as_str()),
        Value::from(st.handler.as_str()),
        Value::from(st.failures),
        Value::OptI64(st.cooldown_until.map(to_micros)),
        Value::OptI64(st.cooldown.map(duration_micros)),
        Value::I64(to_micros(now)),
    ]
}

fn push_keys<'a>(s: &mut Stmt<'a>, keys: &[StreakKey<'a>]) {
    s.push("(app, worker_id, handler) IN ")
        .push_row_list(keys.iter().map(|(a, w, h)| vec![Value::from(*a), Value::from(*w), Value::from(*h)]));
}

impl Limits<'_> {
    /// Locks the streaks of these (app, worker, handler) keys (those that exist), in key order.
    pub async fn lock_streaks(&mut self, keys: &[StreakKey<'_>]) -> StoreResult<Vec<WorkerStreak>> {
        let mut out = Vec::new();
        let mut sorted = keys.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        for chunk in sorted.chunks(BATCH / 3) {
            let mut s = Stmt::new(format!("SELECT {STREAK_COLUMNS} FROM ax_worker_streak WHERE "));
            push_keys(&mut s, chunk);
            s.push(" ORDER BY app, worker_id, handler").push(self.tx.dialect().for_update);
            out.extend(self.tx.fetch(s, "ax_worker_streak", read_streak).await?);
        }
        Ok(out)
    }

    /// Writes streaks (insert or update).
    pub async fn write_streaks(&mut self, streaks: &[WorkerStreak], now: Ts) -> StoreResult<()> {
        for chunk in streaks.chunks(BATCH / 7) {
            let mut s = Stmt::new(format!("INSERT INTO ax_worker_streak ({STREAK_COLUMNS}) VALUES "));
            s.push_rows(chunk.iter().map(|st| streak_row(st, now)));
            let upsert = self
                .tx
                .dialect()
                .upsert(&["app", "worker_id", "handler"], &["failures", "cooldown_until", "cooldown_us", "updated_at"]);
            s.push(&upsert);
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// Creates the streak rows that do not exist yet with these values (existing rows are left as
    /// they are), so that a lock taken next covers them.
    pub async fn seed_streaks(&mut self, streaks: &[WorkerStreak], now: Ts) -> StoreResult<()> {
        for chunk in streaks.chunks(BATCH / 7) {
            let mut s = Stmt::new(format!("INSERT INTO ax_worker_streak ({STREAK_COLUMNS}) VALUES "));
            s.push_rows(chunk.iter().map(|st| streak_row(st, now)));
            let ignore = self.tx.dialect().ignore_duplicate_on("app");
            s.push(&ignore);
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// Ends the streaks of these keys (a success).
    pub async fn delete_streaks(&mut self, keys: &[StreakKey<'_>]) -> StoreResult<()> {
        for chunk in keys.chunks(BATCH / 3) {
            let mut s = Stmt::new("DELETE FROM ax_worker_streak WHERE ");
            push_keys(&mut s, chunk);
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// Streaks, optionally only of some apps, ordered by app, worker and handler (at most 10,000).
    pub async fn list_streaks(&mut self, apps: Option<&[String]>) -> StoreResult<Vec<WorkerStreak>> {
        let mut s = Stmt::new(format!("SELECT {STREAK_COLUMNS} FROM ax_worker_streak WHERE 1 = 1"));
        push_apps(&mut s, "app", apps);
        s.push(" ORDER BY app, worker_id, handler LIMIT 10000");
        self.tx.fetch(s, "ax_worker_streak", read_streak).await
    }
}

impl Tasks<'_> {
    /// The cooldown settings of these tasks (tasks that no longer exist are left out).
    pub async fn task_cooldowns(&mut self, task_ids: &[i64]) -> StoreResult<HashMap<i64, CooldownPolicy>> {
        let mut out = HashMap::new();
        for chunk in task_ids.chunks(BATCH) {
            let mut s = Stmt::new("SELECT id, cooldown_after, cooldown_us FROM ax_task WHERE id IN ");
            s.push_list(chunk.iter().copied());
            let rows = self
                .tx
                .fetch(s, "ax_task", |r| {
                    let id: i64 = r.take()?;
                    let after: Option<i32> = r.take()?;
                    let us: Option<i64> = r.take()?;
                    Ok((
                        id,
                        CooldownPolicy {
                            after: after.map(|n| u32::try_from(n).unwrap_or(0)),
                            duration: us.map(|us| std::time::Duration::from_micros(u64::try_from(us).unwrap_or(0))),
                        },
                    ))
                })
                .await?;
            out.extend(rows);
        }
        Ok(out)
    }
}

impl Limits<'_> {
    /// Writes the limit row of a task with this configuration: one when it has a running limit, a
    /// concurrency key or runs its instances in order (a BUFFER overlap policy: one at a time, so
    /// its limit is 1), none otherwise. A row that stays is updated in place, never deleted and inserted again: a claim
    /// waiting on its lock then reads the new values, where a re-inserted row would be a row its
    /// lock never saw (and the claim would go on without any limit).
    pub async fn set_task_limit(&mut self, task_id: i64, config: Option<&crate::model::TaskConfig>) -> StoreResult<()> {
        let Some((max, in_order, key_limit)) = config.and_then(limit_row) else {
            self.tx.execute(Stmt::new("DELETE FROM ax_task_limit WHERE task_id = ?").bind(task_id)).await?;
            return Ok(());
        };
        // Without a running limit, one no task reaches (the column is NOT NULL).
        let max = max.map_or(i32::MAX as u32, NonZeroU32::get);
        let mut s = Stmt::new("INSERT INTO ax_task_limit (task_id, max_running, in_order, key_limit) VALUES ");
        s.push_list([
            Value::I64(task_id),
            Value::from(max),
            Value::Bool(in_order),
            Value::from(key_limit.map(|k| i32::try_from(k.get()).unwrap_or(i32::MAX))),
        ]);
        let upsert = self.tx.dialect().upsert(&["task_id"], &["max_running", "in_order", "key_limit"]);
        s.push(&upsert);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Locks the limit rows of these tasks (those that have one), in task order: for each, its
    /// running limit, how many of its instances are DISPATCHED or RUNNING now, and — for a task that
    /// runs its instances in order — the id of its oldest instance that is not final (the only one
    /// that may start).
    pub async fn lock_task_limits(&mut self, task_ids: &[i64]) -> StoreResult<HashMap<i64, TaskRoom>> {
        let mut ids = task_ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let mut limits: Vec<(i64, u32, bool, Option<u32>)> = Vec::new();
        for chunk in ids.chunks(BATCH) {
            let mut s =
                Stmt::new("SELECT task_id, max_running, in_order, key_limit FROM ax_task_limit WHERE task_id IN ");
            s.push_list(chunk.iter().copied()).push(" ORDER BY task_id").push(self.tx.dialect().for_update);
            limits.extend(
                self.tx
                    .fetch(s, "ax_task_limit", |r| {
                        Ok((
                            r.take::<i64>()?,
                            u32::try_from(r.take::<i32>()?).unwrap_or(0),
                            r.take::<bool>()?,
                            r.take::<Option<i32>>()?.map(|k| u32::try_from(k).unwrap_or(0)),
                        ))
                    })
                    .await?,
            );
        }
        let mut out: HashMap<i64, TaskRoom> = limits
            .iter()
            .map(|(id, max, _, key_limit)| {
                (*id, TaskRoom { max_running: *max, active: 0, first_unfinished: None, key_limit: *key_limit })
            })
            .collect();
        if limits.is_empty() {
            return Ok(out);
        }
        let counts = self
            .tx
            .instances()
            .count_by_task(
                &limits.iter().map(|(id, ..)| *id).collect::<Vec<_>>(),
                &[InstanceStatus::Dispatched, InstanceStatus::Running],
            )
            .await?;
        for (id, n) in counts {
            if let Some(e) = out.get_mut(&id) {
                e.active = u32::try_from(n).unwrap_or(u32::MAX);
            }
        }
        let ordered: Vec<i64> = limits.iter().filter(|(_, _, o, _)| *o).map(|(id, ..)| *id).collect();
        for chunk in ordered.chunks(BATCH) {
            // PENDING ones through the task's index of them, held ones through the lease index
            // (migration 22).
            let mut s = Stmt::new(
                "SELECT task_id, MIN(id) FROM (SELECT task_id, id FROM ax_instance WHERE status = 'PENDING' AND task_id IN ",
            );
            s.push_list(chunk.iter().copied());
            s.push(" UNION ALL SELECT task_id, id FROM ax_instance WHERE status IN ('DISPATCHED', 'RUNNING') AND task_id IN ");
            s.push_list(chunk.iter().copied()).push(") unfinished GROUP BY task_id");
            for (task, first) in self.tx.fetch(s, "ax_instance", |r| Ok((r.take::<i64>()?, r.take::<i64>()?))).await? {
                if let Some(e) = out.get_mut(&task) {
                    e.first_unfinished = Some(first);
                }
            }
        }
        Ok(out)
    }
}

impl Instances<'_> {
    /// The ids of the task's instances that are not final yet, oldest first, at most `limit`:
    /// PENDING ones through the task's index of them, held ones through the lease index (migration
    /// 22). `id + 0`: by the bare id, SQLite scans the table in id order for the held part.
    pub async fn active_instances_of(&mut self, task_id: i64, limit: u32) -> StoreResult<Vec<i64>> {
        let s = Stmt::new(
            "SELECT id FROM (SELECT id FROM ax_instance WHERE task_id = ? AND status = 'PENDING' \
             UNION ALL SELECT id FROM ax_instance WHERE status IN ('DISPATCHED', 'RUNNING') AND task_id = ?) \
             unfinished ORDER BY id + 0 LIMIT ?",
        )
        .bind(task_id)
        .bind(task_id)
        .bind(i64::from(limit));
        self.tx.fetch(s, "ax_instance", |r| r.take()).await
    }

    /// Instances per task in these statuses (tasks with none are left out).
    pub async fn count_by_task(
        &mut self,
        task_ids: &[i64],
        statuses: &[InstanceStatus],
    ) -> StoreResult<HashMap<i64, u64>> {
        let mut out = HashMap::new();
        // The statuses are written into the statement (they are constants) so that a partial index
        // serves it: the task's index of PENDING instances, or the lease index of the held ones.
        let list: Vec<String> = statuses.iter().map(|s| format!("'{}'", s.as_str())).collect();
        for chunk in task_ids.chunks(BATCH) {
            let mut s = Stmt::new(format!(
                "SELECT task_id, COUNT(*) FROM ax_instance WHERE status IN ({}) AND task_id IN ",
                list.join(", ")
            ));
            s.push_list(chunk.iter().copied()).push(" GROUP BY task_id");
            out.extend(
                self.tx
                    .fetch(s, "ax_instance", |r| Ok((r.take::<i64>()?, u64::try_from(r.take::<i64>()?).unwrap_or(0))))
                    .await?,
            );
        }
        Ok(out)
    }
}

impl Limits<'_> {
    /// Locks the rate-limit buckets of these apps (those that have one), in app order.
    pub async fn lock_app_limits(&mut self, apps: &[&str]) -> StoreResult<Vec<AppLimit>> {
        let mut sorted = apps.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut s = Stmt::new(format!("SELECT {APP_LIMIT_COLUMNS} FROM ax_app_limit WHERE app IN "));
        s.push_list(sorted).push(" ORDER BY app").push(self.tx.dialect().for_update);
        self.tx.fetch(s, "ax_app_limit", read_app_limit).await
    }

    /// Writes a bucket's tokens after a claim took some.
    pub async fn write_app_tokens(&mut self, app: &str, tokens: f64, refilled_at: Ts) -> StoreResult<()> {
        let s = Stmt::new("UPDATE ax_app_limit SET tokens = ?, refilled_at = ? WHERE app = ?")
            .bind(tokens)
            .bind(to_micros(refilled_at))
            .bind(app);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Creates or replaces an app's limit.
    pub async fn set_app_limit(&mut self, l: &AppLimit) -> StoreResult<()> {
        let mut s = Stmt::new(format!("INSERT INTO ax_app_limit ({APP_LIMIT_COLUMNS}) VALUES "));
        s.push_list([
            Value::from(l.app.as_str()),
            Value::F64(l.per_second),
            Value::from(l.burst),
            Value::F64(l.tokens),
            Value::I64(to_micros(l.refilled_at)),
            Value::from(l.updated_by.as_str()),
            Value::I64(to_micros(l.updated_at)),
        ]);
        let upsert = self
            .tx
            .dialect()
            .upsert(&["app"], &["per_second", "burst", "tokens", "refilled_at", "updated_by", "updated_at"]);
        s.push(&upsert);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Removes an app's limit; whether it had one.
    pub async fn delete_app_limit(&mut self, app: &str) -> StoreResult<bool> {
        Ok(self.tx.execute(Stmt::new("DELETE FROM ax_app_limit WHERE app = ?").bind(app)).await? > 0)
    }

    /// App limits ordered by app, optionally only of some apps.
    pub async fn list_app_limits(&mut self, apps: Option<&[String]>) -> StoreResult<Vec<AppLimit>> {
        let mut s = Stmt::new(format!("SELECT {APP_LIMIT_COLUMNS} FROM ax_app_limit WHERE 1 = 1"));
        push_apps(&mut s, "app", apps);
        s.push(" ORDER BY app");
        self.tx.fetch(s, "ax_app_limit", read_app_limit).await
    }
}

impl Instances<'_> {
    /// Per parent, how many of its children are in each status.
    pub async fn child_counts(&mut self, parent_ids: &[i64]) -> StoreResult<Vec<(i64, InstanceStatus, u64)>> {
        let mut out = Vec::new();
        for chunk in parent_ids.chunks(BATCH) {
            let mut s = Stmt::new("SELECT parent_id, status, COUNT(*) FROM ax_instance WHERE parent_id IN ");
            s.push_list(chunk.iter().copied()).push(" GROUP BY parent_id, status");
            let rows = self
                .tx
                .fetch(s, "ax_instance", |r| {
                    let parent: i64 = r.take()?;
                    let status: String = r.take()?;
                    let n: i64 = r.take()?;
                    let status = status.parse().map_err(|e| StoreError::Corrupt { table: "ax_instance", reason: e })?;
                    Ok((parent, status, u64::try_from(n).unwrap_or(0)))
                })
                .await?;
            out.extend(rows);
        }
        Ok(out)
    }

    /// The children of a parent by shard index (at most `limit`).
    pub async fn children_of(&mut self, parent_id: i64, limit: u32) -> StoreResult<Vec<Instance>> {
        let s = select_instances(" WHERE parent_id = ? ORDER BY shard_index, id LIMIT ?")
            .bind(parent_id)
            .bind(i64::from(limit));
        self.read_instances(s).await
    }

    /// The ids of a parent's children that are not final (to cancel them with it).
    pub async fn active_children(&mut self, parent_id: i64) -> StoreResult<Vec<i64>> {
        let s = Stmt::new(
            "SELECT id FROM ax_instance WHERE parent_id = ? AND status IN ('PENDING', 'DISPATCHED', 'RUNNING') \
             ORDER BY id",
        )
        .bind(parent_id);
        self.tx.fetch(s, "ax_instance", |r| r.take()).await
    }
}

impl Tasks<'_> {
    /// The label selectors tasks use, per app (for the claim's filter).
    pub async fn task_selectors(&mut self) -> StoreResult<HashMap<String, Vec<String>>> {
        let s = Stmt::new("SELECT DISTINCT app, selector FROM ax_task WHERE selector <> '' ORDER BY app, selector");
        let rows = self.tx.fetch(s, "ax_task", |r| Ok((r.take::<String>()?, r.take::<String>()?))).await?;
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        for (app, sel) in rows {
            out.entry(app).or_default().push(sel);
        }
        Ok(out)
    }
}

impl Instances<'_> {
    /// Locks up to `limit` PENDING broadcast children due before `cutoff` whose worker has had no
    /// session since `cutoff` (none open, none closed after it), skipping rows other axd hold.
    pub async fn claim_orphans(&mut self, cutoff: Ts, limit: u32) -> StoreResult<Vec<Instance>> {
        let s = select_instances(&format!(
            " WHERE status = 'PENDING' AND target_worker IS NOT NULL AND available_at < ? AND NOT EXISTS \
             (SELECT 1 FROM ax_session_log l WHERE l.app = ax_instance.app AND l.worker_id = ax_instance.target_worker \
             AND (l.closed_at IS NULL OR l.closed_at >= ?)) ORDER BY available_at LIMIT ?{}",
            self.tx.dialect().skip_locked
        ))
        .bind(to_micros(cutoff))
        .bind(to_micros(cutoff))
        .bind(i64::from(limit));
        self.read_instances(s).await
    }
}

impl Tasks<'_> {
    /// Records tasks' runs of coalesced fires: `Some((since, count))` while fires are coalesced,
    /// `None` when one ran again.
    pub async fn set_coalesced(&mut self, tasks: &[(i64, Option<(Ts, u64)>)]) -> StoreResult<()> {
        for (id, c) in tasks {
            let s = Stmt::new("UPDATE ax_task SET coalesced_since = ?, coalesced_count = ? WHERE id = ?")
                .bind(c.map(|(since, _)| to_micros(since)))
                .bind(c.map_or(0, |(_, n)| i64::try_from(n).unwrap_or(i64::MAX)))
                .bind(*id);
            self.tx.execute(s).await?;
        }
        Ok(())
    }
}

const APP_LIMIT_COLUMNS: &str = "app, per_second, burst, tokens, refilled_at, updated_by, updated_at";

fn read_app_limit(r: &mut super::value::Row<'_>) -> StoreResult<AppLimit> {
    Ok(AppLimit {
        app: r.take()?,
        per_second: r.take()?,
        burst: u32::try_from(r.take::<i32>()?).unwrap_or(1),
        tokens: r.take()?,
        refilled_at: from_micros(r.take()?),
        updated_by: r.take()?,
        updated_at: from_micros(r.take()?),
    })
}

/// What a task's limit row holds (running limit, in order, per-key limit), `None` for a task
/// without one.
pub(crate) fn limit_row(c: &crate::model::TaskConfig) -> Option<(Option<NonZeroU32>, bool, Option<NonZeroU32>)> {
    let in_order = c.concurrency.buffers();
    let max = if in_order { Some(NonZeroU32::MIN) } else { c.placement.max_running };
    let key_limit = c.placement.concurrency_key.as_ref().and(c.placement.concurrency_limit);
    (max.is_some() || key_limit.is_some()).then_some((max, in_order, key_limit))
}
