//! The happy path's trail held in the instance row (README "How it works", issue 31).
//!
//! An attempt that is dispatched, started and succeeds says everything its three events would say
//! in its own row: the worker, session and axd that dispatched it, when (`dispatched_at`), when it
//! started and finished, and its message. Those events are then not written to
//! `ax_instance_event`; the row's `trail` bits say which of them it holds, and readers get the
//! stored events followed by the ones the row holds ([`implied`]). Only an event that the row
//! reproduces exactly is left out (the writers compare [`implied`] with the event they would have
//! written), and a change the row cannot hold — a retry, a rejection, a lost worker, a late result,
//! an operator's action — first writes the events the row held as rows ([`Trail::held`], taken
//! when the row was read) and clears the bits, so the held events are always the trail's tail.
//!
//! An instance a schedule fired holds its creation event too ([`CREATED`]) while nothing else is
//! stored: the axd that created it is the row's `scheduler_id` until a dispatch, and the reason is
//! [`scheduled_reason`] of its fire time. A dispatch by another axd writes it as a row first.

use super::{Instance, InstanceEvent, InstanceSource, InstanceStatus, Ts};

/// The current attempt's DISPATCHED event is held by the row.
pub const DISPATCHED: u8 = 1;
/// Its RUNNING event.
pub const RUNNING: u8 = 2;
/// Its SUCCESS event.
pub const SUCCESS: u8 = 4;
/// The instance's creation event (PENDING, fired by a schedule), by the axd in `scheduler_id`.
pub const CREATED: u8 = 8;

/// The creation reason of an instance a schedule fired at `fire_at` (no jitter, one schedule).
pub fn scheduled_reason(fire_at: Ts) -> String {
    format!("fired on schedule for {}", fire_at.to_rfc3339())
}

/// Whether a new instance's row can hold its creation event: created PENDING by a schedule, not a
/// child, with the reason [`scheduled_reason`] of its fire time as stored (in microseconds).
pub fn holds_creation(
    source: InstanceSource,
    status: InstanceStatus,
    parent: Option<i64>,
    fire_at: Ts,
    reason: &str,
) -> bool {
    source == InstanceSource::Schedule
        && status == InstanceStatus::Pending
        && parent.is_none()
        && reason == scheduled_reason(super::from_micros(super::to_micros(fire_at)))
}

/// What of its trail an instance row holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trail {
    /// Which events the row holds ([`CREATED`], [`DISPATCHED`], [`RUNNING`], [`SUCCESS`]); 0: every
    /// event is a row of `ax_instance_event`.
    pub bits: u8,
    /// When the current attempt was dispatched.
    pub dispatched_at: Option<Ts>,
    /// The events the row held when it was read ([`implied`] of the row as read): what a change the
    /// row cannot hold writes as rows first. The state machine never changes it.
    pub held: Vec<InstanceEvent>,
}

/// The bit of a happy-path event, if it is one (DISPATCHED from PENDING, RUNNING from
/// DISPATCHED, SUCCESS from a held state).
pub fn bit_of(from: Option<InstanceStatus>, to: InstanceStatus) -> Option<u8> {
    use InstanceStatus as S;
    match (from?, to) {
        (S::Pending, S::Dispatched) => Some(DISPATCHED),
        (S::Dispatched, S::Running) => Some(RUNNING),
        (S::Dispatched | S::Running, S::Success) => Some(SUCCESS),
        _ => None,
    }
}

/// The events the row `i` holds under `bits`, in order, with id 0: exactly what the writers
/// would have recorded (the creation event of [`crate::birth`], the DISPATCHED event of
/// [`crate::loops::dispatch::claim`], RUNNING of [`crate::lifecycle::accept`], SUCCESS of
/// [`crate::lifecycle::complete`]), each by the axd in the row's `scheduler_id` (the one that
/// created it until a dispatch, then the one that dispatched the attempt).
pub fn implied(i: &Instance, bits: u8) -> Vec<InstanceEvent> {
    use InstanceStatus as S;
    let mut out = Vec::new();
    let worker = i.worker_id.clone().unwrap_or_default();
    let event = |at: Ts, from: S, to: S, reason: String| InstanceEvent {
        id: 0,
        instance_id: i.id,
        at,
        from: Some(from),
        to,
        attempt: i.attempt,
        scheduler_id: i.scheduler_id.clone().unwrap_or_default(),
        worker_id: worker.clone(),
        reason,
    };
    if bits & CREATED != 0 {
        out.push(InstanceEvent {
            id: 0,
            instance_id: i.id,
            at: i.created_at,
            from: None,
            to: S::Pending,
            attempt: 0,
            scheduler_id: i.scheduler_id.clone().unwrap_or_default(),
            worker_id: String::new(),
            reason: scheduled_reason(i.fire_at),
        });
    }
    if bits & DISPATCHED != 0 {
        let at = i.trail.dispatched_at.unwrap_or(i.updated_at);
        let session = i.session_id.as_deref().unwrap_or_default();
        let reason = if i.available_at > at {
            format!(
                "assigned to worker {worker} (session {session}) ahead of time, to start at {}",
                i.available_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
            )
        } else {
            format!("assigned to worker {worker} (session {session})")
        };
        out.push(event(at, S::Pending, S::Dispatched, reason));
    }
    if bits & RUNNING != 0 {
        let at = i.started_at.unwrap_or(i.updated_at);
        out.push(event(at, S::Dispatched, S::Running, "accepted by the worker".to_owned()));
    }
    if bits & SUCCESS != 0 {
        let at = i.finished_at.unwrap_or(i.updated_at);
        let from = if i.started_at.is_some() { S::Running } else { S::Dispatched };
        let reason = if i.message.is_empty() { "succeeded".to_owned() } else { format!("succeeded: {}", i.message) };
        out.push(event(at, from, S::Success, reason));
    }
    out
}

/// The trail a reader gets: the stored events, then those the row held when it was read and that
/// are not stored (a concurrent change may have written them as rows after the row was read).
pub fn merged(mut stored: Vec<InstanceEvent>, held: &[InstanceEvent]) -> Vec<InstanceEvent> {
    let same = |a: &InstanceEvent, b: &InstanceEvent| {
        a.attempt == b.attempt && a.from == b.from && a.to == b.to && a.at == b.at
    };
    let extra: Vec<InstanceEvent> = held.iter().filter(|h| !stored.iter().any(|s| same(s, h))).cloned().collect();
    stored.extend(extra);
    stored
}
