//! Alert rules, the causes they watch and the outbox rows they become, as stored: the types the
//! store reads and writes, kept in the model so that the store needs nothing of the alerts
//! feature (`alerts/` decides, sends and signs).

use std::{path::PathBuf, time::Duration};

use super::Ts;

/// What a rule can watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AlertEvent {
    /// An instance ended FAILED or TIMEOUT with no retry left (or not retryable).
    FinalFailure,
    /// An attempt ran past its timeout (whether or not a retry follows).
    Timeout,
    /// An attempt failed because its worker was lost (whether or not a retry follows).
    WorkerLost,
    /// A fire was recorded SKIPPED by the task's concurrency policy.
    Skipped,
    /// The trigger skipped or coalesced late fires under the misfire policy.
    Misfire,
    /// No worker of the app was connected for the rule's `no_worker_for`.
    NoWorker,
    /// More PENDING instances than the rule's `backlog_over` (of the app, or of its task).
    Backlog,
    /// More of the app's live workers are failing a handler (the task's, or any) than
    /// `--cooldown-max-share` lets cool down at once: the cooldown floor routes to them anyway.
    HandlerFailing,
    /// A fire of a task with a deadline (`must_finish_within`) had no instance that ended SUCCESS
    /// within it.
    DeadlineMissed,
    /// Sent by `axctl alert test` (never watched by a rule).
    Test,
}

impl AlertEvent {
    /// The events a rule may watch, by name.
    pub const WATCHABLE: [AlertEvent; 9] = [
        AlertEvent::FinalFailure,
        AlertEvent::Timeout,
        AlertEvent::WorkerLost,
        AlertEvent::Skipped,
        AlertEvent::Misfire,
        AlertEvent::NoWorker,
        AlertEvent::Backlog,
        AlertEvent::HandlerFailing,
        AlertEvent::DeadlineMissed,
    ];

    /// The name used in rules, bodies and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertEvent::FinalFailure => "final_failure",
            AlertEvent::Timeout => "timeout",
            AlertEvent::WorkerLost => "worker_lost",
            AlertEvent::Skipped => "skipped",
            AlertEvent::Misfire => "misfire",
            AlertEvent::NoWorker => "no_worker",
            AlertEvent::Backlog => "backlog",
            AlertEvent::HandlerFailing => "handler_failing",
            AlertEvent::DeadlineMissed => "deadline_missed",
            AlertEvent::Test => "test",
        }
    }

    /// Parses a name of [`Self::as_str`] (including `test`).
    pub fn parse(s: &str) -> Option<AlertEvent> {
        Self::WATCHABLE.into_iter().chain([AlertEvent::Test]).find(|e| e.as_str() == s)
    }

    /// Whether it is a condition evaluated periodically rather than caused by a state change.
    pub fn is_condition(self) -> bool {
        matches!(self, AlertEvent::NoWorker | AlertEvent::Backlog | AlertEvent::HandlerFailing)
    }
}

/// A stored rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertRule {
    /// Assigned by the database (0 before insertion).
    pub id: i64,
    /// Unique name.
    pub name: String,
    /// The app watched.
    pub app: String,
    /// Only this task of the app (`None`: every task of the app).
    pub task_name: Option<String>,
    /// The events watched, sorted, without duplicates, never `Test`.
    pub events: Vec<AlertEvent>,
    /// The webhook: `http://` or `https://`.
    pub url: String,
    /// The webhook's HMAC-SHA256 key (never returned by the API).
    pub secret: String,
    /// For `no_worker`: how long the app must have had no worker connected.
    pub no_worker_for: Option<Duration>,
    /// For `backlog`: alert when more than this many instances are PENDING.
    pub backlog_over: Option<u64>,
    /// Who created it.
    pub created_by: String,
    /// When.
    pub created_at: Ts,
}

impl AlertRule {
    /// Whether the rule applies to an event of this task of its app.
    pub fn matches(&self, event: AlertEvent, app: &str, task_name: &str) -> bool {
        self.app == app && self.task_name.as_deref().is_none_or(|t| t == task_name) && self.events.contains(&event)
    }
}

/// Something that happened to an instance or a task, handed to the outbox by the code that
/// decided it (the lifecycle, the trigger).
#[derive(Debug, Clone, PartialEq)]
pub struct AlertCause {
    pub event: AlertEvent,
    pub app: String,
    pub task_name: String,
    /// The instance, if the event is about one.
    pub instance_id: Option<i64>,
    /// Its attempt (0 without an instance).
    pub attempt: u32,
    /// When it happened (database clock).
    pub at: Ts,
    /// What happened, in words (the instance's message, the misfire's reason).
    pub message: String,
    /// What makes this occurrence unique among the task's events of this kind (the instance and
    /// attempt, or a misfire's fire time): part of the delivery's unique key.
    pub occurrence: String,
}

/// Status of a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Not sent yet, or to be sent again at `next_attempt_at` (also while an axd is sending it).
    Pending,
    /// The webhook answered 2xx.
    Delivered,
    /// Every attempt failed (or its rule was deleted).
    Failed,
}

impl DeliveryStatus {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }

    /// Parses [`Self::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        [DeliveryStatus::Pending, DeliveryStatus::Delivered, DeliveryStatus::Failed]
            .into_iter()
            .find(|d| d.as_str() == s)
    }
}

/// A row of the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The delivery id: sent as `X-Ax-Delivery` and `delivery_id`, the same on every attempt.
    pub id: i64,
    pub rule_id: i64,
    pub rule_name: String,
    pub app: String,
    pub task_name: Option<String>,
    pub event: AlertEvent,
    /// Unique per rule and occurrence (or condition episode).
    pub dedupe_key: String,
    pub url: String,
    /// The event's fields as a JSON object (the body adds `delivery_id`, see [`crate::alerts::sign::body`]).
    pub payload: String,
    pub status: DeliveryStatus,
    /// Attempts started so far.
    pub attempts: u32,
    /// When it is due (again); while an axd sends it, when that claim lapses.
    pub next_attempt_at: Ts,
    /// Why the last attempt failed (empty if none did).
    pub last_error: String,
    pub created_at: Ts,
    /// When it was delivered or given up.
    pub finished_at: Option<Ts>,
}

/// A delivery to insert: the outbox row for one rule and one cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub rule_id: i64,
    pub rule_name: String,
    pub app: String,
    pub task_name: Option<String>,
    pub event: AlertEvent,
    pub dedupe_key: String,
    pub url: String,
    pub payload: String,
    /// Due from this time.
    pub due_at: Ts,
}

/// How alert webhooks are delivered (see the flags' help in [`crate::config::Options`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertSettings {
    /// Targets in refused ranges are allowed (default false).
    pub allow_private_targets: bool,
    /// Extra CA certificates for https:// targets (default none).
    pub ca_file: Option<PathBuf>,
    /// Connect timeout, and response timeout (default 10 s each).
    pub timeout: Duration,
    /// Attempts before a delivery fails (default 8).
    pub max_attempts: u32,
    /// First retry wait, doubling (default 1 s).
    pub retry_backoff: Duration,
}
