//! The connection driver: one task that owns the worker's state across reconnects.
//!
//! State that must survive a lost connection lives here, not in the session: running attempts (their
//! handler tasks keep going), results not yet acknowledged, and recently finished attempts. Each
//! session re-announces running and unacknowledged attempts in Hello, re-sends the results axd
//! still wants, and keeps the credit invariant: credits granted = capacity - attempts axd counts
//! as outstanding.

use std::{
    collections::{HashMap, HashSet, VecDeque},
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use ax_proto::v1::{
    self as pb, scheduler_message::Msg as In, worker_message::Msg as Out, worker_service_client::WorkerServiceClient,
};
use chrono::{DateTime, Utc};
use tokio::{sync::mpsc, task::AbortHandle, time::Instant};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::{Code, transport::ClientTlsConfig};

use crate::{Context, Handler, HandlerError, Level, WorkerError};

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
    /// Assignments rejected (shutting down, unknown handler).
    pub fn rejected(&self) -> u64 {
        self.0.rejected.load(Ordering::Relaxed)
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

fn result_of(key: Key, r: Result<String, HandlerError>) -> pb::Result {
    match r {
        Ok(output) => pb::Result {
            instance_id: key.0,
            attempt: key.1,
            outcome: pb::Outcome::Success.into(),
            message: String::new(),
            output,
            retryable: false,
        },
        Err(e) => pb::Result {
            instance_id: key.0,
            attempt: key.1,
            outcome: pb::Outcome::Failed.into(),
            message: e.message,
            output: String::new(),
            retryable: e.retryable,
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
                () = shutdown_tick(&config, &state) => enforce_shutdown(&config, &mut state, &ev_tx).await,
            }
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

async fn enforce_shutdown(config: &Config, state: &mut State, ev_tx: &mpsc::Sender<Event>) {
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
        for (key, r) in state.running.drain() {
            r.abort.abort();
            let result = result_of(key, Err(HandlerError::retryable("worker shut down before the handler finished")));
            let _ = ev_tx.try_send(Event::Done { key, result });
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn session<F: Future<Output = ()>>(
    config: &Config,
    stats: &Stats,
    state: &mut State,
    ev_tx: &mpsc::Sender<Event>,
    ev_rx: &mut mpsc::Receiver<Event>,
    url: &str,
    mut shutdown: std::pin::Pin<&mut F>,
) -> SessionEnd {
    let mut endpoint = match tonic::transport::Endpoint::from_shared(url.to_owned()) {
        Ok(e) => e
            .connect_timeout(Duration::from_secs(3))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(20))
            .keep_alive_timeout(Duration::from_secs(10))
            .keep_alive_while_idle(true),
        Err(e) => {
            return SessionEnd::Refused(tonic::Status::invalid_argument(format!("endpoint {url:?}: {e}")));
        }
    };
    if let Some(tls) = &config.tls {
        endpoint = match endpoint.tls_config(tls.clone()) {
            Ok(e) => e,
            Err(e) => {
                return SessionEnd::Refused(tonic::Status::invalid_argument(format!("tls for {url}: {e}")));
            }
        };
    }
    let channel = match endpoint.connect().await {
        Ok(c) => c,
        Err(e) => {
            tracing::debug!(url, error = %e, "connect failed");
            return SessionEnd::Lost { established: false };
        }
    };
    let mut client = WorkerServiceClient::new(channel);
    let (tx, rx) = mpsc::channel::<pb::WorkerMessage>(config.capacity as usize + 256);
    let outstanding = state.running.len() + state.unacked.len();
    let initial_credits = if state.shutdown.is_some() {
        0
    } else {
        config.capacity.saturating_sub(u32::try_from(outstanding).unwrap_or(u32::MAX))
    };
    let in_flight: Vec<pb::InstanceAttempt> = state
        .running
        .keys()
        .chain(state.unacked.keys())
        .map(|&(instance_id, attempt)| pb::InstanceAttempt { instance_id, attempt })
        .collect();
    let mut handlers: Vec<String> = config.handlers.keys().cloned().collect();
    handlers.sort();
    let hello = pb::Hello {
        app: config.app.clone(),
        worker_id: config.worker_id.clone(),
        handlers,
        capacity: config.capacity,
        labels: config.labels.clone(),
        in_flight,
        client: format!("ax-worker-rust/{}", env!("CARGO_PKG_VERSION")),
        initial_credits,
        start_after_supported: true,
    };
    let _ = tx.send(out(Out::Hello(hello))).await;
    let mut inbound = match client.connect(ReceiverStream::new(rx)).await {
        Ok(r) => r.into_inner(),
        Err(status) => return refused_or_lost(status, false),
    };
    let welcome = match inbound.message().await {
        Ok(Some(pb::SchedulerMessage { msg: Some(In::Welcome(w)) })) => w,
        Ok(_) => return SessionEnd::Lost { established: false },
        Err(status) => return refused_or_lost(status, false),
    };
    stats.0.connections.fetch_add(1, Ordering::Relaxed);
    tracing::info!(url, session = %welcome.session_id, scheduler = %welcome.scheduler_id,
        adopted = welcome.adopted.len(), released = welcome.released.len(), "connected");
    let adopted: HashSet<Key> = welcome.adopted.iter().map(|a| (a.instance_id, a.attempt)).collect();
    for a in &welcome.released {
        let key = (a.instance_id, a.attempt);
        if let Some(r) = state.running.get(&key) {
            // No longer ours; it finishes (result ignored by axd) and then frees its slot.
            r.cancel.cancel();
        } else if state.unacked.remove(&key).is_some() && state.shutdown.is_none() {
            let _ = tx.send(credit(1)).await;
        }
    }
    let resend: Vec<(Key, pb::Result)> =
        state.unacked.iter().filter(|(k, _)| adopted.contains(k)).map(|(k, r)| (*k, r.clone())).collect();
    for (_, r) in resend {
        let _ = tx.send(out(Out::Result(r))).await;
        if state.shutdown.is_none() {
            let _ = tx.send(credit(1)).await;
        }
    }
    let hb = welcome
        .heartbeat_interval
        .map(|d| Duration::new(u64::try_from(d.seconds).unwrap_or(2), u32::try_from(d.nanos).unwrap_or(0)))
        .filter(|d| !d.is_zero())
        .unwrap_or(Duration::from_secs(2));
    let mut heartbeat = tokio::time::interval_at(Instant::now() + hb, hb);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

    loop {
        if state.done() {
            return SessionEnd::Finished;
        }
        if shutdown_expired(config, state) {
            tracing::warn!(unacked = state.unacked.len(), "giving up delivering results after the shutdown deadline");
            return SessionEnd::Finished;
        }
        tokio::select! {
            m = inbound.message() => match m {
                Ok(Some(pb::SchedulerMessage { msg: Some(m) })) => {
                    if let Some(end) = on_message(config, stats, state, ev_tx, &tx, m).await {
                        return end;
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => return SessionEnd::Lost { established: true },
                Err(status) => return refused_or_lost(status, true),
            },
            Some(ev) = ev_rx.recv() => match ev {
                Event::Started { key } => {
                    if tx.send(accepted(key)).await.is_err() {
                        return SessionEnd::Lost { established: true };
                    }
                }
                ev @ (Event::Progress { .. } | Event::Log { .. }) => forward(&tx, ev),
                done @ Event::Done { .. } => {
                    // Results that finished together go out together, followed by one Credit for
                    // all their slots: fewer messages, and axd claims work in bigger batches.
                    let mut freed = 0u32;
                    let mut next = Some(done);
                    while let Some(ev) = next.take() {
                        match ev {
                            Event::Started { key } => {
                                if tx.send(accepted(key)).await.is_err() {
                                    return SessionEnd::Lost { established: true };
                                }
                            }
                            Event::Done { .. } => {
                                if let Some((_, result)) = state.absorb(ev) {
                                    if tx.send(out(Out::Result(result))).await.is_err() {
                                        return SessionEnd::Lost { established: true };
                                    }
                                    freed += 1;
                                }
                            }
                            other => forward(&tx, other),
                        }
                        if freed < 256 {
                            next = ev_rx.try_recv().ok();
                        }
                    }
                    if freed > 0 && state.shutdown.is_none() {
                        let _ = tx.send(credit(freed)).await;
                    }
                }
            },
            _ = heartbeat.tick() => {
                let running = u32::try_from(state.running.len()).unwrap_or(u32::MAX);
                if tx.send(out(Out::Heartbeat(pb::Heartbeat { running }))).await.is_err() {
                    return SessionEnd::Lost { established: true };
                }
            }
            () = &mut shutdown, if state.shutdown.is_none() => {
                begin_shutdown(state);
                let _ = tx.send(out(Out::Credit(pb::Credit { grant: 0, reset: true }))).await;
            }
            () = shutdown_tick(config, state) => enforce_shutdown(config, state, ev_tx).await,
        }
    }
}

/// Sends a progress or log line, best effort (dropped if the stream is backed up).
fn forward(tx: &mpsc::Sender<pb::WorkerMessage>, ev: Event) {
    let m = match ev {
        Event::Progress { key, percent, message } => {
            Out::Progress(pb::Progress { instance_id: key.0, attempt: key.1, percent, message })
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
            Out::Log(pb::Log { instance_id: key.0, attempt: key.1, level: level.into(), message, at })
        }
        Event::Started { .. } | Event::Done { .. } => return,
    };
    let _ = tx.try_send(out(m));
}

fn refused_or_lost(status: tonic::Status, established: bool) -> SessionEnd {
    match status.code() {
        Code::InvalidArgument | Code::PermissionDenied | Code::Unauthenticated | Code::FailedPrecondition => {
            tracing::error!(code = ?status.code(), message = status.message(), "axd refused this worker");
            SessionEnd::Refused(status)
        }
        code => {
            tracing::debug!(?code, message = status.message(), "stream ended");
            SessionEnd::Lost { established }
        }
    }
}

async fn on_message(
    config: &Config,
    stats: &Stats,
    state: &mut State,
    ev_tx: &mpsc::Sender<Event>,
    tx: &mpsc::Sender<pb::WorkerMessage>,
    m: In,
) -> Option<SessionEnd> {
    match m {
        In::Welcome(_) => None,
        In::Assign(a) => {
            let key = (a.instance_id, a.attempt);
            if state.shutdown.is_some() {
                stats.0.rejected.fetch_add(1, Ordering::Relaxed);
                let _ = tx
                    .send(out(Out::Reject(pb::Reject {
                        instance_id: key.0,
                        attempt: key.1,
                        reason: "worker shutting down".into(),
                    })))
                    .await;
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
            let Some(handler) = config.handlers.get(&a.handler).cloned() else {
                stats.0.rejected.fetch_add(1, Ordering::Relaxed);
                let reason = format!("handler {:?} is not registered on this worker", a.handler);
                let _ = tx.send(out(Out::Reject(pb::Reject { instance_id: key.0, attempt: key.1, reason }))).await;
                let _ = tx.send(credit(1)).await;
                return None;
            };
            // Sent ahead of its time: hold it, then start (Accepted goes out when it starts).
            let hold = a
                .start_after
                .map(|d| Duration::new(u64::try_from(d.seconds).unwrap_or(0), u32::try_from(d.nanos).unwrap_or(0)))
                .filter(|d| !d.is_zero());
            if hold.is_none() {
                let _ = tx.send(accepted(key)).await;
            }
            stats.0.assigned.fetch_add(1, Ordering::Relaxed);
            let cancel = CancellationToken::new();
            let trigger_time = a
                .trigger_time
                .and_then(|t| DateTime::from_timestamp(t.seconds, u32::try_from(t.nanos).unwrap_or(0)))
                .unwrap_or_else(Utc::now);
            let timeout = a
                .timeout
                .map(|d| Duration::new(u64::try_from(d.seconds).unwrap_or(0), u32::try_from(d.nanos).unwrap_or(0)));
            let ctx = Context::new(
                key.0,
                key.1,
                a.task_name,
                a.handler,
                a.params,
                a.idempotency_key,
                trigger_time,
                timeout,
                cancel.clone(),
                ev_tx.clone(),
            );
            let inner = match hold {
                None => tokio::spawn(handler(ctx)),
                Some(hold) => {
                    let (events, cancel) = (ev_tx.clone(), cancel.clone());
                    tokio::spawn(async move {
                        tokio::select! {
                            () = tokio::time::sleep(hold) => {}
                            () = cancel.cancelled() => {
                                return Err(HandlerError::retryable("canceled before its start time"));
                            }
                        }
                        let _ = events.send(Event::Started { key }).await;
                        handler(ctx).await
                    })
                }
            };
            let abort = inner.abort_handle();
            let events = ev_tx.clone();
            tokio::spawn(async move {
                let r = match inner.await {
                    Ok(r) => r,
                    Err(e) if e.is_panic() => {
                        Err(HandlerError::retryable(format!("handler panicked: {}", panic_message(e.into_panic()))))
                    }
                    Err(_) => Err(HandlerError::retryable("worker shut down before the handler finished")),
                };
                let _ = events.send(Event::Done { key, result: result_of(key, r) }).await;
            });
            state.running.insert(key, Run { cancel, abort });
            None
        }
        In::Cancel(c) => {
            if let Some(r) = state.running.get(&(c.instance_id, c.attempt)) {
                tracing::info!(instance = c.instance_id, attempt = c.attempt, reason = %c.reason, "cancel");
                r.cancel.cancel();
            }
            None
        }
        In::ResultAck(a) => {
            if state.unacked.remove(&(a.instance_id, a.attempt)).is_some() {
                stats.0.acked.fetch_add(1, Ordering::Relaxed);
            }
            if !a.applied {
                tracing::debug!(instance = a.instance_id, attempt = a.attempt, note = %a.note, "result not applied");
            }
            None
        }
        In::Drain(d) => {
            tracing::info!(reason = %d.reason, "axd is draining; moving to another endpoint");
            Some(SessionEnd::Drained)
        }
    }
}
