//! What a handler receives (the [`Context`] of one attempt) and returns.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::{driver::Event, lease::LeaseCell};

/// Severity of a log line sent with [`Context::log`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Debugging detail.
    Debug,
    /// Normal information.
    Info,
    /// Something unexpected.
    Warn,
    Error,
}

/// One attempt of one instance, as given to a handler.
#[derive(Debug, Clone)]
pub struct Context {
    pub instance_id: i64,
    /// Attempt number (1 for the first run). `(instance_id, attempt)` identifies this execution.
    pub attempt: u32,
    pub task_name: String,
    /// Handler name.
    pub handler: String,
    /// Parameters as a JSON document.
    pub params_raw: String,
    /// Stable key of the instance, the same for every attempt: make side effects idempotent with it.
    pub idempotency_key: String,
    /// When the instance was due (its fire time, or when it was triggered).
    pub trigger_time: DateTime<Utc>,
    /// When axd will time this attempt out (local estimate), if the task has a timeout.
    pub deadline: Option<DateTime<Utc>>,
    /// For a child of a sharded or broadcast fire: `(shard_index, shard_total)`, the part of the
    /// work this instance is (0-based) and how many parts the fire has. `None` otherwise.
    pub shard: Option<(u32, u32)>,
    cancel: CancellationToken,
    lease: std::sync::Arc<LeaseCell>,
    events: mpsc::Sender<Event>,
}

impl Context {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        instance_id: i64,
        attempt: u32,
        task_name: String,
        handler: String,
        params_raw: String,
        idempotency_key: String,
        trigger_time: DateTime<Utc>,
        timeout: Option<Duration>,
        cancel: CancellationToken,
        lease: std::sync::Arc<LeaseCell>,
        events: mpsc::Sender<Event>,
    ) -> Self {
        let deadline = timeout.and_then(|t| chrono::TimeDelta::from_std(t).ok()).map(|t| Utc::now() + t);
        Context {
            instance_id,
            attempt,
            task_name,
            handler,
            params_raw,
            idempotency_key,
            trigger_time,
            deadline,
            shard: None,
            cancel,
            lease,
            events,
        }
    }

    /// The same context with its shard set (`shard_total` 0 means "not a shard").
    pub(crate) fn with_shard(mut self, shard_index: u32, shard_total: u32) -> Self {
        self.shard = (shard_total > 0).then_some((shard_index, shard_total));
        self
    }

    /// The parameters deserialized into `T`; a mismatch is a non-retryable error naming the cause.
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, HandlerError> {
        serde_json::from_str(&self.params_raw).map_err(|e| HandlerError::fatal(format!("params do not match: {e}")))
    }

    /// Fires when axd cancels this attempt (timeout, operator cancel), the worker shuts down past
    /// its deadline, or the attempt's lease is about to run out (no axd confirmed a renewal: the
    /// attempt may soon be given to another worker). Cooperative handlers select on it.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// True once the attempt is canceled, or its lease has run out. Reads the clock itself, so it
    /// is right even before the worker's driver has acted (e.g. in a process resumed after a long
    /// pause): check it before a side effect that must not happen twice.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled() || self.lease.expired()
    }

    /// True once this attempt's lease has run out (the worker stops it; another worker may be
    /// given the instance after the lease). A handler that finds this must not do more work.
    pub fn lease_expired(&self) -> bool {
        self.lease.expired()
    }

    /// Reports progress (0-100). Best effort: dropped if the connection is backed up.
    pub fn progress(&self, percent: u32, message: impl Into<String>) {
        let _ = self.events.try_send(Event::Progress {
            key: (self.instance_id, self.attempt),
            percent: percent.min(100),
            message: message.into(),
        });
    }

    /// Sends a log line stored with the instance (`axctl instance logs`). Best effort.
    pub fn log(&self, level: Level, message: impl Into<String>) {
        let _ = self.events.try_send(Event::Log {
            key: (self.instance_id, self.attempt),
            level,
            message: message.into(),
            at: Utc::now(),
        });
    }
}

/// A handler failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HandlerError {
    /// Shown in the instance's trail.
    pub message: String,
    /// Whether the task's retry policy may run the instance again.
    pub retryable: bool,
}

impl HandlerError {
    /// A failure that may succeed if retried (network blip, busy dependency).
    pub fn retryable(message: impl Into<String>) -> Self {
        HandlerError { message: message.into(), retryable: true }
    }

    /// A failure that retrying will not fix (bad input).
    pub fn fatal(message: impl Into<String>) -> Self {
        HandlerError { message: message.into(), retryable: false }
    }
}

/// What a successful handler returns: stored as the instance's output.
pub trait IntoOutput {
    /// The output text (JSON recommended).
    fn into_output(self) -> String;
}

impl IntoOutput for () {
    fn into_output(self) -> String {
        String::new()
    }
}

impl IntoOutput for String {
    fn into_output(self) -> String {
        self
    }
}

impl IntoOutput for &str {
    fn into_output(self) -> String {
        self.to_owned()
    }
}

impl IntoOutput for serde_json::Value {
    fn into_output(self) -> String {
        self.to_string()
    }
}
