//! WorkerService.Connect: one long-lived stream per worker process.
//!
//! The first message must be a valid Hello (errors name the field); with mTLS its app must match the
//! certificate. The session is recorded in `ax_worker`, attempts the worker re-announces are
//! re-adopted, and a Welcome is sent. Then every inbound message is handled in order; silence for
//! three heartbeat intervals, a closed stream or a protocol error ends the session, and its held
//! attempts wait a grace period for the worker to come back (see `sessions::close_session`).
//!
//! Every ending axd decides carries a non-OK status saying why (listed on `End`); only a stream the
//! worker closed itself ends with OK. A message axd cannot read (over [`MAX_WORKER_MESSAGE`], or not
//! a WorkerMessage) also costs the session the attempts it held: axd cannot tell which attempt the
//! message was about, and keeping them for the worker would let it re-send the same message after
//! every reconnect while the instance stays RUNNING for good.

use std::{
    collections::HashSet,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
};

use ax_proto::v1::{self as pb, worker_message::Msg, worker_service_server::WorkerService};
use tokio::sync::mpsc;
use tokio_stream::{Stream, wrappers::ReceiverStream};
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status, Streaming};

use crate::{
    auth,
    core::Core,
    error::{Error, Result},
    lifecycle::{AttemptEnd, Completion, WorkerOp},
    model::{WorkerRecord, add},
    routing::registry::{AckQueue, Outbound, Session},
    validate,
    wire::{duration_to_pb, ts_from_pb, ts_to_pb},
};

/// Largest capacity a worker may announce.
pub const MAX_CAPACITY: u32 = 10_000;
/// Most handlers per worker.
pub const MAX_HANDLERS: usize = 256;
/// Most re-announced attempts.
pub const MAX_IN_FLIGHT: usize = 10_000;
/// Longest result message kept.
pub const MAX_MESSAGE: usize = 4096;
/// Longest log line kept.
pub const MAX_LOG_LINE: usize = 4096;
/// Most bytes one encoded WorkerMessage may have (told to workers in Welcome.max_message_size); a
/// larger one ends the stream with RESOURCE_EXHAUSTED.
pub const MAX_WORKER_MESSAGE: usize = 4 * 1024 * 1024;

/// The WorkerService implementation.
#[derive(Clone)]
pub struct WorkerApi {
    core: Arc<Core>,
    shutdown: CancellationToken,
}

impl WorkerApi {
    /// A WorkerService over `core`; `shutdown` makes every session send Drain and close.
    pub fn new(core: Arc<Core>, shutdown: CancellationToken) -> Self {
        WorkerApi { core, shutdown }
    }
}

fn invalid(field: &str, reason: impl std::fmt::Display) -> Status {
    Error::invalid(field, reason).into()
}

/// Checks a Hello; the error names the field.
pub fn validate_hello(h: &pb::Hello) -> Result<(), Status> {
    validate::app("hello.app", &h.app)?;
    validate::worker_id("hello.worker_id", &h.worker_id)?;
    if h.handlers.is_empty() {
        return Err(invalid("hello.handlers", "at least one handler is required"));
    }
    if h.handlers.len() > MAX_HANDLERS {
        return Err(invalid(
            "hello.handlers",
            format!("has {} entries, at most {MAX_HANDLERS} allowed", h.handlers.len()),
        ));
    }
    let mut seen = HashSet::new();
    for (i, name) in h.handlers.iter().enumerate() {
        validate::handler(&format!("hello.handlers[{i}]"), name)?;
        if !seen.insert(name) {
            return Err(invalid(&format!("hello.handlers[{i}]"), format!("{} is listed twice", validate::quote(name))));
        }
    }
    if h.capacity == 0 || h.capacity > MAX_CAPACITY {
        return Err(invalid("hello.capacity", format!("must be 1..={MAX_CAPACITY}, got {}", h.capacity)));
    }
    let labels = h.labels.clone().into_iter().collect();
    validate::labels("hello.labels", &labels)?;
    if h.in_flight.len() > MAX_IN_FLIGHT {
        return Err(invalid(
            "hello.in_flight",
            format!("has {} entries, at most {MAX_IN_FLIGHT} allowed", h.in_flight.len()),
        ));
    }
    validate::line("hello.client", &h.client, 128)?;
    Ok(())
}

fn session_id() -> String {
    format!("s-{:016x}", fastrand::u64(..))
}

fn msg(m: pb::scheduler_message::Msg) -> Outbound {
    Ok(pb::SchedulerMessage { msg: Some(m) })
}

/// What went wrong reading the worker's side of the stream, as the status that ends it.
#[derive(Debug)]
struct InboundFailure {
    status: Status,
    /// The worker sent something axd cannot read (too large, or not a WorkerMessage), as opposed
    /// to a connection that broke.
    unreadable: bool,
}

/// Classifies an error from reading the inbound stream. A message over the limit is
/// RESOURCE_EXHAUSTED (`crate::framing`; tonic's own check says OUT_OF_RANGE); bytes that are not a
/// WorkerMessage (`ax_proto::codec`) or a malformed gRPC frame (`crate::framing`) are
/// INVALID_ARGUMENT; tonic's INTERNAL without a source would be either; a broken connection
/// carries its transport error as the source.
fn inbound_failure(status: &Status) -> InboundFailure {
    use std::error::Error as _;
    match status.code() {
        tonic::Code::OutOfRange | tonic::Code::ResourceExhausted => InboundFailure {
            status: Status::resource_exhausted(format!(
                "message too large: a WorkerMessage may have at most {MAX_WORKER_MESSAGE} bytes \
                 (Welcome.max_message_size; cut Result.output to 65536 bytes before sending) ({})",
                status.message()
            )),
            unreadable: true,
        },
        tonic::Code::InvalidArgument => InboundFailure {
            status: Status::invalid_argument(format!("undecodable message: {}", status.message())),
            unreadable: true,
        },
        tonic::Code::Internal if status.source().is_none() => InboundFailure {
            status: Status::invalid_argument(format!("undecodable message: {}", status.message())),
            unreadable: true,
        },
        code => InboundFailure {
            status: Status::unavailable(format!("stream broken ({code:?}): {}", status.message())),
            unreadable: false,
        },
    }
}

/// The stream a worker reads: what its session sent, then the status that ended the session. The
/// status is kept apart from the queue so that a full queue can never turn it into a silent OK.
pub struct ConnectStream {
    rx: ReceiverStream<Outbound>,
    /// Acknowledgements of recorded results, sent first (see `Session::ack`).
    acks: AckQueue,
    end: Arc<Mutex<Option<Status>>>,
    done: bool,
}

impl Stream for ConnectStream {
    type Item = Outbound;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Outbound>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Poll::Ready(Some(ack)) = self.acks.poll_next(cx) {
            return Poll::Ready(Some(msg(pb::scheduler_message::Msg::ResultAck(ack))));
        }
        match Pin::new(&mut self.rx).poll_next(cx) {
            Poll::Ready(None) => {
                self.done = true;
                let end = self.end.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
                Poll::Ready(end.map(Err))
            }
            other => other,
        }
    }
}

#[tonic::async_trait]
impl WorkerService for WorkerApi {
    type ConnectStream = ConnectStream;

    async fn connect(
        &self,
        req: Request<Streaming<pb::WorkerMessage>>,
    ) -> Result<Response<Self::ConnectStream>, Status> {
        let core = self.core.clone();
        let identity = auth::identity(&core.auth, &req)?;
        let mut inbound = req.into_inner();
        let first = match tokio::time::timeout(core.sessions.dead_after(), inbound.message()).await {
            Err(_) => {
                return Err(Status::deadline_exceeded("no Hello within three heartbeat intervals"));
            }
            Ok(Err(status)) => return Err(inbound_failure(&status).status),
            Ok(Ok(None)) => return Err(invalid("hello", "the stream closed before Hello")),
            Ok(Ok(Some(m))) => m,
        };
        let hello = match first.msg {
            Some(Msg::Hello(h)) => h,
            Some(other) => {
                return Err(invalid("hello", format!("the first message must be Hello, got {}", message_name(&other))));
            }
            None => return Err(invalid("message", "empty WorkerMessage")),
        };
        validate_hello(&hello)?;
        auth::authorize_worker(&identity, &hello.app)?;

        let id = session_id();
        let now = core.clock.now();
        let labels = hello.labels.clone().into_iter().collect();
        let record = WorkerRecord {
            session_id: id.clone(),
            worker_id: hello.worker_id.clone(),
            app: hello.app.clone(),
            handlers: hello.handlers.clone(),
            capacity: hello.capacity,
            credits: hello.initial_credits.min(hello.capacity),
            in_flight: 0,
            labels,
            scheduler_id: core.scheduler_id.clone(),
            client: hello.client.clone(),
            connected_at: now,
            last_seen_at: now,
        };
        let in_flight: Vec<(i64, u32)> = hello.in_flight.iter().map(|a| (a.instance_id, a.attempt)).collect();
        let reopened = super::sessions::open_session(
            &core.pools.workers,
            &record,
            &in_flight,
            now,
            add(now, core.sessions.lease_ttl()),
            &core.routing,
        )
        .await
        .map_err(Error::from)?;
        core.routing.workers_changed();
        let adopted = reopened.adopted;
        let adopted_set: HashSet<(i64, u32)> = adopted.iter().copied().collect();
        let released: Vec<pb::InstanceAttempt> = in_flight
            .iter()
            .filter(|a| !adopted_set.contains(a))
            .map(|&(instance_id, attempt)| pb::InstanceAttempt { instance_id, attempt })
            .collect();

        // Room for an Assign per slot and control messages: credits bound the Assigns; the results'
        // acknowledgements go on a queue of their own (Session::ack).
        let (tx, rx) = mpsc::channel(usize::try_from(hello.capacity).unwrap_or(1) * 2 + 64);
        let session = Arc::new(Session::new(id.clone(), &hello, tx.clone(), now));
        let acks = session.take_acks().expect("a new session's acks are taken once");
        session.adopt(&adopted, &reopened.released_to_worker);
        session.grant(hello.initial_credits, false);
        core.registry.insert(session.clone());
        let welcome = pb::Welcome {
            session_id: id.clone(),
            scheduler_id: core.scheduler_id.clone(),
            heartbeat_interval: Some(duration_to_pb(core.sessions.heartbeat_interval)),
            adopted: adopted
                .iter()
                .map(|&(instance_id, attempt)| pb::InstanceAttempt { instance_id, attempt })
                .collect(),
            released,
            lost_worker_grace: Some(duration_to_pb(core.sessions.lost_worker_grace)),
            lease_ttl: Some(duration_to_pb(core.sessions.lease_ttl())),
            fence_margin: Some(duration_to_pb(core.sessions.fence_margin())),
            ack_timeout: Some(duration_to_pb(core.sessions.ack_timeout)),
            server_time: Some(ts_to_pb(core.clock.now())),
            max_message_size: MAX_WORKER_MESSAGE as u32,
        };
        // The channel is new and empty: this cannot fail for lack of room.
        session.send(msg(pb::scheduler_message::Msg::Welcome(welcome)));
        tracing::info!(session = %id, worker = %hello.worker_id, app = %hello.app, capacity = hello.capacity,
            adopted = adopted.len(), "worker connected");
        core.signals.dispatch.notify_one();
        core.signals.sweep.now();
        let end = Arc::new(Mutex::new(None));
        crate::core::spawn("worker-session", run_session(core, session, inbound, self.shutdown.clone(), end.clone()));
        Ok(Response::new(ConnectStream { rx: ReceiverStream::new(rx), acks, end, done: false }))
    }
}

fn message_name(m: &Msg) -> &'static str {
    match m {
        Msg::Hello(_) => "Hello",
        Msg::Heartbeat(_) => "Heartbeat",
        Msg::Credit(_) => "Credit",
        Msg::Accepted(_) => "Accepted",
        Msg::Reject(_) => "Reject",
        Msg::Progress(_) => "Progress",
        Msg::Log(_) => "Log",
        Msg::Result(_) => "Result",
    }
}

/// Why a session ended, and the status its stream ends with.
///
/// - OK: only [`End::Closed`], the worker closed its side of the stream.
/// - INVALID_ARGUMENT: a protocol error (a second Hello, an empty message, a bad field, bytes that
///   are not a WorkerMessage).
/// - RESOURCE_EXHAUSTED: a message over [`MAX_WORKER_MESSAGE`].
/// - DEADLINE_EXCEEDED: no message for three heartbeat intervals.
/// - UNAVAILABLE: axd drained the stream, is shutting down, or the connection broke.
enum End {
    /// The worker closed its side of the stream.
    Closed(String),
    /// axd ends the stream with this status; the session's attempts wait for the worker.
    Error(Status),
    /// The worker sent a message axd cannot read: the stream ends with this status and the
    /// session's attempts are not kept for the worker (see the module comment).
    Unreadable(Status),
}

async fn run_session(
    core: Arc<Core>,
    session: Arc<Session>,
    mut inbound: Streaming<pb::WorkerMessage>,
    shutdown: CancellationToken,
    end_status: Arc<Mutex<Option<Status>>>,
) {
    let dead_after = core.sessions.dead_after();
    let every = core.sessions.heartbeat_interval;
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut drain_deadline: Option<tokio::time::Instant> = None;
    let mut last_message = tokio::time::Instant::now();
    let end = loop {
        let drain_sleep = async {
            match drain_deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = async { tokio::select! { () = shutdown.cancelled() => {}, () = session.drain_requested.notified() => {} } },
                if drain_deadline.is_none() => {
                session.drain();
                let deadline = core.sessions.drain_timeout;
                session.send(msg(pb::scheduler_message::Msg::Drain(pb::Drain {
                    reason: if shutdown.is_cancelled() { "scheduler shutting down" } else { "scheduler unhealthy" }.to_owned(),
                    deadline: Some(duration_to_pb(deadline)),
                })));
                drain_deadline = Some(tokio::time::Instant::now() + deadline);
            }
            () = drain_sleep => break End::Error(Status::unavailable(if shutdown.is_cancelled() {
                "drained: this axd is shutting down; reconnect to another axd"
            } else {
                "drained: this axd is unhealthy; reconnect to another axd"
            })),
            _ = tick.tick() => {
                // axd's own liveness towards the worker: a heartbeat when nothing else went out for
                // an interval (the lease loop sends one after each renewal), so a worker notices a
                // stalled axd within three intervals and moves on.
                if session.since_sent() >= every {
                    let hb = pb::SchedulerHeartbeat {
                        renewed_seq: session.renewed_seq(),
                        server_time: Some(ts_to_pb(core.clock.now())),
                    };
                    session.send(msg(pb::scheduler_message::Msg::Heartbeat(hb)));
                }
                // Assignments not accepted by their ack deadline: the sweeper puts the instances
                // back in the queue; the worker is told, and the slot is free again.
                for (instance_id, attempt) in session.take_back_expired(core.clock.now()) {
                    let cancel = pb::Cancel {
                        instance_id,
                        attempt,
                        reason: "ack timeout: not accepted in time; the instance went back to the queue".to_owned(),
                    };
                    session.send(msg(pb::scheduler_message::Msg::Cancel(cancel)));
                }
            }
            // Silence is measured from the last message, not from each turn of this loop (the
            // ticks above come round every interval).
            () = tokio::time::sleep_until(last_message + dead_after) => break End::Error(Status::deadline_exceeded(format!(
                "no message from the worker for {}",
                crate::schedule::fmt_duration(dead_after)
            ))),
            r = inbound.message() => match r {
                Ok(None) => break End::Closed("the worker closed the stream".to_owned()),
                Err(status) => {
                    let failure = inbound_failure(&status);
                    break if failure.unreadable { End::Unreadable(failure.status) } else { End::Error(failure.status) };
                }
                Ok(Some(m)) => {
                    last_message = tokio::time::Instant::now();
                    session.seen(core.clock.now());
                    if let Err(end) = handle(&core, &session, m).await {
                        break end;
                    }
                }
            },
        }
    };
    let (reason, unreadable) = match end {
        End::Closed(reason) => (reason, false),
        End::Error(status) => (stored_end(&end_status, status), false),
        End::Unreadable(status) => (stored_end(&end_status, status), true),
    };
    core.registry.remove(&session.id);
    if session.dropped() > 0 {
        tracing::warn!(session = %session.id, worker = %session.worker_id, app = %session.app, dropped = session.dropped(),
            "messages about attempts this session did not hold were dropped");
    }
    let now = core.clock.now();
    let grace_until = add(now, core.sessions.lost_worker_grace);
    let closed = super::sessions::close_session(
        &core.pools.workers,
        &session.id,
        &reason,
        now,
        grace_until,
        &core.scheduler_id,
        unreadable,
        &core.routing,
    );
    core.routing.workers_changed();
    if let Err(e) = closed.await {
        // The leases expire on their own; the sweeper then applies the same rule.
        tracing::warn!(session = %session.id, worker = %session.worker_id, app = %session.app, error = %e,
            "recording the end of a session failed");
    }
    core.signals.sweep.offer(grace_until);
    tracing::info!(session = %session.id, worker = %session.worker_id, app = %session.app, %reason, "worker session ended");
}

/// Keeps `status` as the one the worker's stream ends with (after what is queued for it); returns
/// its message, the reason recorded for the session.
fn stored_end(slot: &Mutex<Option<Status>>, status: Status) -> String {
    let reason = status.message().to_owned();
    *slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(status);
    reason
}

/// A message about an attempt this session does not hold: nothing is written. The first one is
/// logged; the count is logged when the session ends.
fn foreign(session: &Session, what: &str, instance_id: i64, attempt: u32) {
    if session.drop_foreign() {
        tracing::warn!(session = %session.id, worker = %session.worker_id, app = %session.app, instance_id, attempt,
            "{what} for an attempt this session does not hold; dropped (further ones are only counted)");
    }
}

async fn handle(core: &Core, session: &Arc<Session>, m: pb::WorkerMessage) -> Result<(), End> {
    let now = core.clock.now();
    let submit = |op: WorkerOp| async move {
        if core.writer.submit(op, Some(session.clone())).await {
            Ok(())
        } else {
            Err(End::Error(Status::unavailable("axd is shutting down; reconnect to another axd")))
        }
    };
    match m.msg {
        None => Err(End::Error(invalid("message", "empty WorkerMessage"))),
        Some(Msg::Hello(_)) => Err(End::Error(invalid("hello", "sent twice; Hello is only the first message"))),
        Some(Msg::Heartbeat(h)) => {
            session.heartbeat(h.seq);
            Ok(())
        }
        Some(Msg::Credit(c)) => {
            session.grant(c.grant, c.reset);
            core.signals.dispatch.notify_one();
            Ok(())
        }
        Some(Msg::Accepted(a)) => {
            if !session.accepted((a.instance_id, a.attempt)) {
                foreign(session, "Accepted", a.instance_id, a.attempt);
                // Whatever the worker started is not its to run.
                let cancel = pb::Cancel {
                    instance_id: a.instance_id,
                    attempt: a.attempt,
                    reason: "not yours to run: this session does not hold that attempt".to_owned(),
                };
                session.send(msg(pb::scheduler_message::Msg::Cancel(cancel)));
                return Ok(());
            }
            submit(WorkerOp::Accepted {
                instance_id: a.instance_id,
                attempt: a.attempt,
                session_id: session.id.clone(),
                received_at: now,
            })
            .await
        }
        Some(Msg::Reject(r)) => {
            // Only the length is refused; control characters are escaped (see validate::escape_controls).
            if r.reason.len() > 1024 {
                let why = format!("is {} bytes, at most 1024 allowed", r.reason.len());
                return Err(End::Error(invalid("reject.reason", why)));
            }
            if !session.finish((r.instance_id, r.attempt)) {
                foreign(session, "Reject", r.instance_id, r.attempt);
                return Ok(());
            }
            let reason = format!("rejected by worker {}: {}", session.worker_id, validate::escape_controls(r.reason));
            submit(WorkerOp::Reject {
                instance_id: r.instance_id,
                attempt: r.attempt,
                session_id: session.id.clone(),
                reason,
            })
            .await
        }
        Some(Msg::Progress(p)) => {
            if !session.holds((p.instance_id, p.attempt)) {
                foreign(session, "Progress", p.instance_id, p.attempt);
                return Ok(());
            }
            let message = validate::truncate(validate::escape_controls(p.message), 1024);
            let recorded = async {
                let mut conn = core.pools.workers.conn().await?;
                conn.instances()
                    .record_progress(p.instance_id, p.attempt, &session.id, p.percent.min(100), &message, now)
                    .await
            };
            if let Err(e) = recorded.await {
                tracing::warn!(instance_id = p.instance_id, attempt = p.attempt, app = %session.app,
                    worker = %session.worker_id, error = %e, "recording progress failed");
            }
            Ok(())
        }
        Some(Msg::Log(l)) => {
            if !session.holds((l.instance_id, l.attempt)) {
                foreign(session, "Log", l.instance_id, l.attempt);
                return Ok(());
            }
            let level = match pb::LogLevel::try_from(l.level).unwrap_or(pb::LogLevel::Info) {
                pb::LogLevel::Debug => "DEBUG",
                pb::LogLevel::Warn => "WARN",
                pb::LogLevel::Error => "ERROR",
                pb::LogLevel::Unspecified | pb::LogLevel::Info => "INFO",
            };
            let at = l.at.as_ref().and_then(|t| ts_from_pb("log.at", t).ok()).unwrap_or(now);
            let message = validate::truncate(validate::escape_controls(l.message), MAX_LOG_LINE);
            let stored = async {
                let mut tx = core.pools.workers.begin().await?;
                tx.instances().append_log(l.instance_id, l.attempt, &session.app, level, at, &message).await?;
                tx.commit().await
            };
            if let Err(e) = stored.await {
                tracing::warn!(instance_id = l.instance_id, attempt = l.attempt, app = %session.app,
                    worker = %session.worker_id, error = %e, "storing a log line failed");
            }
            Ok(())
        }
        Some(Msg::Result(r)) => {
            let end = match pb::Outcome::try_from(r.outcome) {
                Ok(pb::Outcome::Success) => AttemptEnd::Success {
                    message: validate::truncate(validate::escape_controls(r.message), MAX_MESSAGE),
                    output: validate::truncate(r.output, validate::MAX_PARAMS_BYTES),
                },
                Ok(pb::Outcome::Failed) => AttemptEnd::Failed {
                    message: validate::truncate(validate::escape_controls(r.message), MAX_MESSAGE),
                    retryable: r.retryable,
                },
                Ok(pb::Outcome::Unspecified) | Err(_) => {
                    return Err(End::Error(invalid("result.outcome", "must be SUCCESS or FAILED")));
                }
            };
            let key = (r.instance_id, r.attempt);
            if !session.may_report(key) {
                foreign(session, "Result", r.instance_id, r.attempt);
                // Acknowledged so the worker forgets it; the note says nothing about the instance.
                let ack = pb::ResultAck {
                    instance_id: r.instance_id,
                    attempt: r.attempt,
                    applied: false,
                    note: "not recorded: this session does not hold that attempt".to_owned(),
                };
                session.send(msg(pb::scheduler_message::Msg::ResultAck(ack)));
                return Ok(());
            }
            // The slot is free as soon as the worker says so; the ack follows the commit.
            session.reported(key);
            let finished_at = r.finished_at.as_ref().and_then(|t| ts_from_pb("result.finished_at", t).ok());
            submit(WorkerOp::Result(Completion {
                instance_id: r.instance_id,
                attempt: r.attempt,
                session_id: session.id.clone(),
                worker_id: session.worker_id.clone(),
                end,
                finished_at,
            }))
            .await
        }
    }
}

#[cfg(test)]
mod tests;
