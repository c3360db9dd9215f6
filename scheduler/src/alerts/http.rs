//! Sending one delivery: resolve the webhook's host, refuse it if any address it resolves to is in a
//! refused range (checked at every send, so a name that is re-pointed at a private address after
//! the rule was created — DNS rebinding — is caught), connect to a checked address with a connect
//! timeout, speak HTTP/1.1 (hyper, over rustls with the ring provider for `https://`), and wait for
//! the status line within a response timeout. `https://` servers are verified against the Mozilla
//! roots (webpki-roots) plus the certificates of `--alert-ca-file`, if set. A send connects to at
//! most [`MAX_ADDRESSES`] of the addresses (all are checked) and ends at its deadline whatever
//! the phase ([`Sender::send_deadline`]: shorter than a delivery's claim, so no other axd takes the
//! delivery while this one still sends it).

use std::{net::SocketAddr, sync::Arc, time::Duration};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};

use super::{Delivery, Target, refused_range, sign};

/// How deliveries are sent.
#[derive(Clone)]
pub struct Sender {
    /// Whether targets in refused ranges are allowed (`--alert-allow-private-targets`).
    pub allow_private: bool,
    /// Longest wait for the TCP connection (and the TLS handshake).
    pub connect_timeout: Duration,
    /// Longest wait for the response after the connection is up.
    pub response_timeout: Duration,
    /// Longest a whole send may take — resolving, connecting, TLS and the response together: the
    /// connect and the response timeouts added (the claim of a delivery lasts 5 s longer; see
    /// [`crate::loops::alerts::claim_lease`]).
    pub send_deadline: Duration,
    tls: Arc<rustls::ClientConfig>,
}

/// Most addresses of a webhook's host a send tries (each with the connect timeout): a name that
/// resolves to many unanswering addresses cannot stretch a send.
pub const MAX_ADDRESSES: usize = 2;

/// The addresses a send tries, in the resolver's order: the first [`MAX_ADDRESSES`].
pub fn tried(mut addrs: Vec<SocketAddr>) -> Vec<SocketAddr> {
    addrs.truncate(MAX_ADDRESSES);
    addrs
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("allow_private", &self.allow_private)
            .field("connect_timeout", &self.connect_timeout)
            .field("response_timeout", &self.response_timeout)
            .field("send_deadline", &self.send_deadline)
            .finish()
    }
}

impl Sender {
    /// A sender trusting the Mozilla roots and the PEM certificates in `ca_file` (if any).
    pub fn new(
        allow_private: bool,
        connect_timeout: Duration,
        response_timeout: Duration,
        ca_file: Option<&std::path::Path>,
    ) -> Result<Sender, String> {
        let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        if let Some(path) = ca_file {
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("alert CA file {}: {e}", path.display()))?
                .collect::<Result<_, _>>()
                .map_err(|e| format!("alert CA file {}: {e}", path.display()))?;
            if certs.is_empty() {
                return Err(format!("alert CA file {}: no certificate in it", path.display()));
            }
            for c in certs {
                roots.add(c).map_err(|e| format!("alert CA file {}: {e}", path.display()))?;
            }
        }
        let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Sender {
            allow_private,
            connect_timeout,
            response_timeout,
            send_deadline: connect_timeout + response_timeout,
            tls: Arc::new(tls),
        })
    }

    /// Resolves the host and checks every address it resolves to; the addresses to try.
    async fn resolve(&self, t: &Target) -> Result<Vec<SocketAddr>, String> {
        let addrs: Vec<SocketAddr> = match t.literal_ip() {
            Some(ip) => vec![SocketAddr::new(ip, t.port)],
            None => tokio::time::timeout(self.connect_timeout, tokio::net::lookup_host((t.host.as_str(), t.port)))
                .await
                .map_err(|_| format!("resolving {} timed out", t.host))?
                .map_err(|e| format!("resolving {}: {e}", t.host))?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(format!("{} resolves to no address", t.host));
        }
        if !self.allow_private {
            for a in &addrs {
                if let Some(range) = refused_range(a.ip()) {
                    return Err(format!(
                        "refused target: {} resolves to {}, a {range} address (allow with \
                         --alert-allow-private-targets)",
                        t.host,
                        a.ip()
                    ));
                }
            }
        }
        Ok(tried(addrs))
    }

    /// Sends `d` signed with `secret` at Unix time `timestamp`; the HTTP status, or why it failed
    /// (at the latest at [`Self::send_deadline`]).
    pub async fn send(&self, d: &Delivery, secret: &str, timestamp: i64) -> Result<u16, String> {
        tokio::time::timeout(self.send_deadline, self.send_within(d, secret, timestamp)).await.unwrap_or_else(|_| {
            Err(format!(
                "no answer within the send's deadline of {:?} (resolving, connecting, TLS and the response together)",
                self.send_deadline
            ))
        })
    }

    async fn send_within(&self, d: &Delivery, secret: &str, timestamp: i64) -> Result<u16, String> {
        let t = Target::parse(&d.url)?;
        let addrs = self.resolve(&t).await?;
        let body = sign::body(d);
        let signature = sign::signature(secret.as_bytes(), timestamp, body.as_bytes());
        let host_header = if (t.tls && t.port == 443) || (!t.tls && t.port == 80) {
            bracketed(&t.host)
        } else {
            format!("{}:{}", bracketed(&t.host), t.port)
        };
        let req = hyper::Request::post(t.path.as_str())
            .header(hyper::header::HOST, host_header)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(hyper::header::USER_AGENT, concat!("ax-alerts/", env!("CARGO_PKG_VERSION")))
            .header(sign::DELIVERY_HEADER, d.id.to_string())
            .header(sign::EVENT_HEADER, d.event.as_str())
            .header(sign::TIMESTAMP_HEADER, timestamp.to_string())
            .header(sign::SIGNATURE_HEADER, signature)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("building the request: {e}"))?;
        let tcp = self.connect(&addrs).await?;
        if t.tls {
            let name = ServerName::try_from(t.host.clone()).map_err(|e| format!("server name {}: {e}", t.host))?;
            let tls = tokio::time::timeout(
                self.connect_timeout,
                tokio_rustls::TlsConnector::from(self.tls.clone()).connect(name, tcp),
            )
            .await
            .map_err(|_| "TLS handshake timed out".to_owned())?
            .map_err(|e| format!("TLS: {e}"))?;
            self.exchange(TokioIo::new(tls), req).await
        } else {
            self.exchange(TokioIo::new(tcp), req).await
        }
    }

    async fn connect(&self, addrs: &[SocketAddr]) -> Result<tokio::net::TcpStream, String> {
        let mut last = String::new();
        for a in addrs {
            match tokio::time::timeout(self.connect_timeout, tokio::net::TcpStream::connect(a)).await {
                Ok(Ok(s)) => return Ok(s),
                Ok(Err(e)) => last = format!("connecting to {a}: {e}"),
                Err(_) => last = format!("connecting to {a} timed out after {:?}", self.connect_timeout),
            }
        }
        Err(last)
    }

    async fn exchange<I>(&self, io: I, req: hyper::Request<Full<Bytes>>) -> Result<u16, String>
    where
        I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    {
        let work = async {
            let (mut sender, conn) =
                hyper::client::conn::http1::handshake(io).await.map_err(|e| format!("HTTP: {e}"))?;
            let conn = tokio::spawn(async move {
                let _ = conn.await;
            });
            let resp = sender.send_request(req).await.map_err(|e| format!("HTTP: {e}"))?;
            let status = resp.status().as_u16();
            // Read (and drop) a bounded amount of the body, so the server sees a clean exchange.
            let _ = http_body_util::Limited::new(resp.into_body(), 64 * 1024).collect().await;
            conn.abort();
            Ok::<u16, String>(status)
        };
        tokio::time::timeout(self.response_timeout, work)
            .await
            .map_err(|_| format!("no response within {:?}", self.response_timeout))?
    }
}

fn bracketed(host: &str) -> String {
    if host.contains(':') { format!("[{host}]") } else { host.to_owned() }
}
