//! The `http` executor: one HTTP/1.1 request described by the task's params; the response body is
//! the attempt's output.
//!
//! The URL, header values and body are templates ([`crate::template`]). The host is resolved at
//! every attempt and each address it resolves to is checked against the SSRF rules of
//! [`ax_egress::refused_range`] unless the runner's `http.allow` allows it, so a name re-pointed
//! at an internal address is caught. A secret with `hosts` is only sent to those hosts. Redirects
//! are not followed (a 3xx is the answer). `https://` servers are verified against the Mozilla
//! roots (webpki-roots), with rustls on the ring provider.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use ax_egress::{Target, refused_range};
use ax_worker::{Context, MAX_OUTPUT};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::{
    Method, Request,
    header::{HeaderName, HeaderValue},
};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;

use crate::{
    config::Config,
    params::{Failure, Params, input},
    template::{Escape, Filled, Sources, fill, redact},
};

/// The methods `params.method` may name.
pub const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// Most addresses of a host one attempt connects to (all are checked).
const MAX_ADDRESSES: usize = 2;

/// How much of an unsuccessful response's body its failure message quotes (bytes).
const QUOTED_BODY: usize = 512;

/// Runs http tasks with the runner's configuration.
#[derive(Clone)]
pub struct HttpExecutor {
    config: Arc<Config>,
    tls: Arc<rustls::ClientConfig>,
}

impl std::fmt::Debug for HttpExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpExecutor").finish_non_exhaustive()
    }
}

/// A request ready to send: what the params asked for, filled and checked.
struct Prepared {
    target: Target,
    method: Method,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
    success: Vec<StatusRange>,
    timeout: Duration,
}

/// One entry of `params.success`: a status (`204`) or a class (`"2xx"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatusRange(u16, u16);

impl HttpExecutor {
    /// An executor trusting the Mozilla roots.
    pub fn new(config: Arc<Config>) -> Result<HttpExecutor, rustls::Error> {
        let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(HttpExecutor { config, tls: Arc::new(tls) })
    }

    /// Runs one attempt: the response body if its status is a success, else why not.
    pub async fn run(&self, ctx: &Context) -> Result<String, Failure> {
        let params = Params::parse(&ctx.params_raw)?;
        let ax = identity(ctx);
        let req = self.prepare(&params, &ax)?;
        let timeout = req.timeout;
        let host = req.target.host.clone();
        tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => Err(Failure::Stopped("stopped: the attempt was canceled or lost its lease".into())),
            r = tokio::time::timeout(timeout, self.send(req)) => match r {
                Ok(r) => r.map(|body| redact(body, &self.config.secrets)),
                Err(_) => Err(Failure::Transient(format!("no complete response from {host} within {}", humantime::format_duration(timeout)))),
            },
        }
        .map_err(|e| match e {
            Failure::Transient(m) => Failure::Transient(redact(m, &self.config.secrets)),
            Failure::Permanent(m) => Failure::Permanent(redact(m, &self.config.secrets)),
            e => e,
        })
    }

    /// Reads and fills the params; every refusal names its field.
    fn prepare(&self, params: &Params, ax: &[(&str, String)]) -> Result<Prepared, Failure> {
        let sources = Sources { params: &params.value, secrets: &self.config.secrets, ax };
        let method = params.str("method")?.unwrap_or("GET").to_ascii_uppercase();
        if !METHODS.contains(&method.as_str()) {
            return Err(input("params.method", format!("{method:?} is not one of {}", METHODS.join(", "))));
        }
        let method = Method::from_bytes(method.as_bytes()).map_err(|e| input("params.method", e.to_string()))?;
        let url =
            fill(params.required_str("url")?, &sources, Escape::Url).map_err(|e| input("params.url", e.to_string()))?;
        let target = Target::parse(&url.text).map_err(|e| input("params.url", e))?;
        self.check_secrets("params.url", &url, &target)?;
        let mut headers = Vec::new();
        for (name, value) in params.string_map("headers")? {
            let field = format!("params.headers.{name}");
            let filled = fill(value, &sources, Escape::Text).map_err(|e| input(&field, e.to_string()))?;
            self.check_secrets(&field, &filled, &target)?;
            let n = HeaderName::from_bytes(name.as_bytes()).map_err(|_| input(&field, "not a valid header name"))?;
            if n == hyper::header::HOST || n == hyper::header::CONTENT_LENGTH || n == hyper::header::TRANSFER_ENCODING {
                return Err(input(&field, "is set by the runner"));
            }
            let v = HeaderValue::from_str(&filled.text)
                .map_err(|_| input(&field, "the filled value holds characters a header cannot (e.g. a line break)"))?;
            headers.push((n, v));
        }
        let body = match params.str("body")? {
            Some(b) => {
                let filled = fill(b, &sources, Escape::Text).map_err(|e| input("params.body", e.to_string()))?;
                self.check_secrets("params.body", &filled, &target)?;
                Bytes::from(filled.text)
            }
            None => Bytes::new(),
        };
        Ok(Prepared {
            target,
            method,
            headers,
            body,
            success: success_of(params)?,
            timeout: params.timeout(&self.config)?,
        })
    }

    /// A secret with `hosts` may only go to those hosts.
    fn check_secrets(&self, field: &str, filled: &Filled, target: &Target) -> Result<(), Failure> {
        for name in &filled.secrets {
            if let Some(hosts) = self.config.secrets.get(name).and_then(|s| s.hosts.as_ref())
                && !hosts.contains(&target.host)
            {
                return Err(input(
                    field,
                    format!(
                        "secret {name} may only be sent to {} (secrets.{name}.hosts), not {}",
                        hosts.join(", "),
                        target.host
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The addresses to connect to, after the SSRF rules.
    async fn destinations(&self, t: &Target) -> Result<Vec<SocketAddr>, Failure> {
        let addrs: Vec<SocketAddr> = match t.literal_ip() {
            Some(ip) => vec![SocketAddr::new(ip, t.port)],
            None => tokio::net::lookup_host((t.host.as_str(), t.port))
                .await
                .map_err(|e| Failure::Transient(format!("resolving {}: {e}", t.host)))?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(Failure::Transient(format!("{} resolves to no address", t.host)));
        }
        if let Some((ip, range)) = addrs
            .iter()
            .filter_map(|a| refused_range(a.ip()).map(|r| (a.ip(), r)))
            .find(|(ip, _)| !self.config.http_allow.iter().any(|allow| allow.allows(&t.host, *ip)))
        {
            return Err(input(
                "params.url",
                format!(
                    "refused destination: {} is {ip}, a {range} address (allow it in the runner's configuration: http.allow)",
                    t.host
                ),
            ));
        }
        Ok(addrs.into_iter().take(MAX_ADDRESSES).collect())
    }

    async fn send(&self, p: Prepared) -> Result<String, Failure> {
        let t = &p.target;
        let addrs = self.destinations(t).await?;
        let mut errors = Vec::new();
        let mut tcp = None;
        for addr in &addrs {
            match tokio::net::TcpStream::connect(addr).await {
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => errors.push(format!("{addr}: {e}")),
            }
        }
        let tcp = tcp.ok_or_else(|| Failure::Transient(format!("connecting to {}: {}", t.host, errors.join("; "))))?;
        let authority = match (t.host.contains(':'), (t.tls && t.port == 443) || (!t.tls && t.port == 80)) {
            (true, true) => format!("[{}]", t.host),
            (true, false) => format!("[{}]:{}", t.host, t.port),
            (false, true) => t.host.clone(),
            (false, false) => format!("{}:{}", t.host, t.port),
        };
        let mut req = Request::builder().method(p.method).uri(t.path.as_str()).header(hyper::header::HOST, authority);
        if !p.headers.iter().any(|(n, _)| n == hyper::header::USER_AGENT) {
            req = req.header(hyper::header::USER_AGENT, concat!("ax-runner/", env!("CARGO_PKG_VERSION")));
        }
        for (n, v) in p.headers {
            req = req.header(n, v);
        }
        let req = req.body(Full::new(p.body)).map_err(|e| input("params.url", format!("building the request: {e}")))?;
        let (status, body, cut) = if t.tls {
            let name = ServerName::try_from(t.host.clone())
                .map_err(|e| input("params.url", format!("server name {}: {e}", t.host)))?;
            let stream = tokio_rustls::TlsConnector::from(self.tls.clone())
                .connect(name, tcp)
                .await
                .map_err(|e| Failure::Transient(format!("TLS with {}: {e}", t.host)))?;
            exchange(TokioIo::new(stream), req).await?
        } else {
            exchange(TokioIo::new(tcp), req).await?
        };
        let mut text = String::from_utf8_lossy(&body).into_owned();
        if p.success.iter().any(|r| (r.0..=r.1).contains(&status)) {
            if cut {
                text.push_str(&format!("…[truncated: the response body is longer than {} bytes]", body.len()));
            }
            return Ok(text);
        }
        let mut quoted: String = text.chars().take(QUOTED_BODY).collect();
        if quoted.len() < text.len() || cut {
            quoted.push('…');
        }
        let message = format!("HTTP {status} is not a success (params.success); body: {quoted}");
        if status == 408 || status == 429 || status >= 500 {
            Err(Failure::Transient(message))
        } else {
            Err(Failure::Permanent(message))
        }
    }
}

/// The body kept of a response: what fits in the output with room for the truncation mark.
const BODY_LIMIT: usize = MAX_OUTPUT - 80;

/// Sends `req` over `io`; the status, the body (at most [`BODY_LIMIT`] bytes) and whether it was cut.
async fn exchange<I>(io: I, req: Request<Full<Bytes>>) -> Result<(u16, Vec<u8>, bool), Failure>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let http_error = |e: hyper::Error| Failure::Transient(format!("HTTP: {e}"));
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.map_err(http_error)?;
    let conn = tokio::spawn(conn);
    let resp = sender.send_request(req).await.map_err(http_error)?;
    let status = resp.status().as_u16();
    let mut body = resp.into_body();
    let mut kept = Vec::new();
    let mut cut = false;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(http_error)?.into_data() else { continue };
        let room = BODY_LIMIT - kept.len();
        if data.len() > room {
            kept.extend_from_slice(&data[..room]);
            cut = true;
            break;
        }
        kept.extend_from_slice(&data);
    }
    conn.abort();
    Ok((status, kept, cut))
}

/// `params.success`: statuses (`200`) and classes (`"2xx"`); `["2xx"]` if not given.
fn success_of(params: &Params) -> Result<Vec<StatusRange>, Failure> {
    let Some(v) = params.get("success") else { return Ok(vec![StatusRange(200, 299)]) };
    let list = v
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| input("params.success", "must be a non-empty list like [200, \"3xx\"]"))?;
    list.iter()
        .enumerate()
        .map(|(i, e)| {
            let bad = || {
                input(
                    format!("params.success[{i}]"),
                    format!("{e} is neither a status 100-599 nor a class like \"2xx\""),
                )
            };
            match e {
                serde_json::Value::Number(n) => n
                    .as_u64()
                    .filter(|s| (100..=599).contains(s))
                    .map(|s| StatusRange(s as u16, s as u16))
                    .ok_or_else(bad),
                serde_json::Value::String(s) => match s.as_bytes() {
                    [c @ b'1'..=b'5', b'x' | b'X', b'x' | b'X'] => {
                        let base = u16::from(c - b'0') * 100;
                        Ok(StatusRange(base, base + 99))
                    }
                    _ => Err(bad()),
                },
                _ => Err(bad()),
            }
        })
        .collect()
}

/// The `ax.FIELD` values of an attempt's templates.
pub fn identity(ctx: &Context) -> Vec<(&'static str, String)> {
    vec![
        ("instance_id", ctx.instance_id.to_string()),
        ("attempt", ctx.attempt.to_string()),
        ("idempotency_key", ctx.idempotency_key.clone()),
        ("task", ctx.task_name.clone()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executor(config: &str) -> HttpExecutor {
        HttpExecutor::new(Arc::new(Config::parse(config, |_| None).expect("config"))).expect("tls")
    }

    fn prepare(config: &str, params: serde_json::Value) -> Result<Prepared, String> {
        let p = Params::parse(&params.to_string()).expect("object");
        executor(config).prepare(&p, &[]).map_err(|e| e.to_string())
    }

    #[test]
    fn bad_params_are_refused_naming_the_field() {
        for (params, says) in [
            (serde_json::json!({}), "params.url: required"),
            (serde_json::json!({"url": "http://x/", "method": "FETCH"}), "params.method: \"FETCH\" is not one of GET"),
            (serde_json::json!({"url": "ftp://x/"}), "params.url: must start with http:// or https://"),
            (serde_json::json!({"url": "http://x/{{secret.NOPE}}"}), "params.url: {{secret.NOPE}}: no such secret"),
            (
                serde_json::json!({"url": "http://x/", "headers": {"Host": "y"}}),
                "params.headers.Host: is set by the runner",
            ),
            (
                serde_json::json!({"url": "http://x/", "headers": {"X": "{{params.v}}"}, "v": "a\r\nb: c"}),
                "params.headers.X: the filled value",
            ),
            (serde_json::json!({"url": "http://x/", "success": []}), "params.success: must be a non-empty list"),
            (serde_json::json!({"url": "http://x/", "success": [200, "6xx"]}), "params.success[1]: \"6xx\" is neither"),
            (
                serde_json::json!({"url": "http://x/", "body": "{{params.nope}}"}),
                "params.body: {{params.nope}}: the params have no such value",
            ),
        ] {
            let e = prepare("", params.clone()).err().unwrap_or_default();
            assert!(e.starts_with(says), "{params}: {e:?} does not start with {says:?}");
        }
    }

    #[test]
    fn a_secret_limited_to_hosts_is_not_sent_elsewhere() {
        let config = "[secrets.T]\nvalue = \"tok-123\"\nhosts = [\"api.example.com\"]";
        let params = |url: &str| serde_json::json!({"url": url, "headers": {"Authorization": "Bearer {{secret.T}}"}});
        let e = prepare(config, params("https://evil.example.com/")).err().unwrap_or_default();
        assert!(e.starts_with("params.headers.Authorization: secret T may only be sent to api.example.com"), "{e}");
        let ok = prepare(config, params("https://API.example.com/x")).expect("allowed host");
        assert_eq!(ok.headers[0].1, "Bearer tok-123");
    }

    #[test]
    fn success_lists_take_statuses_and_classes() {
        let p = prepare("", serde_json::json!({"url": "http://x/", "success": [204, "3xx"]})).expect("valid");
        assert_eq!(p.success, [StatusRange(204, 204), StatusRange(300, 399)]);
        assert_eq!(
            prepare("", serde_json::json!({"url": "http://x/"})).expect("valid").success,
            [StatusRange(200, 299)]
        );
    }

    #[tokio::test]
    async fn refused_ranges_are_refused_unless_allowed() {
        let t = Target::parse("http://127.0.0.1:9/").expect("url");
        let e = executor("").destinations(&t).await.expect_err("loopback");
        assert!(
            e.to_string().starts_with("params.url: refused destination: 127.0.0.1 is 127.0.0.1, a loopback"),
            "{e}"
        );
        assert_eq!(executor("[http]\nallow = [\"127.0.0.0/8\"]").destinations(&t).await.map(|a| a.len()), Ok(1));
        let mapped = Target::parse("http://[::ffff:10.0.0.1]/").expect("url");
        assert!(executor("").destinations(&mapped).await.is_err(), "IPv4-mapped private address");
    }
}
