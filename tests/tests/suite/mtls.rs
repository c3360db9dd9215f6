//! mTLS: a certificate's identity decides what its holder may do (deny by default).

use std::{path::Path, time::Duration};

use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
use ax_scheduler::config::Options;
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{RawWorker, hello},
    procs::axctl,
};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

async fn certs(dir: &Path) {
    let out = axctl(
        &[],
        &[
            "certs",
            "init",
            dir.to_str().expect("utf8"),
            "--app",
            "billing",
            "--app",
            "reports",
            "--admin",
            "alice",
            "--viewer",
            "val",
        ],
    )
    .await;
    assert_eq!(out.code, 0, "certs init: {}", out.stderr);
}

fn read(dir: &Path, f: &str) -> Vec<u8> {
    std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

async fn tls_channel(addr: &str, ca: &Path, who: Option<&str>) -> Result<Channel, tonic::transport::Error> {
    let mut tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(read(ca, "server-ca.pem")))
        .domain_name("localhost");
    if let Some(who) = who {
        tls = tls.identity(Identity::from_pem(read(ca, &format!("{who}.pem")), read(ca, &format!("{who}.key"))));
    }
    Endpoint::from_shared(format!("https://{addr}")).expect("url").tls_config(tls).expect("tls").connect().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_identities_decide_what_each_caller_may_do() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let dir = std::env::temp_dir().join(format!("ax-mtls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    certs(&dir).await;
    let other = dir.join("other-ca");
    certs(&other).await;
    let axd = Axd::start(&db, |o: &mut Options| {
        o.tls_cert = Some(dir.join("server.pem"));
        o.tls_key = Some(dir.join("server.key"));
        o.tls_client_ca = Some(dir.join("client-ca.pem"));
        o.scope = Some(vec!["alice=*".into(), "val=*".into()]);
    })
    .await;
    let addr = axd.running.addr.to_string();

    // The admin creates a task; the viewer reads but cannot write; a worker cert gets no admin API.
    let mut admin = AdminServiceClient::new(tls_channel(&addr, &dir, Some("admin-alice")).await.expect("admin"));
    let spec = pb::TaskSpec {
        name: "t".into(),
        app: "billing".into(),
        handler: "h".into(),
        schedule: Some(pb::Schedule { kind: Some(pb::schedule::Kind::Manual(pb::ManualSchedule {})) }),
        ..Default::default()
    };
    admin.create_task(pb::CreateTaskRequest { task: Some(spec.clone()) }).await.expect("admin may create");
    let ev = admin.get_task(pb::GetTaskRequest { name: "t".into() }).await.expect("get").into_inner().events;
    assert_eq!(ev[0].actor, "spiffe://ax/admin/alice", "the trail names the caller");
    let mut viewer = AdminServiceClient::new(tls_channel(&addr, &dir, Some("viewer-val")).await.expect("viewer"));
    viewer.list_tasks(pb::ListTasksRequest::default()).await.expect("viewer may read");
    let denied = viewer
        .trigger_task(pb::TriggerTaskRequest { name: "t".into(), ..Default::default() })
        .await
        .expect_err("viewer write");
    assert_eq!(denied.code(), tonic::Code::PermissionDenied);
    let mut as_worker = AdminServiceClient::new(tls_channel(&addr, &dir, Some("worker-billing")).await.expect("w"));
    let denied = as_worker.list_tasks(pb::ListTasksRequest::default()).await.expect_err("worker on admin API");
    assert_eq!(denied.code(), tonic::Code::PermissionDenied);

    // A worker may only register for the app of its certificate.
    let ch = tls_channel(&addr, &dir, Some("worker-billing")).await.expect("worker channel");
    RawWorker::connect(ch.clone(), hello("billing", "w1", "h", 1, 1)).await.expect("own app accepted");
    let Err(refused) = RawWorker::connect(ch, hello("reports", "w1", "h", 1, 1)).await else {
        panic!("other app accepted")
    };
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    assert!(refused.message().contains("hello.app"), "{}", refused.message());
    let admin_ch = tls_channel(&addr, &dir, Some("admin-alice")).await.expect("admin channel");
    let Err(refused) = RawWorker::connect(admin_ch, hello("billing", "w1", "h", 1, 1)).await else {
        panic!("admin as worker")
    };
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);

    // No client certificate, or one from another CA: nothing at all.
    let none = match tls_channel(&addr, &dir, None).await {
        Err(_) => true,
        Ok(ch) => AdminServiceClient::new(ch).list_tasks(pb::ListTasksRequest::default()).await.is_err(),
    };
    assert!(none, "a client without a certificate is refused");
    let mut foreign_tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(read(&dir, "server-ca.pem")))
        .domain_name("localhost");
    foreign_tls =
        foreign_tls.identity(Identity::from_pem(read(&other, "admin-alice.pem"), read(&other, "admin-alice.key")));
    let foreign = match Endpoint::from_shared(format!("https://{addr}"))
        .expect("url")
        .tls_config(foreign_tls)
        .expect("tls")
        .connect()
        .await
    {
        Err(_) => true,
        Ok(ch) => AdminServiceClient::new(ch).list_tasks(pb::ListTasksRequest::default()).await.is_err(),
    };
    assert!(foreign, "a certificate signed by another CA is refused");

    // Health answers recognised identities.
    let mut health = tonic_health::pb::health_client::HealthClient::new(
        tls_channel(&addr, &dir, Some("viewer-val")).await.expect("ch"),
    );
    let s = health
        .check(tonic_health::pb::HealthCheckRequest { service: String::new() })
        .await
        .expect("health")
        .into_inner();
    assert_eq!(s.status, tonic_health::pb::health_check_response::ServingStatus::Serving as i32);

    // axctl speaks mTLS too.
    let ca = dir.join("server-ca.pem");
    let cert = dir.join("admin-alice.pem");
    let key = dir.join("admin-alice.key");
    let endpoint = format!("https://localhost:{}", axd.running.addr.port());
    let out = axctl(
        &[
            ("AX_ENDPOINT", &endpoint),
            ("AX_CA", ca.to_str().expect("utf8")),
            ("AX_CERT", cert.to_str().expect("utf8")),
            ("AX_KEY", key.to_str().expect("utf8")),
        ],
        &["-o", "json", "task", "list"],
    )
    .await;
    assert_eq!(out.json()["tasks"][0]["name"], "t");

    tokio::time::timeout(Duration::from_secs(10), axd.stop()).await.expect("stops");
    let _ = std::fs::remove_dir_all(&dir);
    db.cleanup().await;
}
