//! Limits on connections, enforced before anyone is authenticated.
//!
//! Every accepted TCP connection is counted. At `--max-connections` (lowered, if need be, to what
//! the file-descriptor limit allows) a new connection makes room by closing the connection that has
//! been idle longest — first those that never carried a call (a TLS handshake that never finished,
//! a port scan), then those with no open call — and is refused only when every connection has a
//! call open. Running out of file descriptors while accepting is handled the same way. A
//! connection with no open call for `--idle-connection-timeout` is closed (clients reconnect
//! transparently); one whose TLS handshake has not finished after `--tls-handshake-timeout` is
//! closed by tonic. The first connection closed or refused at the cap is logged at warn, and then
//! at most one line a minute with how many were since.
//!
//! [`Conn`] wraps each socket: it closes the connection (an end of file for the reader) when the
//! [`Tracker`] evicts it or when it has been idle too long. [`TrackLayer`] counts the calls open on
//! each connection, from the start of a call to the end of its response body (a Connect stream
//! counts for as long as it is open).

use std::{
    collections::HashMap,
    future::Future,
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll, Waker},
    time::Duration,
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::mpsc,
    time::{Instant, Sleep},
};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::{
    codegen::{Service, http},
    transport::server::{Connected, TcpConnectInfo, TlsConnectInfo},
};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The connections of one listener.
pub struct Tracker {
    conns: Mutex<HashMap<SocketAddr, Arc<ConnState>>>,
    max: usize,
    idle: Duration,
    /// When the cap was last logged.
    cap_logged: Mutex<Option<Instant>>,
    /// Connections closed or refused at the cap since it was last logged.
    at_cap: AtomicU64,
}

/// One connection, as the tracker and the call layer see it.
struct ConnState {
    /// Calls open on it.
    active: AtomicUsize,
    /// It has carried a call.
    used: AtomicBool,
    /// When its last call ended (or it was accepted).
    last_active: Mutex<Instant>,
    /// The tracker closed it.
    closing: AtomicBool,
    /// The task reading it, to wake when it is closed.
    waker: Mutex<Option<Waker>>,
}

impl ConnState {
    fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        if let Some(w) = lock(&self.waker).take() {
            w.wake();
        }
    }
}

impl Tracker {
    /// A tracker for at most `max` connections (at least 1), closing those idle for `idle`.
    pub fn new(max: usize, idle: Duration) -> Arc<Tracker> {
        Arc::new(Tracker {
            conns: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
            cap_logged: Mutex::new(None),
            at_cap: AtomicU64::new(0),
        })
    }

    /// Connections open and not being closed.
    pub fn open(&self) -> usize {
        lock(&self.conns).values().filter(|c| !c.closing.load(Ordering::SeqCst)).count()
    }

    /// Closes the connection idle longest (one that never carried a call first); false if every
    /// connection has a call open.
    fn evict_one(&self) -> bool {
        let conns = lock(&self.conns);
        let victim = conns
            .values()
            .filter(|c| !c.closing.load(Ordering::SeqCst) && c.active.load(Ordering::SeqCst) == 0)
            .min_by_key(|c| (c.used.load(Ordering::SeqCst), *lock(&c.last_active)));
        match victim {
            Some(c) => {
                c.close();
                true
            }
            None => false,
        }
    }

    /// Logs reaching the cap: the first time, then at most once a minute.
    fn note_cap(&self, what: &str) {
        let n = self.at_cap.fetch_add(1, Ordering::SeqCst) + 1;
        let mut logged = lock(&self.cap_logged);
        if logged.is_none_or(|t| t.elapsed() >= Duration::from_secs(60)) {
            *logged = Some(Instant::now());
            self.at_cap.store(0, Ordering::SeqCst);
            tracing::warn!(
                max_connections = self.max,
                connections = n,
                "{what}; the connections idle longest are \
                closed to make room (raise --max-connections and the file-descriptor limit if these are real clients)"
            );
        }
    }

    fn register(self: &Arc<Self>, io: TcpStream, remote: SocketAddr) -> Conn {
        let now = Instant::now();
        let state = Arc::new(ConnState {
            active: AtomicUsize::new(0),
            used: AtomicBool::new(false),
            last_active: Mutex::new(now),
            closing: AtomicBool::new(false),
            waker: Mutex::new(None),
        });
        lock(&self.conns).insert(remote, state.clone());
        let local = io.local_addr().ok();
        Conn {
            io,
            state,
            tracker: self.clone(),
            remote,
            local,
            idle: Box::pin(tokio::time::sleep_until(now + self.idle)),
        }
    }

    /// A call started on the connection from `remote`; the guard marks its end.
    fn call_started(&self, remote: SocketAddr) -> Option<CallGuard> {
        let state = lock(&self.conns).get(&remote)?.clone();
        state.used.store(true, Ordering::SeqCst);
        state.active.fetch_add(1, Ordering::SeqCst);
        Some(CallGuard(state))
    }
}

/// Accepts connections from `listener` until `cancel` fires (the listener is closed then), within
/// the tracker's cap. The stream ends when `cancel` fires or its reader is gone.
pub fn incoming(
    listener: TcpListener,
    tracker: Arc<Tracker>,
    cancel: CancellationToken,
) -> ReceiverStream<io::Result<Conn>> {
    let (tx, rx) = mpsc::channel(16);
    crate::core::spawn("accept", async move {
        loop {
            let accepted = tokio::select! {
                () = cancel.cancelled() => return,
                a = listener.accept() => a,
            };
            let (io, remote) = match accepted {
                Ok(a) => a,
                Err(e) if matches!(e.raw_os_error(), Some(23 | 24)) => {
                    // EMFILE / ENFILE: out of file descriptors. Free one and try again shortly.
                    tracker.note_cap("out of file descriptors while accepting a connection");
                    tracker.evict_one();
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "accepting a connection failed");
                    continue;
                }
            };
            // TCP_NODELAY on every socket: with Nagle's algorithm a lone Assign (or Cancel) can wait
            // for the worker's delayed ACK on a real network.
            let _ = io.set_nodelay(true);
            if tracker.open() >= tracker.max {
                tracker.note_cap("--max-connections reached");
                if !tracker.evict_one() {
                    // Every connection has a call open: this one is refused.
                    drop(io);
                    continue;
                }
            }
            let conn = tracker.register(io, remote);
            if tx.send(Ok(conn)).await.is_err() {
                return;
            }
        }
    });
    ReceiverStream::new(rx)
}

/// An accepted socket, closed (as an end of file) when its tracker evicts it or it stays idle.
pub struct Conn {
    io: TcpStream,
    state: Arc<ConnState>,
    tracker: Arc<Tracker>,
    remote: SocketAddr,
    local: Option<SocketAddr>,
    idle: Pin<Box<Sleep>>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        let mut conns = lock(&self.tracker.conns);
        if conns.get(&self.remote).is_some_and(|c| Arc::ptr_eq(c, &self.state)) {
            conns.remove(&self.remote);
        }
    }
}

impl Connected for Conn {
    // The same as a plain TcpStream's, so that tonic's TLS wrapper yields the
    // `TlsConnectInfo<TcpConnectInfo>` that `Request::peer_certs` reads.
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        TcpConnectInfo { local_addr: self.local, remote_addr: Some(self.remote) }
    }
}

impl Conn {
    /// Whether the connection is to be closed now; arms the idle timer otherwise.
    fn closed(&mut self, cx: &mut Context<'_>) -> bool {
        if self.state.closing.load(Ordering::SeqCst) {
            return true;
        }
        *lock(&self.state.waker) = Some(cx.waker().clone());
        let idle = self.tracker.idle;
        while self.idle.as_mut().poll(cx).is_ready() {
            let since = *lock(&self.state.last_active);
            if self.state.active.load(Ordering::SeqCst) == 0 && since.elapsed() >= idle {
                tracing::debug!(remote = %self.remote, idle = ?idle, "closing an idle connection");
                self.state.closing.store(true, Ordering::SeqCst);
                return true;
            }
            let next = if self.state.active.load(Ordering::SeqCst) > 0 { Instant::now() + idle } else { since + idle };
            self.idle.as_mut().reset(next);
        }
        false
    }
}

impl AsyncRead for Conn {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if self.closed(cx) {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// Marks the end of a call on its connection when dropped.
struct CallGuard(Arc<ConnState>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        *lock(&self.0.last_active) = Instant::now();
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Counts the calls open on each connection of a [`Tracker`].
#[derive(Clone)]
pub struct TrackLayer(pub Arc<Tracker>);

impl<S> tower_layer::Layer<S> for TrackLayer {
    type Service = Track<S>;

    fn layer(&self, inner: S) -> Track<S> {
        Track { inner, tracker: self.0.clone() }
    }
}

/// The service of [`TrackLayer`].
#[derive(Clone)]
pub struct Track<S> {
    inner: S,
    tracker: Arc<Tracker>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B> Service<http::Request<B>> for Track<S>
where
    S: Service<http::Request<B>, Response = http::Response<tonic::body::Body>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let ext = req.extensions();
        let remote = ext
            .get::<TcpConnectInfo>()
            .and_then(TcpConnectInfo::remote_addr)
            .or_else(|| ext.get::<TlsConnectInfo<TcpConnectInfo>>().and_then(|i| i.get_ref().remote_addr()));
        let guard = remote.and_then(|r| self.tracker.call_started(r));
        let call = self.inner.call(req);
        Box::pin(async move {
            let response = call.await?;
            Ok(match guard {
                Some(guard) => response.map(|body| tonic::body::Body::new(Guarded { body, _guard: guard })),
                None => response,
            })
        })
    }
}

/// A response body that ends its call when it is finished or dropped.
struct Guarded {
    body: tonic::body::Body,
    _guard: CallGuard,
}

impl http_body::Body for Guarded {
    type Data = <tonic::body::Body as http_body::Body>::Data;
    type Error = <tonic::body::Body as http_body::Body>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The soft limit on open files of this process (`nofile`), where it can be read (Linux).
pub fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// File descriptors axd needs besides client connections: three per database connection (a SQLite
/// database, its WAL and shared memory; one socket for a server), and 64 for the listener, the
/// runtime, logs and the like.
pub fn reserved_fds(db_connections: u32) -> u64 {
    u64::from(db_connections) * 3 + 64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_files_limit_is_read_and_the_reserve_counts_the_pools() {
        if std::path::Path::new("/proc/self/limits").exists() {
            assert!(open_files_limit().is_some_and(|n| n > 0));
        }
        assert_eq!(reserved_fds(14), 106);
    }
}
