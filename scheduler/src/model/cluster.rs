//! The cluster as axd records it: worker sessions (live in `ax_worker`, and as history in
//! `ax_session_log`) and axd processes (`ax_scheduler`).

use std::collections::BTreeMap;

use super::Ts;

/// A worker session as history (`ax_session_log`): when it was open.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSpan {
    pub session_id: String,
    pub worker_id: String,
    pub app: String,
    pub handlers: Vec<String>,
    /// Labels of its Hello (empty for sessions recorded before labels were kept).
    pub labels: BTreeMap<String, String>,
    pub capacity: u32,
    /// axd that held the stream.
    pub scheduler_id: String,
    pub connected_at: Ts,
    /// When it ended; `None` while it lasts (or until its axd is forgotten).
    pub closed_at: Option<Ts>,
    /// Why it ended ("" while open).
    pub close_reason: String,
}

impl SessionSpan {
    /// Whether it was open at `t` and serves `handler`.
    pub fn serves_at(&self, handler: &str, t: Ts) -> bool {
        self.connected_at <= t && self.closed_at.is_none_or(|c| c >= t) && self.handlers.iter().any(|h| h == handler)
    }
}

/// A worker session as recorded in `ax_worker`.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerRecord {
    pub session_id: String,
    pub worker_id: String,
    pub app: String,
    pub handlers: Vec<String>,
    pub capacity: u32,
    /// Unused credits.
    pub credits: u32,
    /// Outstanding assignments.
    pub in_flight: u32,
    pub labels: BTreeMap<String, String>,
    /// axd holding the stream.
    pub scheduler_id: String,
    /// Client description.
    pub client: String,
    pub connected_at: Ts,
    /// Last message.
    pub last_seen_at: Ts,
}

/// An axd process as recorded in `ax_scheduler`.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerRecord {
    pub scheduler_id: String,
    pub host: String,
    /// Listen address.
    pub address: String,
    pub version: String,
    pub started_at: Ts,
    /// Last heartbeat.
    pub heartbeat_at: Ts,
}

/// A command for the axd holding a worker's stream (`ax_command`): stop an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The axd holding the stream.
    pub scheduler_id: String,
    /// Target session.
    pub session_id: String,
    pub instance_id: i64,
    /// Attempt to stop.
    pub attempt: u32,
    /// Why.
    pub reason: String,
}

/// A session's live numbers, written by the lease loop.
#[derive(Debug, Clone)]
pub struct SessionSync {
    /// The stream's session.
    pub session_id: String,
    /// Unused credits.
    pub credits: u32,
    /// Outstanding assignments.
    pub in_flight: u32,
    /// Last message from the worker.
    pub last_seen_at: Ts,
}
