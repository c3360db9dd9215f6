//! Operations on what shapes fires and ties instances together: calendars (`ax_calendar`), pauses,
//! the task graph (`ax_task_edge`, under the `task_graph` lock of `ax_lock`), the links between
//! instances (`ax_instance_link`), runs and DAG joins (`ax_run_join`).

use std::collections::{BTreeSet, HashMap};

use chrono::NaiveDate;

use super::{
    BATCH, Calendars, Flow, Instances, Tasks,
    instances::select_instances,
    tables::{TaskRaw, decode_dates, encode_names},
    value::{Stmt, Value},
};
use crate::{
    error::{StoreError, StoreResult},
    model::{Calendar, EdgeKind, Instance, Pause, Task, Ts, from_micros, to_micros},
};

const CALENDAR_COLUMNS: &str = "name, description, dates, created_by, created_at, updated_by, updated_at";

fn read_calendar(r: &mut super::value::Row<'_>) -> StoreResult<Calendar> {
    let name = r.take()?;
    let description = r.take()?;
    let dates: String = r.take()?;
    Ok(Calendar {
        name,
        description,
        dates: decode_dates("ax_calendar", Some(&dates))?,
        created_by: r.take()?,
        created_at: from_micros(r.take()?),
        updated_by: r.take()?,
        updated_at: from_micros(r.take()?),
    })
}

fn dates_text(dates: &BTreeSet<NaiveDate>) -> String {
    encode_names(dates.iter().map(|d| d.format("%Y-%m-%d").to_string())).unwrap_or_default()
}

fn kind_of(table: &'static str, s: &str) -> StoreResult<EdgeKind> {
    s.parse().map_err(|e| StoreError::Corrupt { table, reason: e })
}

/// An edge of the task graph: (from task, kind, to task).
pub type Edge = (i64, EdgeKind, i64);

impl Calendars<'_> {
    /// The dates of these calendars (those that exist), by name.
    pub async fn calendar_dates<'a>(
        &mut self,
        names: impl Iterator<Item = &'a str>,
    ) -> StoreResult<HashMap<String, BTreeSet<NaiveDate>>> {
        let mut names: Vec<&str> = names.collect();
        names.sort_unstable();
        names.dedup();
        let mut out = HashMap::new();
        for chunk in names.chunks(BATCH) {
            let mut s = Stmt::new("SELECT name, dates FROM ax_calendar WHERE name IN ");
            s.push_list(chunk.iter().copied());
            for (name, dates) in
                self.tx.fetch(s, "ax_calendar", |r| Ok((r.take::<String>()?, r.take::<String>()?))).await?
            {
                out.insert(name, decode_dates("ax_calendar", Some(&dates))?);
            }
        }
        Ok(out)
    }

    /// The calendar with this name; with `lock`, locked until the transaction ends.
    pub async fn get_calendar(&mut self, name: &str, lock: bool) -> StoreResult<Option<Calendar>> {
        let lock = if lock { self.tx.dialect().for_update } else { "" };
        let s = Stmt::new(format!("SELECT {CALENDAR_COLUMNS} FROM ax_calendar WHERE name = ?{lock}")).bind(name);
        Ok(self.tx.fetch(s, "ax_calendar", read_calendar).await?.pop())
    }

    /// Every calendar, by name.
    pub async fn list_calendars(&mut self) -> StoreResult<Vec<Calendar>> {
        let s = Stmt::new(format!("SELECT {CALENDAR_COLUMNS} FROM ax_calendar ORDER BY name LIMIT 10000"));
        self.tx.fetch(s, "ax_calendar", read_calendar).await
    }

    /// Creates a calendar; [`StoreError::UniqueViolation`] if the name exists.
    pub async fn insert_calendar(&mut self, c: &Calendar) -> StoreResult<()> {
        let mut s = Stmt::new(format!("INSERT INTO ax_calendar ({CALENDAR_COLUMNS}) VALUES "));
        s.push_list([
            Value::from(c.name.as_str()),
            Value::from(c.description.as_str()),
            Value::Str(dates_text(&c.dates).into()),
            Value::from(c.created_by.as_str()),
            Value::I64(to_micros(c.created_at)),
            Value::from(c.updated_by.as_str()),
            Value::I64(to_micros(c.updated_at)),
        ]);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Replaces a calendar's description and dates.
    pub async fn update_calendar(&mut self, c: &Calendar) -> StoreResult<()> {
        let s = Stmt::new(
            "UPDATE ax_calendar SET description = ?, dates = ?, updated_by = ?, updated_at = ? WHERE name = ?",
        )
        .bind(c.description.as_str())
        .bind(dates_text(&c.dates))
        .bind(c.updated_by.as_str())
        .bind(to_micros(c.updated_at))
        .bind(c.name.as_str());
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Deletes a calendar; whether it existed.
    pub async fn delete_calendar(&mut self, name: &str) -> StoreResult<bool> {
        Ok(self.tx.execute(Stmt::new("DELETE FROM ax_calendar WHERE name = ?").bind(name)).await? > 0)
    }
}

impl Tasks<'_> {
    /// The tasks that use a calendar, by name (at most `limit`).
    pub async fn tasks_with_calendar(&mut self, name: &str, limit: u32) -> StoreResult<Vec<Task>> {
        let s =
            Stmt::new(format!("SELECT {} FROM ax_task WHERE calendar = ? ORDER BY name LIMIT ?", TaskRaw::columns()))
                .bind(name)
                .bind(i64::from(limit));
        self.tx.fetch(s, TaskRaw::TABLE, |r| TaskRaw::read(r)?.into_task()).await
    }

    /// Sets (or with `None`, clears) a task's pause.
    pub async fn set_pause(&mut self, task_id: i64, pause: Option<&Pause>) -> StoreResult<()> {
        let s =
            Stmt::new("UPDATE ax_task SET paused_at = ?, paused_by = ?, pause_note = ?, paused_until = ? WHERE id = ?")
                .bind(pause.map(|p| to_micros(p.at)))
                .bind(pause.map(|p| p.by.as_str()))
                .bind(pause.map(|p| p.note.as_str()))
                .bind(pause.and_then(|p| p.until).map(to_micros))
                .bind(task_id);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Sets one task's next fire time.
    pub async fn set_next_fire(&mut self, task_id: i64, next: Option<Ts>) -> StoreResult<()> {
        let s = Stmt::new("UPDATE ax_task SET next_fire_at = ? WHERE id = ?").bind(next.map(to_micros)).bind(task_id);
        self.tx.execute(s).await?;
        Ok(())
    }

    /// Tasks by name (those that exist).
    pub async fn tasks_by_names(&mut self, names: &[&str]) -> StoreResult<Vec<Task>> {
        let mut out = Vec::new();
        for chunk in names.chunks(BATCH) {
            let mut s = Stmt::new(format!("SELECT {} FROM ax_task WHERE name IN ", TaskRaw::columns()));
            s.push_list(chunk.iter().copied());
            out.extend(self.tx.fetch(s, TaskRaw::TABLE, |r| TaskRaw::read(r)?.into_task()).await?);
        }
        Ok(out)
    }

    /// Tasks by id (those that exist).
    pub async fn tasks_by_ids(&mut self, ids: &[i64]) -> StoreResult<Vec<Task>> {
        let mut out = Vec::new();
        for chunk in ids.chunks(BATCH) {
            let mut s = Stmt::new(format!("SELECT {} FROM ax_task WHERE id IN ", TaskRaw::columns()));
            s.push_list(chunk.iter().copied());
            out.extend(self.tx.fetch(s, TaskRaw::TABLE, |r| TaskRaw::read(r)?.into_task()).await?);
        }
        Ok(out)
    }
}

impl Flow<'_> {
    /// Takes the `task_graph` lock until the transaction ends: every change of task edges holds it,
    /// so two changes cannot close a cycle together.
    pub async fn lock_graph(&mut self) -> StoreResult<()> {
        let s =
            Stmt::new(format!("SELECT name FROM ax_lock WHERE name = 'task_graph'{}", self.tx.dialect().for_update));
        self.tx.fetch(s, "ax_lock", |r| r.take::<String>()).await?;
        Ok(())
    }

    /// Every edge of the task graph.
    pub async fn all_edges(&mut self) -> StoreResult<Vec<Edge>> {
        let s = Stmt::new("SELECT from_task_id, kind, to_task_id FROM ax_task_edge");
        self.tx
            .fetch(s, "ax_task_edge", |r| Ok((r.take()?, kind_of("ax_task_edge", &r.take::<String>()?)?, r.take()?)))
            .await
    }

    /// The edges that leave these tasks.
    pub async fn edges_from(&mut self, task_ids: &[i64]) -> StoreResult<Vec<Edge>> {
        let mut out = Vec::new();
        for chunk in task_ids.chunks(BATCH) {
            let mut s = Stmt::new("SELECT from_task_id, kind, to_task_id FROM ax_task_edge WHERE from_task_id IN ");
            s.push_list(chunk.iter().copied()).push(" ORDER BY from_task_id, kind, to_task_id");
            out.extend(
                self.tx
                    .fetch(s, "ax_task_edge", |r| {
                        Ok((r.take()?, kind_of("ax_task_edge", &r.take::<String>()?)?, r.take()?))
                    })
                    .await?,
            );
        }
        Ok(out)
    }

    /// The upstream tasks of these DAG tasks (their `after_all`), by DAG task.
    pub async fn dag_upstreams(&mut self, task_ids: &[i64]) -> StoreResult<HashMap<i64, Vec<i64>>> {
        let mut out: HashMap<i64, Vec<i64>> = HashMap::new();
        for chunk in task_ids.chunks(BATCH) {
            let mut s =
                Stmt::new("SELECT to_task_id, from_task_id FROM ax_task_edge WHERE kind = 'AFTER' AND to_task_id IN ");
            s.push_list(chunk.iter().copied()).push(" ORDER BY to_task_id, from_task_id");
            for (to, from) in self.tx.fetch(s, "ax_task_edge", |r| Ok((r.take::<i64>()?, r.take::<i64>()?))).await? {
                out.entry(to).or_default().push(from);
            }
        }
        Ok(out)
    }

    /// Replaces the edges task `task_id`'s own configuration declares (its chains, which leave it,
    /// and its DAG upstreams, which enter it) with `edges`.
    pub async fn write_edges(&mut self, task_id: i64, edges: &[Edge]) -> StoreResult<()> {
        let s = Stmt::new(
            "DELETE FROM ax_task_edge WHERE (from_task_id = ? AND kind IN ('SUCCESS', 'FAILURE')) \
             OR (to_task_id = ? AND kind = 'AFTER')",
        )
        .bind(task_id)
        .bind(task_id);
        self.tx.execute(s).await?;
        for chunk in edges.chunks(BATCH / 3) {
            let mut s = Stmt::new("INSERT INTO ax_task_edge (from_task_id, kind, to_task_id) VALUES ");
            s.push_rows(chunk.iter().map(|(f, k, t)| vec![Value::I64(*f), Value::from(k.as_str()), Value::I64(*t)]));
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// The edges other tasks declare that name this task: their chains into it, and DAG tasks it is
    /// an upstream of.
    pub async fn edges_naming(&mut self, task_id: i64) -> StoreResult<Vec<Edge>> {
        let s = Stmt::new(
            "SELECT from_task_id, kind, to_task_id FROM ax_task_edge WHERE (to_task_id = ? AND kind IN ('SUCCESS', \
             'FAILURE')) OR (from_task_id = ? AND kind = 'AFTER') ORDER BY from_task_id, to_task_id",
        )
        .bind(task_id)
        .bind(task_id);
        self.tx
            .fetch(s, "ax_task_edge", |r| Ok((r.take()?, kind_of("ax_task_edge", &r.take::<String>()?)?, r.take()?)))
            .await
    }

    /// Records which instance's end created which: (from, to, kind).
    pub async fn insert_links(&mut self, links: &[(i64, i64, EdgeKind)]) -> StoreResult<()> {
        for chunk in links.chunks(BATCH / 3) {
            let mut s = Stmt::new("INSERT INTO ax_instance_link (from_id, to_id, kind) VALUES ");
            s.push_rows(chunk.iter().map(|(f, t, k)| vec![Value::I64(*f), Value::I64(*t), Value::from(k.as_str())]));
            let ignore = self.tx.dialect().ignore_duplicate_on("kind");
            s.push(&ignore);
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// The links of these instances, in either direction: (from, to, kind).
    pub async fn links_touching(&mut self, ids: &[i64]) -> StoreResult<Vec<(i64, i64, EdgeKind)>> {
        let mut out = Vec::new();
        for chunk in ids.chunks(BATCH / 2) {
            let mut s = Stmt::new("SELECT from_id, to_id, kind FROM ax_instance_link WHERE from_id IN ");
            s.push_list(chunk.iter().copied()).push(" OR to_id IN ").push_list(chunk.iter().copied());
            s.push(" ORDER BY to_id, from_id");
            out.extend(
                self.tx
                    .fetch(s, "ax_instance_link", |r| {
                        Ok((r.take()?, r.take()?, kind_of("ax_instance_link", &r.take::<String>()?)?))
                    })
                    .await?,
            );
        }
        out.sort_unstable_by_key(|(f, t, _)| (*t, *f));
        out.dedup();
        Ok(out)
    }

    /// The instances of a workflow run: its first instance and those chains and DAG edges created
    /// in it, by id (at most `limit`).
    pub async fn run_instances(&mut self, run_id: i64, limit: u32) -> StoreResult<Vec<Instance>> {
        let s = select_instances(" WHERE id = ? OR run_id = ? ORDER BY id LIMIT ?")
            .bind(run_id)
            .bind(run_id)
            .bind(i64::from(limit));
        self.tx.instances().read_instances(s).await
    }
}

impl Instances<'_> {
    /// Instances by id (those that exist), by id.
    pub async fn instances_by_ids(&mut self, ids: &[i64]) -> StoreResult<Vec<Instance>> {
        let mut out = Vec::new();
        for chunk in ids.chunks(BATCH) {
            let mut s = select_instances(" WHERE id IN ");
            s.push_list(chunk.iter().copied()).push(" ORDER BY id");
            out.extend(self.read_instances(s).await?);
        }
        Ok(out)
    }
}

impl Flow<'_> {
    /// Takes the join lock of DAG task `task_id` in run `run_id` (creating its row): the
    /// transactions that end the task's upstreams in the run take it in turn, so the one that takes
    /// it last sees what the others wrote.
    pub async fn lock_join(&mut self, run_id: i64, task_id: i64, now: Ts) -> StoreResult<()> {
        let mut s = Stmt::new("INSERT INTO ax_run_join (run_id, task_id, created_at) VALUES ");
        s.push_list([Value::I64(run_id), Value::I64(task_id), Value::I64(to_micros(now))]);
        let ignore = self.tx.dialect().ignore_duplicate_on("created_at");
        s.push(&ignore);
        self.tx.execute(s).await?;
        let s = Stmt::new(format!(
            "SELECT run_id FROM ax_run_join WHERE run_id = ? AND task_id = ?{}",
            self.tx.dialect().for_update
        ))
        .bind(run_id)
        .bind(task_id);
        self.tx.fetch(s, "ax_run_join", |r| r.take::<i64>()).await?;
        Ok(())
    }

    /// Of these tasks, the instance of each that succeeded in run `run_id` (the oldest, if several):
    /// (task id, instance id).
    pub async fn succeeded_in_run(&mut self, run_id: i64, task_ids: &[i64]) -> StoreResult<Vec<(i64, i64)>> {
        if task_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut s = Stmt::new(
            "SELECT task_id, MIN(id) FROM ax_instance WHERE (id = ? OR run_id = ?) AND status = 'SUCCESS' \
             AND parent_id IS NULL AND task_id IN ",
        )
        .bind(run_id)
        .bind(run_id);
        s.push_list(task_ids.iter().copied()).push(" GROUP BY task_id");
        self.tx.fetch(s, "ax_instance", |r| Ok((r.take()?, r.take()?))).await
    }

    /// Deletes DAG join rows older than `before` (their runs are long over).
    pub async fn purge_joins(&mut self, before: Ts) -> StoreResult<u64> {
        self.tx.execute(Stmt::new("DELETE FROM ax_run_join WHERE created_at < ?").bind(to_micros(before))).await
    }
}
