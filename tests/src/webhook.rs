//! A webhook receiver on 127.0.0.1 for alert tests: records every request (headers and body) and
//! answers each with a chosen status, or holds a request open without answering (an axd killed
//! while it waits for the response). [`Receiver::start_replying`] also answers with a body (the
//! HTTP server of ax-runner's tests).

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{
    io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader},
    net::TcpListener,
    sync::Notify,
};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Request line, e.g. `POST /hook HTTP/1.1`.
    pub request_line: String,
    /// Headers, names lower-cased.
    pub headers: HashMap<String, String>,
    /// The body.
    pub body: Vec<u8>,
}

impl Received {
    /// A header's value ("" if absent).
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or_default()
    }
}

/// How the receiver answers request number `n` (0-based): a status and a body, or `None` to hold it.
pub type Answer = Arc<dyn Fn(usize, &Received) -> Option<(u16, String)> + Send + Sync>;

/// A running receiver.
pub struct Receiver {
    /// Where it listens.
    pub addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    arrived: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// Starts a receiver; `answer(n)` is the status for request `n`, or `None` to hold it open
    /// (read, never answered, the connection kept until the receiver stops).
    pub async fn start(answer: impl Fn(usize) -> Option<u16> + Send + Sync + 'static) -> Receiver {
        Self::start_replying(move |n, _| answer(n).map(|status| (status, String::new()))).await
    }

    /// Starts a receiver; `answer(n, request)` is the status and body for request `n`, or `None`
    /// to hold it open.
    pub async fn start_replying(
        answer: impl Fn(usize, &Received) -> Option<(u16, String)> + Send + Sync + 'static,
    ) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
        let addr = listener.local_addr().expect("addr");
        let received = Arc::new(Mutex::new(Vec::new()));
        let arrived = Arc::new(Notify::new());
        let answer: Answer = Arc::new(answer);
        let (r, a) = (received.clone(), arrived.clone());
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                let (r, a, answer) = (r.clone(), a.clone(), answer.clone());
                held.push(tokio::spawn(async move {
                    let mut stream = BufReader::new(stream);
                    let mut request_line = String::new();
                    if stream.read_line(&mut request_line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let mut headers = HashMap::new();
                    loop {
                        let mut line = String::new();
                        if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        if let Some((k, v)) = line.split_once(':') {
                            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
                        }
                    }
                    let len: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
                    let mut body = vec![0; len];
                    if stream.read_exact(&mut body).await.is_err() {
                        return;
                    }
                    let got = Received { request_line: request_line.trim_end().to_owned(), headers, body };
                    let n = {
                        let mut list = r.lock().expect("lock");
                        list.push(got.clone());
                        list.len() - 1
                    };
                    a.notify_waiters();
                    match answer(n, &got) {
                        Some((status, body)) => {
                            let reply = format!(
                                "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                                body.len()
                            );
                            let _ = stream.get_mut().write_all(reply.as_bytes()).await;
                            let _ = stream.get_mut().shutdown().await;
                        }
                        None => {
                            // Hold the connection open: the sender waits for a response that never comes.
                            let mut rest = Vec::new();
                            let _ = stream.read_to_end(&mut rest).await;
                        }
                    }
                }));
            }
        });
        Receiver { addr, received, arrived, task }
    }

    /// `http://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }

    /// Waits until at least `n` requests have arrived (panics after `within`).
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let notified = self.arrived.notified();
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("the receiver got {} requests within {within:?}, expected {n}", self.received().len());
            }
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}
