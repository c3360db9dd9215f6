//! A recording, fault-injecting relay between the worker under test and axd.
//!
//! The worker connects to the relay's `WorkerService`; every stream it opens is forwarded to the
//! real axd, message by message, and each message is recorded with the time it passed. A scenario
//! reads the record to check what the worker said and when, and can make axd misbehave without
//! changing axd: drop or rewrite messages in either direction (a stalled axd, leases that are not
//! renewed, an assignment read too late), inject messages (Drain), or cut a stream (a reset
//! connection). axd sees a cut or abandoned stream as a broken one, exactly as in production.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use ax_proto::v1::{
    self as pb,
    scheduler_message::Msg as Down,
    worker_message::Msg as Up,
    worker_service_client::WorkerServiceClient,
    worker_service_server::{WorkerService, WorkerServiceServer},
};
use tokio::{
    sync::{mpsc, watch},
    task::JoinHandle,
    time::Instant,
};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status, Streaming, transport::Channel};

/// What happened on a relayed stream. Streams are numbered 0, 1, 2, ... in the order the worker
/// opened them.
#[derive(Debug, Clone)]
pub enum Ev {
    /// The worker opened stream `stream`.
    Opened,
    /// A message from the worker (recorded whether or not a fault kept it from axd).
    FromWorker { msg: Up },
    /// A message from axd (or injected by the kit); `forwarded` is false if a fault dropped it
    /// before the worker saw it. Rewritten messages are recorded as the worker saw them.
    ToWorker { msg: Down, forwarded: bool },
    /// The worker ended the stream (closed, reset or stopped reading).
    WorkerClosed { how: String },
    /// axd ended the stream, or refused it.
    AxdClosed { how: String },
    /// The kit cut the stream.
    Cut,
}

/// One record: when, on which stream, what.
#[derive(Debug, Clone)]
pub struct Rec {
    pub at: Instant,
    pub stream: usize,
    pub ev: Ev,
}

/// Decides the fate of a message in flight: return false to drop it, or change it in place.
pub type UpFilter = Box<dyn FnMut(usize, &mut Up) -> bool + Send>;
/// The same for messages from axd.
pub type DownFilter = Box<dyn FnMut(usize, &mut Down) -> bool + Send>;

struct StreamCtl {
    down: mpsc::Sender<Result<pb::SchedulerMessage, Status>>,
    cut: CancellationToken,
}

#[derive(Default)]
struct Inner {
    log: Vec<Rec>,
    streams: HashMap<usize, StreamCtl>,
    next: usize,
    up: Option<UpFilter>,
    down: Option<DownFilter>,
}

struct Shared {
    inner: Mutex<Inner>,
    changed: watch::Sender<u64>,
    upstream: Channel,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, stream: usize, ev: Ev) {
        self.lock().log.push(Rec { at: Instant::now(), stream, ev });
        self.changed.send_modify(|n| *n += 1);
    }
}

/// A running relay.
pub struct Relay {
    /// Where the worker connects: `http://127.0.0.1:PORT`.
    pub url: String,
    shared: Arc<Shared>,
    server: JoinHandle<()>,
}

#[derive(Clone)]
struct Service(Arc<Shared>);

impl Relay {
    /// Starts a relay on a free loopback port, forwarding to the axd at `upstream`.
    pub async fn start(upstream: &str) -> anyhow::Result<Relay> {
        let channel = tonic::transport::Endpoint::from_shared(upstream.to_owned())?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .connect_lazy();
        let (changed, _) = watch::channel(0);
        let shared = Arc::new(Shared { inner: Mutex::default(), changed, upstream: channel });
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let url = format!("http://{}", listener.local_addr()?);
        let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let svc = WorkerServiceServer::new(Service(shared.clone()))
            .max_decoding_message_size(64 * 1024 * 1024)
            .max_encoding_message_size(64 * 1024 * 1024);
        let server = tokio::spawn(async move {
            let _ = tonic::transport::Server::builder().add_service(svc).serve_with_incoming(incoming).await;
        });
        Ok(Relay { url, shared, server })
    }

    /// A copy of everything recorded so far.
    pub fn log(&self) -> Vec<Rec> {
        self.shared.lock().log.clone()
    }

    /// Installs (or with `None` removes) the filter of messages from the worker.
    pub fn set_up(&self, f: Option<UpFilter>) {
        self.shared.lock().up = f;
    }

    /// Installs (or with `None` removes) the filter of messages from axd.
    pub fn set_down(&self, f: Option<DownFilter>) {
        self.shared.lock().down = f;
    }

    /// Sends `msg` to the worker on `stream`, as if axd had sent it.
    pub async fn inject(&self, stream: usize, msg: Down) -> anyhow::Result<()> {
        let tx = self.shared.lock().streams.get(&stream).map(|s| s.down.clone());
        let Some(tx) = tx else { anyhow::bail!("stream {stream} is not open") };
        self.shared.record(stream, Ev::ToWorker { msg: msg.clone(), forwarded: true });
        tx.send(Ok(pb::SchedulerMessage { msg: Some(msg) }))
            .await
            .map_err(|_| anyhow::anyhow!("stream {stream} closed before the kit could send to it"))
    }

    /// Breaks `stream` on both sides: the worker gets UNAVAILABLE, axd sees the stream reset.
    pub fn cut(&self, stream: usize) {
        if let Some(s) = self.shared.lock().streams.get(&stream) {
            s.cut.cancel();
        }
        self.shared.record(stream, Ev::Cut);
    }

    /// Waits until `pick` finds what it looks for in the record, or fails after `within` naming
    /// `what`.
    pub async fn wait<T>(
        &self,
        what: &str,
        within: Duration,
        mut pick: impl FnMut(&[Rec]) -> Option<T>,
    ) -> anyhow::Result<T> {
        let deadline = Instant::now() + within;
        let mut changed = self.shared.changed.subscribe();
        loop {
            changed.borrow_and_update();
            if let Some(v) = pick(&self.shared.lock().log) {
                return Ok(v);
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() { anyhow::bail!("relay stopped while waiting for {what}") },
                () = tokio::time::sleep_until(deadline) => {
                    if let Some(v) = pick(&self.shared.lock().log) {
                        return Ok(v);
                    }
                    anyhow::bail!("{what}: not seen within {within:?}");
                }
            }
        }
    }

    /// Stops relaying: every open stream is cut and the listener closed.
    pub fn stop(&self) {
        for s in self.shared.lock().streams.values() {
            s.cut.cancel();
        }
        self.server.abort();
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop();
    }
}

#[tonic::async_trait]
impl WorkerService for Service {
    type ConnectStream = ReceiverStream<Result<pb::SchedulerMessage, Status>>;

    async fn connect(
        &self,
        req: Request<Streaming<pb::WorkerMessage>>,
    ) -> Result<Response<Self::ConnectStream>, Status> {
        let shared = self.0.clone();
        let mut inbound = req.into_inner();
        let (up_tx, up_rx) = mpsc::channel::<pb::WorkerMessage>(4096);
        let (down_tx, down_rx) = mpsc::channel::<Result<pb::SchedulerMessage, Status>>(4096);
        let cut = CancellationToken::new();
        let id = {
            let mut inner = shared.lock();
            let id = inner.next;
            inner.next += 1;
            inner.streams.insert(id, StreamCtl { down: down_tx.clone(), cut: cut.clone() });
            id
        };
        shared.record(id, Ev::Opened);

        // Worker -> axd. axd answers Connect only after it has read Hello, so this runs before the
        // upstream call is even answered.
        let (s, c) = (shared.clone(), cut.clone());
        tokio::spawn(async move {
            loop {
                let m = tokio::select! {
                    () = c.cancelled() => break,
                    m = inbound.message() => m,
                };
                match m {
                    Ok(Some(pb::WorkerMessage { msg: Some(mut m) })) => {
                        let forwarded = s.lock().up.as_mut().is_none_or(|f| f(id, &mut m));
                        s.record(id, Ev::FromWorker { msg: m.clone() });
                        if forwarded && up_tx.send(pb::WorkerMessage { msg: Some(m) }).await.is_err() {
                            break;
                        }
                    }
                    Ok(Some(empty)) => {
                        let _ = up_tx.send(empty).await;
                    }
                    Ok(None) => {
                        s.record(id, Ev::WorkerClosed { how: "closed its side of the stream".into() });
                        break;
                    }
                    Err(status) => {
                        s.record(id, Ev::WorkerClosed { how: format!("reset the stream ({})", status.code()) });
                        break;
                    }
                }
            }
            // Dropping up_tx ends the request stream axd reads.
        });

        let mut client = WorkerServiceClient::new(shared.upstream.clone())
            .max_decoding_message_size(64 * 1024 * 1024)
            .max_encoding_message_size(64 * 1024 * 1024);
        let answer = tokio::select! {
            r = client.connect(ReceiverStream::new(up_rx)) => r,
            () = cut.cancelled() => Err(Status::unavailable("connection cut by the conformance kit")),
        };
        let mut upstream = match answer {
            Ok(r) => r.into_inner(),
            Err(status) => {
                shared.record(id, Ev::AxdClosed { how: format!("{}: {}", status.code(), status.message()) });
                cut.cancel();
                shared.lock().streams.remove(&id);
                return Err(status);
            }
        };

        // axd -> worker.
        let s = shared.clone();
        tokio::spawn(async move {
            loop {
                let m = tokio::select! {
                    () = cut.cancelled() => {
                        let _ = down_tx.send(Err(Status::unavailable("connection cut by the conformance kit"))).await;
                        break;
                    }
                    () = down_tx.closed() => {
                        s.record(id, Ev::WorkerClosed { how: "stopped reading the stream".into() });
                        break;
                    }
                    m = upstream.message() => m,
                };
                match m {
                    Ok(Some(pb::SchedulerMessage { msg: Some(mut m) })) => {
                        let forwarded = s.lock().down.as_mut().is_none_or(|f| f(id, &mut m));
                        s.record(id, Ev::ToWorker { msg: m.clone(), forwarded });
                        if forwarded && down_tx.send(Ok(pb::SchedulerMessage { msg: Some(m) })).await.is_err() {
                            s.record(id, Ev::WorkerClosed { how: "stopped reading the stream".into() });
                            break;
                        }
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => {
                        s.record(id, Ev::AxdClosed { how: "ended the stream".into() });
                        break;
                    }
                    Err(status) => {
                        s.record(id, Ev::AxdClosed { how: format!("{}: {}", status.code(), status.message()) });
                        let _ = down_tx.send(Err(status)).await;
                        break;
                    }
                }
            }
            // Dropping `upstream` resets the stream towards axd if it is still open.
            s.lock().streams.remove(&id);
        });
        Ok(Response::new(ReceiverStream::new(down_rx)))
    }
}
