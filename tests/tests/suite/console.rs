//! The web console's port (`--console-listen`), spoken to byte by byte: gRPC-Web calls over mTLS
//! authorized exactly as on the gRPC port (a viewer reads, is refused a trigger with
//! PERMISSION_DENIED; an admin acts), every request that is not a gRPC-Web POST of the page's own
//! origin refused before the API (405, 415, 403) with nothing changed, the page and its security
//! headers, plaintext on loopback, and the flag's errors from the real binary.
//!
//! Requests are hand-built HTTP/1.1 (what a browser sends to a plaintext origin, and what the
//! console also accepts over TLS), so the test sees the status line and headers as they are.

use std::{net::SocketAddr, path::Path, sync::Arc, time::Duration};

use ax_proto::v1 as pb;
use ax_tests::{TestDb, axd::Axd, certs::TestCa, procs::bin};
use prost::Message as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// One HTTP/1.1 answer: status code, headers (lower-case names) and the body (de-chunked).
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// How to reach the console: plaintext, or TLS presenting `<stem>.pem` of the CA (or nothing).
#[derive(Clone)]
enum Via {
    Plain,
    Tls { ca: Arc<Path>, stem: Option<&'static str> },
}

async fn tls_stream(addr: SocketAddr, ca: &Path, stem: Option<&str>) -> std::io::Result<impl AsyncRead + AsyncWrite> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(ca.join("ca.pem")).expect("ca")).expect("root");
    let builder = rustls::ClientConfig::builder().with_root_certificates(roots);
    let config = match stem {
        Some(stem) => builder
            .with_client_auth_cert(
                vec![CertificateDer::from_pem_file(ca.join(format!("{stem}.pem"))).expect("cert")],
                PrivateKeyDer::from_pem_file(ca.join(format!("{stem}.key"))).expect("key"),
            )
            .expect("client auth"),
        None => builder.with_no_client_auth(),
    };
    // No ALPN: the server offers h2 only, and a client without ALPN may speak HTTP/1.1.
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    let name = ServerName::try_from("localhost").expect("name");
    tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, tcp).await
}

/// Sends one request (`Connection: close`) and reads the whole answer.
async fn request(
    via: &Via,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: localhost:{}\r\nConnection: close\r\n", addr.port());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut raw = Vec::new();
    async fn exchange(mut s: impl AsyncRead + AsyncWrite + Unpin, head: &str, body: &[u8], raw: &mut Vec<u8>) {
        s.write_all(head.as_bytes()).await.expect("send head");
        s.write_all(body).await.expect("send body");
        s.flush().await.expect("flush");
        // rustls reports a close without close_notify as an error after the data: keep what came.
        let _ = s.read_to_end(raw).await;
    }
    match via {
        Via::Plain => {
            exchange(tokio::net::TcpStream::connect(addr).await.expect("connect"), &head, body, &mut raw).await
        }
        Via::Tls { ca, stem } => {
            let s = tls_stream(addr, ca, *stem).await.expect("TLS handshake");
            exchange(Box::pin(s), &head, body, &mut raw).await
        }
    }
    parse(&raw)
}

fn parse(raw: &[u8]) -> Answer {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| panic!("no head in {raw:?}"));
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|c| c.parse().ok()).expect("status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked")) {
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n").expect("chunk size");
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16).expect("hex");
            rest = &rest[line_end + 2..];
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[..size]);
            rest = &rest[size + 2..];
        }
        body = out;
    }
    Answer { status, headers, body }
}

/// A gRPC-Web call's outcome: the response message (if any), grpc-status and grpc-message.
#[derive(Debug)]
struct Call {
    message: Option<Vec<u8>>,
    code: i32,
    text: String,
}

/// Frames `msg` as a gRPC-Web request, POSTs it to `/ax.v1.AdminService/<method>`, and reads the
/// answer's data frame and trailer frame.
async fn grpc_web(via: &Via, addr: SocketAddr, method: &str, msg: &impl prost::Message) -> Call {
    let bytes = msg.encode_to_vec();
    let mut body = vec![0u8];
    body.extend_from_slice(&u32::try_from(bytes.len()).expect("len").to_be_bytes());
    body.extend_from_slice(&bytes);
    let origin = match via {
        Via::Plain => format!("http://localhost:{}", addr.port()),
        Via::Tls { .. } => format!("https://localhost:{}", addr.port()),
    };
    let path = format!("/ax.v1.AdminService/{method}");
    let headers = [("content-type", "application/grpc-web+proto"), ("x-grpc-web", "1"), ("origin", origin.as_str())];
    let a = request(via, addr, "POST", &path, &headers, &body).await;
    assert_eq!(a.status, 200, "{method}: {a:?}");
    assert_eq!(a.header("x-content-type-options"), Some("nosniff"));
    let (mut message, mut code, mut text) = (None, None, String::new());
    // A trailers-only answer carries the status in the headers.
    if let Some(c) = a.header("grpc-status") {
        code = c.parse().ok();
        text = a.header("grpc-message").unwrap_or_default().to_owned();
    }
    let mut rest = &a.body[..];
    while rest.len() >= 5 {
        let len = u32::from_be_bytes(rest[1..5].try_into().expect("4 bytes")) as usize;
        let frame = &rest[5..5 + len];
        if rest[0] & 0x80 == 0 {
            message = Some(frame.to_vec());
        } else {
            for line in String::from_utf8_lossy(frame).split("\r\n") {
                match line.split_once(':') {
                    Some(("grpc-status", v)) => code = v.trim().parse().ok(),
                    Some(("grpc-message", v)) => text = v.trim().to_owned(),
                    _ => {}
                }
            }
        }
        rest = &rest[5 + len..];
    }
    // grpc-message is percent-encoded.
    let text = percent_decode(&text);
    Call { message, code: code.unwrap_or_else(|| panic!("{method}: no grpc-status in {a:?}")), text }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let hex = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn manual_task(name: &str) -> pb::CreateTaskRequest {
    pb::CreateTaskRequest {
        task: Some(pb::TaskSpec {
            name: name.into(),
            app: "demo".into(),
            handler: "echo".into(),
            schedule: Some(pb::Schedule { kind: Some(pb::schedule::Kind::Manual(pb::ManualSchedule {})) }),
            ..Default::default()
        }),
    }
}

struct Mtls {
    axd: Axd,
    console: SocketAddr,
    dir: std::path::PathBuf,
    _db: TestDb,
}

impl Mtls {
    fn via(&self, stem: Option<&'static str>) -> Via {
        Via::Tls { ca: Arc::from(self.dir.as_path()), stem }
    }

    /// Stops axd and removes the certificates.
    async fn finish(self) {
        self.axd.stop().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn mtls_console(test: &str) -> Mtls {
    let db = TestDb::create(ax_tests::Db::Sqlite).await.expect("sqlite");
    let dir = std::env::temp_dir().join(format!("ax-console-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ca = TestCa::create(&dir);
    ca.issue("admin-alice", "spiffe://ax/admin/alice");
    ca.issue("viewer-val", "spiffe://ax/viewer/val");
    ca.issue("worker-demo", "spiffe://ax/worker/demo");
    let axd = Axd::start(&db, |o| {
        o.tls_cert = Some(dir.join("server.pem"));
        o.tls_key = Some(dir.join("server.key"));
        o.tls_client_ca = Some(dir.join("ca.pem"));
        o.scope = Some(vec!["alice=*".into(), "val=*".into()]);
        o.console_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
    })
    .await;
    let console = axd.running.console_addr.expect("the console is served");
    Mtls { axd, console, dir, _db: db }
}

#[tokio::test]
async fn over_mtls_a_viewer_reads_and_is_refused_a_trigger_while_an_admin_acts() {
    let m = mtls_console("authz").await;
    let (admin, viewer) = (m.via(Some("admin-alice")), m.via(Some("viewer-val")));

    let created = grpc_web(&admin, m.console, "CreateTask", &manual_task("web-hello")).await;
    assert_eq!(created.code, 0, "{created:?}");
    let task = pb::CreateTaskResponse::decode(&created.message.expect("a response")[..]).expect("decode").task;
    assert_eq!(task.and_then(|t| t.spec).map(|s| s.name).as_deref(), Some("web-hello"));

    let listed = grpc_web(&viewer, m.console, "ListTasks", &pb::ListTasksRequest::default()).await;
    assert_eq!(listed.code, 0, "{listed:?}");
    let tasks = pb::ListTasksResponse::decode(&listed.message.expect("a response")[..]).expect("decode").tasks;
    assert_eq!(tasks.len(), 1, "the viewer sees the task");

    let trigger = pb::TriggerTaskRequest { name: "web-hello".into(), ..Default::default() };
    let refused = grpc_web(&viewer, m.console, "TriggerTask", &trigger).await;
    assert_eq!(refused.code, tonic::Code::PermissionDenied as i32, "{refused:?}");
    assert!(
        refused.text.contains("spiffe://ax/viewer/val has role viewer; this call needs role operator or higher"),
        "the same words as on the gRPC port: {refused:?}"
    );
    let worker = grpc_web(&m.via(Some("worker-demo")), m.console, "ListTasks", &pb::ListTasksRequest::default()).await;
    assert_eq!(worker.code, tonic::Code::PermissionDenied as i32, "a worker certificate: {worker:?}");

    let triggered = grpc_web(&admin, m.console, "TriggerTask", &trigger).await;
    assert_eq!(triggered.code, 0, "{triggered:?}");
    // The viewer's attempt is audited as denied, as on the gRPC port.
    let audit = grpc_web(&admin, m.console, "ListAuditEntries", &pb::ListAuditEntriesRequest::default()).await;
    let entries = pb::ListAuditEntriesResponse::decode(&audit.message.expect("audit")[..]).expect("decode").entries;
    assert!(
        entries.iter().any(|e| e.rpc == "TriggerTask" && e.outcome == "denied" && e.actor == "spiffe://ax/viewer/val"),
        "{entries:?}"
    );
    let instances = grpc_web(&viewer, m.console, "ListInstances", &pb::ListInstancesRequest::default()).await;
    let n = pb::ListInstancesResponse::decode(&instances.message.expect("list")[..]).expect("decode").instances.len();
    assert_eq!(n, 1, "one instance: the admin's trigger, none from the viewer");

    // Without a client certificate nothing is answered: the handshake fails (TLS 1.3 may let the
    // client finish first; the server's alert then ends the connection before any HTTP answer).
    if let Ok(mut s) = tls_stream(m.console, &m.dir, None).await {
        let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await;
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw).await;
        assert!(!raw.starts_with(b"HTTP/"), "served without a client certificate: {:?}", String::from_utf8_lossy(&raw));
    }
    m.finish().await;
}

#[tokio::test]
async fn requests_other_than_same_origin_grpc_web_posts_never_reach_the_api() {
    let m = mtls_console("guard").await;
    let admin = m.via(Some("admin-alice"));
    let path = "/ax.v1.AdminService/CreateTask";
    let body = {
        let bytes = manual_task("csrf").encode_to_vec();
        let mut b = vec![0u8];
        b.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        b.extend_from_slice(&bytes);
        b
    };
    let own = format!("https://localhost:{}", m.console.port());
    // (method, headers, the status that refuses it)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);
    let cases: Vec<Case<'_>> = vec![
        // What a cross-site form or a no-cors fetch can send.
        ("POST", vec![("content-type", "text/plain")], 415),
        ("POST", vec![("content-type", "application/x-www-form-urlencoded")], 415),
        ("POST", vec![("content-type", "multipart/form-data; boundary=x")], 415),
        ("POST", vec![], 415),
        // Plain gRPC and JSON belong to the gRPC port.
        ("POST", vec![("content-type", "application/grpc")], 415),
        ("POST", vec![("content-type", "application/json")], 415),
        // A CORS preflight never succeeds, and no other method is taken.
        ("OPTIONS", vec![("origin", "https://evil.example"), ("access-control-request-method", "POST")], 405),
        ("GET", vec![("content-type", "application/grpc-web+proto")], 405),
        ("PUT", vec![("content-type", "application/grpc-web+proto")], 405),
        // The right type from another origin, or a browser that says the request is cross-site.
        ("POST", vec![("content-type", "application/grpc-web+proto"), ("origin", "https://evil.example")], 403),
        ("POST", vec![("content-type", "application/grpc-web+proto"), ("origin", "null")], 403),
        (
            "POST",
            vec![("content-type", "application/grpc-web+proto"), ("origin", &own), ("sec-fetch-site", "cross-site")],
            403,
        ),
    ];
    for (method, headers, want) in &cases {
        let a = request(&admin, m.console, method, path, headers, &body).await;
        assert_eq!(a.status, *want, "{method} {headers:?}: {a:?}");
        assert!(a.header("grpc-status").is_none(), "answered before the API: {a:?}");
        assert!(a.header("access-control-allow-origin").is_none(), "no CORS: {a:?}");
        assert_eq!(a.header("x-content-type-options"), Some("nosniff"));
        if *want == 405 {
            assert_eq!(a.header("allow"), Some("POST"));
        }
    }
    // None of them created the task.
    let listed = grpc_web(&admin, m.console, "ListTasks", &pb::ListTasksRequest::default()).await;
    assert_eq!(listed.code, 0, "{listed:?}");
    let tasks = pb::ListTasksResponse::decode(&listed.message.expect("list")[..]).expect("decode").tasks;
    assert!(tasks.is_empty(), "a refused request reached the API: {tasks:?}");
    // The worker API is not on the console port.
    let a = request(
        &admin,
        m.console,
        "POST",
        "/ax.v1.WorkerService/Connect",
        &[("content-type", "application/grpc-web+proto")],
        b"",
    )
    .await;
    assert_eq!(a.status, 405, "{a:?}");
    m.finish().await;
}

#[tokio::test]
async fn the_page_is_served_read_only_with_its_security_headers() {
    let m = mtls_console("page").await;
    let via = m.via(Some("viewer-val"));
    let index = request(&via, m.console, "GET", "/", &[], b"").await;
    assert_eq!(index.status, 200, "{index:?}");
    assert_eq!(index.header("content-type"), Some("text/html; charset=utf-8"));
    let csp = index.header("content-security-policy").expect("CSP");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "form-action 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"), "{csp}");
    assert_eq!(index.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(index.header("x-frame-options"), Some("DENY"));
    assert_eq!(index.header("cache-control"), Some("no-cache"));
    let html = String::from_utf8(index.body.clone()).expect("utf-8");
    assert!(html.contains("<title>ax console</title>"), "{html}");
    // The page names its bundle; the bundle is served, cached for good, as JavaScript.
    let script = html.split("src=\"").nth(1).and_then(|r| r.split('"').next()).expect("a script").to_owned();
    assert!(script.starts_with("/assets/app-") && script.ends_with(".js"), "{script}");
    let js = request(&via, m.console, "GET", &script, &[], b"").await;
    assert_eq!(js.status, 200);
    assert_eq!(js.header("content-type"), Some("text/javascript; charset=utf-8"));
    assert_eq!(js.header("cache-control"), Some("public, max-age=31536000, immutable"));
    assert!(js.body.len() > 1000);
    // Page routes answer the page; a missing file is 404, not the page.
    let routed = request(&via, m.console, "GET", "/tasks/nightly.report", &[], b"").await;
    assert_eq!((routed.status, routed.body.len()), (200, index.body.len()));
    let head = request(&via, m.console, "HEAD", "/instances/42", &[], b"").await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), Some(index.body.len().to_string().as_str()));
    assert!(head.body.is_empty());
    assert_eq!(request(&via, m.console, "GET", "/assets/app-missing.js", &[], b"").await.status, 404);
    let post = request(&via, m.console, "POST", "/", &[("content-type", "text/plain")], b"x").await;
    assert_eq!((post.status, post.header("allow")), (405, Some("GET, HEAD")));
    m.finish().await;
}

#[tokio::test]
async fn on_loopback_without_tls_the_console_works_as_axctl_does_there() {
    let db = TestDb::create(ax_tests::Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |o| o.console_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)))).await;
    let console = axd.running.console_addr.expect("console");
    let created = grpc_web(&Via::Plain, console, "CreateTask", &manual_task("plain")).await;
    assert_eq!(created.code, 0, "anonymous on loopback may do everything: {created:?}");
    let page = request(&Via::Plain, console, "GET", "/workers", &[], b"").await;
    assert_eq!(page.status, 200);
    // DNS rebinding: the attacker's page is same-origin with itself, Host and Origin agree, and
    // only the name tells it apart. Refused (it answered 200, grpc-status 0, before).
    let port = console.port();
    let raw = format!(
        "POST /ax.v1.AdminService/ListTasks HTTP/1.1\r\nHost: rebind.evil:{port}\r\nOrigin: http://rebind.evil:{port}\r\n\
         Sec-Fetch-Site: same-origin\r\nContent-Type: application/grpc-web+proto\r\nConnection: close\r\n\
         Content-Length: 5\r\n\r\n"
    );
    let mut s = tokio::net::TcpStream::connect(console).await.expect("connect");
    s.write_all(raw.as_bytes()).await.expect("send");
    s.write_all(&[0u8; 5]).await.expect("send body");
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer).await;
    let rebound = parse(&answer);
    assert_eq!(rebound.status, 403, "{rebound:?}");
    assert!(rebound.header("grpc-status").is_none(), "the API was not reached: {rebound:?}");
    axd.stop().await;
}

/// Runs the real axd with `args` and returns its exit code and stderr.
async fn axd_fails(args: &[&str]) -> (Option<i32>, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(bin("axd")).args(args).kill_on_drop(true).output(),
    )
    .await
    .expect("axd exits")
    .expect("run axd");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn the_flag_is_refused_off_loopback_without_tls_on_a_taken_port_and_on_the_grpc_port() {
    let (code, err) = axd_fails(&["--console-listen", "0.0.0.0:7080"]).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("axd: console_listen: 0.0.0.0:7080 is not a loopback address"), "{err}");
    let (code, err) = axd_fails(&["--listen", "127.0.0.1:7399", "--console-listen", "127.0.0.1:7399"]).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("console_listen: 127.0.0.1:7399 is the address of listen (127.0.0.1:7399)"), "{err}");
    let (code, err) = axd_fails(&["--console-listen", "not-an-address"]).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--console-listen"), "{err}");
    // A port that is taken fails the start, naming the option.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let dir = std::env::temp_dir().join(format!("ax-console-flag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let url = format!("sqlite://{}", dir.join("ax.db").display());
    let addr = format!("127.0.0.1:{port}");
    let (code, err) = axd_fails(&["--database-url", &url, "--listen", "127.0.0.1:0", "--console-listen", &addr]).await;
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("console_listen {addr}: cannot listen")), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_cluster_page_gets_the_answering_axds_loops_and_clock_offset_and_instances_filter_by_trigger_time() {
    let db = TestDb::create(ax_tests::Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |o| {
        o.console_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
        o.health_stall_after = Some(ax_scheduler::config::HumanDuration(Duration::from_secs(3)));
    })
    .await;
    let console = axd.running.console_addr.expect("console");
    let id = axd.running.scheduler_id().to_owned();
    // Every loop makes a round within its first poll interval.
    let health = ax_tests::eventually(Duration::from_secs(10), "every loop has made a round", || async {
        let stats = grpc_web(&Via::Plain, console, "GetClusterStats", &pb::GetClusterStatsRequest {}).await;
        let h = pb::GetClusterStatsResponse::decode(&stats.message.expect("stats")[..]).expect("decode").answered_by?;
        h.loops.iter().all(|l| l.since_last_round.is_some_and(|d| d.seconds < 2)).then_some(h)
    })
    .await;
    assert_eq!(health.scheduler_id, id);
    assert!(health.serving);
    assert_eq!(
        health.loops.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        ["trigger", "dispatch", "sweeper", "heartbeat", "alerts"]
    );
    assert!(health.loops.iter().all(|l| !l.stalled), "{health:?}");
    assert_eq!(health.stall_after, Some(prost_types::Duration { seconds: 3, nanos: 0 }));
    // The test database's clock is this host's: the offset is the estimate's lag, milliseconds.
    let offset = health.clock_offset.expect("offset");
    assert!(offset.seconds.abs() < 1, "{offset:?}");

    // Instances by trigger time: a window is checked, and filters.
    let created = grpc_web(&Via::Plain, console, "CreateTask", &manual_task("windowed")).await;
    assert_eq!(created.code, 0, "{created:?}");
    let trigger = pb::TriggerTaskRequest { name: "windowed".into(), ..Default::default() };
    assert_eq!(grpc_web(&Via::Plain, console, "TriggerTask", &trigger).await.code, 0);
    let ts = |seconds: i64| Some(prost_types::Timestamp { seconds, nanos: 0 });
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("now").as_secs() as i64;
    let list = |start_time, end_time| pb::ListInstancesRequest { start_time, end_time, ..Default::default() };
    let count =
        |c: Call| pb::ListInstancesResponse::decode(&c.message.expect("list")[..]).expect("decode").instances.len();
    assert_eq!(count(grpc_web(&Via::Plain, console, "ListInstances", &list(ts(now - 60), ts(now + 60))).await), 1);
    assert_eq!(count(grpc_web(&Via::Plain, console, "ListInstances", &list(ts(now + 60), None)).await), 0);
    let bad = grpc_web(&Via::Plain, console, "ListInstances", &list(ts(now), ts(now - 1))).await;
    assert_eq!(bad.code, tonic::Code::InvalidArgument as i32);
    assert!(bad.text.contains("end_time: is before start_time"), "{bad:?}");
    axd.stop().await;
}
