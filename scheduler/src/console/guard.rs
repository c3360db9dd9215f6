//! What may pass the console port: gRPC-Web calls of the page's own origin to AdminService, and
//! reads of the page. Everything else is answered here and never reaches the API.
//!
//! A browser attaches the user's client certificate to every request to the console's origin,
//! whichever page makes it, so the API must be unreachable from other sites (CSRF):
//!
//! - API paths (`/ax.v1.AdminService/…`) take only `POST` (405 otherwise, `OPTIONS` included: no
//!   CORS preflight ever succeeds) with a gRPC-Web content type (415 otherwise). gRPC-Web types are
//!   not among the types a cross-site form or a `no-cors` fetch may send (`text/plain`, form
//!   encodings), and a cross-site `fetch` that sets one needs a preflight, which is refused.
//! - Besides, a request that says where it comes from must come from this origin: an `Origin`
//!   header other than the console's own, or `Sec-Fetch-Site` other than `same-origin`, is 403.
//! - Other paths serve the page (`GET`, `HEAD`; 405 otherwise), see [`super::assets`].
//!
//! Plain gRPC (`application/grpc`) is refused too: the console port speaks gRPC-Web only, and the
//! gRPC port (`--listen`) is the one for axctl and generated clients.
//!
//! Without TLS (a loopback port), every request must name this machine as its host —
//! `localhost`, `127.0.0.1`, `[::1]` or the bound address, with the bound port — or it is 403
//! (see [`crate::origin`]): under DNS rebinding the attacker's page is same-origin with itself,
//! so only the name tells it apart. With TLS the certificate does that.

use std::{
    future::Future,
    net::SocketAddr,
    pin::Pin,
    task::{Context, Poll},
};

use tonic::{
    body::Body,
    codegen::{
        Service,
        http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri, header},
    },
};

use super::assets;

/// The path prefix of the API: AdminService's methods.
pub const API_PREFIX: &str = "/ax.v1.AdminService/";

/// The content types of gRPC-Web requests (binary and base64 text, as the protocol defines them).
const GRPC_WEB_TYPES: [&str; 4] = [
    "application/grpc-web",
    "application/grpc-web+proto",
    "application/grpc-web-text",
    "application/grpc-web-text+proto",
];

/// What to do with one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A gRPC-Web call of this origin: pass it to the API.
    Api,
    /// Serve this embedded file (without a body for HEAD).
    Page {
        /// The file.
        path: &'static str,
        /// Headers only.
        head: bool,
    },
    /// Answer with this status and text; the request goes no further.
    Refuse(StatusCode, &'static str),
}

/// Decides on a request from its method, URI and headers; `tls` says which scheme this port's own
/// origin has; `bound` is the port's address, whose names a plaintext port answers.
pub fn decide(method: &Method, uri: &Uri, headers: &HeaderMap, tls: bool, bound: SocketAddr) -> Decision {
    let path = uri.path();
    if !tls && !own_host(uri, headers, bound) {
        return Decision::Refuse(
            StatusCode::FORBIDDEN,
            "this port answers localhost, 127.0.0.1, [::1] or its own address only\n",
        );
    }
    if path.starts_with(API_PREFIX) {
        if method != Method::POST {
            return Decision::Refuse(StatusCode::METHOD_NOT_ALLOWED, "the console API takes POST only\n");
        }
        let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
        // Exactly one of the gRPC-Web types, as tonic-web reads it (no parameters).
        if !GRPC_WEB_TYPES.contains(&content_type) {
            return Decision::Refuse(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the console API takes gRPC-Web only (content-type application/grpc-web+proto)\n",
            );
        }
        if !same_origin(uri, headers, tls) {
            return Decision::Refuse(StatusCode::FORBIDDEN, "the console API answers its own page only\n");
        }
        return Decision::Api;
    }
    let head = match *method {
        Method::GET => false,
        Method::HEAD => true,
        _ => return Decision::Refuse(StatusCode::METHOD_NOT_ALLOWED, "the console page takes GET and HEAD only\n"),
    };
    match assets::lookup(path) {
        Some(asset) => Decision::Page { path: asset.path, head },
        None => Decision::Refuse(StatusCode::NOT_FOUND, "no such file\n"),
    }
}

/// Whether a request that names its origin names this one. A request without `Origin` and
/// `Sec-Fetch-Site` is not a browser's cross-site request (browsers send `Origin` with every POST)
/// and passes; its content type was checked already.
fn same_origin(uri: &Uri, headers: &HeaderMap, tls: bool) -> bool {
    if headers.get("sec-fetch-site").is_some_and(|site| site.as_bytes() != b"same-origin") {
        return false;
    }
    let Some(origin) = headers.get(header::ORIGIN) else { return true };
    let scheme = if tls { "https://" } else { "http://" };
    let Some(origin_host) = origin.to_str().ok().and_then(|o| o.strip_prefix(scheme)) else { return false };
    // HTTP/2 carries the authority in the URI, HTTP/1.1 in Host.
    let authority = uri.authority().map(|a| a.as_str()).or_else(|| headers.get(header::HOST)?.to_str().ok());
    authority.is_some_and(|a| a.eq_ignore_ascii_case(origin_host))
}

/// Whether the request's host (HTTP/2 authority, or HTTP/1.1 `Host`) and its `Origin`'s host, if
/// any, name this machine's port (see [`crate::origin::is_own_host`]).
fn own_host(uri: &Uri, headers: &HeaderMap, bound: SocketAddr) -> bool {
    let authority = uri.authority().map(|a| a.as_str()).or_else(|| headers.get(header::HOST)?.to_str().ok());
    let Some(authority) = authority else { return false };
    if !crate::origin::is_own_host(authority, bound) {
        return false;
    }
    match headers.get(header::ORIGIN) {
        None => true,
        Some(o) => o
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://"))
            .is_some_and(|host| crate::origin::is_own_host(host, bound)),
    }
}

/// The console port's service: [`decide`], then the API (`inner`) or an answer of its own.
#[derive(Debug, Clone)]
pub struct Guard<S> {
    inner: S,
    tls: bool,
    bound: SocketAddr,
}

/// Wraps the gRPC-Web API in a [`Guard`].
#[derive(Debug, Clone, Copy)]
pub struct GuardLayer {
    /// Whether the port speaks TLS (its origin is `https://`).
    pub tls: bool,
    /// The port's address.
    pub bound: SocketAddr,
}

impl<S> tower_layer::Layer<S> for GuardLayer {
    type Service = Guard<S>;

    fn layer(&self, inner: S) -> Guard<S> {
        Guard { inner, tls: self.tls, bound: self.bound }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B> Service<Request<B>> for Guard<S>
where
    S: Service<Request<B>, Response = Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Response<Body>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let answer = match decide(req.method(), req.uri(), req.headers(), self.tls, self.bound) {
            Decision::Api => {
                let call = self.inner.call(req);
                return Box::pin(async move {
                    let mut response = call.await?;
                    let h = response.headers_mut();
                    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
                    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                    Ok(response)
                });
            }
            Decision::Page { path, head } => match assets::lookup(path) {
                Some(asset) => assets::response(asset, head),
                None => assets::plain(StatusCode::NOT_FOUND, "no such file\n"),
            },
            Decision::Refuse(status, text) => {
                let mut r = assets::plain(status, text);
                if status == StatusCode::METHOD_NOT_ALLOWED {
                    let allow = if req.uri().path().starts_with(API_PREFIX) { "POST" } else { "GET, HEAD" };
                    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
                }
                r
            }
        };
        Box::pin(async move { Ok(answer) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, uri: &str, headers: &[(&str, &str)]) -> Decision {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            h.insert(header::HeaderName::from_bytes(k.as_bytes()).expect("name"), HeaderValue::from_str(v).expect("v"));
        }
        decide(&method.parse().expect("method"), &uri.parse().expect("uri"), &h, true, BOUND)
    }

    const BOUND: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 7080);

    fn plain(uri: &str, headers: &[(&str, &str)]) -> Decision {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            h.insert(header::HeaderName::from_bytes(k.as_bytes()).expect("name"), HeaderValue::from_str(v).expect("v"));
        }
        decide(&Method::POST, &uri.parse().expect("uri"), &h, false, BOUND)
    }

    #[test]
    fn a_plaintext_port_answers_only_this_machine_s_names() {
        let rebound = [
            ("host", "rebind.evil:7080"),
            ("origin", "http://rebind.evil:7080"),
            ("sec-fetch-site", "same-origin"),
            GRPC_WEB,
        ];
        assert!(matches!(plain(CALL, &rebound), Decision::Refuse(StatusCode::FORBIDDEN, _)), "DNS rebinding");
        let own = [("host", "localhost:7080"), ("origin", "http://localhost:7080"), GRPC_WEB];
        assert_eq!(plain(CALL, &own), Decision::Api);
        let wrong_origin = [("host", "127.0.0.1:7080"), ("origin", "http://127.0.0.1:7081"), GRPC_WEB];
        assert!(matches!(plain(CALL, &wrong_origin), Decision::Refuse(StatusCode::FORBIDDEN, _)));
        assert!(matches!(plain(CALL, &[GRPC_WEB]), Decision::Refuse(StatusCode::FORBIDDEN, _)), "no host at all");
        // The page too, and an HTTP/2 authority counts as the host.
        let page = decide(&Method::GET, &"/".parse().expect("uri"), &HeaderMap::new(), false, BOUND);
        assert!(matches!(page, Decision::Refuse(StatusCode::FORBIDDEN, _)));
        let h2 = decide(&Method::GET, &"http://127.0.0.1:7080/".parse().expect("uri"), &HeaderMap::new(), false, BOUND);
        assert!(matches!(h2, Decision::Page { .. }), "{h2:?}");
    }

    const CALL: &str = "/ax.v1.AdminService/ListTasks";
    const GRPC_WEB: (&str, &str) = ("content-type", "application/grpc-web+proto");

    #[test]
    fn only_grpc_web_posts_reach_the_api() {
        assert_eq!(req("POST", CALL, &[GRPC_WEB]), Decision::Api);
        for method in ["GET", "OPTIONS", "PUT", "DELETE", "HEAD"] {
            assert!(
                matches!(req(method, CALL, &[GRPC_WEB]), Decision::Refuse(StatusCode::METHOD_NOT_ALLOWED, _)),
                "{method}"
            );
        }
        for ct in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/grpc",
            "application/grpc+proto",
            "application/json",
            "application/grpc-web+proto; charset=utf-8",
            "",
        ] {
            assert!(
                matches!(
                    req("POST", CALL, &[("content-type", ct)]),
                    Decision::Refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, _)
                ),
                "{ct:?}"
            );
        }
        assert!(matches!(req("POST", CALL, &[]), Decision::Refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, _)));
    }

    #[test]
    fn another_origin_is_refused_even_with_a_grpc_web_type() {
        let own = ("host", "localhost:7443");
        assert_eq!(req("POST", CALL, &[GRPC_WEB, own, ("origin", "https://localhost:7443")]), Decision::Api);
        assert_eq!(req("POST", CALL, &[GRPC_WEB, own, ("sec-fetch-site", "same-origin")]), Decision::Api);
        assert_eq!(
            req(
                "POST",
                "https://LocalHost:7443/ax.v1.AdminService/ListTasks",
                &[GRPC_WEB, ("origin", "https://localhost:7443")]
            ),
            Decision::Api,
            "HTTP/2: the authority is in the URI"
        );
        for bad in [
            vec![("origin", "https://evil.example")],
            vec![("origin", "http://localhost:7443")],
            vec![("origin", "https://localhost:7444")],
            vec![("origin", "null")],
            vec![("sec-fetch-site", "cross-site")],
            vec![("sec-fetch-site", "same-site")],
            vec![("origin", "https://localhost:7443"), ("sec-fetch-site", "cross-site")],
        ] {
            let mut h = vec![GRPC_WEB, own];
            h.extend(bad.iter().copied());
            assert!(matches!(req("POST", CALL, &h), Decision::Refuse(StatusCode::FORBIDDEN, _)), "{bad:?}");
        }
    }

    #[test]
    fn the_page_is_read_only_and_routes_itself() {
        assert_eq!(req("GET", "/", &[]), Decision::Page { path: "/index.html", head: false });
        assert_eq!(req("HEAD", "/tasks/nightly.report", &[]), Decision::Page { path: "/index.html", head: true });
        assert_eq!(req("GET", "/instances?task=x", &[]), Decision::Page { path: "/index.html", head: false });
        assert!(matches!(req("GET", "/assets/missing.js", &[]), Decision::Refuse(StatusCode::NOT_FOUND, _)));
        for method in ["POST", "PUT", "OPTIONS"] {
            assert!(
                matches!(req(method, "/", &[GRPC_WEB]), Decision::Refuse(StatusCode::METHOD_NOT_ALLOWED, _)),
                "{method}"
            );
        }
        let script = assets::ASSETS.iter().find(|a| a.path.ends_with(".js")).expect("a script is embedded");
        assert_eq!(req("GET", script.path, &[]), Decision::Page { path: script.path, head: false });
        // The worker API is not on this port: its path is a page path, and a POST is refused.
        assert!(matches!(
            req("POST", "/ax.v1.WorkerService/Connect", &[GRPC_WEB]),
            Decision::Refuse(StatusCode::METHOD_NOT_ALLOWED, _)
        ));
    }
}
