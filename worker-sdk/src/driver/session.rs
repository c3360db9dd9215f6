//! One session with an axd: the stream opened (Hello, Welcome), the Welcome applied, and the
//! stream served until it ends.

use std::{collections::HashSet, future::Future, pin::Pin, sync::atomic::Ordering, time::Duration};

use ax_proto::v1::{
    self as pb, scheduler_message::Msg as In, worker_message::Msg as Out, worker_service_client::WorkerServiceClient,
};
use tokio::{sync::mpsc, time::Instant};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

use super::{
    Config, Event, Key, Sent, SessionEnd, State, Stats, Timing, begin_shutdown, credit, duration_of, enforce_shutdown,
    forward, on_message, out, read_what_arrived, refused_or_lost, shutdown_expired, shutdown_tick, started, time_of,
    unstarted,
};

/// A stream open to an axd: its address, its two directions, the heartbeats sent on it, and when
/// axd last said something on it.
struct Stream<'a> {
    url: &'a str,
    tx: mpsc::Sender<pb::WorkerMessage>,
    inbound: tonic::Streaming<pb::SchedulerMessage>,
    sent: Sent,
    last_heard: Instant,
}

/// One session with the axd at `url`: the stream opened, its Welcome applied and unacknowledged
/// results sent again, then served until it ends (what arrived on a lost stream is read first).
pub(super) async fn session<F: Future<Output = ()>>(
    config: &Config,
    stats: &Stats,
    state: &mut State,
    ev_tx: &mpsc::Sender<Event>,
    ev_rx: &mut mpsc::Receiver<Event>,
    url: &str,
    shutdown: Pin<&mut F>,
) -> SessionEnd {
    let (mut stream, welcome) = match open(config, state, url).await {
        Ok(opened) => opened,
        Err(end) => return end,
    };
    stats.0.connections.fetch_add(1, Ordering::Relaxed);
    tracing::info!(url, session = %welcome.session_id, scheduler = %welcome.scheduler_id,
        adopted = welcome.adopted.len(), released = welcome.released.len(), "connected");
    welcomed(state, welcome, stream.sent.opened, stream.last_heard);
    resend_unacked(state, &stream.tx).await;
    let end = serve(config, stats, state, ev_tx, ev_rx, &mut stream, shutdown).await;
    if let SessionEnd::Lost { .. } = end {
        read_what_arrived(config, stats, state, ev_tx, &stream.tx, &mut stream.sent, &mut stream.inbound).await;
    }
    end
}

/// Connects to `url`, sends Hello and waits for Welcome: the open stream and its Welcome, or how
/// the session ended.
async fn open<'a>(config: &Config, state: &State, url: &'a str) -> Result<(Stream<'a>, pb::Welcome), SessionEnd> {
    let channel = connect(config, url).await?;
    let mut client = WorkerServiceClient::new(channel);
    let (tx, rx) = mpsc::channel::<pb::WorkerMessage>(config.capacity as usize + 256);
    let hello = hello(config, state);
    // Leases of adopted attempts run from here: axd decides after Hello has gone out.
    let hello_at = Instant::now();
    let _ = tx.send(out(Out::Hello(hello))).await;
    let opened = tokio::time::timeout(config.welcome_timeout, async {
        let mut inbound = client.connect(ReceiverStream::new(rx)).await?.into_inner();
        let first = inbound.message().await?;
        Ok::<_, tonic::Status>((inbound, first))
    })
    .await;
    let (inbound, welcome) = match opened {
        Err(_) => {
            tracing::warn!(url, "no Welcome within {:?}; trying another endpoint", config.welcome_timeout);
            return Err(SessionEnd::Lost { established: false });
        }
        Ok(Err(status)) => return Err(refused_or_lost(status, false)),
        Ok(Ok((inbound, Some(pb::SchedulerMessage { msg: Some(In::Welcome(w)) })))) => (inbound, w),
        Ok(Ok(_)) => return Err(SessionEnd::Lost { established: false }),
    };
    let stream = Stream { url, tx, inbound, sent: Sent::new(hello_at), last_heard: Instant::now() };
    Ok((stream, welcome))
}

/// The channel to `url` (timeouts, keep-alive, the worker's TLS), or how the session ended.
async fn connect(config: &Config, url: &str) -> Result<Channel, SessionEnd> {
    let mut endpoint = match tonic::transport::Endpoint::from_shared(url.to_owned()) {
        Ok(e) => e
            .connect_timeout(Duration::from_secs(3))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(20))
            .keep_alive_timeout(Duration::from_secs(10))
            .keep_alive_while_idle(true),
        Err(e) => {
            return Err(SessionEnd::Refused(tonic::Status::invalid_argument(format!("endpoint {url:?}: {e}"))));
        }
    };
    if let Some(tls) = &config.tls {
        endpoint = match endpoint.tls_config(tls.clone()) {
            Ok(e) => e,
            Err(e) => {
                return Err(SessionEnd::Refused(tonic::Status::invalid_argument(format!("tls for {url}: {e}"))));
            }
        };
    }
    match endpoint.connect().await {
        Ok(c) => Ok(c),
        Err(e) => {
            tracing::debug!(url, error = %e, "connect failed");
            Err(SessionEnd::Lost { established: false })
        }
    }
}

/// The Hello that opens a stream: what this worker serves, the attempts it still runs or holds
/// results of, and the credits it starts with.
fn hello(config: &Config, state: &State) -> pb::Hello {
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
    pb::Hello {
        app: config.app.clone(),
        worker_id: config.worker_id.clone(),
        handlers,
        capacity: config.capacity,
        labels: config.labels.clone(),
        in_flight,
        client: format!("ax-worker-rust/{}", env!("CARGO_PKG_VERSION")),
        initial_credits,
        start_after_supported: true,
    }
}

/// Applies a Welcome: its timings and clock reading, and the running attempts axd adopted (their
/// leases run from Hello) or released (they are canceled).
fn welcomed(state: &mut State, welcome: pb::Welcome, hello_at: Instant, last_heard: Instant) {
    state.timing = Timing {
        heartbeat: duration_of(welcome.heartbeat_interval).unwrap_or(Duration::from_secs(2)),
        lease_ttl: duration_of(welcome.lease_ttl),
        margin: duration_of(welcome.fence_margin).unwrap_or(Duration::ZERO),
    };
    if let Some(t) = time_of(welcome.server_time) {
        state.clock.observe(t, hello_at, last_heard);
    }
    // Heartbeat numbers start again on this stream: nothing is covered by a renewal here yet.
    for r in state.running.values_mut() {
        r.accepted_after = None;
        r.lease.set_margin(state.timing.margin);
    }
    let adopted: HashSet<Key> = welcome.adopted.iter().map(|a| (a.instance_id, a.attempt)).collect();
    for key in &adopted {
        if let Some(r) = state.running.get_mut(key).filter(|r| !r.canceled) {
            r.accepted_after = Some(0);
            if let Some(ttl) = state.timing.lease_ttl {
                r.lease.extend_to(hello_at + ttl);
            }
        }
    }
    for a in &welcome.released {
        let key = (a.instance_id, a.attempt);
        if let Some(r) = state.running.get(&key) {
            // No longer ours; it finishes (its result is recorded as a late one) and then frees
            // its slot.
            r.cancel.cancel();
        }
    }
}

/// Results not yet acknowledged go out again: applied if still wanted, otherwise recorded on the
/// instance's trail as late results (the handler did finish, and the trail says so).
async fn resend_unacked(state: &State, tx: &mpsc::Sender<pb::WorkerMessage>) {
    let resend: Vec<pb::Result> = state.unacked.values().cloned().collect();
    for r in resend {
        let _ = tx.send(out(Out::Result(r))).await;
        if state.shutdown.is_none() {
            let _ = tx.send(credit(1)).await;
        }
    }
}

/// Serves an open stream until the session ends: messages from axd, events from the handlers,
/// axd's silence, heartbeats, and the shutdown and its deadlines.
async fn serve<F: Future<Output = ()>>(
    config: &Config,
    stats: &Stats,
    state: &mut State,
    ev_tx: &mpsc::Sender<Event>,
    ev_rx: &mut mpsc::Receiver<Event>,
    stream: &mut Stream<'_>,
    mut shutdown: Pin<&mut F>,
) -> SessionEnd {
    let hb = state.timing.heartbeat;
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
            m = stream.inbound.message() => match m {
                Ok(Some(pb::SchedulerMessage { msg: Some(m) })) => {
                    stream.last_heard = Instant::now();
                    if let Some(end) = on_message(config, stats, state, ev_tx, &stream.tx, &mut stream.sent, m).await {
                        return end;
                    }
                }
                Ok(Some(_)) => stream.last_heard = Instant::now(),
                Ok(None) => return SessionEnd::Lost { established: true },
                Err(status) => return refused_or_lost(status, true),
            },
            Some(ev) = ev_rx.recv() => {
                if let Some(end) = on_event(stats, state, ev_rx, &stream.tx, &stream.sent, ev).await {
                    return end;
                }
            }
            () = tokio::time::sleep_until(stream.last_heard + hb * 3) => {
                if let Some(end) = on_silence(config, stats, state, ev_tx, stream, hb).await {
                    return end;
                }
            }
            _ = heartbeat.tick() => {
                let running = u32::try_from(state.running.len()).unwrap_or(u32::MAX);
                let seq = stream.sent.next();
                if stream.tx.send(out(Out::Heartbeat(pb::Heartbeat { running, seq }))).await.is_err() {
                    return SessionEnd::Lost { established: true };
                }
            }
            () = &mut shutdown, if state.shutdown.is_none() => {
                begin_shutdown(state);
                let _ = stream.tx.send(out(Out::Credit(pb::Credit { grant: 0, reset: true }))).await;
            }
            () = shutdown_tick(config, state) => enforce_shutdown(config, state).await,
        }
    }
}

/// An event from a handler task: Accepted for a held attempt that started, progress and logs
/// passed on, a Reject for one that did not start, results; `Some` if the stream is gone.
async fn on_event(
    stats: &Stats,
    state: &mut State,
    ev_rx: &mut mpsc::Receiver<Event>,
    tx: &mpsc::Sender<pb::WorkerMessage>,
    sent: &Sent,
    ev: Event,
) -> Option<SessionEnd> {
    match ev {
        Event::Started { key } => {
            if !started(state, tx, sent, key).await {
                return Some(SessionEnd::Lost { established: true });
            }
        }
        ev @ (Event::Progress { .. } | Event::Log { .. }) => forward(tx, ev),
        Event::Unstarted { key, reason } => unstarted(state, stats, tx, key, reason).await,
        done @ Event::Done { .. } => return deliver(stats, state, ev_rx, tx, sent, done).await,
    }
    None
}

/// Results that finished together go out together, followed by one Credit for all their slots:
/// fewer messages, and axd claims work in bigger batches. `Some` if the stream is gone.
async fn deliver(
    stats: &Stats,
    state: &mut State,
    ev_rx: &mut mpsc::Receiver<Event>,
    tx: &mpsc::Sender<pb::WorkerMessage>,
    sent: &Sent,
    done: Event,
) -> Option<SessionEnd> {
    let mut freed = 0u32;
    let mut next = Some(done);
    while let Some(ev) = next.take() {
        match ev {
            Event::Started { key } => {
                if !started(state, tx, sent, key).await {
                    return Some(SessionEnd::Lost { established: true });
                }
            }
            Event::Done { .. } => {
                if let Some((_, result)) = state.absorb(ev) {
                    if tx.send(out(Out::Result(result))).await.is_err() {
                        return Some(SessionEnd::Lost { established: true });
                    }
                    freed += 1;
                }
            }
            Event::Unstarted { key, reason } => unstarted(state, stats, tx, key, reason).await,
            other => forward(tx, other),
        }
        if freed < 256 {
            next = ev_rx.try_recv().ok();
        }
    }
    if freed > 0 && state.shutdown.is_none() {
        let _ = tx.send(credit(freed)).await;
    }
    None
}

/// axd has said nothing for three heartbeat intervals: a message that arrived meanwhile keeps the
/// stream (`None`, unless it ends the session); otherwise the stream is left for another endpoint.
async fn on_silence(
    config: &Config,
    stats: &Stats,
    state: &mut State,
    ev_tx: &mpsc::Sender<Event>,
    stream: &mut Stream<'_>,
    hb: Duration,
) -> Option<SessionEnd> {
    // Messages that arrived while this process was not running (paused, or starved of CPU) are read
    // first, for up to half an interval (the connection's own task may need a moment to hand them
    // over after a pause): they show the axd is alive, and a stale Assign among them is rejected
    // rather than dropped unread with the stream.
    match tokio::time::timeout((hb / 2).min(Duration::from_secs(1)), stream.inbound.message()).await {
        Ok(Ok(Some(pb::SchedulerMessage { msg: Some(m) }))) => {
            stream.last_heard = Instant::now();
            return on_message(config, stats, state, ev_tx, &stream.tx, &mut stream.sent, m).await;
        }
        Ok(Ok(Some(_))) => {
            stream.last_heard = Instant::now();
            return None;
        }
        Ok(Ok(None)) => return Some(SessionEnd::Lost { established: true }),
        Ok(Err(status)) => return Some(refused_or_lost(status, true)),
        Err(_) => {}
    }
    // A stalled or unreachable axd says nothing, and TCP may not notice for minutes: move on while
    // the leases still have time to be renewed elsewhere.
    stats.0.silent_axd.fetch_add(1, Ordering::Relaxed);
    tracing::warn!(url = stream.url, silent = ?stream.last_heard.elapsed(), "axd has said nothing for three heartbeat intervals; moving to another endpoint");
    Some(SessionEnd::Lost { established: true })
}
