//! Log lines about instances: one per recorded state change, written only once the transaction
//! that recorded it has committed (a rolled-back change is never logged), with the instance's
//! identity as structured fields — `instance_id`, `attempt`, `task`, `app`, `worker` — so that
//! `--log-format json` lines can be filtered on them.
//!
//! Levels: a final failure (FAILED, TIMEOUT) is WARN; the other final states, a return to PENDING
//! (retry, reject, ack timeout) and a recorded event that changes no state (a late result, a lost
//! session kept for its grace time) are INFO; creation, dispatch and start are DEBUG, as they are
//! the bulk of a busy cluster's changes. A change whose level is filtered out costs no allocation.

use crate::model::InstanceStatus;

/// One state change of an instance, as logged.
#[derive(Debug, Clone)]
pub struct Change {
    pub instance_id: i64,
    /// The attempt the change belongs to (0 before the first dispatch).
    pub attempt: u32,
    /// Task name.
    pub task: String,
    pub app: String,
    /// Worker of the attempt; empty when there is none.
    pub worker: String,
    /// State before; `None` for creation.
    pub from: Option<InstanceStatus>,
    /// State after.
    pub to: InstanceStatus,
    /// Why, as recorded in the event.
    pub reason: String,
}

/// Changes to log once their transaction has committed.
#[derive(Debug, Default)]
#[must_use = "log the changes with .log() once their transaction has committed"]
pub struct Changes(Vec<Change>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Debug,
    Info,
    Warn,
}

fn level(from: Option<InstanceStatus>, to: InstanceStatus) -> Level {
    match (from, to) {
        (_, InstanceStatus::Failed | InstanceStatus::Timeout) => Level::Warn,
        (_, InstanceStatus::Success | InstanceStatus::Canceled | InstanceStatus::Skipped) => Level::Info,
        (Some(from), to) if from == to => Level::Info,
        (Some(_), InstanceStatus::Pending) => Level::Info,
        (Some(_), InstanceStatus::Waiting) => Level::Info,
        (None, InstanceStatus::Pending | InstanceStatus::Waiting)
        | (_, InstanceStatus::Dispatched | InstanceStatus::Running) => Level::Debug,
    }
}

fn enabled(level: Level) -> bool {
    match level {
        Level::Debug => tracing::enabled!(tracing::Level::DEBUG),
        Level::Info => tracing::enabled!(tracing::Level::INFO),
        Level::Warn => tracing::enabled!(tracing::Level::WARN),
    }
}

impl Changes {
    /// No changes yet.
    pub fn new() -> Self {
        Changes(Vec::new())
    }

    /// Whether a change from `from` to `to` would be logged at the current filter; callers build
    /// the [`Change`] only then.
    pub fn wants(from: Option<InstanceStatus>, to: InstanceStatus) -> bool {
        enabled(level(from, to))
    }

    /// Adds a change (if its level is enabled).
    pub fn push(&mut self, change: Change) {
        if Self::wants(change.from, change.to) {
            self.0.push(change);
        }
    }

    /// Adds other changes after these.
    pub fn extend(&mut self, other: Changes) {
        self.0.extend(other.0);
    }

    /// Logs every change, in order. Call after the commit.
    pub fn log(self) {
        for c in self.0 {
            let from = c.from.map_or("-", InstanceStatus::as_str);
            let worker = Some(c.worker.as_str()).filter(|w| !w.is_empty());
            macro_rules! event {
                ($level:ident) => {
                    tracing::$level!(
                        instance_id = c.instance_id,
                        attempt = c.attempt,
                        task = %c.task,
                        app = %c.app,
                        worker,
                        from,
                        to = c.to.as_str(),
                        reason = %c.reason,
                        "instance {from} -> {}",
                        c.to.as_str()
                    )
                };
            }
            match level(c.from, c.to) {
                Level::Debug => event!(debug),
                Level::Info => event!(info),
                Level::Warn => event!(warn),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_failures_warn_ends_and_requeues_inform_and_routine_steps_are_debug() {
        use InstanceStatus as S;
        assert_eq!(level(Some(S::Running), S::Failed), Level::Warn);
        assert_eq!(level(Some(S::Running), S::Timeout), Level::Warn);
        assert_eq!(level(Some(S::Running), S::Success), Level::Info);
        assert_eq!(level(Some(S::Pending), S::Canceled), Level::Info);
        assert_eq!(level(None, S::Skipped), Level::Info);
        assert_eq!(level(Some(S::Running), S::Pending), Level::Info);
        assert_eq!(level(Some(S::Running), S::Running), Level::Info);
        assert_eq!(level(None, S::Pending), Level::Debug);
        assert_eq!(level(Some(S::Pending), S::Dispatched), Level::Debug);
        assert_eq!(level(Some(S::Dispatched), S::Running), Level::Debug);
    }
}
