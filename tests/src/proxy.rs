//! A TCP proxy on loopback whose connections can be cut, refused for a while, or held silent, to
//! break streams and database connections without killing either end.
//!
//! - [`Proxy::cut`]: both sides see the connection fail at once (a reset, a server restart).
//! - [`Proxy::down`] / [`Proxy::up`]: connections are cut and new ones refused (a server that is gone).
//! - [`Proxy::hold`] / [`Proxy::release`]: every connection stays open but no byte crosses in either
//!   direction until released, then what was sent meanwhile is delivered (a network partition
//!   without resets, or a frozen peer: neither side can tell it from a silent one).
//! - [`Proxy::start_marking`] and [`Proxy::cut_marked`]: only the connections whose client sent a
//!   given statement are cut, now and whenever one sends it again (e.g. PostgreSQL's listening
//!   connection, told apart by its `LISTEN`, while the pools' connections keep working). The
//!   traffic must be plaintext for this (PostgreSQL: `sslmode=disable`).

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::{TcpListener, TcpStream},
    sync::{Mutex, watch},
    task::JoinHandle,
};

/// A running proxy to `target`.
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    conns: Arc<Mutex<Vec<Conn>>>,
    down: Arc<AtomicBool>,
    held: watch::Sender<bool>,
    marks: Arc<Marks>,
    accept: JoinHandle<()>,
}

/// One proxied connection.
struct Conn {
    pumps: JoinHandle<()>,
    /// Its client has sent the mark.
    marked: Arc<AtomicBool>,
}

/// What [`Proxy::start_marking`] looks for, and whether marked connections are being cut.
#[derive(Default)]
struct Marks {
    pattern: Option<&'static [u8]>,
    cutting: AtomicBool,
    cuts: AtomicUsize,
}

impl Marks {
    /// Whether `seen` (the end of what the client sent before) followed by `chunk` contains the
    /// pattern; keeps the end of `chunk` in `seen` so that a pattern split across reads is found.
    fn scan(&self, seen: &mut Vec<u8>, chunk: &[u8]) -> bool {
        let Some(p) = self.pattern else { return false };
        seen.extend_from_slice(chunk);
        let found = seen.windows(p.len()).any(|w| w == p);
        let keep = p.len().saturating_sub(1).min(seen.len());
        seen.drain(..seen.len() - keep);
        found
    }
}

/// Copies `from` to `to`, waiting while the proxy is held; ends when either side closes, or, for
/// the client's direction (`marked` set), when a marked connection is to be cut.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut held: watch::Receiver<bool>,
    client: Option<(Arc<Marks>, Arc<AtomicBool>)>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut seen = Vec::new();
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if let Some((marks, marked)) = &client {
            if marks.scan(&mut seen, &buf[..n]) {
                marked.store(true, Ordering::SeqCst);
            }
            if marked.load(Ordering::SeqCst) && marks.cutting.load(Ordering::SeqCst) {
                // Cut before the marked bytes reach the server.
                marks.cuts.fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
        if held.wait_for(|h| !*h).await.is_err() {
            break;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

impl Proxy {
    /// Starts forwarding 127.0.0.1:random to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), target).await
    }

    /// Starts forwarding `bind` (port 0: any free one) to `target`.
    pub async fn start_on(bind: SocketAddr, target: SocketAddr) -> Proxy {
        Self::spawn(bind, target, Marks::default()).await
    }

    /// Like [`Proxy::start`], and remembers which connections' clients sent `mark` (for
    /// [`Proxy::cut_marked`]).
    pub async fn start_marking(target: SocketAddr, mark: &'static [u8]) -> Proxy {
        assert!(!mark.is_empty(), "an empty mark would mark every connection");
        Self::spawn(SocketAddr::from(([127, 0, 0, 1], 0)), target, Marks { pattern: Some(mark), ..Marks::default() })
            .await
    }

    async fn spawn(bind: SocketAddr, target: SocketAddr, marks: Marks) -> Proxy {
        let listener = TcpListener::bind(bind).await.expect("bind proxy");
        let addr = listener.local_addr().expect("addr");
        let conns: Arc<Mutex<Vec<Conn>>> = Arc::default();
        let down = Arc::new(AtomicBool::new(false));
        let marks = Arc::new(marks);
        let (held, held_rx) = watch::channel(false);
        let (c, d, m) = (conns.clone(), down.clone(), marks.clone());
        let accept = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                if d.load(Ordering::SeqCst) {
                    // Refused: closed at once, like a server that is not there.
                    drop(inbound);
                    continue;
                }
                let Ok(outbound) = TcpStream::connect(target).await else { continue };
                let _ = inbound.set_nodelay(true);
                let _ = outbound.set_nodelay(true);
                let (in_r, in_w) = inbound.into_split();
                let (out_r, out_w) = outbound.into_split();
                let (h1, h2) = (held_rx.clone(), held_rx.clone());
                let marked = Arc::new(AtomicBool::new(false));
                let client = Some((m.clone(), marked.clone()));
                let pumps = tokio::spawn(async move {
                    // When one direction ends the other is dropped too: the connection is gone.
                    tokio::select! {
                        () = pump(in_r, out_w, h1, client) => {}
                        () = pump(out_r, in_w, h2, None) => {}
                    }
                });
                let mut conns = c.lock().await;
                conns.retain(|c| !c.pumps.is_finished());
                conns.push(Conn { pumps, marked });
            }
        });
        Proxy { addr, conns, down, held, marks, accept }
    }

    /// Drops every open connection (both sides see the connection fail); new ones are accepted.
    pub async fn cut(&self) {
        for c in self.conns.lock().await.drain(..) {
            c.pumps.abort();
        }
    }

    /// Cuts every connection whose client sent the mark of [`Proxy::start_marking`], and from now
    /// on cuts any connection when its client sends the mark, before the mark reaches the server.
    /// The other connections are untouched.
    pub async fn cut_marked(&self) {
        assert!(self.marks.pattern.is_some(), "cut_marked needs a proxy started with start_marking");
        self.marks.cutting.store(true, Ordering::SeqCst);
        for c in self.conns.lock().await.iter().filter(|c| c.marked.load(Ordering::SeqCst)) {
            if !c.pumps.is_finished() {
                self.marks.cuts.fetch_add(1, Ordering::SeqCst);
            }
            c.pumps.abort();
        }
    }

    /// How many connections [`Proxy::cut_marked`] has cut so far (a client that keeps coming back
    /// with its mark is cut each time).
    pub fn marked_cuts(&self) -> usize {
        self.marks.cuts.load(Ordering::SeqCst)
    }

    /// Cuts every connection and refuses new ones until [`Proxy::up`].
    pub async fn down(&self) {
        self.down.store(true, Ordering::SeqCst);
        self.cut().await;
    }

    /// Accepts connections again.
    pub fn up(&self) {
        self.down.store(false, Ordering::SeqCst);
    }

    /// Stops every byte in both directions on every connection, old and new, without closing any.
    pub fn hold(&self) {
        self.held.send_replace(true);
    }

    /// Ends [`Proxy::hold`]: what was sent meanwhile is delivered.
    pub fn release(&self) {
        self.held.send_replace(false);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        if let Ok(mut conns) = self.conns.try_lock() {
            for c in conns.drain(..) {
                c.pumps.abort();
            }
        }
    }
}

/// A port free on 127.0.0.1 now, for a server a test starts on it next (and again after a restart).
///
/// Chosen below the kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`), never in
/// it: every outgoing connection of every test running beside this one takes a port from that
/// range, and CI once failed when a client socket took a chaos axd's port between its choice and
/// axd's bind. Below the range only servers bind, and this checks that none holds the port.
pub fn free_port() -> u16 {
    let low = ephemeral_low();
    let mut rng = fastrand::Rng::new();
    for _ in 0..10_000 {
        let port = rng.u16(PORTS_FROM..low);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port on 127.0.0.1 between {PORTS_FROM} and {low}");
}

/// Where [`free_port`] starts looking: above the well-known ports and the usual services' own.
const PORTS_FROM: u16 = 20_000;

/// The first port of the kernel's ephemeral range (Linux's default when it cannot be read).
fn ephemeral_low() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .filter(|low| *low > PORTS_FROM + 1000)
        .unwrap_or(32_768)
}

#[cfg(test)]
mod tests {
    #[test]
    fn free_ports_are_below_the_ephemeral_range_and_bindable() {
        let low = super::ephemeral_low();
        for _ in 0..50 {
            let p = super::free_port();
            assert!((super::PORTS_FROM..low).contains(&p), "{p} is not below the ephemeral range ({low})");
            std::net::TcpListener::bind(("127.0.0.1", p)).expect("free");
        }
    }
}
