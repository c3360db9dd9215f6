//! Limits enforced before authentication (connection cap, TLS handshake timeout, idle connections,
//! unary call timeout) and gRPC reflection in both versions.

use std::{path::Path, time::Duration};

use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
use ax_scheduler::config::{HumanDuration, Options};
use ax_tests::{
    Db, TestDb,
    axd::{Axd, channel},
    client::{RawWorker, hello},
    procs::{AxdProcess, axctl},
};
use tokio::{io::AsyncReadExt as _, net::TcpStream};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

fn ms(n: u64) -> Option<HumanDuration> {
    Some(HumanDuration(Duration::from_millis(n)))
}

/// Waits until axd closes `conn` (a read returns end of file or an error), within `deadline`;
/// how long it took.
async fn closed_within(conn: &mut TcpStream, deadline: Duration) -> Result<Duration, String> {
    let start = tokio::time::Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(start + deadline, conn.read(&mut buf)).await {
            Err(_) => return Err(format!("still open after {deadline:?}")),
            Ok(Ok(0) | Err(_)) => return Ok(start.elapsed()),
            // axd's HTTP/2 preface (plaintext) or TLS bytes: keep reading.
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_v1alpha_lists_the_services_as_v1_does() {
    use tonic_reflection::pb::v1alpha::{
        ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |_| {}).await;
    let mut client = ServerReflectionClient::new(channel(&axd.endpoint).await);
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut stream = client
        .server_reflection_info(tokio_stream::iter(vec![req]))
        .await
        .expect("v1alpha reflection is served")
        .into_inner();
    let resp = tokio::time::timeout(Duration::from_secs(10), stream.message())
        .await
        .expect("an answer within 10 s")
        .expect("ok")
        .expect("one message");
    let services: Vec<String> = match resp.message_response {
        Some(MessageResponse::ListServicesResponse(l)) => l.service.into_iter().map(|s| s.name).collect(),
        other => panic!("unexpected reflection answer {other:?}"),
    };
    for want in ["ax.v1.AdminService", "ax.v1.WorkerService", "grpc.health.v1.Health"] {
        assert!(services.iter().any(|s| s == want), "v1alpha lists {want}: {services:?}");
    }
    axd.stop().await;
    db.cleanup().await;
}

/// The console's port and the gRPC port share one budget of connections (issue 33): idle
/// connections to the console cannot hold what the gRPC port needs, for at the cap the connection
/// idle longest makes room, whichever port it came to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_and_grpc_ports_share_one_connection_budget() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |o: &mut Options| {
        o.max_connections = Some(4);
        o.console_listen = Some("127.0.0.1:0".parse().expect("addr"));
        o.idle_connection_timeout = Some(HumanDuration(Duration::from_secs(3600)));
    })
    .await;
    let console = axd.running.console_addr.expect("console served");
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(console).await.expect("connect to the console"));
    }
    ax_tests::eventually(Duration::from_secs(5), "the four console connections to be counted", || {
        let open = axd.running.connections.open();
        async move { (open == 4).then_some(()) }
    })
    .await;
    // A fifth connection, to the gRPC port: the budget is full, so an idle console connection goes.
    let mut admin = axd.admin().await;
    admin.list_tasks(pb::ListTasksRequest::default()).await.expect("a call on the gRPC port");
    let mut closed = 0;
    for conn in &mut idle {
        if closed_within(conn, Duration::from_millis(500)).await.is_ok() {
            closed += 1;
        }
    }
    assert_eq!(closed, 1, "one idle console connection made room for the gRPC client");
    assert!(axd.running.connections.open() <= 4, "never more than the budget");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_a_worker_stream_keeps_its_own() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |o: &mut Options| o.idle_connection_timeout = ms(300)).await;

    // A connection that never says anything, and one that made a call and then went quiet.
    let mut silent = TcpStream::connect(axd.running.addr).await.expect("connect");
    let took = closed_within(&mut silent, Duration::from_secs(5)).await.expect("a silent connection is closed");
    assert!(took >= Duration::from_millis(250), "not before the idle timeout: {took:?}");
    let mut admin = axd.admin().await;
    admin.list_tasks(pb::ListTasksRequest::default()).await.expect("a call");
    ax_tests::eventually(Duration::from_secs(5), "the idle admin connection to be closed", || {
        let open = axd.running.connections.open();
        async move { (open == 0).then_some(()) }
    })
    .await;
    // The channel reconnects by itself (a call racing the close may fail once, as UNAVAILABLE).
    ax_tests::eventually(Duration::from_secs(5), "a call after the connection was closed", || {
        let mut admin = admin.clone();
        async move {
            match admin.list_tasks(pb::ListTasksRequest::default()).await {
                Ok(_) => Some(()),
                Err(e) if e.code() == tonic::Code::Unavailable || e.code() == tonic::Code::Unknown => None,
                Err(e) => panic!("{e:?}"),
            }
        }
    })
    .await;

    // A Connect stream is a call: its connection stays open past the idle timeout, however long
    // the worker only heartbeats.
    let (mut worker, _) = RawWorker::connect(channel(&axd.endpoint).await, hello("demo", "w1", "h", 1, 0))
        .await
        .expect("worker connects");
    let until = tokio::time::Instant::now() + Duration::from_millis(1500);
    let mut heard = 0;
    while tokio::time::Instant::now() < until {
        tokio::select! {
            m = worker.rx.message() => {
                m.unwrap_or_else(|e| panic!("the stream ended: {e:?}")).expect("the stream ended");
                heard += 1;
            }
            () = tokio::time::sleep(Duration::from_millis(100)) => {
                worker.send(pb::worker_message::Msg::Heartbeat(pb::Heartbeat { running: 0, seq: 0 })).await;
            }
        }
    }
    assert!(heard >= 3, "axd kept heartbeating on the stream: {heard}");
    assert_eq!(axd.running.connections.open(), 1, "the worker's connection is still open");
    axd.stop().await;
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unary_call_is_cut_at_the_request_timeout() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |o: &mut Options| o.request_timeout = ms(2000)).await;
    let mut admin = axd.admin().await;
    // Hold SQLite's write lock: axd's writes wait for it (up to its 10 s busy timeout).
    use sqlx::Connection as _;
    let mut lock = sqlx::SqliteConnection::connect(&db.url).await.expect("connect");
    sqlx::query("BEGIN EXCLUSIVE").execute(&mut lock).await.expect("lock");
    let start = tokio::time::Instant::now();
    let spec = ax_tests::client::spec("t", "demo", "h", ax_tests::client::manual());
    let err = admin.create_task(pb::CreateTaskRequest { task: Some(spec) }).await.expect_err("cut short");
    let took = start.elapsed();
    assert_eq!(err.code(), tonic::Code::Cancelled, "{err:?}");
    assert!(took < Duration::from_secs(6), "cut at about 2 s, not after the database gave up: {took:?}");
    sqlx::query("ROLLBACK").execute(&mut lock).await.expect("unlock");
    drop(lock);
    axd.stop().await;
    db.cleanup().await;
}

async fn certs(dir: &Path) {
    let out = axctl(&[], &["certs", "init", dir.to_str().expect("utf8"), "--app", "demo", "--admin", "alice"]).await;
    assert_eq!(out.code, 0, "certs init: {}", out.stderr);
}

async fn tls_channel(addr: &str, dir: &Path, who: &str) -> Result<Channel, tonic::transport::Error> {
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(read("server-ca.pem")))
        .domain_name("localhost")
        .identity(Identity::from_pem(read(&format!("{who}.pem")), read(&format!("{who}.key"))));
    Endpoint::from_shared(format!("https://{addr}"))
        .expect("url")
        .tls_config(tls)
        .expect("tls")
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(5))
        .connect()
        .await
}

/// The scenario: with `nofile` 256, 400 TCP connections that never start their TLS
/// handshake. axd lowers its connection cap to what the limit leaves, closes the idle ones to make
/// room, and an authenticated client's health check and admin calls go through; a connection that
/// does not finish its handshake is closed after --tls-handshake-timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_handshakes_beyond_the_cap_do_not_keep_out_an_authenticated_client() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = std::env::temp_dir().join(format!("ax-transport-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    certs(&dir).await;
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let p = |f: &str| dir.join(f).to_str().expect("utf8").to_owned();
    let (cert, key, ca) = (p("server.pem"), p("server.key"), p("client-ca.pem"));
    let log = dir.join("axd.log");
    let mut axd = AxdProcess::start_with_nofile(
        &[
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            &db.url,
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--tls-client-ca",
            &ca,
            "--tls-handshake-timeout",
            "60s",
            "--idle-connection-timeout",
            "1h",
        ],
        256,
        &log,
    )
    .await;
    let addr = axd.addr.to_string();
    let mut health =
        tonic_health::pb::health_client::HealthClient::new(tls_channel(&addr, &dir, "admin-alice").await.expect("ch"));
    health.check(tonic_health::pb::HealthCheckRequest { service: String::new() }).await.expect("health before");

    // Opened all at once: without room made at the cap, connections past the file-descriptor limit
    // wait in the listen queue (and their connect may not even complete).
    let mut opening = tokio::task::JoinSet::new();
    for _ in 0..400 {
        let to = axd.addr;
        opening.spawn(async move { tokio::time::timeout(Duration::from_secs(20), TcpStream::connect(to)).await });
    }
    let mut idle = Vec::new();
    while idle.len() < 300 {
        tokio::select! {
            Some(done) = opening.join_next() => {
                if let Ok(Ok(Ok(s))) = done {
                    idle.push(s);
                }
            }
            () = tokio::time::sleep(Duration::from_secs(2)) => break,
        }
    }
    for round in 0..3 {
        // Well within the 60 s handshake timeout: the room is made by the cap, not by the timeout.
        let ch = tokio::time::timeout(Duration::from_secs(15), tls_channel(&addr, &dir, "admin-alice"))
            .await
            .unwrap_or_else(|_| panic!("round {round}: an authenticated client could not connect within 15 s"))
            .unwrap_or_else(|e| panic!("round {round}: an authenticated client connects past 400 idle sockets: {e:?}"));
        let mut health = tonic_health::pb::health_client::HealthClient::new(ch.clone());
        let s = tokio::time::timeout(
            Duration::from_secs(15),
            health.check(tonic_health::pb::HealthCheckRequest { service: String::new() }),
        )
        .await
        .unwrap_or_else(|_| panic!("round {round}: no health answer within 15 s"))
        .unwrap_or_else(|e| panic!("round {round}: health: {e:?}"))
        .into_inner();
        assert_eq!(s.status, tonic_health::pb::health_check_response::ServingStatus::Serving as i32);
        AdminServiceClient::new(ch)
            .list_tasks(pb::ListTasksRequest::default())
            .await
            .unwrap_or_else(|e| panic!("round {round}: admin call: {e:?}"));
    }
    while let Some(done) = opening.join_next().await {
        if let Ok(Ok(Ok(s))) = done {
            idle.push(s);
        }
    }
    assert_eq!(idle.len(), 400, "every raw connection was accepted (most were then closed at the cap)");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(text.contains("lowered"), "the cap was lowered to fit nofile 256: {text}");
    assert!(text.contains("--max-connections reached"), "the cap was reached: {text}");
    assert_eq!(text.matches("the connections idle longest are closed").count(), 1, "the cap is logged once: {text}");
    drop(idle);
    axd.terminate().await;

    // The handshake timeout: a connection that never sends its ClientHello is closed.
    let mut axd = AxdProcess::start(
        &[
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            &db.url,
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--tls-client-ca",
            &ca,
            "--tls-handshake-timeout",
            "500ms",
            "--idle-connection-timeout",
            "1h",
        ],
        &log,
    )
    .await;
    let mut silent = TcpStream::connect(axd.addr).await.expect("raw connect");
    let took = closed_within(&mut silent, Duration::from_secs(5)).await.expect("closed at the handshake timeout");
    assert!(took >= Duration::from_millis(400), "{took:?}");
    axd.terminate().await;
    let _ = std::fs::remove_dir_all(&dir);
    db.cleanup().await;
}
