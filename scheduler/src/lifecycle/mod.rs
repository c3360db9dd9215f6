//! The instance state machine, as pure functions over a locked [`Instance`].
//!
//! Every transition of an instance after its creation is decided here — by a worker's message, a
//! deadline, or an operator — and every one returns the events that explain it; each event is
//! checked against [`InstanceStatus::can_move_to`] where events are written. The callers
//! ([`crate::transitions`], the sweeper, worker sessions) lock the rows, call these functions in
//! order, and write the changed rows and the events in one transaction
//! ([`crate::transitions::persist`]). Nothing here does I/O. Fencing lives here: a message whose
//! `(instance, attempt)` is not current for the session that sent it changes nothing (and is
//! recorded).

use std::time::Duration;

use crate::{
    model::{
        Command, Instance, InstanceSource, InstanceStatus, Ts, add,
        alerts::{AlertCause, AlertEvent},
    },
    schedule::fmt_duration,
};

pub mod fanout;
pub mod log;
mod session;

use session::not_kept;
pub use session::{readopt, session_ended, session_ended_unreadable};

/// How an attempt ends, as reported or decided.
#[derive(Debug, Clone)]
pub enum AttemptEnd {
    /// The handler succeeded.
    Success {
        /// Summary.
        message: String,
        output: String,
    },
    /// The handler failed.
    Failed {
        /// Error message.
        message: String,
        /// Whether the retry policy may run it again.
        retryable: bool,
    },
}

/// A result reported by a worker session.
#[derive(Debug, Clone)]
pub struct Completion {
    pub instance_id: i64,
    pub attempt: u32,
    /// Reporting session.
    pub session_id: String,
    /// Reporting worker.
    pub worker_id: String,
    /// Outcome.
    pub end: AttemptEnd,
    /// When the handler ended, on the worker's clock (for the trail of a late result).
    pub finished_at: Option<Ts>,
}

/// What happened to a reported result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompleteOutcome {
    /// The instance moved to this status (PENDING when a retry was scheduled).
    Applied(InstanceStatus),
    /// Nothing changed; why (recorded as an event when the instance exists).
    Ignored(String),
}

/// What happened to an `Accepted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcceptOutcome {
    /// DISPATCHED -> RUNNING.
    Started {
        /// The earlier of the run deadline and the lease: when the sweeper may have to act.
        wake_at: Ts,
    },
    /// Already RUNNING on this session (duplicate Accepted).
    AlreadyRunning,
    /// The attempt is not current for this session: the worker must stop it.
    NotCurrent(String),
}

/// A message from a worker that changes an instance.
#[derive(Debug, Clone)]
pub enum WorkerOp {
    /// The attempt started.
    Accepted {
        instance_id: i64,
        attempt: u32,
        /// Session that sent it.
        session_id: String,
        /// When axd received it: the attempt's start (its RUNNING event, `started_at` and the
        /// deadline count from here, however long the message waited to be written).
        received_at: Ts,
    },
    /// The attempt ended.
    Result(Completion),
    /// The worker will not run it (or it could not be delivered).
    Reject {
        instance_id: i64,
        attempt: u32,
        /// Session that held it.
        session_id: String,
        /// Why, for the trail.
        reason: String,
    },
}

impl WorkerOp {
    /// The instance it is about.
    pub fn instance_id(&self) -> i64 {
        match self {
            WorkerOp::Accepted { instance_id, .. } | WorkerOp::Reject { instance_id, .. } => *instance_id,
            WorkerOp::Result(c) => c.instance_id,
        }
    }

    /// The attempt it is about: (instance id, attempt).
    pub fn key(&self) -> (i64, u32) {
        match self {
            WorkerOp::Accepted { instance_id, attempt, .. } | WorkerOp::Reject { instance_id, attempt, .. } => {
                (*instance_id, *attempt)
            }
            WorkerOp::Result(c) => (c.instance_id, c.attempt),
        }
    }
}

/// What happened to a [`WorkerOp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerOpOutcome {
    /// For Accepted.
    Accepted(AcceptOutcome),
    /// For Result.
    Result(CompleteOutcome),
    /// For Reject: whether it went back to PENDING.
    Rejected(bool),
}

impl WorkerOpOutcome {
    /// Whether the message changed its instance's row (an attempt started, a result applied, a
    /// reject requeued); every other outcome leaves the row as it was.
    pub fn changes_its_row(&self) -> bool {
        matches!(
            self,
            WorkerOpOutcome::Accepted(AcceptOutcome::Started { .. })
                | WorkerOpOutcome::Result(CompleteOutcome::Applied(_))
                | WorkerOpOutcome::Rejected(true)
        )
    }
}

/// Who decides, and when.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The database time of the change.
    pub now: Ts,
    /// The axd making it.
    pub scheduler_id: &'a str,
}

impl Ctx<'_> {
    /// This context at a time no earlier than the instance's last change: axd processes estimate the
    /// database clock independently (within milliseconds), and an instance's trail must never go
    /// back in time when consecutive steps are decided by different axd.
    pub fn after(self, i: &Instance) -> Self {
        Ctx { now: self.now.max(i.updated_at), ..self }
    }
}

/// One event to record.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDraft {
    pub instance_id: i64,
    /// When.
    pub at: Ts,
    /// State before (`None` for creation).
    pub from: Option<InstanceStatus>,
    /// State after.
    pub to: InstanceStatus,
    pub attempt: u32,
    /// Worker involved.
    pub worker_id: String,
    /// Why.
    pub reason: String,
}

/// What a transition did besides changing the row.
#[derive(Debug, Clone, PartialEq)]
pub struct Effects {
    /// The time of the transition (events carry it).
    pub at: Ts,
    /// Events to record (also for changes that were refused).
    pub events: Vec<EventDraft>,
    /// Whether the row changed.
    pub changed: bool,
    /// A Cancel to deliver to the session that held the attempt.
    pub cancel: Option<Command>,
    /// The instance reached a final state (FIXED_DELAY tasks schedule their next fire from it).
    pub finalized: bool,
    /// The instance became PENDING again, available from this time (retry, reject, ack timeout).
    pub requeued_at: Option<Ts>,
    /// What alert rules may want to hear about (written to the outbox with the change).
    pub alerts: Vec<AlertCause>,
}

impl Effects {
    /// No effects yet, at `at`.
    pub fn new(at: Ts) -> Self {
        Effects {
            at,
            events: Vec::new(),
            changed: false,
            cancel: None,
            finalized: false,
            requeued_at: None,
            alerts: Vec::new(),
        }
    }

    /// Records an alert cause about instance `i` (its current attempt).
    fn alert(&mut self, i: &Instance, event: AlertEvent, message: &str) {
        self.alerts.push(AlertCause {
            event,
            app: i.app.clone(),
            task_name: i.task_name.clone(),
            instance_id: Some(i.id),
            attempt: i.attempt,
            at: self.at,
            message: message.to_owned(),
            occurrence: format!("i{}:a{}", i.id, i.attempt),
        });
    }

    fn event(&mut self, i: &Instance, from: InstanceStatus, to: InstanceStatus, reason: String) {
        self.events.push(EventDraft {
            instance_id: i.id,
            at: self.at,
            from: Some(from),
            to,
            attempt: i.attempt,
            worker_id: i.worker_id.clone().unwrap_or_default(),
            reason,
        });
    }
}

fn holds(i: &Instance, attempt: u32, session_id: &str) -> Result<(), String> {
    if i.attempt != attempt {
        Err(format!("attempt {attempt} is not current (current: {})", i.attempt))
    } else if !i.status.is_held() {
        Err(format!("instance is already {}", i.status))
    } else if i.session_id.as_deref() != Some(session_id) {
        Err(format!(
            "attempt {attempt} is held by session {}, not {session_id}",
            i.session_id.as_deref().unwrap_or("-")
        ))
    } else {
        Ok(())
    }
}

fn release(i: &mut Instance, now: Ts) {
    i.lease_expires_at = None;
    i.deadline_at = None;
    i.updated_at = now;
}

/// `Accepted`: DISPATCHED -> RUNNING; starts the run deadline and the lease.
pub fn accept(
    i: &mut Instance,
    attempt: u32,
    session_id: &str,
    lease_until: Ts,
    ctx: Ctx<'_>,
) -> (AcceptOutcome, Effects) {
    let ctx = ctx.after(i);
    let mut fx = Effects::new(ctx.now);
    if let Err(why) = holds(i, attempt, session_id) {
        return (AcceptOutcome::NotCurrent(why), fx);
    }
    if i.status == InstanceStatus::Running {
        return (AcceptOutcome::AlreadyRunning, fx);
    }
    i.status = InstanceStatus::Running;
    i.started_at = Some(ctx.now);
    i.deadline_at = i.timeout.map(|t| add(ctx.now, t));
    // Never shorter than the lease the worker already holds (the ack deadline of its Assign).
    i.lease_expires_at = Some(i.lease_expires_at.map_or(lease_until, |l| l.max(lease_until)));
    i.updated_at = ctx.now;
    fx.changed = true;
    fx.event(i, InstanceStatus::Dispatched, InstanceStatus::Running, "accepted by the worker".to_owned());
    (AcceptOutcome::Started { wake_at: i.deadline_at.map_or(lease_until, |d| d.min(lease_until)) }, fx)
}

/// `Reject` (or an assignment that could not be delivered): the DISPATCHED attempt goes back to
/// PENDING at once, without counting as a failure.
pub fn reject(i: &mut Instance, attempt: u32, session_id: &str, reason: &str, ctx: Ctx<'_>) -> (bool, Effects) {
    let ctx = ctx.after(i);
    let mut fx = Effects::new(ctx.now);
    if holds(i, attempt, session_id).is_err() || i.status != InstanceStatus::Dispatched {
        return (false, fx);
    }
    i.status = InstanceStatus::Pending;
    i.available_at = ctx.now;
    release(i, ctx.now);
    fx.changed = true;
    fx.requeued_at = Some(ctx.now);
    fx.event(i, InstanceStatus::Dispatched, InstanceStatus::Pending, reason.to_owned());
    (true, fx)
}

/// A worker's `Result`: applied only to the current attempt, from the session holding it or from
/// the same worker on a newer session (it re-announced the attempt elsewhere while this result was
/// on its way). A result the worker reports for an attempt axd has taken back is recorded on the
/// trail as a late result and changes nothing; an exact repeat of a result already applied is not
/// recorded again.
pub fn complete(i: &mut Instance, c: &Completion, ctx: Ctx<'_>, unit_random: f64) -> (CompleteOutcome, Effects) {
    let ctx = ctx.after(i);
    let held = holds(i, c.attempt, &c.session_id).or_else(|why| {
        if i.status.is_held() && i.attempt == c.attempt && i.worker_id.as_deref() == Some(c.worker_id.as_str()) {
            Ok(())
        } else {
            Err(why)
        }
    });
    if let Err(why) = held {
        let mut fx = Effects::new(ctx.now);
        let same = i.attempt == c.attempt && i.worker_id.as_deref() == Some(c.worker_id.as_str());
        let repeat = same
            && match (&c.end, i.status) {
                (AttemptEnd::Success { .. }, InstanceStatus::Success) => true,
                (AttemptEnd::Failed { .. }, InstanceStatus::Failed | InstanceStatus::Pending) => {
                    i.message.starts_with("handler failed")
                }
                _ => false,
            };
        if repeat {
            // The result that ended this attempt, again (its ack was lost): nothing new.
            return (CompleteOutcome::Ignored(format!("already recorded: the instance is {}", i.status)), fx);
        }
        let (outcome, verb) = match &c.end {
            AttemptEnd::Success { .. } => ("SUCCESS", "succeeded"),
            AttemptEnd::Failed { .. } => ("FAILED", "failed"),
        };
        let when = c
            .finished_at
            .map(|t| format!(" at {}", t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)))
            .unwrap_or_default();
        // The row's update time moves with the event, so that a change decided later by another
        // transaction (a dispatch) is never recorded before it on the trail.
        i.updated_at = ctx.now;
        fx.changed = true;
        // The worker confirms that the attempt a retry waits for has stopped: the retry may start.
        let stopped = if same && stopped_by(i, ctx.now).is_some() {
            i.lease_expires_at = None;
            if i.status == InstanceStatus::Pending {
                fx.requeued_at = Some(i.available_at.max(ctx.now));
                format!("; attempt {} has stopped, its retry may start", c.attempt)
            } else {
                format!("; attempt {} has stopped", c.attempt)
            }
        } else {
            String::new()
        };
        fx.events.push(EventDraft {
            instance_id: i.id,
            at: ctx.now,
            from: Some(i.status),
            to: i.status,
            attempt: c.attempt,
            worker_id: c.worker_id.clone(),
            reason: format!(
                "ignored {outcome} result (late): the handler {verb}{when} on worker {} (attempt {}, session {}), \
                 after axd had taken the attempt back ({why}){stopped}",
                c.worker_id, c.attempt, c.session_id
            ),
        });
        return (CompleteOutcome::Ignored(why), fx);
    }
    let fx = match &c.end {
        AttemptEnd::Success { message, output } => {
            let mut fx = Effects::new(ctx.now);
            let from = i.status;
            i.status = InstanceStatus::Success;
            i.finished_at = Some(ctx.now);
            i.message = message.clone();
            i.output = output.clone();
            release(i, ctx.now);
            fx.changed = true;
            fx.finalized = true;
            let reason = if message.is_empty() { "succeeded".to_owned() } else { format!("succeeded: {message}") };
            fx.event(i, from, InstanceStatus::Success, reason);
            fx
        }
        AttemptEnd::Failed { message, retryable } => end_attempt(
            i,
            InstanceStatus::Failed,
            format!("handler failed: {message}"),
            *retryable,
            false,
            ctx,
            unit_random,
        ),
    };
    let status = i.status;
    (CompleteOutcome::Applied(status), fx)
}

/// A failed, timed-out or lost attempt: PENDING again after the backoff while retries remain,
/// otherwise final. `may_run`: the attempt was taken from a worker that has not said it stopped (a
/// timeout): its lease is kept on the row, and the retry starts only once the worker confirms the
/// stop (its Result, see [`complete`]) or that lease has ended — the worker fences the attempt by
/// itself by then (see [`stopped_by`]).
fn end_attempt(
    i: &mut Instance,
    failed: InstanceStatus,
    reason: String,
    retryable: bool,
    may_run: bool,
    ctx: Ctx<'_>,
    unit_random: f64,
) -> Effects {
    let ctx = ctx.after(i);
    let mut fx = Effects { changed: true, ..Effects::new(ctx.now) };
    let from = i.status;
    let running_until = if may_run { i.lease_expires_at.filter(|l| *l > ctx.now) } else { None };
    i.failures += 1;
    release(i, ctx.now);
    i.lease_expires_at = running_until;
    if retryable && i.failures <= i.max_retries {
        let delay: Duration = i.backoff.delay(i.failures, unit_random);
        let at = add(ctx.now, delay);
        i.status = InstanceStatus::Pending;
        i.available_at = at;
        i.message = reason.clone();
        fx.requeued_at = Some(at);
        fx.event(i, from, failed, reason);
        let wait = running_until.map(|l| stop_wait(i, l)).unwrap_or_default();
        fx.event(
            i,
            failed,
            InstanceStatus::Pending,
            format!(
                "retry {}/{} in {} (at {}){wait}",
                i.failures,
                i.max_retries,
                fmt_duration(delay),
                at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            ),
        );
    } else {
        let why = if !retryable {
            format!("{reason} (not retryable)")
        } else if i.max_retries > 0 {
            format!("{reason} (all {} retries used)", i.max_retries)
        } else {
            reason
        };
        i.status = failed;
        i.finished_at = Some(ctx.now);
        i.message = why.clone();
        fx.finalized = true;
        fx.alert(i, AlertEvent::FinalFailure, &why);
        fx.event(i, from, failed, why);
    }
    fx
}

/// What a retry waits for besides its backoff while attempt `i.attempt` may still run until `lease`.
fn stop_wait(i: &Instance, lease: Ts) -> String {
    format!(
        "; it starts once attempt {} has stopped: worker {} confirms it, or its lease ends at {}",
        i.attempt,
        i.worker_id.as_deref().unwrap_or("-"),
        lease.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    )
}

/// Until when the attempt before this instance's next one may still run: the lease of an attempt
/// taken from its worker (a timeout, an operator's cancel) that the worker has not yet confirmed
/// stopped. `None` once it has, or once that lease has ended (the worker fences the attempt by
/// itself before its lease can end, see README "Leases"). A PENDING instance is not dispatched
/// before.
pub fn stopped_by(i: &Instance, now: Ts) -> Option<Ts> {
    i.lease_expires_at.filter(|l| !i.status.is_held() && *l > now)
}

/// A DISPATCHED attempt whose lease passed: back in the queue (not a failure).
pub fn expire_ack(i: &mut Instance, ctx: Ctx<'_>) -> Effects {
    let ctx = ctx.after(i);
    let mut fx = Effects::new(ctx.now);
    if i.status != InstanceStatus::Dispatched {
        return fx;
    }
    let worker = i.worker_id.clone().unwrap_or_default();
    i.status = InstanceStatus::Pending;
    release(i, ctx.now);
    fx.changed = true;
    fx.requeued_at = Some(i.available_at.max(ctx.now));
    fx.event(
        i,
        InstanceStatus::Dispatched,
        InstanceStatus::Pending,
        format!("worker {worker} did not accept it in time (ack timeout, or its session ended); back in the queue"),
    );
    fx
}

/// A RUNNING attempt past its deadline: TIMEOUT, its worker is told to stop, the retry policy applies.
pub fn time_out(i: &mut Instance, ctx: Ctx<'_>, unit_random: f64) -> Effects {
    let ctx = ctx.after(i);
    if i.status != InstanceStatus::Running {
        return Effects::new(ctx.now);
    }
    let took = i.timeout.map(fmt_duration).unwrap_or_default();
    let message = format!("timed out: still running after {took}");
    let cancel = cancel_command(i, &message);
    let mut fx = end_attempt(i, InstanceStatus::Timeout, message.clone(), true, true, ctx, unit_random);
    fx.cancel = cancel;
    fx.alert(i, AlertEvent::Timeout, &message);
    fx
}

/// A RUNNING attempt whose lease passed: the worker is lost; the retry policy applies.
pub fn lose(i: &mut Instance, ctx: Ctx<'_>, unit_random: f64) -> Effects {
    let ctx = ctx.after(i);
    if i.status != InstanceStatus::Running {
        return Effects::new(ctx.now);
    }
    let message = match not_kept(i) {
        Some(why) => format!("worker lost: {why}"),
        None => format!(
            "worker lost: {} stopped heartbeating and did not re-announce the attempt within the grace period",
            i.worker_id.as_deref().unwrap_or("-")
        ),
    };
    let mut fx = end_attempt(i, InstanceStatus::Failed, message.clone(), true, false, ctx, unit_random);
    fx.alert(i, AlertEvent::WorkerLost, &message);
    fx
}

fn cancel_command(i: &Instance, reason: &str) -> Option<Command> {
    Some(Command {
        scheduler_id: i.scheduler_id.clone()?,
        session_id: i.session_id.clone()?,
        instance_id: i.id,
        attempt: i.attempt,
        reason: reason.to_owned(),
    })
}

/// An operator's cancel. `None` if the instance is already final.
pub fn cancel(i: &mut Instance, reason: &str, actor: &str, ctx: Ctx<'_>) -> Option<Effects> {
    let ctx = ctx.after(i);
    if i.status.is_terminal() {
        return None;
    }
    let why = if reason.is_empty() { format!("canceled by {actor}") } else { format!("canceled by {actor}: {reason}") };
    let mut fx = Effects { changed: true, finalized: true, ..Effects::new(ctx.now) };
    if i.status.is_held() {
        fx.cancel = cancel_command(i, &why);
    }
    let from = i.status;
    // A held attempt, or the attempt a waiting retry waits for, may run on until its lease ends.
    let running_until =
        if i.status.is_held() { i.lease_expires_at.filter(|l| *l > ctx.now) } else { stopped_by(i, ctx.now) };
    i.status = InstanceStatus::Canceled;
    i.finished_at = Some(ctx.now);
    i.message = why.clone();
    release(i, ctx.now);
    // The attempt may run until its worker stops it: a retry of this instance waits for that.
    i.lease_expires_at = running_until;
    fx.event(i, from, InstanceStatus::Canceled, why);
    Some(fx)
}

/// An operator's retry of a final instance. `None` if it is not final.
pub fn retry(i: &mut Instance, actor: &str, ctx: Ctx<'_>) -> Option<Effects> {
    let ctx = ctx.after(i);
    if !i.status.is_terminal() {
        return None;
    }
    let mut fx = Effects { changed: true, ..Effects::new(ctx.now) };
    let from = i.status;
    let running_until = stopped_by(i, ctx.now);
    i.status = InstanceStatus::Pending;
    i.available_at = ctx.now;
    i.finished_at = None;
    release(i, ctx.now);
    i.lease_expires_at = running_until;
    fx.requeued_at = Some(ctx.now);
    let wait = running_until.map(|l| stop_wait(i, l)).unwrap_or_default();
    fx.event(i, from, InstanceStatus::Pending, format!("retried by {actor}{wait}"));
    Some(fx)
}

/// The effects of many transitions in one transaction.
#[derive(Debug, Default)]
pub struct Batch {
    /// Instances whose row changed.
    pub changed: std::collections::BTreeSet<i64>,
    /// Events, in order.
    pub events: Vec<EventDraft>,
    /// Cancels to queue.
    pub commands: Vec<Command>,
    /// Instances that reached a final state.
    pub finalized: std::collections::BTreeSet<i64>,
    /// The earliest time an instance of the batch became available again.
    pub earliest_requeue: Option<Ts>,
    /// Alert causes, written to the outbox with the batch.
    pub alerts: Vec<AlertCause>,
}

impl Batch {
    /// Adds another batch's effects after this one's.
    pub fn merge(&mut self, other: Batch) {
        self.changed.extend(other.changed);
        self.events.extend(other.events);
        self.commands.extend(other.commands);
        self.finalized.extend(other.finalized);
        self.alerts.extend(other.alerts);
        if let Some(at) = other.earliest_requeue {
            self.earliest_requeue = Some(self.earliest_requeue.map_or(at, |e| e.min(at)));
        }
    }

    /// Adds the effects of one transition of instance `id`.
    pub fn add(&mut self, id: i64, fx: Effects) {
        if fx.changed {
            self.changed.insert(id);
        }
        if fx.finalized {
            self.finalized.insert(id);
        }
        self.events.extend(fx.events);
        self.commands.extend(fx.cancel);
        self.alerts.extend(fx.alerts);
        if let Some(at) = fx.requeued_at {
            self.earliest_requeue = Some(self.earliest_requeue.map_or(at, |e| e.min(at)));
        }
    }
}

/// Whether a final instance schedules its FIXED_DELAY task's next fire: only the schedule's own
/// fires do (not manual runs, backfills, intake rows, chains, nor the children of a broadcast or
/// sharded fire: their parent does, when it ends).
pub fn drives_fixed_delay(i: &Instance) -> bool {
    matches!(i.source, InstanceSource::Schedule | InstanceSource::CatchUp) && i.route.parent_id.is_none()
}

#[cfg(test)]
pub(crate) mod tests;
