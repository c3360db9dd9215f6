//! Broadcast and sharded fires: the children a fire gets, their keys, and the parent's verdict
//! once they have all ended.
//!
//! A fire of such a task is one parent instance (WAITING, never dispatched) and its children,
//! created in one transaction, so a fire has all its children or none. A child's idempotency key is
//! derived from its parent's id and its index, so it can exist only once.

use super::selector::Selector;
use crate::model::{InstanceStatus, WorkerRecord};

/// One child of a fire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildPlan {
    /// Shard index, 0-based.
    pub index: u32,
    /// Children of the fire.
    pub total: u32,
    /// Broadcast: the worker it is pinned to.
    pub target_worker: Option<String>,
}

/// Broadcast: one child per live worker of `app` that serves `handler` and matches `selector`, in
/// worker id order (a worker connected through several sessions counts once).
pub fn broadcast(workers: &[WorkerRecord], app: &str, handler: &str, selector: &Selector) -> Vec<ChildPlan> {
    let mut ids: Vec<&str> = workers
        .iter()
        .filter(|w| w.app == app && w.handlers.iter().any(|h| h == handler) && selector.matches(&w.labels))
        .map(|w| w.worker_id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let total = u32::try_from(ids.len()).unwrap_or(u32::MAX);
    ids.into_iter()
        .enumerate()
        .map(|(i, w)| ChildPlan {
            index: u32::try_from(i).unwrap_or(u32::MAX),
            total,
            target_worker: Some(w.to_owned()),
        })
        .collect()
}

/// Sharding: `n` children, indexes 0..n, on any worker.
pub fn shards(n: u32) -> Vec<ChildPlan> {
    (0..n).map(|index| ChildPlan { index, total: n, target_worker: None }).collect()
}

/// The idempotency key of child `index` of parent `parent_id` (reserved: callers cannot use
/// `child:` keys).
pub fn child_key(parent_id: i64, index: u32) -> String {
    format!("child:{parent_id}:{index}")
}

/// How a parent's children stand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChildCounts {
    pub success: u64,
    pub failed: u64,
    pub timeout: u64,
    pub canceled: u64,
    pub skipped: u64,
    /// Not final yet (PENDING, DISPATCHED, RUNNING, WAITING).
    pub active: u64,
}

impl ChildCounts {
    /// Counts one child in `status`.
    pub fn add(&mut self, status: InstanceStatus, n: u64) {
        let slot = match status {
            InstanceStatus::Success => &mut self.success,
            InstanceStatus::Failed => &mut self.failed,
            InstanceStatus::Timeout => &mut self.timeout,
            InstanceStatus::Canceled => &mut self.canceled,
            InstanceStatus::Skipped => &mut self.skipped,
            InstanceStatus::Pending
            | InstanceStatus::Dispatched
            | InstanceStatus::Running
            | InstanceStatus::Waiting => &mut self.active,
        };
        *slot += n;
    }

    /// All children.
    pub fn total(&self) -> u64 {
        self.success + self.failed + self.timeout + self.canceled + self.skipped + self.active
    }
}

/// The parent's final state and message once no child is active; `None` while one is.
pub fn verdict(c: &ChildCounts) -> Option<(InstanceStatus, String)> {
    if c.active > 0 {
        return None;
    }
    let total = c.total();
    if total == 0 {
        return Some((InstanceStatus::Failed, "no children: no live worker could take the fire".to_owned()));
    }
    if c.success == total {
        return Some((InstanceStatus::Success, format!("all {total} children succeeded")));
    }
    let mut parts = Vec::new();
    for (n, what) in [(c.failed, "failed"), (c.timeout, "timed out"), (c.canceled, "canceled"), (c.skipped, "skipped")]
    {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    Some((InstanceStatus::Failed, format!("{} of {total} children succeeded; {}", c.success, parts.join(", "))))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn worker(id: &str, app: &str, handlers: &[&str], labels: &[(&str, &str)]) -> WorkerRecord {
        WorkerRecord {
            session_id: format!("s-{id}"),
            worker_id: id.into(),
            app: app.into(),
            handlers: handlers.iter().map(|h| h.to_string()).collect(),
            capacity: 1,
            credits: 1,
            in_flight: 0,
            labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
            scheduler_id: "axd".into(),
            client: String::new(),
            connected_at: chrono::Utc::now(),
            last_seen_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn broadcast_takes_each_matching_worker_once_in_id_order() {
        let ws = vec![
            worker("w3", "a", &["h"], &[("zone", "x")]),
            worker("w1", "a", &["h"], &[("zone", "x")]),
            worker("w1", "a", &["h"], &[("zone", "x")]),
            worker("w2", "a", &["other"], &[("zone", "x")]),
            worker("w4", "b", &["h"], &[("zone", "x")]),
            worker("w5", "a", &["h"], &[("zone", "y")]),
        ];
        let sel = Selector::parse("zone=x").expect("valid");
        let plan = broadcast(&ws, "a", "h", &sel);
        let got: Vec<(u32, u32, Option<&str>)> =
            plan.iter().map(|c| (c.index, c.total, c.target_worker.as_deref())).collect();
        assert_eq!(got, vec![(0, 2, Some("w1")), (1, 2, Some("w3"))]);
        assert_eq!(shards(3).iter().map(|c| (c.index, c.total)).collect::<Vec<_>>(), vec![(0, 3), (1, 3), (2, 3)]);
    }

    #[test]
    fn the_parent_waits_for_every_child_then_says_how_they_ended() {
        let mut c = ChildCounts::default();
        c.add(InstanceStatus::Success, 2);
        c.add(InstanceStatus::Running, 1);
        assert_eq!(verdict(&c), None);
        c.active = 0;
        c.add(InstanceStatus::Success, 1);
        assert_eq!(verdict(&c), Some((InstanceStatus::Success, "all 3 children succeeded".into())));
        c.add(InstanceStatus::Timeout, 1);
        c.add(InstanceStatus::Canceled, 1);
        assert_eq!(
            verdict(&c),
            Some((InstanceStatus::Failed, "3 of 5 children succeeded; 1 timed out, 1 canceled".into()))
        );
        assert_eq!(verdict(&ChildCounts::default()).map(|v| v.0), Some(InstanceStatus::Failed));
    }
}
