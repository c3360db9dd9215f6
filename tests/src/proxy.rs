//! A TCP proxy on loopback whose connections can be cut, refused for a while, or held silent, to
//! break streams and database connections without killing either end.
//!
//! - [`Proxy::cut`]: both sides see the connection fail at once (a reset, a server restart).
//! - [`Proxy::down`] / [`Proxy::up`]: connections are cut and new ones refused (a server that is gone).
//! - [`Proxy::hold`] / [`Proxy::release`]: every connection stays open but no byte crosses in either
//!   direction until released, then what was sent meanwhile is delivered (a network partition
//!   without resets, or a frozen peer: neither side can tell it from a silent one).

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
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
    conns: Arc<Mutex<Vec<JoinHandle<()>>>>,
    down: Arc<AtomicBool>,
    held: watch::Sender<bool>,
    accept: JoinHandle<()>,
}

/// Copies `from` to `to`, waiting while the proxy is held; ends when either side closes.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut held: watch::Receiver<bool>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
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
        let listener = TcpListener::bind(bind).await.expect("bind proxy");
        let addr = listener.local_addr().expect("addr");
        let conns: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let down = Arc::new(AtomicBool::new(false));
        let (held, held_rx) = watch::channel(false);
        let (c, d) = (conns.clone(), down.clone());
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
                let h = tokio::spawn(async move {
                    // When one direction ends the other is dropped too: the connection is gone.
                    tokio::select! {
                        () = pump(in_r, out_w, h1) => {}
                        () = pump(out_r, in_w, h2) => {}
                    }
                });
                c.lock().await.push(h);
            }
        });
        Proxy { addr, conns, down, held, accept }
    }

    /// Drops every open connection (both sides see the connection fail); new ones are accepted.
    pub async fn cut(&self) {
        for h in self.conns.lock().await.drain(..) {
            h.abort();
        }
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
            for h in conns.drain(..) {
                h.abort();
            }
        }
    }
}

/// A free port on 127.0.0.1 (bound and released; fine for tests that start a server on it next).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}
