//! `GET /metrics` over plain HTTP/1.1, served by hand on tokio.
//!
//! Why not hyper: tonic brings hyper with HTTP/2 only; its HTTP/1 server would add `hyper/http1`
//! and `hyper-util`'s server to the build for one read-only endpoint. A scrape is one request per
//! connection: read the request head (bounded size and time), answer, close.
//!
//! On a loopback address the request must name this machine as its host (`localhost`,
//! `127.0.0.1`, `[::1]` or the bound address, with its port), or it is 403: a page under DNS
//! rebinding cannot read the metrics (see [`crate::origin`]). A non-loopback address is allowed only
//! behind a TLS proxy (`--metrics-tls-proxy`), whose certificate does that, and which forwards its
//! own name.

use std::{sync::Arc, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::Semaphore,
};
use tokio_util::sync::CancellationToken;

/// The largest request head read; longer ones are answered 431.
const MAX_HEAD: usize = 8 * 1024;
/// Longest a client may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Scrapes handled at once; more wait for their turn.
const CONCURRENT: usize = 8;
/// Longest the answer may take to be written: a client that does not read its answer gives its
/// turn up then, instead of holding it.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// The future a [`Scrape`] returns: the body.
pub type ScrapeFuture = std::pin::Pin<Box<dyn std::future::Future<Output = String> + Send>>;

/// Produces the body of a scrape (refreshes the gauges that are read at scrape time, then renders).
pub type Scrape = Arc<dyn Fn() -> ScrapeFuture + Send + Sync>;

/// Accepts scrapes on `listener` until `cancel` fires.
pub async fn serve(listener: TcpListener, scrape: Scrape, cancel: CancellationToken) {
    let permits = Arc::new(Semaphore::new(CONCURRENT));
    // Hosts are checked on a loopback port (see the module doc).
    let bound = listener.local_addr().ok().filter(|a| a.ip().is_loopback());
    loop {
        let accepted = tokio::select! {
            () = cancel.cancelled() => return,
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors and the like: pause instead of spinning.
                tracing::warn!(error = %e, "metrics: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().acquire_owned().await else { return };
        let scrape = scrape.clone();
        tokio::spawn(async move {
            if let Err(e) = answer(stream, &scrape, bound).await {
                tracing::debug!(%peer, error = %e, "metrics: scrape connection failed");
            }
            drop(permit);
        });
    }
}

/// The `Host` header of a request head, if any.
fn host_of(head: &[u8]) -> Option<String> {
    String::from_utf8_lossy(head).lines().skip(1).find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim().eq_ignore_ascii_case("host").then(|| value.trim().to_owned())
    })
}

async fn answer(mut stream: TcpStream, scrape: &Scrape, bound: Option<std::net::SocketAddr>) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(512);
    let complete = tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream, &mut head)).await;
    let (status, body, content_type) = match complete {
        Err(_) => ("408 Request Timeout", "request head not received in time\n".to_owned(), "text/plain"),
        Ok(Err(e)) => return Err(e),
        Ok(Ok(false)) => ("431 Request Header Fields Too Large", "request head too large\n".to_owned(), "text/plain"),
        Ok(Ok(true)) => {
            let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
            let line = String::from_utf8_lossy(line);
            let mut parts = line.trim_end().split(' ');
            let (method, target) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
            let path = target.split('?').next().unwrap_or_default();
            let foreign = bound.filter(|b| !host_of(&head).is_some_and(|h| crate::origin::is_own_host(&h, *b)));
            match (foreign, method, path) {
                (Some(b), _, _) => ("403 Forbidden", crate::origin::refusal(b), "text/plain"),
                (None, "GET", "/metrics") => ("200 OK", scrape().await, "text/plain; version=0.0.4; charset=utf-8"),
                (None, _, "/metrics") => ("405 Method Not Allowed", "only GET\n".to_owned(), "text/plain"),
                (None, _, _) => ("404 Not Found", "metrics are at /metrics\n".to_owned(), "text/plain"),
            }
        }
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let written = tokio::time::timeout(WRITE_TIMEOUT, async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
    written.unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
}

/// Reads until the blank line that ends the head: `Ok(false)` if it is longer than [`MAX_HEAD`].
async fn read_head(stream: &mut TcpStream, head: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut buf = [0u8; 1024];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        head.extend_from_slice(&buf[..n]);
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n") {
            return Ok(true);
        }
        if head.len() > MAX_HEAD {
            return Ok(false);
        }
    }
}
