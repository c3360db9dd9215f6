//! Logs that go to a file or a pipe carry no colour codes: the demo worker's stderr, read here
//! through a pipe with NO_COLOR unset, has no escape character in it.

use std::{process::Stdio, time::Duration};

use tokio::io::{AsyncBufReadExt as _, BufReader};

#[tokio::test]
async fn the_demo_worker_writes_no_colour_codes_into_a_pipe() {
    // Nothing listens on port 9 of loopback; SIGTERM makes the worker log its shutdown.
    let mut child = tokio::process::Command::new(ax_tests::procs::bin("demo-worker"))
        .args(["--endpoint", "http://127.0.0.1:9", "--app", "plain", "--worker-id", "plain-1"])
        .env_remove("NO_COLOR")
        .env("AX_LOG", "info")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start demo-worker");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let first = lines.next_line().await.expect("read stderr");
    ax_tests::procs::signal(&child, "TERM");
    let mut seen: Vec<String> = first.into_iter().collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !seen.iter().any(|l| l.contains("shutting down")) {
        match tokio::time::timeout_at(deadline, lines.next_line()).await {
            Ok(Ok(Some(line))) => seen.push(line),
            other => panic!("no shutdown line within 20 s ({other:?}): {seen:?}"),
        }
    }
    let _ = child.start_kill();
    for line in &seen {
        assert!(!line.contains('\u{1b}'), "colour codes in a log line written to a pipe: {line:?}");
    }
}
