//! `axd --log-format json`: every line axd writes on stderr is one JSON object, and the lines about
//! an instance carry its identity as fields (instance_id, attempt, task, app, worker) with the
//! right values; a bad format is refused naming the flag or the file key.

use std::time::Duration;

use ax_proto::v1::{InstanceStatus as S, admin_service_client::AdminServiceClient};
use ax_tests::{
    axd::channel,
    client::{create, manual, spec, trigger, wait_status},
    procs::{AxdProcess, bin},
};
use ax_worker::{Context, HandlerError, Worker};
use serde_json::Value;

/// The keys of a JSON object in the order written, repeats included (a `Value` would keep only
/// the last of two equal keys, hiding a field that overwrites `target` or `message`).
struct Keys(Vec<String>);

impl<'de> serde::Deserialize<'de> for Keys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some((k, _)) = map.next_entry::<String, serde::de::IgnoredAny>()? {
                    keys.push(k);
                }
                Ok(Keys(keys))
            }
        }
        d.deserialize_map(Visit)
    }
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d =
        std::env::temp_dir().join(format!("ax-{tag}-{}-{}", std::process::id(), chrono::Utc::now().timestamp_micros()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_per_line_with_the_instance_fields() {
    let dir = tempdir("json-logs");
    let db = format!("sqlite://{}", dir.join("ax.db").display());
    let log = dir.join("axd.log");
    let mut axd = AxdProcess::start(
        &[
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            &db,
            "--log-format",
            "json",
            "--log",
            "info,ax_scheduler=debug",
            "--poll-interval",
            "200ms",
        ],
        &log,
    )
    .await;
    let endpoint = format!("http://{}", axd.addr);
    let mut admin = AdminServiceClient::new(channel(&endpoint).await);
    let worker = Worker::builder()
        .endpoint(&endpoint)
        .app("jsonapp")
        .worker_id("json-w1")
        .shutdown_deadline(Duration::from_secs(2))
        .handler("echo", |_ctx: Context| async move { Ok::<_, HandlerError>("ok") })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    // CreateTask and TriggerTask are audited: their lines carry a field that once collided with `target`.
    create(&mut admin, spec("json-task", "jsonapp", "echo", manual())).await;
    let id = trigger(&mut admin, "json-task", "json-1").await;
    wait_status(&mut admin, id, S::Success, Duration::from_secs(20)).await;
    let _ = stop.send(());
    let _ = worker.await;
    // Stopped, so everything it logged is in the file.
    assert!(axd.terminate().await.success());

    let text = std::fs::read_to_string(&log).expect("log");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect();
    assert!(lines.len() > 5, "{text}");
    for raw in text.lines() {
        let Keys(mut keys) = serde_json::from_str(raw).expect("an object");
        keys.sort();
        let before = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), before, "a key appears twice: {raw}");
    }
    for line in &lines {
        assert!(line.is_object(), "{line}");
        for key in ["timestamp", "level", "target", "message"] {
            assert!(line[key].is_string(), "no {key}: {line}");
        }
    }
    assert!(
        lines.iter().any(|l| l["message"] == "admin call audited" && l["audit_target"] == "task/json-task"),
        "{text}"
    );
    // The worker's connection names its worker and app.
    assert!(
        lines.iter().any(|l| l["message"] == "worker connected" && l["worker"] == "json-w1" && l["app"] == "jsonapp"),
        "{text}"
    );
    // One line per step of the instance, each with its identity as fields.
    let about: Vec<&Value> = lines.iter().filter(|l| l["instance_id"] == id).collect();
    let steps: Vec<&str> = about.iter().map(|l| l["message"].as_str().expect("message")).collect();
    assert_eq!(
        steps,
        [
            "instance - -> PENDING",
            "instance PENDING -> DISPATCHED",
            "instance DISPATCHED -> RUNNING",
            "instance RUNNING -> SUCCESS"
        ],
        "{text}"
    );
    for (line, attempt) in about.iter().zip([0, 1, 1, 1]) {
        assert_eq!(line["attempt"], attempt, "{line}");
        assert_eq!(line["task"], "json-task", "{line}");
        assert_eq!(line["app"], "jsonapp", "{line}");
        assert!(line["target"].as_str().is_some_and(|t| t.starts_with("ax_scheduler::")), "{line}");
        if attempt == 0 {
            assert!(line.get("worker").is_none(), "no worker before the dispatch: {line}");
        } else {
            assert_eq!(line["worker"], "json-w1", "{line}");
        }
    }
    assert_eq!(about[3]["level"], "INFO", "a success is INFO: {}", about[3]);
    assert_eq!(about[1]["level"], "DEBUG", "a dispatch is DEBUG: {}", about[1]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_log_format_is_refused_naming_the_flag_or_the_key() {
    let run = |args: Vec<String>, env: Option<&'static str>| async move {
        let mut cmd = tokio::process::Command::new(bin("axd"));
        cmd.args(&args).env_remove("AX_LOG_FORMAT");
        if let Some(v) = env {
            cmd.env("AX_LOG_FORMAT", v);
        }
        let out = cmd.output().await.expect("run axd");
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, err) = run(vec!["--log-format".into(), "xml".into()], None).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("invalid value 'xml' for '--log-format") && err.contains("text, json"), "{err}");
    let (code, err) = run(vec![], Some("yaml")).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("invalid value 'yaml' for '--log-format"), "{err}");
    let dir = tempdir("json-logs-file");
    let file = dir.join("axd.toml");
    std::fs::write(&file, "log_format = \"xml\"\n").expect("write");
    let (code, err) = run(vec!["--config".into(), file.display().to_string()], None).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("log_format = \"xml\"") && err.contains("expected `text` or `json`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
