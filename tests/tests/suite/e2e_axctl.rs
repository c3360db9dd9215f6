//! End to end: the real axd binary on a temporary SQLite file, driven only through axctl -o json.

use std::time::Duration;

use ax_tests::procs::{AxdProcess, axctl};
use serde_json::Value;

struct Ctl {
    endpoint: String,
}

impl Ctl {
    async fn ok(&self, args: &[&str]) -> Value {
        let mut all = vec!["-o", "json"];
        all.extend_from_slice(args);
        axctl(&[("AX_ENDPOINT", &self.endpoint)], &all).await.json()
    }

    async fn fails(&self, args: &[&str], want: &[&str]) {
        let mut all = vec!["-o", "json"];
        all.extend_from_slice(args);
        let out = axctl(&[("AX_ENDPOINT", &self.endpoint)], &all).await;
        assert_ne!(out.code, 0, "{args:?} should fail; stdout: {}", out.stdout);
        assert!(out.stdout.trim().is_empty(), "errors go to stderr only: {}", out.stdout);
        for w in want {
            assert!(out.stderr.contains(w), "{args:?}: stderr should mention {w:?}: {}", out.stderr);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axd_binary_driven_by_axctl_json_from_create_to_delete() {
    let dir = std::env::temp_dir().join(format!("ax-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let db = format!("sqlite://{}", dir.join("ax.db").display());
    let mut axd = AxdProcess::start(&["--listen", "127.0.0.1:0", "--database-url", &db], &dir.join("axd.log")).await;
    let ctl = Ctl { endpoint: format!("http://{}", axd.addr) };

    // Create, with the preview in the task's zone and UTC.
    let created = ctl
        .ok(&[
            "task",
            "create",
            "nightly",
            "--app",
            "demo",
            "--handler",
            "echo",
            "--cron",
            "0 30 9 * * *",
            "--tz",
            "Europe/London",
            "--params",
            r#"{"report":"daily"}"#,
        ])
        .await;
    let task = &created["task"];
    assert_eq!(task["name"], "nightly");
    assert_eq!(task["schedule"]["kind"], "CRON");
    assert_eq!(task["schedule"]["dialect"], "UNIX");
    assert_eq!(task["schedule"]["time_zone"], "Europe/London");
    assert_eq!(task["params"]["report"], "daily");
    assert_eq!(task["enabled"], true);
    assert_eq!(task["misfire_policy"], "FIRE_ONCE");
    let fires = created["preview"]["fires"].as_array().expect("fires");
    assert_eq!(fires.len(), 5);
    for f in fires {
        let local = f["local_time"].as_str().expect("local");
        assert!(local.contains("T09:30:00"), "{local}");
    }
    assert_eq!(created["preview"]["fires_per_day"].as_f64().map(|f| f.round()), Some(1.0));

    // Preview flags the every-minute typo.
    let p = ctl.ok(&["schedule", "preview", "--cron", "* * * * *", "-n", "3"]).await;
    assert_eq!(p["preview"]["fires"].as_array().map(Vec::len), Some(3));
    assert!(p["preview"]["warnings"].to_string().contains("1440 times a day"), "{p}");

    // The same idempotency key twice: one instance.
    let t1 = ctl.ok(&["task", "trigger", "nightly", "--idempotency-key", "order-42", "--params", r#"{"n":1}"#]).await;
    let t2 = ctl.ok(&["task", "trigger", "nightly", "--idempotency-key", "order-42"]).await;
    assert_eq!(t1["created"], true);
    assert_eq!(t2["created"], false);
    assert_eq!(t1["instance"]["id"], t2["instance"]["id"]);
    assert_eq!(t1["instance"]["status"], "PENDING");
    assert_eq!(t1["instance"]["params"]["n"], 1);
    let id = t1["instance"]["id"].as_i64().expect("id").to_string();

    let list = ctl.ok(&["instance", "list", "--task", "nightly"]).await;
    assert_eq!(list["instances"].as_array().map(Vec::len), Some(1));
    let got = ctl.ok(&["instance", "get", &id]).await;
    let events = got["events"].as_array().expect("events");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["to_status"], "PENDING");
    assert_eq!(events[0]["from_status"], Value::Null);
    assert!(events[0]["reason"].as_str().unwrap_or("").contains("triggered by anonymous"));

    let disabled = ctl.ok(&["task", "disable", "nightly"]).await;
    assert_eq!(disabled["task"]["enabled"], false);
    assert_eq!(disabled["task"]["next_fire_time"], Value::Null);
    let got = ctl.ok(&["task", "get", "nightly"]).await;
    let kinds: Vec<&str> = got["events"].as_array().expect("ev").iter().filter_map(|e| e["kind"].as_str()).collect();
    assert_eq!(kinds, vec!["DISABLED", "CREATED"]);

    // Bad input: non-zero exit, the field named, nothing stored.
    ctl.fails(
        &["task", "create", "bad", "--app", "demo", "--handler", "h", "--cron", "0 25 * * *"],
        &["InvalidArgument", "task.schedule.cron.expression", "hours", "25"],
    )
    .await;
    ctl.fails(
        &["task", "create", "bad", "--app", "demo", "--handler", "h", "--cron", "* * * * *", "--tz", "Mars/Olympus"],
        &["task.schedule.cron.time_zone", "Mars/Olympus"],
    )
    .await;
    ctl.fails(
        &["task", "create", "bad", "--app", "demo", "--handler", "h", "--manual", "--params", "{oops"],
        &["task.params", "JSON"],
    )
    .await;
    ctl.fails(&["task", "create", "bad name", "--app", "demo", "--handler", "h", "--manual"], &["task.name"]).await;
    ctl.fails(&["task", "create", "bad", "--app", "Demo", "--handler", "h", "--manual"], &["task.app"]).await;
    ctl.fails(
        &["task", "create", "bad", "--app", "demo", "--handler", "h", "--every", "0s"],
        &["task.schedule.fixed_rate.interval"],
    )
    .await;
    ctl.fails(
        &["task", "create", "nightly", "--app", "demo", "--handler", "h", "--manual"],
        &["AlreadyExists", "nightly"],
    )
    .await;
    ctl.fails(&["task", "trigger", "nightly", "--idempotency-key", "fire:2026"], &["idempotency_key", "reserved"])
        .await;
    ctl.fails(&["instance", "get", "999999"], &["NotFound"]).await;
    let tasks = ctl.ok(&["task", "list"]).await;
    assert_eq!(tasks["tasks"].as_array().map(Vec::len), Some(1), "rejected calls stored nothing");

    let deleted = ctl.ok(&["task", "delete", "nightly"]).await;
    assert_eq!(deleted["canceled_instances"], 1);
    ctl.fails(&["task", "get", "nightly"], &["NotFound"]).await;
    let got = ctl.ok(&["instance", "get", &id]).await;
    assert_eq!(got["instance"]["status"], "CANCELED", "history outlives the task");

    // --dialect reaches axd: pasted from Quartz without `?`, 2 is Monday there (Tuesday in UNIX).
    let quartz = ctl
        .ok(&[
            "task",
            "create",
            "weekly",
            "--app",
            "demo",
            "--handler",
            "h",
            "--cron",
            "0 0 12 * * 2",
            "--dialect",
            "quartz",
        ])
        .await;
    assert_eq!(quartz["task"]["schedule"]["dialect"], "QUARTZ");
    for f in quartz["preview"]["fires"].as_array().expect("fires") {
        let at = f["time"].as_str().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok()).expect("time");
        assert_eq!(chrono::Datelike::weekday(&at), chrono::Weekday::Mon, "{f}");
    }

    // Routing and limits reach axd through axctl's flags, and the clearing forms clear.
    let routed = ctl
        .ok(&[
            "task",
            "create",
            "routed",
            "--app",
            "demo",
            "--handler",
            "h",
            "--manual",
            "--selector",
            "gpu==true, zone in (a,b)",
            "--retry-on",
            "same",
            "--shards",
            "4",
            "--priority",
            "7",
            "--max-running",
            "2",
            "--max-pending",
            "20",
            "--cooldown-after",
            "0",
            "--cooldown",
            "45s",
        ])
        .await;
    let t = &routed["task"];
    assert_eq!(t["selector"], "gpu=true,zone in (a,b)", "stored normalized: {t}");
    assert_eq!(
        (t["retry_on"].as_str(), t["shards"].as_u64(), t["priority"].as_u64()),
        (Some("SAME"), Some(4), Some(7))
    );
    assert_eq!((t["max_running"].as_u64(), t["max_pending"].as_u64()), (Some(2), Some(20)));
    assert_eq!((t["cooldown_after"].as_u64(), t["cooldown"].as_str()), (Some(0), Some("45s")));
    let cleared = ctl
        .ok(&[
            "task",
            "update",
            "routed",
            "--selector",
            "",
            "--shards",
            "0",
            "--max-running",
            "none",
            "--max-pending",
            "default",
            "--cooldown-after",
            "default",
        ])
        .await;
    let t = &cleared["task"];
    assert_eq!(t["selector"], "", "{t}");
    assert_eq!((t["shards"].as_u64(), t["max_pending"].as_u64()), (Some(0), Some(100)));
    assert!(t["max_running"].is_null() && t["cooldown_after"].is_null(), "{t}");
    assert_eq!(t["cooldown"], "45s", "a flag not given is left alone");
    ctl.fails(
        &["task", "create", "bad", "--app", "demo", "--handler", "h", "--manual", "--selector", "region"],
        &["InvalidArgument", "task.selector", "has no operator"],
    )
    .await;
    ctl.fails(
        &[
            "task",
            "create",
            "bad",
            "--app",
            "demo",
            "--handler",
            "h",
            "--manual",
            "--routing",
            "broadcast",
            "--shards",
            "2",
        ],
        &["task.shards", "BROADCAST"],
    )
    .await;
    let set = ctl.ok(&["rate-limit", "set", "demo", "--per-second", "2.5"]).await;
    assert_eq!(set["burst"], 3, "the burst defaults to the rate rounded up: {set}");
    let limits = ctl.ok(&["rate-limit", "list"]).await;
    assert_eq!(limits["limits"][0]["app"], "demo");
    ctl.ok(&["rate-limit", "delete", "demo"]).await;
    ctl.fails(&["rate-limit", "delete", "demo"], &["NotFound"]).await;
    ctl.ok(&["task", "delete", "routed"]).await;

    // Health and reflection.
    let channel =
        tonic::transport::Endpoint::from_shared(ctl.endpoint.clone()).expect("url").connect().await.expect("connect");
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    for service in ["", "ax.v1.AdminService", "ax.v1.WorkerService"] {
        let s = health
            .check(tonic_health::pb::HealthCheckRequest { service: service.into() })
            .await
            .expect("health")
            .into_inner()
            .status;
        assert_eq!(s, tonic_health::pb::health_check_response::ServingStatus::Serving as i32, "{service:?}");
    }
    let services = list_services(channel).await;
    for want in ["ax.v1.AdminService", "ax.v1.WorkerService", "grpc.health.v1.Health"] {
        assert!(services.iter().any(|s| s == want), "reflection lists {want}: {services:?}");
    }

    let status = axd.terminate().await;
    assert!(status.success(), "axd exits cleanly on SIGTERM: {status:?}");
    let _ = std::fs::remove_dir_all(dir);
}

async fn list_services(channel: tonic::transport::Channel) -> Vec<String> {
    use tonic_reflection::pb::v1::{
        ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let mut client = ServerReflectionClient::new(channel);
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut stream =
        client.server_reflection_info(tokio_stream::iter(vec![req])).await.expect("reflection").into_inner();
    let resp = tokio::time::timeout(Duration::from_secs(10), stream.message())
        .await
        .expect("answer")
        .expect("ok")
        .expect("one");
    match resp.message_response {
        Some(MessageResponse::ListServicesResponse(l)) => l.service.into_iter().map(|s| s.name).collect(),
        other => panic!("unexpected reflection answer {other:?}"),
    }
}
