//! An instance's attempts, read back from its trail.

use crate::model::{InstanceEvent, InstanceStatus, Ts};

/// One attempt: dispatched to a worker, maybe accepted, maybe ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub attempt: u32,
    pub worker_id: String,
    pub dispatched_at: Ts,
    /// Accepted by the worker.
    pub started_at: Option<Ts>,
    pub ended_at: Option<Ts>,
    /// SUCCESS, FAILED, TIMEOUT, CANCELED, or PENDING (back in the queue); `None` while it lasts.
    pub outcome: Option<InstanceStatus>,
    /// Why it ended.
    pub reason: String,
}

/// The attempts of a trail (events oldest first), oldest first. An attempt begins with the event
/// into DISPATCHED, starts with DISPATCHED → RUNNING and ends with the first event of the same
/// attempt out of DISPATCHED or RUNNING into another state (the retry event that follows a failure,
/// FAILED → PENDING, belongs to no attempt).
pub fn attempts(trail: &[InstanceEvent]) -> Vec<Attempt> {
    let mut out: Vec<Attempt> = Vec::new();
    for e in trail {
        let held = |s: Option<InstanceStatus>| matches!(s, Some(InstanceStatus::Dispatched | InstanceStatus::Running));
        if e.to == InstanceStatus::Dispatched && !held(e.from) {
            out.push(Attempt {
                attempt: e.attempt,
                worker_id: e.worker_id.clone(),
                dispatched_at: e.at,
                started_at: None,
                ended_at: None,
                outcome: None,
                reason: String::new(),
            });
            continue;
        }
        let Some(a) = out.last_mut() else { continue };
        if a.attempt != e.attempt || a.outcome.is_some() || !held(e.from) {
            continue;
        }
        if e.from == Some(InstanceStatus::Dispatched) && e.to == InstanceStatus::Running {
            a.started_at = Some(e.at);
        } else if !held(Some(e.to)) {
            a.ended_at = Some(e.at);
            a.outcome = Some(e.to);
            a.reason = e.reason.clone();
        }
    }
    out
}
