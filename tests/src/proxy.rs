//! A TCP proxy on loopback whose connections can be cut, or refused for a while, to break streams
//! and database connections without killing either end (a network failure or a server restart, as
//! seen from the client).

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use tokio::{
    net::{TcpListener, TcpStream},
    sync::Mutex,
    task::JoinHandle,
};

/// A running proxy to `target`.
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    conns: Arc<Mutex<Vec<JoinHandle<()>>>>,
    down: Arc<AtomicBool>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Starts forwarding 127.0.0.1:random to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("addr");
        let conns: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let down = Arc::new(AtomicBool::new(false));
        let (c, d) = (conns.clone(), down.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if d.load(Ordering::SeqCst) {
                    // Refused: closed at once, like a server that is not there.
                    drop(inbound);
                    continue;
                }
                let Ok(mut outbound) = TcpStream::connect(target).await else { continue };
                let h = tokio::spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
                c.lock().await.push(h);
            }
        });
        Proxy { addr, conns, down, accept }
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
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// A free port on 127.0.0.1 (bound and released; fine for tests that start a server on it next).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}
