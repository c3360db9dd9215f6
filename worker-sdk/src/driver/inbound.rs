//! What axd sends on a stream: one function per message kind, and the tasks that run an assigned
//! attempt (its handler, held until its start time if it came early, and the watch on its lease).

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use ax_proto::v1::{self as pb, scheduler_message::Msg as In, worker_message::Msg as Out};
use chrono::Utc;
use tokio::{
    sync::mpsc,
    task::{JoinError, JoinHandle},
    time::Instant,
};
use tokio_util::sync::CancellationToken;

use super::{
    Config, Event, Key, Run, STOP_GRACE, Sent, SessionEnd, State, Stats, accepted, credit, duration_of, fence_time,
    out, panic_message, reject, result_of, stale, time_of,
};
use crate::{Context, Handler, HandlerError, lease::LeaseCell, traces::RunSpan};

/// Handles one message from axd; `Some` if it ends the session.
pub(super) async fn on_message(
    config: &Config,
    stats: &Stats,
    state: &mut State,
    ev_tx: &mpsc::Sender<Event>,
    tx: &mpsc::Sender<pb::WorkerMessage>,
    sent: &mut Sent,
    m: In,
) -> Option<SessionEnd> {
    match m {
        In::Welcome(_) => None,
        In::Heartbeat(h) => {
            on_heartbeat(state, sent, h);
            None
        }
        In::Assign(a) => {
            on_assign(config, stats, state, ev_tx, tx, sent, a).await;
            None
        }
        In::Cancel(c) => {
            on_cancel(state, c);
            None
        }
        In::ResultAck(a) => {
            on_result_ack(stats, state, a);
            None
        }
        In::Drain(d) => Some(on_drain(d)),
    }
}

/// axd's heartbeat: a reading of its clock, and the leases its renewal extends.
fn on_heartbeat(state: &mut State, sent: &mut Sent, h: pb::SchedulerHeartbeat) {
    if let Some(t) = time_of(h.server_time) {
        // axd read its clock after heartbeat `renewed_seq` arrived (after Hello, for 0).
        let sent_before = if h.renewed_seq > 0 { sent.sent_at(h.renewed_seq) } else { None };
        state.clock.observe(t, sent_before.unwrap_or(sent.opened), Instant::now());
    }
    if let (Some(ttl), Some(at)) = (state.timing.lease_ttl, sent.sent_at(h.renewed_seq)) {
        let k = h.renewed_seq;
        for (key, r) in &state.running {
            if !r.canceled && r.accepted_after.is_some_and(|a| a < k) {
                r.lease.extend_to(at + ttl);
                tracing::trace!(instance = key.0, attempt = key.1, renewed_seq = k, sent_ago = ?at.elapsed(), "lease renewed");
            }
        }
    }
}

/// An assignment that [`admit`] lets through: its lease, run span and handler task start, with a
/// watch on the lease, and Accepted goes out unless it is held until its start time.
async fn on_assign(
    config: &Config,
    stats: &Stats,
    state: &mut State,
    ev_tx: &mpsc::Sender<Event>,
    tx: &mpsc::Sender<pb::WorkerMessage>,
    sent: &Sent,
    a: pb::Assign,
) {
    let key = (a.instance_id, a.attempt);
    let Some(handler) = admit(config, stats, state, tx, &a).await else {
        return;
    };
    let accept_by = time_of(a.accept_by);
    // Until a renewal covers it, the attempt is ours until its accept-by time.
    let lease = match (state.timing.lease_ttl, accept_by.and_then(|t| state.clock.instant_of(t))) {
        (Some(_), Some(end)) => LeaseCell::new(end, state.timing.margin),
        _ => LeaseCell::unbounded(),
    };
    // Sent ahead of its time: hold it, then start (Accepted goes out when it starts).
    let hold = duration_of(a.start_after);
    let run_span = config.traces.as_ref().filter(|_| !a.traceparent.is_empty()).and_then(|t| {
        let attrs = crate::traces::RunAttrs {
            instance_id: key.0,
            attempt: key.1,
            task: a.task_name.clone(),
            handler: a.handler.clone(),
        };
        t.start(&a.traceparent, attrs, hold)
    });
    let accepted_after = if hold.is_none() {
        let _ = tx.send(accepted(key)).await;
        Some(sent.seq)
    } else {
        None
    };
    stats.0.assigned.fetch_add(1, Ordering::Relaxed);
    let cancel = CancellationToken::new();
    let attempt = Attempt { key, cancel, lease, events: ev_tx.clone(), unstarted: Arc::new(AtomicBool::new(false)) };
    // The attempt's own deadline, enforced here as the lease is: its timeout counted from its
    // start (after the hold) plus the fence margin, so axd (counting from when Accepted arrived)
    // times it out first and its Cancel normally comes before; this stops it when that Cancel does
    // not come.
    let run_by = duration_of(a.timeout).map(|t| Instant::now() + hold.unwrap_or_default() + t + state.timing.margin);
    let ctx = context_of(a, &attempt);
    let inner = match hold {
        None => tokio::spawn(handler(ctx)),
        Some(hold) => tokio::spawn(held(hold, handler, ctx, attempt.clone())),
    };
    let abort = inner.abort_handle();
    tokio::spawn(watch(inner, attempt.clone(), run_by, stats.clone(), run_span));
    let Attempt { cancel, lease, .. } = attempt;
    state.running.insert(key, Run { cancel, abort, lease, accepted_after, canceled: false });
}

/// The handler of an assignment that may start. Otherwise `None`, after a Reject (shutting down,
/// stale, unknown handler), the result of the attempt that already ran, or nothing (it runs).
async fn admit(
    config: &Config,
    stats: &Stats,
    state: &mut State,
    tx: &mpsc::Sender<pb::WorkerMessage>,
    a: &pb::Assign,
) -> Option<Handler> {
    let key = (a.instance_id, a.attempt);
    if state.shutdown.is_some() {
        stats.0.rejected.fetch_add(1, Ordering::Relaxed);
        reject(tx, key, "worker shutting down".into()).await;
        return None;
    }
    if let Some(r) = state.finished.results.get(&key).cloned() {
        // Already ran this exact attempt: answer with its result instead of running it twice.
        stats.0.replayed.fetch_add(1, Ordering::Relaxed);
        state.unacked.insert(key, r.clone());
        let _ = tx.send(out(Out::Result(r))).await;
        let _ = tx.send(credit(1)).await;
        return None;
    }
    if state.running.contains_key(&key) {
        return None;
    }
    if let Some(reason) = stale(state, a) {
        stats.0.rejected.fetch_add(1, Ordering::Relaxed);
        stats.0.stale.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(instance = key.0, attempt = key.1, %reason, "assignment not started");
        reject(tx, key, reason).await;
        let _ = tx.send(credit(1)).await;
        return None;
    }
    let Some(handler) = config.handlers.get(&a.handler).cloned() else {
        stats.0.rejected.fetch_add(1, Ordering::Relaxed);
        let reason = format!("handler {:?} is not registered on this worker", a.handler);
        reject(tx, key, reason).await;
        let _ = tx.send(credit(1)).await;
        return None;
    };
    Some(handler)
}

/// What the tasks of one started attempt share: its key, the token that stops its handler, its
/// lease, the channel to the driver, and whether it ended without starting (its hold ran too late).
#[derive(Clone)]
struct Attempt {
    key: Key,
    cancel: CancellationToken,
    lease: Arc<LeaseCell>,
    events: mpsc::Sender<Event>,
    unstarted: Arc<AtomicBool>,
}

/// The handler's context for an assignment.
fn context_of(a: pb::Assign, attempt: &Attempt) -> Context {
    let key = attempt.key;
    let trigger_time = time_of(a.trigger_time).unwrap_or_else(Utc::now);
    let timeout =
        a.timeout.map(|d| Duration::new(u64::try_from(d.seconds).unwrap_or(0), u32::try_from(d.nanos).unwrap_or(0)));
    Context::new(
        key.0,
        key.1,
        a.task_name,
        a.handler,
        a.params,
        a.idempotency_key,
        trigger_time,
        timeout,
        attempt.cancel.clone(),
        attempt.lease.clone(),
        attempt.events.clone(),
    )
    .with_shard(a.shard_index, a.shard_total)
}

/// The task of an attempt sent ahead of its time: it waits for its start time, then runs the
/// handler (announcing the start), unless it is canceled or fenced first.
async fn held(hold: Duration, handler: Handler, ctx: Context, attempt: Attempt) -> Result<String, HandlerError> {
    let Attempt { key, cancel, lease, events, unstarted } = attempt;
    tokio::select! {
        () = tokio::time::sleep(hold) => {}
        () = cancel.cancelled() => {
            if lease.expired() {
                // Fenced during the hold: its accept-by time is too close.
                unstarted.store(true, Ordering::Release);
                return Err(HandlerError::retryable("the accept-by time came too close during the hold"));
            }
            return Err(HandlerError::retryable("canceled before its start time"));
        }
    }
    if lease.expired() {
        // The hold ended too close to (or past) the accept-by time: the process was paused. Rejected,
        // not run.
        unstarted.store(true, Ordering::Release);
        return Err(HandlerError::retryable("its hold ended too close to its accept-by time"));
    }
    let _ = events.send(Event::Started { key }).await;
    handler(ctx).await
}

/// Each attempt watches its own lease, whatever the connection is doing (reconnecting, waiting for
/// Welcome): when it is about to run out the handler is told to stop, and aborted if it has not
/// returned by half the margin before the end. It watches its deadline (`run_by`, from
/// `Assign.timeout` and the margin) the same way: told to stop at it, aborted [`STOP_GRACE`]
/// later, so a timeout does not depend on axd's Cancel arriving. Then the attempt's end goes to the
/// driver.
async fn watch(
    mut inner: JoinHandle<Result<String, HandlerError>>,
    attempt: Attempt,
    run_by: Option<Instant>,
    stats: Stats,
    run_span: Option<RunSpan>,
) {
    let Attempt { key, cancel: stop, lease: fence, events, unstarted } = attempt;
    let mut timed_out = false;
    let joined = tokio::select! {
        r = &mut inner => r,
        () = deadline(run_by) => {
            timed_out = true;
            stop.cancel();
            tracing::warn!(instance = key.0, attempt = key.1, "the attempt's timeout passed: stopping the handler");
            tokio::select! {
                r = &mut inner => r,
                () = tokio::time::sleep(STOP_GRACE) => {
                    inner.abort();
                    inner.await
                }
            }
        }
        () = fence_time(&fence) => {
            fence.mark_fenced();
            stop.cancel();
            stats.0.fenced.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(instance = key.0, attempt = key.1,
                "lease about to run out with no renewal from axd: stopping the handler");
            let now = Instant::now();
            let abort_at = fence.abort_at().map_or(now + STOP_GRACE, |t| t.max(now + STOP_GRACE));
            tokio::select! {
                r = &mut inner => r,
                () = tokio::time::sleep_until(abort_at) => {
                    inner.abort();
                    inner.await
                }
            }
        }
    };
    let r = match joined {
        Err(e) if timed_out && e.is_cancelled() => {
            Err(HandlerError::retryable("timed out: the worker stopped the handler at the attempt's timeout"))
        }
        joined => outcome(joined, &fence),
    };
    if unstarted.load(Ordering::Acquire) {
        let reason = format!("stale assignment: {}", r.err().map(|e| e.message).unwrap_or_default());
        let _ = events.send(Event::Unstarted { key, reason }).await;
        return;
    }
    if let Some(span) = run_span {
        span.finish(&r);
    }
    let _ = events.send(Event::Done { key, result: result_of(key, r) }).await;
}

/// Returns at `at`; never without one.
async fn deadline(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// What a handler task's end means for its attempt: its own return, or a retryable failure saying
/// why it did not return (a panic, its lease, the shutdown).
fn outcome(joined: Result<Result<String, HandlerError>, JoinError>, fence: &LeaseCell) -> Result<String, HandlerError> {
    match joined {
        Ok(r) => r,
        Err(e) if e.is_panic() => {
            Err(HandlerError::retryable(format!("handler panicked: {}", panic_message(e.into_panic()))))
        }
        Err(_) if fence.was_fenced() => Err(HandlerError::retryable(
            "stopped: its lease was about to run out with no renewal from axd (another worker may run it)",
        )),
        Err(_) => Err(HandlerError::retryable("worker shut down before the handler finished")),
    }
}

/// axd canceled an attempt: its handler is told to stop, and renewals no longer cover it.
fn on_cancel(state: &mut State, c: pb::Cancel) {
    if let Some(r) = state.running.get_mut(&(c.instance_id, c.attempt)) {
        tracing::info!(instance = c.instance_id, attempt = c.attempt, reason = %c.reason, "cancel");
        r.cancel.cancel();
        r.canceled = true;
    }
}

/// axd recorded (or deliberately ignored) a result: it is no longer kept for re-sending.
fn on_result_ack(stats: &Stats, state: &mut State, a: pb::ResultAck) {
    if state.unacked.remove(&(a.instance_id, a.attempt)).is_some() {
        stats.0.acked.fetch_add(1, Ordering::Relaxed);
    }
    if a.applied {
        stats.note_applied(a.instance_id, a.attempt);
    } else {
        tracing::debug!(instance = a.instance_id, attempt = a.attempt, note = %a.note, "result not applied");
    }
}

/// axd is shutting down: the session ends, for another endpoint.
fn on_drain(d: pb::Drain) -> SessionEnd {
    tracing::info!(reason = %d.reason, "axd is draining; moving to another endpoint");
    SessionEnd::Drained
}
