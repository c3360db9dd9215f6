//! Wake-ups between axd processes (README "Wake-ups"): on PostgreSQL, LISTEN/NOTIFY brings work
//! and cancels queued on one axd to the axd holding the worker's stream at once; when that axd's
//! listening connection is broken, or on MySQL/MariaDB where there are no notifications, it finds
//! the work within its `--poll-interval`.
//!
//! Work is triggered on axd B, which holds no worker stream; axd A holds the only worker (a raw
//! protocol worker, so that nothing but the wake-up under test makes A look for work). The timing
//! bounds are margins far from the alternative they tell apart, not tight figures: see each test.

use std::time::Duration;

use ax_proto::v1::{self as pb, InstanceStatus as S, scheduler_message::Msg as In, worker_message::Msg as Out};
use ax_scheduler::{
    config::{HumanDuration, Options},
    core::health::Loop,
};
use ax_tests::{
    Db, TestDb,
    axd::{Axd, channel},
    client::{RawWorker, cancel, create, cron, hello, manual, result, spec, trigger, wait_status},
    eventually, on_server_backends,
    proxy::Proxy,
};
use tokio::time::Instant;

fn secs(n: u64) -> Option<HumanDuration> {
    Some(HumanDuration(Duration::from_secs(n)))
}

/// Polls every `poll`; the raw worker may be silent for a few seconds while the test reads the
/// database (heartbeat 2 s: its session ends after 6 s of silence). An idle loop completes a
/// round only every poll interval, so health must not count that as a stall.
fn polling_every(o: &mut Options, poll: Duration) {
    o.poll_interval = Some(HumanDuration(poll));
    o.health_stall_after = secs(120);
    o.heartbeat_interval = secs(2);
    o.ack_timeout = secs(10);
    o.lost_worker_grace = secs(10);
}

/// Waits until `a`'s dispatcher has run no round for a second: it is asleep for its poll interval,
/// and only a wake-up can make it look for work before that. (The worker's Hello woke it; a round
/// still running when work is triggered would find the work without any notification.)
async fn until_dispatch_sleeps(a: &Axd) {
    eventually(Duration::from_secs(20), "A's dispatcher to go to sleep", || async {
        let stalled = a.running.core.progress.stalled(Duration::from_secs(1));
        stalled.iter().any(|(l, _)| *l == Loop::Dispatch).then_some(())
    })
    .await;
}

/// Axd A's raw worker for app `raw`, handler `h`, with two free slots.
async fn worker_on(a: &Axd) -> RawWorker {
    let (w, _) =
        RawWorker::connect(channel(&a.endpoint).await, hello("raw", "raw-1", "h", 2, 2)).await.expect("connect");
    w
}

/// How long after `since` the worker receives its next Assign.
async fn assigned_after(w: &mut RawWorker, since: Instant) -> (ax_proto::v1::Assign, Duration) {
    let a = w
        .expect_within(
            "Assign",
            Duration::from_secs(60),
            |m| if let In::Assign(a) = m { Some(a.clone()) } else { None },
        )
        .await;
    (a, since.elapsed())
}

async fn notify_brings_work_and_cancels_from_another_axd_at_once(db: &TestDb) {
    // Both axd poll only every 45 s. The worker's Hello made A look for work once; after that, only
    // a notification can make it look again before 45 s have passed. NOTIFY takes milliseconds;
    // 15 s leaves a loaded 2-core machine plenty of room, and a broken NOTIFY cannot pass: A's
    // dispatcher has slept about a second when the work is triggered, so its next poll would find
    // the work some 44 s later, far more than the bound plus a margin of 10 s.
    const NOTIFY_BOUND: Duration = Duration::from_secs(15);
    const POLL: Duration = Duration::from_secs(45);
    let a = Axd::start(db, |o| polling_every(o, POLL)).await;
    let b = Axd::start(db, |o| polling_every(o, POLL)).await;
    let mut admin_b = b.admin().await;
    create(&mut admin_b, spec("wake", "raw", "h", manual())).await;
    let mut w = worker_on(&a).await;
    until_dispatch_sleeps(&a).await;

    let t0 = Instant::now();
    let id = trigger(&mut admin_b, "wake", "one").await;
    let (assign, took) = assigned_after(&mut w, t0).await;
    assert_eq!(assign.instance_id, id);
    assert!(
        took < NOTIFY_BOUND,
        "work triggered on B reached A's worker {took:?} later (NOTIFY bound {NOTIFY_BOUND:?})"
    );
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: assign.attempt })).await;
    wait_status(&mut admin_b, id, S::Running, Duration::from_secs(30)).await;

    // A cancel queued on B for the attempt A's worker holds.
    let t0 = Instant::now();
    cancel(&mut admin_b, id, "stop from b").await;
    let c = w
        .expect_within(
            "Cancel",
            Duration::from_secs(60),
            |m| if let In::Cancel(c) = m { Some(c.clone()) } else { None },
        )
        .await;
    let took = t0.elapsed();
    assert_eq!((c.instance_id, c.attempt), (id, assign.attempt));
    assert!(
        took < NOTIFY_BOUND,
        "a cancel queued on B reached A's worker {took:?} later (NOTIFY bound {NOTIFY_BOUND:?})"
    );
    a.stop().await;
    b.stop().await;
}

async fn a_missed_notification_is_made_up_for_within_the_poll_interval(db: &TestDb) {
    // A polls every 3 s. With its listening connection cut (PostgreSQL) or no notifications at all
    // (MySQL), work triggered on B is found by A's next poll: at most 3 s later, plus the round
    // itself (milliseconds; 10 s covers a loaded 2-core machine). Nothing else brings the work to A
    // in that time: B, which has no worker, polls every 45 s, and every notification is cut.
    const POLL: Duration = Duration::from_secs(3);
    const MARGIN: Duration = Duration::from_secs(10);
    // On PostgreSQL, A's connections go through a proxy that tells the listening connection apart
    // by its LISTEN statement (plaintext, hence sslmode=disable), so that only that one is cut.
    let proxy = Proxy::start_marking(db.server_addr(), b"LISTEN \"ax_").await;
    let url = match db.db {
        Db::Postgres => format!("{}&sslmode=disable", db.url_via(proxy.addr)),
        _ => db.url_via(proxy.addr),
    };
    let via = db.with_url(url);
    let a = Axd::start(&via, |o| polling_every(o, POLL)).await;
    let b = Axd::start(db, |o| polling_every(o, Duration::from_secs(45))).await;
    let mut admin_b = b.admin().await;
    create(&mut admin_b, spec("poll", "raw", "h", manual())).await;
    let mut w = worker_on(&a).await;
    if db.db == Db::Postgres {
        proxy.cut_marked().await;
        eventually(Duration::from_secs(20), "A's listening connection to be cut", || async {
            (proxy.marked_cuts() >= 1).then_some(())
        })
        .await;
    }

    for key in ["one", "two"] {
        let t0 = Instant::now();
        let id = trigger(&mut admin_b, "poll", key).await;
        let (assign, took) = assigned_after(&mut w, t0).await;
        assert_eq!(assign.instance_id, id);
        assert!(
            took <= POLL + MARGIN,
            "work triggered on B reached A's worker {took:?} later (poll interval {POLL:?})"
        );
        w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: assign.attempt })).await;
        w.send(result(id, assign.attempt, true)).await;
        wait_status(&mut admin_b, id, S::Success, Duration::from_secs(30)).await;
    }
    if db.db == Db::Postgres {
        // A kept trying to listen again, and every attempt was cut: no notification reached it.
        eventually(Duration::from_secs(20), "A's listener to come back and be cut again", || async {
            (proxy.marked_cuts() >= 2).then_some(())
        })
        .await;
    }
    a.stop().await;
    b.stop().await;
}

mod postgres {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn notify_brings_work_and_cancels_from_another_axd_at_once() {
        let Some(db) = ax_tests::TestDb::create(ax_tests::Db::Postgres).await else { return };
        super::notify_brings_work_and_cancels_from_another_axd_at_once(&db).await;
        db.cleanup().await;
    }
}

mod fallback {
    use super::*;
    on_server_backends!(a_missed_notification_is_made_up_for_within_the_poll_interval);
}

/// A due task that another axd holds locked (its trigger round is slow, say) is looked at again
/// every 50 ms, not in a tight loop of claims that skip it. Each 50 ms pause ends one round and
/// one check, so 40 of them take at least 19 pauses, 950 ms; without the pause a round and a check
/// take a few milliseconds and the loop counts 40 within a couple of hundred. A loaded machine only
/// makes the count slower, which cannot make the first bound fail.
async fn a_due_task_locked_elsewhere_is_not_claimed_in_a_spin(db: &TestDb) {
    const COUNT: u64 = 40;
    const AT_LEAST: Duration = Duration::from_millis(800);
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("locked", "nobody", "h", cron("* * * * * *"))).await;
    // "Another axd": a transaction that claims the task (FOR UPDATE) and keeps it locked.
    // axd's own round may hold the task at that moment (SKIP LOCKED then gives nothing): try
    // again until the test holds it.
    let store = db.store().await;
    let far = chrono::Utc::now() + chrono::Duration::days(1);
    let deadline = Instant::now() + Duration::from_secs(30);
    let (other, held) = loop {
        let mut tx = store.begin().await.expect("begin");
        let held = tx.tasks().claim_due_tasks(far, far, 10).await.expect("claim");
        if !held.is_empty() || Instant::now() > deadline {
            break (tx, held);
        }
        tx.rollback().await.expect("rollback");
    };
    assert_eq!(held.len(), 1, "the test holds the task");
    let due = held[0].as_ref().ok().and_then(|t| t.next_fire_at).expect("a next fire");
    // Wait until the task is due (and the loop has looked since), then time COUNT rounds and
    // checks.
    let reports = axd.running.trigger_reports.clone();
    eventually(Duration::from_secs(30), "the locked task to be due", || async {
        let looked = reports.borrow().at.is_some_and(|at| at > due);
        looked.then_some(())
    })
    .await;
    let before = reports.borrow().rounds;
    let t0 = Instant::now();
    // The loop keeps looking: COUNT more rounds and checks come (in about a second).
    eventually(Duration::from_secs(30), "the trigger loop to keep looking at the locked task", || async {
        (reports.borrow().rounds - before >= COUNT).then_some(())
    })
    .await;
    let took = t0.elapsed();
    assert!(
        took >= AT_LEAST,
        "{COUNT} trigger rounds and checks in {took:?} while the task is locked elsewhere (a spin)"
    );
    drop(other);
    axd.stop().await;
}

mod locked_elsewhere {
    use super::*;
    on_server_backends!(a_due_task_locked_elsewhere_is_not_claimed_in_a_spin);
}
