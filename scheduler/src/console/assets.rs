//! The console's page, embedded at build time from `console/dist` (see `scheduler/build.rs`), and
//! the headers it is served with.
//!
//! Every answer of the console port carries `X-Content-Type-Options: nosniff`; the page's answers
//! also carry a Content-Security-Policy that allows scripts, styles, images and fetches from this
//! origin only and no framing, inline code, plugins, form posts or `<base>` changes.

use bytes::Bytes;
use http_body_util::Full;
use tonic::{
    body::Body,
    codegen::http::{HeaderValue, Response, StatusCode, header},
};

/// One embedded file.
#[derive(Debug)]
pub struct Asset {
    /// Its URL path, e.g. `/index.html`, `/assets/app-3f2a….js`.
    pub path: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/console_assets.rs"));

/// What the page may load: its own scripts, styles and images, and calls to its own origin (the
/// gRPC-Web API). Nothing inline, no plugins, no framing by any page, no form posts.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; \
                       base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Where the built files live; a path under it that is not a file is 404, not the page.
pub const ASSETS_DIR: &str = "/assets/";

/// The asset served for `path`: the file itself, a 404 for a missing file under [`ASSETS_DIR`],
/// and `index.html` for any other path, since the page routes itself (`/tasks/nightly.report` is a
/// page, not a file).
pub fn lookup(path: &str) -> Option<&'static Asset> {
    let path = if path == "/" { "/index.html" } else { path };
    if let Some(asset) = ASSETS.iter().find(|a| a.path == path) {
        return Some(asset);
    }
    if path.starts_with(ASSETS_DIR) {
        return None;
    }
    ASSETS.iter().find(|a| a.path == "/index.html")
}

/// The answer for `asset`: its bytes (none for HEAD) with the page's security headers. Built files
/// under `/assets/` carry a content hash in their names and are cached for good; `index.html` is
/// revalidated every time, so a new axd serves its own page at once.
pub fn response(asset: &Asset, head: bool) -> Response<Body> {
    let cache = if asset.path.starts_with(ASSETS_DIR) { "public, max-age=31536000, immutable" } else { "no-cache" };
    let body = if head { Body::empty() } else { Body::new(Full::new(Bytes::from_static(asset.body))) };
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(asset.body.len()));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    page_headers(h);
    r
}

/// A short plain-text answer (a refusal, a 404), with the page's security headers.
pub fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut r = Response::new(Body::new(Full::new(Bytes::from_static(text.as_bytes()))));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(text.len()));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    page_headers(h);
    r
}

/// The headers every page answer carries.
fn page_headers(h: &mut tonic::codegen::http::HeaderMap) {
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
}
