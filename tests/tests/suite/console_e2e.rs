//! The web console end to end in a real browser: `console/e2e/console.test.mjs` (playwright-core
//! driving Debian's Chromium) against the real axd binary with mTLS and `--console-listen`, on
//! SQLite, with the demo worker serving app `demo`. Certificates come from the real `axctl certs
//! init`, so the admin's browser presents the PKCS#12 bundle it wrote. Screenshots of every page
//! land in `target/console-e2e/`.
//!
//! Needs node, `console/node_modules` (`npm ci --prefix console`) and Chromium
//! (`scripts/ensure-chromium.sh`); `scripts/test.sh` provides all three. Without them the test
//! fails and says how to get them; outside CI, `AX_SKIP_BROWSER_TESTS=1` turns that into a skip.
//! `AX_CHROMIUM` names another browser than `/usr/bin/chromium`.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use ax_tests::procs::{AxdProcess, bin, target_dir};

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

fn chromium() -> PathBuf {
    std::env::var_os("AX_CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from)
}

/// Whether node, the console's packages and the browser are there; fails the test (or skips it,
/// when allowed) saying how to get what is missing.
fn browser_ready() -> bool {
    let mut missing = Vec::new();
    if !std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()) {
        missing.push("node (./scripts/ensure-node.sh)".to_owned());
    }
    if !repo_root().join("console/node_modules/playwright-core").is_dir() {
        missing.push("console/node_modules (npm ci --prefix console)".to_owned());
    }
    if !chromium().exists() {
        missing.push(format!("{} (./scripts/ensure-chromium.sh)", chromium().display()));
    }
    if missing.is_empty() {
        return true;
    }
    let may_skip = std::env::var("CI").map(|v| v != "true" && v != "1").unwrap_or(true)
        && std::env::var("AX_SKIP_BROWSER_TESTS").is_ok_and(|v| v == "1");
    if may_skip {
        ax_tests::skip(&format!("the console's browser test needs {} and AX_SKIP_BROWSER_TESTS=1", missing.join(", ")));
        return false;
    }
    panic!(
        "the console's browser test needs {}; ./scripts/test.sh installs them. Outside CI, AX_SKIP_BROWSER_TESTS=1 skips it",
        missing.join(", ")
    );
}

/// Runs a command to its end and returns its stdout, failing the test with its output otherwise.
fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_works_in_chromium_for_an_admin_a_viewer_and_the_keyboard() {
    if !browser_ready() {
        return;
    }
    let work = std::env::temp_dir().join(format!("ax-console-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work dir");
    let certs = work.join("certs");
    let certs_s = certs.display().to_string();
    run(std::process::Command::new(bin("axctl"))
        .args(["certs", "init", &certs_s, "--app", "demo", "--admin", "alice", "--viewer", "val"]));
    let file = |f: &str| certs.join(f).display().to_string();
    let url = format!("sqlite://{}", work.join("ax.db").display());
    let args = [
        "--database-url",
        &url,
        "--listen",
        "127.0.0.1:0",
        "--console-listen",
        "127.0.0.1:0",
        "--tls-cert",
        &file("server.pem"),
        "--tls-key",
        &file("server.key"),
        "--tls-client-ca",
        &file("client-ca.pem"),
        "--scope",
        "alice=*",
        "--scope",
        "val=*",
        "--heartbeat-interval",
        "500ms",
        "--poll-interval",
        "200ms",
        "--shutdown-timeout",
        "3s",
    ];
    let mut axd = AxdProcess::start(&args, &work.join("axd.log")).await;
    let console = axd.console.expect("axd printed where the console is");
    let grpc = format!("https://localhost:{}", axd.addr.port());
    let _worker = tokio::process::Command::new(bin("demo-worker"))
        .args(["--endpoint", &grpc, "--app", "demo", "--worker-id", "e2e-worker", "--capacity", "4"])
        .args(["--ca", &file("server-ca.pem"), "--cert", &file("worker-demo.pem"), "--key", &file("worker-demo.key")])
        .env("AX_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(work.join("worker.log")).expect("worker log"))
        .kill_on_drop(true)
        .spawn()
        .expect("start demo-worker");
    // A cron task in a zone of its own, so the pages show fires in two zones and instances come by
    // themselves; created with axctl over the gRPC port, beside the console.
    // Each success of it chains to hello-next (a run for the run page); a calendar, a rate limit
    // and an alert rule give their pages something to show.
    let axctl = |args: &[&str]| {
        run(std::process::Command::new(bin("axctl"))
            .args(args)
            .env("AX_ENDPOINT", &grpc)
            .env("AX_CA", file("server-ca.pem"))
            .env("AX_CERT", file("admin-alice.pem"))
            .env("AX_KEY", file("admin-alice.key")))
    };
    axctl(&["task", "create", "hello-next", "--app", "demo", "--handler", "echo", "--manual"]);
    axctl(&[
        "task",
        "create",
        "hello",
        "--app",
        "demo",
        "--handler",
        "echo",
        "--cron",
        "*/5 * * * * *",
        "--tz",
        "Asia/Tokyo",
        "--params",
        r#"{"greeting":"hi"}"#,
        "--on-success",
        "hello-next",
    ]);
    axctl(&["calendar", "create", "holidays", "--dates", "2026-12-25,2027-01-01", "--description", "closed"]);
    axctl(&["rate-limit", "set", "demo", "--per-second", "50", "--burst", "10"]);
    axctl(&[
        "alert",
        "create",
        "demo-failures",
        "--app",
        "demo",
        "--event",
        "final_failure",
        "--url",
        "https://hooks.example.com/ax",
        "--secret",
        "0123456789abcdef",
    ]);

    let out = target_dir().parent().map_or_else(|| target_dir().join("console-e2e"), |t| t.join("console-e2e"));
    let _ = std::fs::remove_dir_all(&out);
    let started = std::time::Instant::now();
    let node = tokio::process::Command::new("node")
        .args(["--test", "--test-concurrency=1", "e2e/"])
        .current_dir(repo_root().join("console"))
        .env("AX_CONSOLE_URL", format!("https://localhost:{}", console.port()))
        .env("AX_CERTS", &certs)
        .env("AX_E2E_OUT", &out)
        .env("AX_CHROMIUM", chromium())
        // The browser's connections go through playwright, which verifies axd's certificate
        // against this CA (nothing is ignored).
        .env("NODE_EXTRA_CA_CERTS", certs.join("server-ca.pem"))
        .kill_on_drop(true)
        .output();
    let result = tokio::time::timeout(Duration::from_secs(240), node)
        .await
        .unwrap_or_else(|_| {
            panic!("the browser test did not finish within 4 minutes; axd log: {}", work.join("axd.log").display())
        })
        .expect("run node --test");
    let report = format!("{}{}", String::from_utf8_lossy(&result.stdout), String::from_utf8_lossy(&result.stderr));
    assert!(
        result.status.success(),
        "the browser test failed after {:?}:\n{report}\naxd log: {}",
        started.elapsed(),
        std::fs::read_to_string(work.join("axd.log")).unwrap_or_default()
    );
    assert!(report.contains("# fail 0"), "{report}");
    for page in [
        "tasks",
        "task-detail",
        "task-form",
        "instances",
        "instance-detail",
        "workers",
        "cluster",
        "run",
        "alerts",
        "calendars",
        "limits",
        "audit",
        "instances-bulk",
        "phone-tasks",
    ] {
        assert!(out.join(format!("{page}.png")).is_file(), "no screenshot of {page} in {}", out.display());
    }
    eprintln!("console e2e: {:?} in the browser; screenshots in {}", started.elapsed(), out.display());
    axd.terminate().await;
    let _ = std::fs::remove_dir_all(&work);
}
