//! A TCP proxy on loopback whose connections can be cut, to break streams without killing either
//! end (a network failure, as opposed to a process dying).

use std::{net::SocketAddr, sync::Arc};

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
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Starts forwarding 127.0.0.1:random to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("addr");
        let conns: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let c = conns.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let Ok(mut outbound) = TcpStream::connect(target).await else {
                    continue;
                };
                let h = tokio::spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
                c.lock().await.push(h);
            }
        });
        Proxy { addr, conns, accept }
    }

    /// Drops every open connection (both sides see the connection fail); new ones are accepted.
    pub async fn cut(&self) {
        for h in self.conns.lock().await.drain(..) {
            h.abort();
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}
