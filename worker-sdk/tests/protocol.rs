//! The SDK against a scripted axd: liveness both ways, leases and self-fencing, stale assignments,
//! and results across reconnects, each driven message by message so that the timing is exact.
//!
//! The fake axd is an in-process `WorkerService` that hands every new stream (with its Hello) to the
//! test, which then answers as it likes: a real axd's sequence, silence, or a bad answer.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU32, Ordering},
    },
    time::Duration,
};

use ax_proto::v1::{
    self as pb,
    scheduler_message::Msg as Out,
    worker_message::Msg as In,
    worker_service_server::{WorkerService, WorkerServiceServer},
};
use ax_worker::{Context, HandlerError, Worker};
use chrono::{DateTime, Utc};
use tokio::sync::{Mutex, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

/// One stream opened by the worker.
struct Conn {
    hello: pb::Hello,
    rx: Streaming<pb::WorkerMessage>,
    tx: mpsc::Sender<Result<pb::SchedulerMessage, Status>>,
}

impl Conn {
    async fn send(&self, m: Out) {
        let _ = self.tx.send(Ok(pb::SchedulerMessage { msg: Some(m) })).await;
    }

    /// The next message from the worker matching `pick` (others are skipped), within `within`.
    async fn expect<T>(&mut self, what: &str, within: Duration, mut pick: impl FnMut(&In) -> Option<T>) -> T {
        let end = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(end, self.rx.message()).await {
                Ok(Ok(Some(pb::WorkerMessage { msg: Some(m) }))) => {
                    if let Some(v) = pick(&m) {
                        return v;
                    }
                }
                Ok(other) => panic!("stream ended while waiting for {what}: {other:?}"),
                Err(_) => panic!("no {what} within {within:?}"),
            }
        }
    }

    /// Every message from the worker for `d` (the stream may end meanwhile).
    async fn drain_for(&mut self, d: Duration) -> Vec<In> {
        let end = tokio::time::Instant::now() + d;
        let mut out = Vec::new();
        while let Ok(Ok(Some(pb::WorkerMessage { msg: Some(m) }))) =
            tokio::time::timeout_at(end, self.rx.message()).await
        {
            out.push(m);
        }
        out
    }
}

#[derive(Clone)]
struct Fake {
    conns: mpsc::Sender<Conn>,
}

#[tonic::async_trait]
impl WorkerService for Fake {
    type ConnectStream = ReceiverStream<Result<pb::SchedulerMessage, Status>>;

    async fn connect(
        &self,
        req: Request<Streaming<pb::WorkerMessage>>,
    ) -> Result<Response<Self::ConnectStream>, Status> {
        let mut rx = req.into_inner();
        let Some(pb::WorkerMessage { msg: Some(In::Hello(hello)) }) = rx.message().await? else {
            return Err(Status::invalid_argument("hello first"));
        };
        let (tx, out) = mpsc::channel(64);
        let _ = self.conns.send(Conn { hello, rx, tx }).await;
        Ok(Response::new(ReceiverStream::new(out)))
    }
}

/// A fake axd listening on loopback; `next()` yields each stream the worker opens.
struct FakeAxd {
    url: String,
    conns: Mutex<mpsc::Receiver<Conn>>,
}

impl FakeAxd {
    async fn start() -> FakeAxd {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr: SocketAddr = listener.local_addr().expect("addr");
        let (tx, rx) = mpsc::channel(16);
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(WorkerServiceServer::new(Fake { conns: tx }))
                .serve_with_incoming(incoming),
        );
        FakeAxd { url: format!("http://{addr}"), conns: Mutex::new(rx) }
    }

    async fn next(&self, within: Duration) -> Conn {
        tokio::time::timeout(within, self.conns.lock().await.recv())
            .await
            .expect("the worker opened a stream in time")
            .expect("server running")
    }
}

fn dur(d: Duration) -> Option<prost_types::Duration> {
    Some(prost_types::Duration { seconds: d.as_secs() as i64, nanos: d.subsec_nanos() as i32 })
}

fn ts(t: DateTime<Utc>) -> Option<prost_types::Timestamp> {
    Some(prost_types::Timestamp { seconds: t.timestamp(), nanos: t.timestamp_subsec_nanos() as i32 })
}

/// A Welcome with the given heartbeat interval, lease and margin; the database clock is this
/// process's wall clock.
fn welcome(hb: Duration, lease_ttl: Duration, margin: Duration) -> pb::Welcome {
    pb::Welcome {
        session_id: "s".into(),
        scheduler_id: "fake".into(),
        heartbeat_interval: dur(hb),
        lease_ttl: dur(lease_ttl),
        fence_margin: dur(margin),
        ack_timeout: dur(Duration::from_secs(10)),
        server_time: ts(Utc::now()),
        ..Default::default()
    }
}

fn assign(id: i64, attempt: u32, handler: &str, accept_by: DateTime<Utc>) -> Out {
    Out::Assign(pb::Assign {
        instance_id: id,
        attempt,
        task_name: "t".into(),
        handler: handler.into(),
        params: "{}".into(),
        idempotency_key: format!("k{id}"),
        accept_by: ts(accept_by),
        ..Default::default()
    })
}

fn after(d: Duration) -> DateTime<Utc> {
    Utc::now() + chrono::TimeDelta::from_std(d).expect("small")
}

/// Flags a handler sets: started, saw its cancellation.
#[derive(Default)]
struct Seen {
    started: AtomicU32,
    canceled: AtomicBool,
    canceled_at: std::sync::Mutex<Option<DateTime<Utc>>>,
}

/// A worker with one handler, `wait`, that runs until canceled or `release` is set; returns the
/// stop switch and the task.
fn worker(
    endpoints: &[&str],
    seen: Arc<Seen>,
    release: Arc<AtomicBool>,
) -> (tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<Result<(), ax_worker::WorkerError>>) {
    let w = Worker::builder()
        .endpoints(endpoints.iter().map(|s| s.to_string()))
        .app("app")
        .worker_id("w1")
        .capacity(2)
        .reconnect_max(Duration::from_millis(200))
        .handler("wait", move |ctx: Context| {
            let (seen, release) = (seen.clone(), release.clone());
            async move {
                seen.started.fetch_add(1, Ordering::SeqCst);
                loop {
                    if release.load(Ordering::SeqCst) {
                        return Ok::<_, HandlerError>(());
                    }
                    tokio::select! {
                        () = ctx.cancellation().cancelled() => {
                            *seen.canceled_at.lock().expect("lock") = Some(Utc::now());
                            seen.canceled.store(true, Ordering::SeqCst);
                            return Err(HandlerError::retryable("canceled"));
                        }
                        () = tokio::time::sleep(Duration::from_millis(10)) => {}
                    }
                }
            }
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(w.run_until(async move {
        let _ = stopped.await;
    }));
    (stop, task)
}

fn is_accepted(m: &In) -> Option<(i64, u32)> {
    if let In::Accepted(a) = m { Some((a.instance_id, a.attempt)) } else { None }
}

fn is_result(m: &In) -> Option<pb::Result> {
    if let In::Result(r) = m { Some(r.clone()) } else { None }
}

const T: Duration = Duration::from_secs(10);

/// Sends a SchedulerHeartbeat that renews nothing every 100 ms until aborted: axd is alive.
fn keep_talking(tx: mpsc::Sender<Result<pb::SchedulerMessage, Status>>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let hb = pb::SchedulerHeartbeat { renewed_seq: 0, server_time: ts(Utc::now()) };
            if tx.send(Ok(pb::SchedulerMessage { msg: Some(Out::Heartbeat(hb)) })).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assignment_read_after_its_accept_by_time_is_rejected_not_started() {
    let axd = FakeAxd::start().await;
    let seen = Arc::new(Seen::default());
    let (stop, task) = worker(&[&axd.url], seen.clone(), Arc::default());
    let mut c = axd.next(T).await;
    c.send(Out::Welcome(welcome(Duration::from_secs(1), Duration::from_secs(10), Duration::from_millis(500)))).await;
    // Its accept-by time passed a second ago (as after a long pause of the worker's process).
    c.send(assign(1, 1, "wait", after(Duration::ZERO) - chrono::TimeDelta::seconds(1))).await;
    let reason = c.expect("Reject", T, |m| if let In::Reject(r) = m { Some(r.reason.clone()) } else { None }).await;
    assert!(reason.starts_with("stale assignment"), "{reason}");
    let credit = c.expect("Credit", T, |m| if let In::Credit(k) = m { Some(k.grant) } else { None }).await;
    assert_eq!(credit, 1, "the slot is granted back");
    // One closer than the margin is stale too; one comfortably ahead runs.
    c.send(assign(2, 1, "wait", after(Duration::from_millis(200)))).await;
    let reason = c.expect("Reject", T, |m| if let In::Reject(r) = m { Some(r.reason.clone()) } else { None }).await;
    assert!(reason.starts_with("stale assignment"), "{reason}");
    c.send(assign(3, 1, "wait", after(Duration::from_secs(5)))).await;
    assert_eq!(c.expect("Accepted", T, is_accepted).await, (3, 1));
    // Accepted goes out as the handler is spawned: wait for it to run, then count.
    let deadline = tokio::time::Instant::now() + T;
    while seen.started.load(Ordering::SeqCst) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "the fresh assignment never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(seen.started.load(Ordering::SeqCst), 1, "only the fresh assignment started");
    let _ = stop.send(());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_welcome_read_late_does_not_make_a_taken_back_assignment_look_fresh() {
    let axd = FakeAxd::start().await;
    let seen = Arc::new(Seen::default());
    let (stop, task) = worker(&[&axd.url], seen.clone(), Arc::default());
    let c = axd.next(T).await;
    // axd reads its clock on Hello, but its Welcome and a first Assign reach the worker 3 s later (as
    // when the worker's process is stopped right after sending Hello). The Assign's accept-by time,
    // 2 s after the reading, has passed by then: counting the clock from when the Welcome arrived
    // would make it look 2 s away still.
    let read_at = Utc::now();
    let mut w = welcome(Duration::from_secs(5), Duration::from_secs(10), Duration::from_millis(500));
    w.server_time = ts(read_at);
    tokio::time::sleep(Duration::from_secs(3)).await;
    c.send(Out::Welcome(w)).await;
    c.send(assign(1, 1, "wait", read_at + chrono::TimeDelta::seconds(2))).await;
    let mut c = c;
    let reason = c.expect("Reject", T, |m| if let In::Reject(r) = m { Some(r.reason.clone()) } else { None }).await;
    assert!(reason.starts_with("stale assignment"), "{reason}");
    assert_eq!(seen.started.load(Ordering::SeqCst), 0, "the stale assignment never started");
    let _ = stop.send(());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_that_is_not_renewed_stops_the_handler_before_it_ends() {
    let axd = FakeAxd::start().await;
    let seen = Arc::new(Seen::default());
    let (stop, task) = worker(&[&axd.url], seen.clone(), Arc::default());
    let mut c = axd.next(T).await;
    let hb = Duration::from_millis(200);
    c.send(Out::Welcome(welcome(hb, Duration::from_secs(3), Duration::from_millis(400)))).await;
    // axd keeps talking (liveness) but never confirms a renewal: the attempt is ours only until
    // its accept-by time.
    let lease_end = after(Duration::from_millis(1500));
    c.send(assign(1, 1, "wait", lease_end)).await;
    assert_eq!(c.expect("Accepted", T, is_accepted).await, (1, 1));
    let talker = keep_talking(c.tx.clone());
    let r = c.expect("the fenced attempt's Result", T, is_result).await;
    let reported = Utc::now();
    assert!(seen.canceled.load(Ordering::SeqCst), "the handler was told to stop");
    assert!(reported < lease_end, "stopped and reported at {reported}, before the lease ended at {lease_end}");
    assert_eq!(r.outcome, pb::Outcome::Failed as i32);
    assert!(r.retryable);
    talker.abort();
    let _ = stop.send(());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_stops_an_attempt_at_its_timeout_even_when_the_handler_ignores_cancellation() {
    let axd = FakeAxd::start().await;
    let ended = Arc::new(AtomicBool::new(false));
    let e = ended.clone();
    let w = Worker::builder()
        .endpoints([axd.url.clone()])
        .app("app")
        .worker_id("w1")
        .capacity(1)
        .handler("deaf", move |_ctx: Context| {
            let e = e.clone();
            async move {
                // Deaf to cancellation: only an abort ends it early (dropping the future).
                struct Ends(Arc<AtomicBool>);
                impl Drop for Ends {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::SeqCst);
                    }
                }
                let _ends = Ends(e);
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok::<_, HandlerError>(())
            }
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(w.run_until(async move {
        let _ = stopped.await;
    }));
    let mut c = axd.next(T).await;
    c.send(Out::Welcome(welcome(Duration::from_millis(200), Duration::from_secs(30), Duration::from_millis(300))))
        .await;
    // The lease lasts far longer than the timeout, and no Cancel ever comes: only the attempt's own
    // deadline, carried in Assign, stops it.
    let Out::Assign(mut a) = assign(1, 1, "deaf", after(Duration::from_secs(30))) else { unreachable!() };
    a.timeout = dur(Duration::from_millis(300));
    let sent = tokio::time::Instant::now();
    c.send(Out::Assign(a)).await;
    assert_eq!(c.expect("Accepted", T, is_accepted).await, (1, 1));
    // axd keeps talking, so the stream stays up however long the attempt takes.
    let talker = keep_talking(c.tx.clone());
    let r = c.expect("the timed-out attempt's Result", T, is_result).await;
    talker.abort();
    let took = sent.elapsed();
    assert!(ended.load(Ordering::SeqCst), "the handler was stopped before the Result went out");
    assert!(took >= Duration::from_millis(600), "not before its timeout and the fence margin ({took:?})");
    assert!(took < Duration::from_secs(5), "stopped at its timeout, not at its lease ({took:?})");
    assert_eq!((r.outcome, r.retryable), (pb::Outcome::Failed as i32, true));
    assert!(r.message.contains("timed out"), "{}", r.message);
    let _ = stop.send(());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewals_keep_a_long_attempt_alive_past_its_accept_by_time() {
    let axd = FakeAxd::start().await;
    let seen = Arc::new(Seen::default());
    let release = Arc::new(AtomicBool::new(false));
    let (stop, task) = worker(&[&axd.url], seen.clone(), release.clone());
    let mut c = axd.next(T).await;
    let hb = Duration::from_millis(200);
    c.send(Out::Welcome(welcome(hb, Duration::from_millis(1200), Duration::from_millis(300)))).await;
    let accept_by = after(Duration::from_millis(1000));
    c.send(assign(1, 1, "wait", accept_by)).await;
    assert_eq!(c.expect("Accepted", T, is_accepted).await, (1, 1));
    // Answer every heartbeat with a renewal for it, for three seconds: three times the lease.
    let until = tokio::time::Instant::now() + Duration::from_secs(3);
    while tokio::time::Instant::now() < until {
        let seq = c.expect("Heartbeat", T, |m| if let In::Heartbeat(h) = m { Some(h.seq) } else { None }).await;
        let hb = pb::SchedulerHeartbeat { renewed_seq: seq, server_time: ts(Utc::now()) };
        c.send(Out::Heartbeat(hb)).await;
    }
    assert!(!seen.canceled.load(Ordering::SeqCst), "renewed leases do not fence the attempt");
    release.store(true, Ordering::SeqCst);
    let r = c.expect("Result", T, is_result).await;
    assert_eq!(r.outcome, pb::Outcome::Success as i32);
    assert!(r.finished_at.is_some());
    let _ = stop.send(());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_axd_is_left_and_the_result_it_never_acknowledged_is_sent_once_to_the_next() {
    let (a, b) = (FakeAxd::start().await, FakeAxd::start().await);
    let seen = Arc::new(Seen::default());
    let release = Arc::new(AtomicBool::new(false));
    let (stop, task) = worker(&[&a.url, &b.url], seen.clone(), release.clone());
    let mut ca = a.next(T).await;
    let hb = Duration::from_millis(200);
    ca.send(Out::Welcome(welcome(hb, Duration::from_secs(10), Duration::from_millis(300)))).await;
    ca.send(assign(1, 1, "wait", after(Duration::from_secs(10)))).await;
    assert_eq!(ca.expect("Accepted", T, is_accepted).await, (1, 1));
    // The handler finishes; its Result reaches axd a, which then stalls: no ack, no heartbeat,
    // and the connection stays open.
    release.store(true, Ordering::SeqCst);
    let r = ca.expect("Result", T, is_result).await;
    assert_eq!((r.instance_id, r.attempt), (1, 1));
    let silent_since = tokio::time::Instant::now();
    let mut cb = b.next(T).await;
    let moved_after = silent_since.elapsed();
    assert!(moved_after >= hb * 2, "it waited for silence ({moved_after:?})");
    assert!(
        moved_after < hb * 3 + Duration::from_secs(2),
        "it moved within three intervals and a reconnect ({moved_after:?})"
    );
    let in_flight: Vec<(i64, u32)> = cb.hello.in_flight.iter().map(|a| (a.instance_id, a.attempt)).collect();
    assert_eq!(in_flight, vec![(1, 1)], "the unacknowledged result is re-announced");
    assert_eq!(cb.hello.initial_credits, 1, "capacity 2 less the unacknowledged result");
    let mut w = welcome(hb, Duration::from_secs(10), Duration::from_millis(300));
    w.adopted = vec![pb::InstanceAttempt { instance_id: 1, attempt: 1 }];
    cb.send(Out::Welcome(w)).await;
    let again = cb.expect("the Result again", T, is_result).await;
    assert_eq!((again.instance_id, again.attempt, again.outcome), (1, 1, pb::Outcome::Success as i32));
    cb.send(Out::ResultAck(pb::ResultAck { instance_id: 1, attempt: 1, applied: true, note: String::new() })).await;
    let later = cb.drain_for(hb * 4).await;
    assert!(!later.iter().any(|m| matches!(m, In::Result(_))), "sent once after the ack: {later:?}");
    assert_eq!(seen.started.load(Ordering::SeqCst), 1, "ran once");
    let _ = stop.send(());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_attempt_is_stopped_and_its_late_result_still_reported() {
    let axd = FakeAxd::start().await;
    let seen = Arc::new(Seen::default());
    let (stop, task) = worker(&[&axd.url], seen.clone(), Arc::default());
    let mut c = axd.next(T).await;
    let hb = Duration::from_millis(200);
    c.send(Out::Welcome(welcome(hb, Duration::from_secs(10), Duration::from_millis(300)))).await;
    c.send(assign(1, 1, "wait", after(Duration::from_secs(10)))).await;
    assert_eq!(c.expect("Accepted", T, is_accepted).await, (1, 1));
    // axd ends the stream; when the worker comes back, the attempt is no longer its own.
    drop(c);
    let mut c2 = axd.next(T).await;
    assert_eq!(c2.hello.in_flight.len(), 1);
    let mut w = welcome(hb, Duration::from_secs(10), Duration::from_millis(300));
    w.released = vec![pb::InstanceAttempt { instance_id: 1, attempt: 1 }];
    c2.send(Out::Welcome(w)).await;
    let r = c2.expect("the released attempt's Result", T, is_result).await;
    assert!(seen.canceled.load(Ordering::SeqCst), "the handler was stopped");
    assert_eq!((r.instance_id, r.attempt, r.outcome), (1, 1, pb::Outcome::Failed as i32));
    let credit = c2.expect("Credit", T, |m| if let In::Credit(k) = m { Some(k.grant) } else { None }).await;
    assert_eq!(credit, 1);
    let _ = stop.send(());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_that_runs_out_while_reconnecting_still_stops_the_handler() {
    let (a, b) = (FakeAxd::start().await, FakeAxd::start().await);
    let seen = Arc::new(Seen::default());
    let (stop, task) = worker(&[&a.url, &b.url], seen.clone(), Arc::default());
    let mut ca = a.next(T).await;
    let hb = Duration::from_millis(200);
    ca.send(Out::Welcome(welcome(hb, Duration::from_secs(10), Duration::from_millis(400)))).await;
    let lease_end = after(Duration::from_millis(2000));
    ca.send(assign(1, 1, "wait", lease_end)).await;
    assert_eq!(ca.expect("Accepted", T, is_accepted).await, (1, 1));
    // axd a goes silent; b takes the stream but never answers Hello: the worker is reconnecting
    // when the lease runs out, and must stop the handler all the same.
    let _cb = b.next(T).await;
    let deadline = tokio::time::Instant::now() + T;
    while !seen.canceled.load(Ordering::SeqCst) {
        assert!(tokio::time::Instant::now() < deadline, "the handler was never stopped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let at = seen.canceled_at.lock().expect("lock").expect("time");
    assert!(at < lease_end, "stopped at {at}, before the lease ended at {lease_end}");
    drop(ca);
    let _ = stop.send(());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_that_ends_too_close_to_the_accept_by_time_is_rejected_not_started() {
    let axd = FakeAxd::start().await;
    let seen = Arc::new(Seen::default());
    let (stop, task) = worker(&[&axd.url], seen.clone(), Arc::default());
    let mut c = axd.next(T).await;
    c.send(Out::Welcome(welcome(Duration::from_secs(1), Duration::from_secs(10), Duration::from_millis(500)))).await;
    // Held for a second, but it must be accepted within 1.2 s, and the margin is 0.5 s.
    let Out::Assign(mut a) = assign(1, 1, "wait", after(Duration::from_millis(1200))) else { unreachable!() };
    a.start_after = dur(Duration::from_secs(1));
    c.send(Out::Assign(a)).await;
    let reason = c.expect("Reject", T, |m| if let In::Reject(r) = m { Some(r.reason.clone()) } else { None }).await;
    assert!(reason.starts_with("stale assignment"), "{reason}");
    let credit = c.expect("Credit", T, |m| if let In::Credit(k) = m { Some(k.grant) } else { None }).await;
    assert_eq!(credit, 1);
    assert_eq!(seen.started.load(Ordering::SeqCst), 0, "the handler never ran");
    let _ = stop.send(());
    task.abort();
}

/// A handler's 10 MB output is cut to the 65536 bytes axd keeps before the Result is sent: sent
/// whole it would exceed the 4 MiB message limit (the fake axd has tonic's default, like axd) and
/// could never arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_output_is_truncated_before_the_result_is_sent() {
    let axd = FakeAxd::start().await;
    let w = Worker::builder()
        .endpoint(axd.url.clone())
        .app("app")
        .worker_id("w1")
        .capacity(1)
        .handler("big", |_ctx: Context| async move { Ok::<_, HandlerError>("x".repeat(10 * 1024 * 1024)) })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(w.run_until(async move {
        let _ = stopped.await;
    }));
    let mut c = axd.next(T).await;
    c.send(Out::Welcome(welcome(Duration::from_secs(1), Duration::from_secs(10), Duration::from_millis(500)))).await;
    c.send(assign(1, 1, "big", after(Duration::from_secs(5)))).await;
    let r = c.expect("Result", T, is_result).await;
    assert!(r.output.len() <= 65536, "{} bytes", r.output.len());
    assert!(r.output.ends_with("…[truncated, 10485760 bytes in all]"), "{}", &r.output[r.output.len() - 50..]);
    let _ = stop.send(());
    task.abort();
}
