//! Logs that go to a file or a pipe carry no colour codes: the demo worker's stderr, read here
//! through a pipe with NO_COLOR unset, has no escape character in it.

use std::{process::Stdio, time::Duration};

use ax_tests::{Db, TestDb, axd::Axd};
use tokio::io::{AsyncBufReadExt as _, BufReader};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_worker_writes_no_colour_codes_into_a_pipe() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |_| {}).await;
    // Connected, the worker logs it (INFO, through tracing).
    let mut child = tokio::process::Command::new(ax_tests::procs::bin("demo-worker"))
        .args(["--endpoint", &axd.endpoint, "--app", "plain", "--worker-id", "plain-1"])
        .env_remove("NO_COLOR")
        .env("AX_LOG", "info")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start demo-worker");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut seen: Vec<String> = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !seen.iter().any(|l| l.contains("connected")) {
        match tokio::time::timeout_at(deadline, lines.next_line()).await {
            Ok(Ok(Some(line))) => seen.push(line),
            other => panic!("no \"connected\" line within 20 s ({other:?}): {seen:?}"),
        }
    }
    let _ = child.start_kill();
    for line in &seen {
        assert!(!line.contains('\u{1b}'), "colour codes in a log line written to a pipe: {line:?}");
    }
    axd.stop().await;
}
