//! The instances a bulk action selects, and the DAG runs whose instances a delete leaves alone.

use std::collections::HashSet;

use super::{BATCH, Instances, TagFilter, instances::push_apps, tables::InstanceRaw, value::Stmt};
use crate::{
    error::{StoreError, StoreResult},
    model::{InstanceStatus, Ts, to_micros},
};

/// Which instances a bulk action applies to (every field set must hold).
#[derive(Debug, Clone, Default)]
pub struct Selector {
    /// Only instances of this task (by their key rows, as `ListInstances` reads them).
    pub task_name: Option<String>,
    /// Only this app.
    pub app: Option<String>,
    /// Only instances of these apps (the caller's scope; `None`: every app).
    pub apps: Option<Vec<String>>,
    /// Only this status.
    pub status: Option<InstanceStatus>,
    /// Only instances whose fire time is at or after this.
    pub triggered_since: Option<Ts>,
    /// Only instances whose fire time is before this.
    pub triggered_before: Option<Ts>,
    /// Only ids up to this.
    pub max_id: Option<i64>,
    /// Only these ids (empty: any).
    pub ids: Vec<i64>,
    /// Only instances matching every one of these (tags, task labels, search params).
    pub tags: Vec<TagFilter>,
}

/// One instance a selector matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matched {
    /// Its id.
    pub id: i64,
    /// Its state when read.
    pub status: InstanceStatus,
    /// Whether it is the child of a broadcast or sharded fire.
    pub is_child: bool,
}

impl Selector {
    /// Whether it narrows the instances at all (a selector that does not matches every one).
    pub fn narrowed(&self) -> bool {
        self.task_name.is_some()
            || self.app.is_some()
            || self.status.is_some()
            || self.triggered_since.is_some()
            || self.triggered_before.is_some()
            || !self.ids.is_empty()
            || !self.tags.is_empty()
    }
}

impl Instances<'_> {
    /// Up to `limit` instances `sel` matches, newest first (read without locks: the action locks
    /// each batch and decides on what it finds then).
    pub async fn select_for_bulk(&mut self, sel: &Selector, limit: u32) -> StoreResult<Vec<Matched>> {
        let mut s = Stmt::new("SELECT id, status, parent_id FROM ax_instance WHERE 1 = 1");
        if let Some(name) = &sel.task_name {
            s.push(" AND id IN (SELECT instance_id FROM ax_instance_key WHERE task_name = ").push_bind(name.as_str());
            s.push(")");
        }
        if let Some(app) = &sel.app {
            s.push(" AND app = ").push_bind(app.as_str());
        }
        push_apps(&mut s, "app", sel.apps.as_deref());
        if let Some(st) = sel.status {
            s.push(" AND status = ").push_bind(st.as_str());
        }
        if let Some(t) = sel.triggered_since {
            s.push(" AND fire_at >= ").push_bind(to_micros(t));
        }
        if let Some(t) = sel.triggered_before {
            s.push(" AND fire_at < ").push_bind(to_micros(t));
        }
        if let Some(max) = sel.max_id {
            s.push(" AND id <= ").push_bind(max);
        }
        if !sel.ids.is_empty() {
            s.push(" AND id IN ").push_list(sel.ids.iter().copied());
        }
        super::tags::push_tag_filters(&mut s, "id", &sel.tags);
        s.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(limit));
        self.tx
            .fetch(s, InstanceRaw::TABLE, |r| {
                let id: i64 = r.take()?;
                let status: String = r.take()?;
                let parent: Option<i64> = r.take()?;
                let status = status.parse::<InstanceStatus>().map_err(|reason| StoreError::Corrupt {
                    table: InstanceRaw::TABLE,
                    reason: format!("instance {id}: {reason}"),
                })?;
                Ok(Matched { id, status, is_child: parent.is_some() })
            })
            .await
    }

    /// Of these DAG runs (a run's id is its root instance's), those with an instance that is not
    /// final: their finished instances stay until the run ends (a join reads its upstreams).
    pub async fn runs_in_progress(&mut self, runs: &[i64]) -> StoreResult<HashSet<i64>> {
        let mut out = HashSet::new();
        for chunk in runs.chunks(BATCH) {
            let mut s = Stmt::new("SELECT DISTINCT run_id FROM ax_instance WHERE finished_at IS NULL AND run_id IN ");
            s.push_list(chunk.iter().copied());
            out.extend(self.tx.fetch(s, InstanceRaw::TABLE, |r| r.take::<i64>()).await?);
        }
        Ok(out)
    }
}
