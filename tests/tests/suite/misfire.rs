//! Misfire policies end to end: the axd process stops, fires of a per-second task pass the misfire
//! threshold (3 s) while it is down, and it starts again. What each policy creates is checked by
//! arithmetic on fire times, from the task's next fire time read while axd was down.

use std::time::Duration;

use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
use ax_tests::{
    TestDb,
    axd::channel,
    client::{create, cron, spec},
    eventually, on_every_backend,
    procs::AxdProcess,
};
use tonic::transport::Channel;

const LONG: Duration = Duration::from_secs(30);
/// The misfire threshold: a few seconds, so that a fire a loaded machine serves a second or two
/// late (before the stop, or in the first rounds after the restart) is still on time, not a misfire.
const THRESHOLD: Duration = Duration::from_secs(3);
/// How long the task's fires go unserved: five or more fires are later than the threshold by then.
const DOWN: Duration = Duration::from_secs(9);

async fn start(db: &TestDb, dir: &std::path::Path, log: &str) -> (AxdProcess, AdminServiceClient<Channel>) {
    let axd = AxdProcess::start(&["--listen", "127.0.0.1:0", "--database-url", &db.url], &dir.join(log)).await;
    let admin = AdminServiceClient::new(channel(&format!("http://{}", axd.addr)).await);
    (axd, admin)
}

async fn instances(admin: &AdminServiceClient<Channel>) -> Vec<pb::Instance> {
    let mut admin = admin.clone();
    let r = admin.list_instances(pb::ListInstancesRequest {
        task_name: "tick".into(),
        page_size: 1000,
        ..Default::default()
    });
    r.await.expect("list").into_inner().instances
}

/// What the misfire events say: how many fires were missed, and the first of them (Unix seconds).
fn missed(events: &[pb::TaskEvent]) -> (i64, i64) {
    let e = events
        .iter()
        .find(|e| e.kind.starts_with("MISFIRE_"))
        .unwrap_or_else(|| panic!("no misfire event: {events:?}"));
    let words: Vec<&str> = e.message.split_whitespace().collect();
    let n = words.iter().position(|w| *w == "fire(s)").and_then(|i| words[i - 1].parse().ok());
    let first = words.iter().position(|w| *w == "from" || *w == "at").map(|i| words[i + 1]);
    let first = first.and_then(|w| chrono::DateTime::parse_from_rfc3339(w).ok()).map(|t| t.timestamp());
    match (n, first) {
        (Some(n), Some(first)) => (n, first),
        _ => panic!("cannot read {:?}", e.message),
    }
}

/// The fires the task event of `kind` decided, as its fields say: first and last (Unix seconds),
/// and how many.
fn fires_of(events: &[pb::TaskEvent], kind: &str) -> (i64, i64, u32) {
    let e = events.iter().find(|e| e.kind == kind).unwrap_or_else(|| panic!("no {kind} event: {events:?}"));
    let f = e.fires.as_ref().unwrap_or_else(|| panic!("{kind} event without its fires: {e:?}"));
    let secs = |t: &Option<prost_types::Timestamp>| t.as_ref().expect("fire time").seconds;
    (secs(&f.first_time), secs(&f.last_time), f.count)
}

/// Stops axd, keeps it down for [`DOWN`] past the task's next fire, starts it again; returns the
/// task's events and instances once the catch-up round is done, and the next fire read while it
/// was down.
async fn outage_with(
    db: &TestDb,
    tag: &str,
    policy: pb::MisfirePolicy,
    max_catch_up: u32,
) -> (Vec<pb::TaskEvent>, Vec<pb::Instance>, i64) {
    let dir = std::env::temp_dir().join(format!(
        "ax-misfire-{tag}-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_micros()
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    let (mut axd, mut admin) = start(db, &dir, "first.log").await;
    let mut s = spec("tick", "nobody", "h", cron("* * * * * *"));
    s.misfire_policy = policy as i32;
    s.misfire_threshold = Some(ax_tests::client::dur(THRESHOLD));
    s.max_catch_up = max_catch_up;
    create(&mut admin, s).await;
    eventually(LONG, "fires before the stop", || async { (instances(&admin).await.len() >= 2).then_some(()) }).await;
    assert!(axd.terminate().await.success());

    let next_us = db.scalar("SELECT next_fire_at FROM ax_task WHERE name = 'tick'").await;
    let next = chrono::DateTime::from_timestamp_micros(next_us).expect("next fire");
    let back_at = next + chrono::TimeDelta::from_std(DOWN).expect("delta");
    tokio::time::sleep((back_at - chrono::Utc::now()).to_std().unwrap_or_default()).await;

    let (mut axd, admin) = start(db, &dir, "again.log").await;
    let events = eventually(LONG, "the misfire decision", || {
        let mut admin = admin.clone();
        async move {
            let r = admin.get_task(pb::GetTaskRequest { name: "tick".into() }).await.expect("get").into_inner();
            r.events.iter().any(|e| e.kind.starts_with("MISFIRE_")).then_some(r.events)
        }
    })
    .await;
    // A few on-time fires after the restart, then stop firing.
    let restarted = chrono::Utc::now().timestamp();
    eventually(LONG, "fires after the restart", || async {
        let l = instances(&admin).await;
        (l.iter().filter(|i| i.trigger_time.as_ref().is_some_and(|t| t.seconds > restarted)).count() >= 2).then_some(())
    })
    .await;
    admin.clone().disable_task(pb::DisableTaskRequest { name: "tick".into() }).await.expect("disable");
    let all = instances(&admin).await;
    assert!(axd.terminate().await.success());
    let _ = std::fs::remove_dir_all(dir);
    (events, all, next.timestamp())
}

/// Every second from the first fire to the last has one instance, except `skipped`; the catch-up
/// instances are exactly `catch_ups`.
fn check_fires(all: &[pb::Instance], skipped: std::ops::Range<i64>, catch_ups: std::ops::Range<i64>) {
    let secs = |i: &pb::Instance| i.trigger_time.as_ref().expect("trigger time").seconds;
    let mut fired: Vec<i64> = all.iter().map(secs).collect();
    fired.sort_unstable();
    let (first, last) = (fired[0], fired[fired.len() - 1]);
    let expected: Vec<i64> = (first..=last).filter(|s| !skipped.contains(s)).collect();
    assert_eq!(fired, expected, "one instance per fire from {first} to {last}, none for {skipped:?}");
    let mut caught: Vec<i64> =
        all.iter().filter(|i| i.source == pb::InstanceSource::CatchUp as i32).map(secs).collect();
    caught.sort_unstable();
    assert_eq!(caught, catch_ups.collect::<Vec<_>>(), "the catch-up instances");
}

async fn fire_all_catches_up_the_most_recent_missed_fires_up_to_max_catch_up(db: &TestDb) {
    let (events, all, next) = outage_with(db, "all", pb::MisfirePolicy::FireAll, 3).await;
    let (n, first) = missed(&events);
    assert_eq!(first, next, "the first missed fire is the one due when axd stopped");
    assert!(n >= 5, "{n} fires missed in {DOWN:?}");
    let catch_up = events.iter().find(|e| e.kind == "MISFIRE_CATCH_UP").expect("catch-up event");
    assert!(catch_up.message.contains("3 catch-up instance(s) (FIRE_ALL)"), "{}", catch_up.message);
    let skip = events.iter().find(|e| e.kind == "MISFIRE_SKIPPED").expect("skip event");
    assert!(skip.message.starts_with(&format!("skipped {} of {n} ", n - 3)), "{}", skip.message);
    // The latest three missed fires are caught up; the older ones are skipped.
    check_fires(&all, first..first + n - 3, first + n - 3..first + n);
    assert_eq!(fires_of(&events, "MISFIRE_CATCH_UP"), (first + n - 3, first + n - 1, 3));
    assert_eq!(fires_of(&events, "MISFIRE_SKIPPED"), (first, first + n - 4, (n - 3) as u32));
}

async fn skip_creates_nothing_for_missed_fires_and_records_them(db: &TestDb) {
    let (events, all, next) = outage_with(db, "skip", pb::MisfirePolicy::Skip, 0).await;
    let (n, first) = missed(&events);
    assert_eq!(first, next);
    assert!(n >= 5, "{n} fires missed in {DOWN:?}");
    assert!(events.iter().all(|e| e.kind != "MISFIRE_CATCH_UP"), "{events:?}");
    let skip = events.iter().find(|e| e.kind == "MISFIRE_SKIPPED").expect("skip event");
    assert!(skip.message.starts_with(&format!("skipped {n} of {n} ")), "{}", skip.message);
    check_fires(&all, first..first + n, 0..0);
    assert_eq!(fires_of(&events, "MISFIRE_SKIPPED"), (first, first + n - 1, n as u32));
}

async fn fire_once_catches_up_only_the_latest_missed_fire(db: &TestDb) {
    let (events, all, next) = outage_with(db, "once", pb::MisfirePolicy::FireOnce, 0).await;
    let (n, first) = missed(&events);
    assert_eq!(first, next);
    assert!(n >= 5, "{n} fires missed in {DOWN:?}");
    check_fires(&all, first..first + n - 1, first + n - 1..first + n);
    assert_eq!(fires_of(&events, "MISFIRE_CATCH_UP"), (first + n - 1, first + n - 1, 1));
    assert_eq!(fires_of(&events, "MISFIRE_SKIPPED"), (first, first + n - 2, (n - 1) as u32));
}

on_every_backend!(
    fire_all_catches_up_the_most_recent_missed_fires_up_to_max_catch_up,
    skip_creates_nothing_for_missed_fires_and_records_them,
    fire_once_catches_up_only_the_latest_missed_fire,
);
