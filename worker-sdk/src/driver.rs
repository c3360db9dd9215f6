//! The connection driver: one task that owns the worker's state across reconnects.
//!
//! State that must survive a lost connection lives here, not in the session: running attempts (their
//! handler tasks keep going), results not yet acknowledged, and recently finished attempts. Each
//! session re-announces running and unacknowledged attempts in Hello, re-sends the results axd
//! still wants (and, as late results for its trail, those it no longer wants), and keeps the
//! credit invariant: credits granted = capacity - attempts axd counts as outstanding.
//!
//! Liveness runs both ways: heartbeats go out every interval, numbered, and a stream on which axd
//! has said nothing for three intervals is dropped for the next endpoint. Every running attempt
//! carries a lease ([`crate::lease`]) that axd's renewals extend; when it is about to run out the
//! handler is canceled, then aborted, so it never runs on past the point where another axd may
//! give the instance to another worker. An assignment read after its accept-by time is rejected,
//! not started.

use std::{
    collections::{HashMap, VecDeque},
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use ax_proto::v1::{self as pb, scheduler_message::Msg as In, worker_message::Msg as Out};
use chrono::{DateTime, Utc};
use tokio::{sync::mpsc, task::AbortHandle, time::Instant};
use tokio_util::sync::CancellationToken;
use tonic::{Code, transport::ClientTlsConfig};

use crate::{
    Handler, HandlerError, Level, WorkerError,
    lease::{LeaseCell, ServerClock},
};

mod inbound;
mod session;

use inbound::on_message;
use session::session;

pub(crate) struct Config {
    pub endpoints: Vec<String>,
    pub app: String,
    pub worker_id: String,
    pub capacity: u32,
    pub labels: HashMap<String, String>,
    pub tls: Option<ClientTlsConfig>,
    pub handlers: HashMap<String, Handler>,
    pub shutdown_deadline: Duration,
    pub remember: usize,
    pub reconnect_max: Duration,
    /// How long to wait for Welcome after opening a stream.
    pub welcome_timeout: Duration,
    /// OpenTelemetry run spans, when configured.
    pub traces: Option<crate::traces::Tracing>,
}

/// Counters of a running worker.
#[derive(Debug, Clone, Default)]
pub struct Stats(Arc<StatsInner>);

#[derive(Debug, Default)]
struct StatsInner {
    connections: AtomicU64,
    assigned: AtomicU64,
    replayed: AtomicU64,
    acked: AtomicU64,
    rejected: AtomicU64,
    fenced: AtomicU64,
    stale: AtomicU64,
    silent_axd: AtomicU64,
    /// The results axd acknowledged as applied, once [`Stats::record_applied`] asked for them.
    applied: std::sync::Mutex<Option<Vec<(i64, u32)>>>,
}

impl Stats {
    /// Sessions established (Welcome received).
    pub fn connections(&self) -> u64 {
        self.0.connections.load(Ordering::Relaxed)
    }
    /// Assignments started.
    pub fn assigned(&self) -> u64 {
        self.0.assigned.load(Ordering::Relaxed)
    }
    /// Assignments answered from the finished-attempt memory instead of running again.
    pub fn replayed(&self) -> u64 {
        self.0.replayed.load(Ordering::Relaxed)
    }
    /// Results acknowledged by axd.
    pub fn acked(&self) -> u64 {
        self.0.acked.load(Ordering::Relaxed)
    }
    /// Assignments rejected (shutting down, unknown handler, stale).
    pub fn rejected(&self) -> u64 {
        self.0.rejected.load(Ordering::Relaxed)
    }
    /// Attempts stopped because their lease was about to run out.
    pub fn fenced(&self) -> u64 {
        self.0.fenced.load(Ordering::Relaxed)
    }
    /// Assignments rejected because they were read after their accept-by time.
    pub fn stale(&self) -> u64 {
        self.0.stale.load(Ordering::Relaxed)
    }
    /// Streams dropped because axd said nothing for three heartbeat intervals.
    pub fn silent_axd(&self) -> u64 {
        self.0.silent_axd.load(Ordering::Relaxed)
    }
    /// From now on, remembers each result axd acknowledges as applied (`ResultAck.applied`), for
    /// [`Stats::applied`]: off by default, as the list only grows.
    pub fn record_applied(&self) {
        self.0.applied.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert_with(Vec::new);
    }
    /// The results (instance id, attempt) axd acknowledged as applied since
    /// [`Stats::record_applied`], in the order the acknowledgements came.
    pub fn applied(&self) -> Vec<(i64, u32)> {
        self.0.applied.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone().unwrap_or_default()
    }
    pub(crate) fn note_applied(&self, instance: i64, attempt: u32) {
        if let Some(v) = self.0.applied.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_mut() {
            v.push((instance, attempt));
        }
    }
}

type Key = (i64, u32);

/// From handler tasks to the driver.
pub(crate) enum Event {
    /// A held (early) assignment reached its start time and its handler started: send Accepted.
    Started {
        key: Key,
    },
    Done {
        key: Key,
        result: pb::Result,
    },
    /// A held assignment was not started (its hold ended past its accept-by time): send Reject and
    /// give the slot back, so the instance returns to the queue without using a retry.
    Unstarted {
        key: Key,
        reason: String,
    },
    Progress {
        key: Key,
        percent: u32,
        message: String,
    },
    Log {
        key: Key,
        level: Level,
        message: String,
        at: DateTime<Utc>,
    },
}

struct Run {
    cancel: CancellationToken,
    abort: AbortHandle,
    lease: Arc<LeaseCell>,
    /// Heartbeats sent on the current stream before its Accepted went out (a renewal answering a
    /// later heartbeat covers it); `None`: not accepted on this stream (held, or from an earlier
    /// stream until Welcome adopts it).
    accepted_after: Option<u64>,
    /// axd sent Cancel for it: renewals no longer cover it (axd stopped renewing it), so a handler
    /// that ignores the Cancel is stopped when the lease it has runs out.
    canceled: bool,
}

/// The least time a fenced handler gets to return by itself before it is aborted, even when the
/// whole margin has already passed (the process was paused): a cooperative handler notices at once
/// and reports what it did.
const STOP_GRACE: Duration = Duration::from_millis(200);

/// Timings from the latest Welcome.
#[derive(Debug, Clone, Copy)]
struct Timing {
    heartbeat: Duration,
    /// `None` from an axd that does not send leases: no fencing.
    lease_ttl: Option<Duration>,
    margin: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing { heartbeat: Duration::from_secs(2), lease_ttl: None, margin: Duration::ZERO }
    }
}

fn duration_of(d: Option<prost_types::Duration>) -> Option<Duration> {
    let d = d?;
    let d = Duration::new(u64::try_from(d.seconds).ok()?, u32::try_from(d.nanos).ok()?);
    (!d.is_zero()).then_some(d)
}

fn time_of(t: Option<prost_types::Timestamp>) -> Option<DateTime<Utc>> {
    let t = t?;
    DateTime::from_timestamp(t.seconds, u32::try_from(t.nanos).ok()?)
}

/// Recently finished attempts, oldest evicted first.
struct Finished {
    cap: usize,
    order: VecDeque<Key>,
    results: HashMap<Key, pb::Result>,
}

impl Finished {
    fn insert(&mut self, key: Key, r: pb::Result) {
        if self.cap == 0 {
            return;
        }
        if self.results.insert(key, r).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.results.remove(&old);
            }
        }
    }
}

struct State {
    running: HashMap<Key, Run>,
    unacked: HashMap<Key, pb::Result>,
    finished: Finished,
    shutdown: Option<Instant>,
    canceled_all: bool,
    aborted_all: bool,
    clock: ServerClock,
    timing: Timing,
}

impl State {
    fn done(&self) -> bool {
        self.shutdown.is_some() && self.running.is_empty() && self.unacked.is_empty()
    }

    fn absorb(&mut self, ev: Event) -> Option<(Key, pb::Result)> {
        match ev {
            Event::Done { key, result } => {
                self.running.remove(&key);
                self.finished.insert(key, result.clone());
                self.unacked.insert(key, result.clone());
                Some((key, result))
            }
            Event::Unstarted { key, .. } => {
                self.running.remove(&key);
                None
            }
            Event::Started { .. } | Event::Progress { .. } | Event::Log { .. } => None,
        }
    }
}

enum SessionEnd {
    /// Graceful shutdown complete (or given up).
    Finished,
    /// axd refused us for good.
    Refused(tonic::Status),
    /// axd asked us to move.
    Drained,
    /// The connection failed or broke.
    Lost { established: bool },
}

fn out(m: Out) -> pb::WorkerMessage {
    pb::WorkerMessage { msg: Some(m) }
}

fn accepted(key: Key) -> pb::WorkerMessage {
    out(Out::Accepted(pb::Accepted { instance_id: key.0, attempt: key.1 }))
}

fn credit(n: u32) -> pb::WorkerMessage {
    out(Out::Credit(pb::Credit { grant: n, reset: false }))
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "handler panicked".to_owned()
    }
}

/// Longest Result.output axd keeps, in bytes (proto/ax/v1/worker.proto, Result.output): a longer
/// output is cut to it and marked `…[truncated, N bytes in all]`.
pub const MAX_OUTPUT: usize = 64 * 1024;
/// Longest Result.message axd keeps.
pub(crate) const MAX_RESULT_MESSAGE: usize = 4096;
/// Longest Log.message axd keeps.
pub(crate) const MAX_LOG_LINE: usize = 4096;
/// Longest Progress.message axd keeps.
pub(crate) const MAX_PROGRESS_MESSAGE: usize = 1024;
/// Longest Reject.reason axd accepts (a longer one ends the stream with INVALID_ARGUMENT).
pub(crate) const MAX_REJECT_REASON: usize = 1024;

/// `s` cut to at most `max` bytes, on a character boundary, marked the way axd marks what it cuts
/// ("…[truncated, N bytes in all]"): a handler's oversized output is delivered, shortened, instead
/// of making a message axd refuses (a stream ended with RESOURCE_EXHAUSTED and a result that can
/// never arrive).
pub(crate) fn truncate(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let marker = format!("…[truncated, {} bytes in all]", s.len());
    let mut cut = max.saturating_sub(marker.len());
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s.push_str(&marker);
    s
}

fn result_of(key: Key, r: Result<String, HandlerError>) -> pb::Result {
    let now = Utc::now();
    let finished_at = Some(prost_types::Timestamp {
        seconds: now.timestamp(),
        nanos: i32::try_from(now.timestamp_subsec_nanos()).unwrap_or(0),
    });
    match r {
        Ok(output) => pb::Result {
            instance_id: key.0,
            attempt: key.1,
            outcome: pb::Outcome::Success.into(),
            message: String::new(),
            output: truncate(output, MAX_OUTPUT),
            retryable: false,
            finished_at,
        },
        Err(e) => pb::Result {
            instance_id: key.0,
            attempt: key.1,
            outcome: pb::Outcome::Failed.into(),
            message: truncate(e.message, MAX_RESULT_MESSAGE),
            output: String::new(),
            retryable: e.retryable,
            finished_at,
        },
    }
}

pub(crate) async fn run<F: Future<Output = ()> + Send>(
    config: Arc<Config>,
    stats: Stats,
    shutdown: F,
) -> Result<(), WorkerError> {
    let (ev_tx, mut ev_rx) = mpsc::channel::<Event>(config.capacity as usize * 2 + 1024);
    let mut state = State {
        running: HashMap::new(),
        unacked: HashMap::new(),
        finished: Finished { cap: config.remember, order: VecDeque::new(), results: HashMap::new() },
        shutdown: None,
        canceled_all: false,
        aborted_all: false,
        clock: ServerClock::default(),
        timing: Timing::default(),
    };
    tokio::pin!(shutdown);
    let mut next = 0usize;
    let initial_backoff = Duration::from_millis(100);
    let mut backoff = initial_backoff;
    loop {
        let endpoint = config.endpoints[next % config.endpoints.len()].clone();
        next += 1;
        let end = session(&config, &stats, &mut state, &ev_tx, &mut ev_rx, &endpoint, shutdown.as_mut()).await;
        let pause = match end {
            SessionEnd::Finished => return Ok(()),
            SessionEnd::Refused(status) => return Err(WorkerError::Refused(status)),
            // Move on at once: another axd is waiting.
            SessionEnd::Drained => Duration::ZERO,
            SessionEnd::Lost { established: true } => {
                backoff = initial_backoff;
                Duration::ZERO
            }
            SessionEnd::Lost { established: false } => {
                // Try every endpoint once quickly before backing off.
                if !next.is_multiple_of(config.endpoints.len()) {
                    Duration::from_millis(20)
                } else {
                    let b = backoff;
                    backoff = (backoff * 2).min(config.reconnect_max);
                    b.mul_f64(0.8 + 0.4 * fastrand::f64())
                }
            }
        };
        tracing::debug!(?pause, "reconnecting");
        let until = Instant::now() + pause;
        // While disconnected, handlers keep finishing and the shutdown clock keeps running.
        loop {
            if state.done() || shutdown_expired(&config, &state) {
                return Ok(());
            }
            tokio::select! {
                () = tokio::time::sleep_until(until) => break,
                Some(ev) = ev_rx.recv() => { state.absorb(ev); }
                () = &mut shutdown, if state.shutdown.is_none() => begin_shutdown(&mut state),
                () = shutdown_tick(&config, &state) => enforce_shutdown(&config, &mut state).await,
            }
        }
    }
}

/// Returns once the lease's fence time has passed (renewals move it later while this waits).
async fn fence_time(lease: &LeaseCell) {
    loop {
        let Some(at) = lease.fence_at() else { return std::future::pending().await };
        tokio::time::sleep_until(at).await;
        if lease.fence_at().is_some_and(|t| Instant::now() >= t) {
            return;
        }
    }
}

fn begin_shutdown(state: &mut State) {
    tracing::info!(running = state.running.len(), "shutting down: taking no new work");
    state.shutdown = Some(Instant::now());
}

/// After the deadline, running attempts are canceled; 2 s later the stragglers are aborted and
/// reported as failed; 5 s after that the worker gives up delivering results.
fn shutdown_expired(config: &Config, state: &State) -> bool {
    state.shutdown.is_some_and(|t| t.elapsed() > config.shutdown_deadline + Duration::from_secs(7))
}

async fn shutdown_tick(config: &Config, state: &State) {
    let Some(t) = state.shutdown else {
        return std::future::pending().await;
    };
    let at = if !state.canceled_all {
        t + config.shutdown_deadline
    } else if !state.aborted_all {
        t + config.shutdown_deadline + Duration::from_secs(2)
    } else {
        t + config.shutdown_deadline + Duration::from_secs(7)
    };
    tokio::time::sleep_until(at).await
}

async fn enforce_shutdown(config: &Config, state: &mut State) {
    let Some(t) = state.shutdown else { return };
    if !state.canceled_all && t.elapsed() >= config.shutdown_deadline {
        state.canceled_all = true;
        tracing::warn!(running = state.running.len(), "shutdown deadline passed: canceling running attempts");
        for r in state.running.values() {
            r.cancel.cancel();
        }
    } else if state.canceled_all
        && !state.aborted_all
        && t.elapsed() >= config.shutdown_deadline + Duration::from_secs(2)
    {
        state.aborted_all = true;
        // The task that awaits each handler reports it FAILED ("worker shut down before the handler
        // finished") once the abort lands.
        for r in state.running.values() {
            r.abort.abort();
        }
    }
}

/// The heartbeats sent on one stream: their numbers and when they went out.
struct Sent {
    /// When Hello went out on this stream.
    opened: Instant,
    seq: u64,
    times: VecDeque<(u64, Instant)>,
}

impl Sent {
    fn new(opened: Instant) -> Self {
        Sent { opened, seq: 0, times: VecDeque::new() }
    }

    fn next(&mut self) -> u64 {
        self.seq += 1;
        self.times.push_back((self.seq, Instant::now()));
        // Renewals answer recent heartbeats; far older ones will not be asked about.
        while self.times.len() > 1024 {
            self.times.pop_front();
        }
        self.seq
    }

    /// When heartbeat `k` was sent (forgetting older ones).
    fn sent_at(&mut self, k: u64) -> Option<Instant> {
        while self.times.front().is_some_and(|(s, _)| *s < k) {
            self.times.pop_front();
        }
        self.times.front().filter(|(s, _)| *s == k).map(|(_, t)| *t)
    }
}

/// A held assignment's handler started: Accepted goes out, and renewals from the next heartbeat on
/// cover it. False if the stream is gone.
async fn started(state: &mut State, tx: &mpsc::Sender<pb::WorkerMessage>, sent: &Sent, key: Key) -> bool {
    if let Some(r) = state.running.get_mut(&key) {
        r.accepted_after = Some(sent.seq);
    }
    tx.send(accepted(key)).await.is_ok()
}

/// A held assignment that was not started: Reject (back to the queue without using a retry), and
/// the slot is free again.
async fn unstarted(state: &mut State, stats: &Stats, tx: &mpsc::Sender<pb::WorkerMessage>, key: Key, reason: String) {
    state.running.remove(&key);
    stats.0.stale.fetch_add(1, Ordering::Relaxed);
    stats.0.rejected.fetch_add(1, Ordering::Relaxed);
    tracing::warn!(instance = key.0, attempt = key.1, %reason, "held assignment not started");
    reject(tx, key, reason).await;
    if state.shutdown.is_none() {
        let _ = tx.send(credit(1)).await;
    }
}

/// Sends a progress or log line, best effort (dropped if the stream is backed up).
fn forward(tx: &mpsc::Sender<pb::WorkerMessage>, ev: Event) {
    let m = match ev {
        Event::Progress { key, percent, message } => {
            let message = truncate(message, MAX_PROGRESS_MESSAGE);
            Out::Progress(pb::Progress { instance_id: key.0, attempt: key.1, percent: percent.min(100), message })
        }
        Event::Log { key, level, message, at } => {
            let level = match level {
                Level::Debug => pb::LogLevel::Debug,
                Level::Info => pb::LogLevel::Info,
                Level::Warn => pb::LogLevel::Warn,
                Level::Error => pb::LogLevel::Error,
            };
            let at = Some(prost_types::Timestamp {
                seconds: at.timestamp(),
                nanos: i32::try_from(at.timestamp_subsec_nanos()).unwrap_or(0),
            });
            let message = truncate(message, MAX_LOG_LINE);
            Out::Log(pb::Log { instance_id: key.0, attempt: key.1, level: level.into(), message, at })
        }
        Event::Started { .. } | Event::Done { .. } | Event::Unstarted { .. } => return,
    };
    let _ = tx.try_send(out(m));
}

fn refused_or_lost(status: tonic::Status, established: bool) -> SessionEnd {
    match status.code() {
        Code::InvalidArgument | Code::PermissionDenied | Code::Unauthenticated | Code::FailedPrecondition => {
            tracing::error!(code = ?status.code(), message = status.message(), "axd refused this worker");
            SessionEnd::Refused(status)
        }
        code @ (Code::Unavailable | Code::Cancelled | Code::Unknown) => {
            tracing::debug!(?code, message = status.message(), "stream ended");
            SessionEnd::Lost { established }
        }
        code => {
            // axd ended the stream and said why (e.g. RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED).
            tracing::warn!(?code, message = status.message(), "axd ended the stream; reconnecting");
            SessionEnd::Lost { established }
        }
    }
}

/// Why an assignment read now is too late to start, if it is: the process was paused, or the
/// message waited in a buffer, and axd has taken it back by now (or is about to) and may have given
/// it to another worker.
fn stale(state: &State, a: &pb::Assign) -> Option<String> {
    let accept_by = time_of(a.accept_by)?;
    let now = state.clock.at(Instant::now())?;
    let margin = chrono::TimeDelta::from_std(state.timing.margin).unwrap_or_default();
    (now + margin >= accept_by).then(|| {
        format!(
            "stale assignment: read at {} (database time, estimated), too close to or after its accept-by time {}",
            now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            accept_by.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        )
    })
}

/// The stream is gone (a send failed, or axd ended it): what axd had already sent is read before
/// reconnecting, so that cancels and acknowledgements take effect and no assignment is dropped
/// unread. An assignment is never started on a dead stream (axd can no longer hear Accepted); it is
/// logged with the reason it was not started, and axd takes it back at its accept-by time.
async fn read_what_arrived(
    config: &Config,
    stats: &Stats,
    state: &mut State,
    ev_tx: &mpsc::Sender<Event>,
    tx: &mpsc::Sender<pb::WorkerMessage>,
    sent: &mut Sent,
    inbound: &mut tonic::Streaming<pb::SchedulerMessage>,
) {
    // Only what is already here: a zero timeout polls the stream once.
    while let Ok(Ok(Some(m))) = tokio::time::timeout(Duration::ZERO, inbound.message()).await {
        match m.msg {
            Some(In::Assign(a)) => {
                let reason =
                    stale(state, &a).unwrap_or_else(|| "the stream to axd closed before it could start".to_owned());
                stats.0.rejected.fetch_add(1, Ordering::Relaxed);
                stats.0.stale.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(instance = a.instance_id, attempt = a.attempt, %reason, "assignment not started");
            }
            Some(m) => {
                let _ = on_message(config, stats, state, ev_tx, tx, sent, m).await;
            }
            None => {}
        }
    }
}

async fn reject(tx: &mpsc::Sender<pb::WorkerMessage>, key: Key, reason: String) {
    let reason = truncate(reason, MAX_REJECT_REASON);
    let _ = tx.send(out(Out::Reject(pb::Reject { instance_id: key.0, attempt: key.1, reason }))).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_output_is_cut_to_what_axd_keeps_and_marked() {
        let r = result_of((1, 1), Ok("é".repeat(5 * 1024 * 1024)));
        assert!(r.output.len() <= MAX_OUTPUT, "{} bytes", r.output.len());
        assert!(r.output.len() > MAX_OUTPUT - 64, "not cut more than needed: {} bytes", r.output.len());
        assert!(r.output.ends_with("…[truncated, 10485760 bytes in all]"), "{}", &r.output[r.output.len() - 60..]);
        let r = result_of((1, 1), Err(HandlerError::fatal("x".repeat(10_000))));
        assert!(r.message.len() <= MAX_RESULT_MESSAGE && r.message.contains("truncated"), "{}", r.message.len());
        assert_eq!(truncate("short".to_owned(), 10), "short", "what fits is left alone");
    }
}
