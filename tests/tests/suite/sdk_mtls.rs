//! The Python and TypeScript SDKs over mTLS. Each SDK's conformance worker
//! (`sdks/python/examples/conformance_worker.py`, `sdks/typescript/examples/conformance-worker.ts`)
//! connects to an axd that requires client certificates: with the certificate `axctl certs init`
//! issued for its app it runs an instance (after failing over from an endpoint that answers
//! nothing); with the certificate of another app axd refuses its Hello and it runs nothing.
//!
//! Needs python3 with `sdks/python/requirements.txt` installed and the TypeScript SDK built
//! (`npm ci --prefix sdks/typescript && npm run build --prefix sdks/typescript`); `scripts/test.sh`
//! does both before the tests. Without them the test fails and says what is missing.

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
use ax_scheduler::config::Options;
use ax_tests::{
    Db, TestDb,
    axd::Axd,
    client::{create, manual, spec, trigger_with, wait_status},
    eventually,
    procs::axctl,
};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

const LONG: Duration = Duration::from_secs(30);

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

/// An SDK's conformance worker: the command that starts it.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    TypeScript,
}

impl Sdk {
    fn command(self) -> Command {
        let root = repo_root();
        match self {
            Sdk::Python => {
                let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
                let mut c = Command::new(python);
                c.arg(root.join("sdks/python/examples/conformance_worker.py"))
                    .env("PYTHONPATH", root.join("sdks/python"))
                    .env("PYTHONUNBUFFERED", "1");
                c
            }
            Sdk::TypeScript => {
                let script = root.join("sdks/typescript/dist/examples/conformance-worker.js");
                assert!(
                    script.exists(),
                    "{} is missing: build the TypeScript SDK first (npm ci --prefix sdks/typescript && \
                     npm run build --prefix sdks/typescript; scripts/test.sh does it)",
                    script.display()
                );
                let mut c = Command::new("node");
                c.arg(script);
                c
            }
        }
    }
}

/// A worker process this test started; killed (by its PID) on drop, its log printed on a panic.
struct WorkerProc {
    child: Child,
    log: PathBuf,
}

impl WorkerProc {
    fn start(sdk: Sdk, endpoint: &str, certs: &Path, cert: &str, log: PathBuf) -> WorkerProc {
        let out = File::create(&log).expect("worker log");
        let err = out.try_clone().expect("worker log");
        let child = sdk
            .command()
            .env("AX_ENDPOINT", endpoint)
            .env("AX_APP", "kit")
            .env("AX_WORKER_ID", format!("{sdk:?}-{cert}"))
            .env("AX_CAPACITY", "1")
            .env("AX_TLS_CA", certs.join("server-ca.pem"))
            .env("AX_TLS_CERT", certs.join(format!("{cert}.pem")))
            .env("AX_TLS_KEY", certs.join(format!("{cert}.key")))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start the {sdk:?} worker: {e}"));
        WorkerProc { child, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for WorkerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- worker log {}:\n{}", self.log.display(), self.log());
        }
    }
}

fn read(dir: &Path, f: &str) -> Vec<u8> {
    std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

async fn admin(addr: &str, certs: &Path) -> AdminServiceClient<Channel> {
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(read(certs, "server-ca.pem")))
        .domain_name("localhost")
        .identity(Identity::from_pem(read(certs, "admin-alice.pem"), read(certs, "admin-alice.key")));
    let ch = Endpoint::from_shared(format!("https://{addr}")).expect("url").tls_config(tls).expect("tls");
    AdminServiceClient::new(ch.connect().await.expect("admin channel"))
}

async fn sessions(admin: &mut AdminServiceClient<Channel>) -> Vec<pb::WorkerSession> {
    admin.list_workers(pb::ListWorkersRequest::default()).await.expect("list workers").into_inner().workers
}

async fn runs_over_mtls(sdk: Sdk) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let dir = std::env::temp_dir().join(format!("ax-sdk-mtls-{sdk:?}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = axctl(
        &[],
        &["certs", "init", dir.to_str().expect("utf8"), "--app", "kit", "--app", "other", "--admin", "alice"],
    )
    .await;
    assert_eq!(out.code, 0, "certs init: {}", out.stderr);
    let axd = Axd::start(&db, |o: &mut Options| {
        o.tls_cert = Some(dir.join("server.pem"));
        o.tls_key = Some(dir.join("server.key"));
        o.tls_client_ca = Some(dir.join("client-ca.pem"));
        o.scope = Some(vec!["alice=*".into()]);
    })
    .await;
    let port = axd.running.addr.port();
    // The server certificate names localhost.
    let endpoint = format!("https://localhost:{port}");
    let mut admin = admin(&axd.running.addr.to_string(), &dir).await;
    create(&mut admin, spec("echo", "kit", "echo", manual())).await;

    // Another app's certificate: axd refuses the Hello, nothing registers.
    let refused = WorkerProc::start(sdk, &endpoint, &dir, "worker-other", dir.join("other.log"));
    eventually(LONG, "the worker with another app's certificate to log axd's refusal", || {
        let log = refused.log();
        async move { (log.contains("hello.app") || log.contains("PERMISSION_DENIED")).then_some(()) }
    })
    .await;
    assert!(sessions(&mut admin).await.is_empty(), "a worker holding another app's certificate registered");
    drop(refused);

    // Its own app's certificate: it connects and runs the instance. The first endpoint it is given
    // answers nothing (a port just released), so it also has to fail over to the second.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let endpoints = format!("https://localhost:{dead},{endpoint}");
    let worker = WorkerProc::start(sdk, &endpoints, &dir, "worker-kit", dir.join("kit.log"));
    let id = trigger_with(&mut admin, "echo", "over-mtls", r#"{"over":"mtls"}"#).await;
    let done = wait_status(&mut admin, id, pb::InstanceStatus::Success, LONG).await;
    assert_eq!(done.output, r#"{"over":"mtls"}"#, "echo returns its params");
    let listed = sessions(&mut admin).await;
    assert!(
        listed.iter().any(|s| s.app == "kit" && s.worker_id == format!("{sdk:?}-worker-kit")),
        "the worker is listed: {listed:?}"
    );
    drop(worker);
    axd.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_runs_over_mtls_with_its_apps_certificate_only() {
    runs_over_mtls(Sdk::Python).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_runs_over_mtls_with_its_apps_certificate_only() {
    runs_over_mtls(Sdk::TypeScript).await;
}
