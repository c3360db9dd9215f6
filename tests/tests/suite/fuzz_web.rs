//! Arbitrary HTTP requests to the console port (gRPC-Web, `--console-listen`) and to the metrics
//! endpoint (`--metrics-listen`): methods, paths, content types, gRPC-Web bodies in binary and
//! text (bad base64 too), truncated frames, huge declared lengths, a compressed flag, request
//! heads too large or never finished. Every request is answered within 10 s with an HTTP status
//! that is not 5xx, and a gRPC-Web answer's grpc-status is never INTERNAL or UNKNOWN (issue 33,
//! item 10). Failing seeds are kept and replayed first.

use std::{net::SocketAddr, time::Duration};

use ax_tests::{Db, TestDb, axd::Axd};
use proptest::{
    prelude::*,
    test_runner::{Config, FileFailurePersistence, TestRunner},
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const REGRESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/suite/fuzz_web.proptest-regressions");

const LIMIT: Duration = Duration::from_secs(10);

/// Sends `raw` on a new connection and reads until the server closes it (within [`LIMIT`]).
async fn exchange(addr: SocketAddr, raw: &[u8]) -> Result<Vec<u8>, String> {
    let mut s = tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    let mut out = Vec::new();
    let run = async {
        // The server may answer and close before reading everything: a failed write is not an error.
        let _ = s.write_all(raw).await;
        let _ = s.read_to_end(&mut out).await;
    };
    tokio::time::timeout(LIMIT, run).await.map_err(|_| format!("no answer within {LIMIT:?}"))?;
    Ok(out)
}

fn request(method: &str, path: &str, host: &str, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    [head.as_bytes(), body].concat()
}

fn base64(bytes: &[u8]) -> Vec<u8> {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    for c in bytes.chunks(3) {
        let n = c.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= c.len() { A[(n >> (18 - 6 * i)) as usize & 63] } else { b'=' });
        }
    }
    out
}

fn unbase64(text: &[u8]) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let (mut out, mut acc, mut bits) = (Vec::new(), 0u32, 0);
    for v in text.iter().filter_map(|c| value(*c)) {
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// Header names (lower case) and values.
type Headers = Vec<(String, String)>;

/// The status code, headers and body of an HTTP/1.1 answer.
fn parse(raw: &[u8]) -> Option<(u16, Headers, Vec<u8>)> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    let headers: Headers = headers.collect();
    let mut body = raw[end + 4..].to_vec();
    if headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked")) {
        let mut out = Vec::new();
        let mut rest = &body[..];
        while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16).ok()?;
            rest = rest.get(line_end + 2..)?;
            if size == 0 {
                break;
            }
            out.extend_from_slice(rest.get(..size)?);
            rest = rest.get(size + 2..)?;
        }
        body = out;
    }
    Some((status, headers, body))
}

/// Every grpc-status in an answer: its headers, and the trailer frames of its (decoded) body.
fn grpc_statuses(headers: &[(String, String)], body: &[u8]) -> Vec<String> {
    let mut found: Vec<String> = headers.iter().filter(|(k, _)| k == "grpc-status").map(|(_, v)| v.clone()).collect();
    let text = headers.iter().any(|(k, v)| k == "content-type" && v.starts_with("application/grpc-web-text"));
    let body = if text { unbase64(body) } else { body.to_vec() };
    let mut rest = &body[..];
    while rest.len() >= 5 {
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let Some(frame) = rest.get(5..5 + len) else { break };
        if rest[0] & 0x80 != 0 {
            for line in String::from_utf8_lossy(frame).split("\r\n") {
                if let Some(("grpc-status", v)) = line.split_once(':') {
                    found.push(v.trim().to_owned());
                }
            }
        }
        rest = &rest[5 + len..];
    }
    found
}

fn frame(flag: u8, len: u32, body: &[u8]) -> Vec<u8> {
    [&[flag][..], &len.to_be_bytes(), body].concat()
}

/// A gRPC-Web body: well framed, truncated, with a huge declared length or a compressed flag.
fn grpc_body() -> impl Strategy<Value = Vec<u8>> {
    let bytes = prop::collection::vec(any::<u8>(), 0..40);
    prop_oneof![
        bytes.clone().prop_map(|b| frame(0, b.len() as u32, &b)),
        (bytes.clone(), 1u32..50).prop_map(|(b, more)| frame(0, b.len() as u32 + more, &b)),
        bytes.clone().prop_map(|b| frame(0, u32::MAX, &b)),
        bytes.clone().prop_map(|b| frame(1, b.len() as u32, &b)),
        bytes.clone().prop_map(|b| frame(0x80, b.len() as u32, &b)),
        Just(frame(0, 0, &[])),
        Just(Vec::new()),
        bytes,
    ]
}

#[derive(Debug, Clone)]
struct Req {
    method: String,
    path: String,
    content_type: Option<String>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn console_request() -> impl Strategy<Value = Req> {
    let method =
        prop_oneof![6 => Just("POST"), 1 => Just("GET"), 1 => Just("OPTIONS"), 1 => Just("PUT"), 1 => Just("BREW")];
    let rpc =
        prop::sample::select(vec!["ListTasks", "CreateTask", "GetTask", "TriggerTask", "GetInstance", "Nope", ""]);
    let path = prop_oneof![
        4 => rpc.prop_map(|r| format!("/ax.v1.AdminService/{r}")),
        1 => Just("/ax.v1.WorkerService/Connect".to_owned()),
        1 => Just("/".to_owned()),
        1 => Just("/metrics".to_owned()),
        1 => "/[a-zA-Z0-9%./?=_-]{0,30}",
    ];
    let types = vec![
        "application/grpc-web",
        "application/grpc-web+proto",
        "application/grpc-web-text",
        "application/grpc-web-text+proto",
        "application/grpc",
        "application/grpc-web+json",
        "text/plain",
    ];
    let content_type = prop::option::of(prop_oneof![
        5 => prop::sample::select(types).prop_map(str::to_owned),
        1 => "[ -~]{0,20}",
    ]);
    let headers = prop::collection::vec(
        prop_oneof![
            Just(("x-grpc-web".to_owned(), "1".to_owned())),
            Just(("grpc-timeout".to_owned(), "1n".to_owned())),
            Just(("grpc-encoding".to_owned(), "gzip".to_owned())),
            Just(("sec-fetch-site".to_owned(), "cross-site".to_owned())),
            ("[a-z-]{1,12}", "[ -~]{0,20}"),
        ],
        0..3,
    );
    let body = prop_oneof![
        3 => grpc_body(),
        1 => Just(b"!!!!not base64@@".to_vec()),
        1 => prop::collection::vec(any::<u8>(), 0..60),
    ];
    (method, path, content_type, headers, body).prop_map(|(method, path, content_type, headers, body)| {
        let text = content_type.as_deref().is_some_and(|t| t.starts_with("application/grpc-web-text"));
        // Text bodies are base64 of the frames, except the bad base64 itself.
        let body = if text && !body.starts_with(b"!!!!") { base64(&body) } else { body };
        Req { method: method.to_owned(), path, content_type, headers, body }
    })
}

/// What is wrong with the answer to `req` at `addr`, if anything.
async fn check(addr: SocketAddr, raw: &[u8], grpc: bool) -> Option<String> {
    let answer = match exchange(addr, raw).await {
        Ok(a) => a,
        Err(e) => return Some(e),
    };
    let Some((status, headers, body)) = parse(&answer) else {
        return Some(format!("not an HTTP answer: {:?}", String::from_utf8_lossy(&answer)));
    };
    if status >= 500 {
        return Some(format!("HTTP {status}: {:?}", String::from_utf8_lossy(&body)));
    }
    let bad: Vec<String> = grpc_statuses(&headers, &body).into_iter().filter(|c| c == "13" || c == "2").collect();
    if grpc && !bad.is_empty() {
        let message = headers.iter().find(|(k, _)| k == "grpc-message").map(|(_, v)| v.as_str());
        return Some(format!("grpc-status {bad:?} ({message:?}) in {headers:?} {:?}", String::from_utf8_lossy(&body)));
    }
    None
}

#[test]
fn fuzz_web_console_and_metrics_answer_every_request_without_5xx_or_internal() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let db = rt.block_on(TestDb::create(Db::Sqlite)).expect("a SQLite database");
    let axd = rt.block_on(Axd::start(&db, |o| {
        o.console_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
        o.metrics_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
    }));
    let console = axd.running.console_addr.expect("the console is served");
    let metrics = axd.running.metrics_addr.expect("metrics are served");
    let host = format!("localhost:{}", console.port());
    let origin = format!("http://{host}");

    // Heads the metrics endpoint must refuse in bounded time: too large, and never finished.
    rt.block_on(async {
        let huge = format!("GET /metrics HTTP/1.1\r\nHost: {metrics}\r\nX: {}\r\n\r\n", "a".repeat(9000));
        assert_eq!(check(metrics, huge.as_bytes(), false).await, None);
        let answer = exchange(metrics, b"GET /metrics HTTP/1.1\r\nHost: x").await.expect("an answer in time");
        assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 408"), "{answer:?}");
    });

    let mut runner = TestRunner::new(Config {
        cases: 200,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS))),
        ..Config::default()
    });
    let outcome = runner.run(&(console_request(), any::<bool>()), |(req, own_origin)| {
        let mut headers = req.headers.clone();
        if let Some(t) = &req.content_type {
            headers.push(("content-type".to_owned(), t.clone()));
        }
        if own_origin {
            headers.push(("origin".to_owned(), origin.clone()));
        }
        let to_console = request(&req.method, &req.path, &host, &headers, &req.body);
        let to_metrics = request(&req.method, &req.path, &metrics.to_string(), &headers, &req.body);
        let wrong = rt.block_on(async {
            let c = check(console, &to_console, true).await.map(|e| format!("console: {e}"));
            let m = check(metrics, &to_metrics, false).await.map(|e| format!("metrics: {e}"));
            [c, m].into_iter().flatten().collect::<Vec<_>>()
        });
        prop_assert!(wrong.is_empty(), "{}\nrequest: {:?}", wrong.join("\n"), String::from_utf8_lossy(&to_console));
        Ok(())
    });
    rt.block_on(axd.stop());
    rt.block_on(db.cleanup());
    outcome.expect("every request to the console and the metrics endpoint is answered cleanly");
}
