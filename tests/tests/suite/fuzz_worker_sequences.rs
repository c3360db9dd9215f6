//! Sequences of worker messages that a correct worker does not send, each with a defined answer
//! (issue 33, item 10): messages about another worker's attempt are dropped (Accepted answered by
//! Cancel, Result by a ResultAck with applied=false) and change nothing of that instance; duplicate
//! Accepted and Result, a Result before Accepted and an Accepted after it, credits that overflow u32
//! in sum, a Heartbeat seq going backwards and a Progress over 100 % are absorbed; a second Hello
//! ends the stream with INVALID_ARGUMENT. Each answer is awaited (bounded); no panic anywhere.

use std::{
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

use ax_proto::v1::{self as pb, InstanceStatus as S, scheduler_message::Msg as In, worker_message::Msg as Out};
use ax_tests::{
    Db, TestDb,
    axd::{Axd, channel},
    client::{RawWorker, create, get, hello, manual, spec, trigger, wait_status},
};
use tonic::Code;

static PANICS: AtomicUsize = AtomicUsize::new(0);

const LONG: Duration = Duration::from_secs(15);

/// What of an instance a message may change: status, attempt, holder, outcome, progress.
fn observable(i: &pb::Instance) -> (i32, u32, String, String, String, String, u32, String, u32) {
    (
        i.status,
        i.attempt,
        i.worker_id.clone(),
        i.session_id.clone(),
        i.message.clone(),
        i.output.clone(),
        i.progress_percent,
        i.progress_message.clone(),
        i.failures,
    )
}

fn result(instance_id: i64, attempt: u32, output: &str) -> Out {
    Out::Result(pb::Result {
        instance_id,
        attempt,
        outcome: pb::Outcome::Success.into(),
        output: output.into(),
        ..Default::default()
    })
}

/// Waits for the ResultAck of (instance, attempt); returns it.
async fn ack(w: &mut RawWorker, id: i64, attempt: u32) -> pb::ResultAck {
    w.expect("a ResultAck", |m| match m {
        In::ResultAck(a) if (a.instance_id, a.attempt) == (id, attempt) => Some(a.clone()),
        _ => None,
    })
    .await
}

/// Waits for a Cancel of (instance, attempt).
async fn cancel(w: &mut RawWorker, id: i64, attempt: u32) -> pb::Cancel {
    w.expect("a Cancel", |m| match m {
        In::Cancel(c) if (c.instance_id, c.attempt) == (id, attempt) => Some(c.clone()),
        _ => None,
    })
    .await
}

async fn assign(w: &mut RawWorker) -> (i64, u32) {
    w.expect("an Assign", |m| match m {
        In::Assign(a) => Some((a.instance_id, a.attempt)),
        _ => None,
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_worker_sequences_get_defined_answers_and_never_touch_another_worker_s_instance() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
    let db = TestDb::create(Db::Sqlite).await.expect("a SQLite database");
    let axd = Axd::start(&db, |_| {}).await;
    let mut admin = axd.admin().await;
    let ch = channel(&axd.endpoint).await;
    create(&mut admin, spec("t", "app", "h", manual())).await;

    // Worker A holds instance 1's attempt and runs it.
    let (mut a, _) = RawWorker::connect(ch.clone(), hello("app", "w-a", "h", 2, 1)).await.expect("A connects");
    let first = trigger(&mut admin, "t", "one").await;
    let (id, attempt) = assign(&mut a).await;
    assert_eq!(id, first);
    a.send(Out::Accepted(pb::Accepted { instance_id: id, attempt })).await;
    // A duplicate Accepted changes nothing.
    a.send(Out::Accepted(pb::Accepted { instance_id: id, attempt })).await;
    wait_status(&mut admin, id, S::Running, LONG).await;

    // Worker B, of the same app and without credits, speaks of A's attempt.
    let (mut b, _) = RawWorker::connect(ch.clone(), hello("app", "w-b", "h", 2, 0)).await.expect("B connects");
    let before = observable(&get(&mut admin, id).await.0);
    b.send(Out::Accepted(pb::Accepted { instance_id: id, attempt })).await;
    let c = cancel(&mut b, id, attempt).await;
    assert!(c.reason.contains("not yours"), "{c:?}");
    b.send(Out::Progress(pb::Progress { instance_id: id, attempt, percent: 99, message: "B's".into() })).await;
    b.send(Out::Log(pb::Log { instance_id: id, attempt, message: "from B".into(), ..Default::default() })).await;
    b.send(Out::Reject(pb::Reject { instance_id: id, attempt, reason: "B rejects".into() })).await;
    b.send(Out::Heartbeat(pb::Heartbeat { running: 1, seq: 1 })).await;
    b.send(result(id, attempt, "B's output")).await;
    let acked = ack(&mut b, id, attempt).await;
    assert!(!acked.applied, "B's Result for A's attempt: {acked:?}");
    b.send(result(id, attempt, "B's output again")).await;
    assert!(!ack(&mut b, id, attempt).await.applied);
    // Messages are handled in order: everything above was handled before the last ack.
    let after = observable(&get(&mut admin, id).await.0);
    assert_eq!(after, before, "B's messages changed A's instance");
    let logs = admin
        .get_instance_logs(pb::GetInstanceLogsRequest { id, after_seq: 0, limit: 100 })
        .await
        .expect("logs")
        .into_inner();
    assert!(!format!("{logs:?}").contains("from B"), "B's log line was stored: {logs:?}");

    // Credits that overflow u32 in sum, resets among them, and a heartbeat seq going backwards.
    for reset in [false, false, true, false, false] {
        a.send(Out::Credit(pb::Credit { grant: u32::MAX, reset })).await;
    }
    a.send(Out::Heartbeat(pb::Heartbeat { running: 1, seq: u64::MAX })).await;
    a.send(Out::Heartbeat(pb::Heartbeat { running: 1, seq: 0 })).await;
    // The capacity bounds the credits: one free slot, one more assignment.
    let second = trigger(&mut admin, "t", "two").await;
    let (id2, attempt2) = assign(&mut a).await;
    assert_eq!(id2, second);

    // A Result before Accepted: acknowledged (recorded or not), and an Accepted after it is not
    // A's any more (Cancel).
    a.send(result(id2, attempt2, "early")).await;
    let early = ack(&mut a, id2, attempt2).await;
    a.send(Out::Accepted(pb::Accepted { instance_id: id2, attempt: attempt2 })).await;
    cancel(&mut a, id2, attempt2).await;
    let i2 = get(&mut admin, id2).await.0;
    if early.applied {
        assert_eq!(i2.status, S::Success as i32, "{i2:?}");
    }

    // Progress over 100 % is clamped; a Result for an attempt nobody holds is acknowledged, not
    // applied (and marks that the Progress before it was handled).
    a.send(Out::Progress(pb::Progress { instance_id: id, attempt, percent: u32::MAX, message: "p".into() })).await;
    a.send(result(999_999, 1, "nobody's")).await;
    assert!(!ack(&mut a, 999_999, 1).await.applied);
    assert_eq!(get(&mut admin, id).await.0.progress_percent, 100);

    // A duplicate Result: the first is recorded, the second is not applied.
    a.send(result(id, attempt, "first")).await;
    assert!(ack(&mut a, id, attempt).await.applied, "A's own Result");
    a.send(result(id, attempt, "second")).await;
    assert!(!ack(&mut a, id, attempt).await.applied, "a duplicate Result");
    let done = get(&mut admin, id).await.0;
    assert_eq!((done.status, done.output.as_str()), (S::Success as i32, "first"), "{done:?}");

    // A second Hello ends the stream with a reason.
    a.send(Out::Hello(hello("app", "w-a", "h", 2, 1))).await;
    let end = tokio::time::timeout(LONG, async {
        loop {
            match a.rx.message().await {
                Ok(Some(_)) => {}
                Ok(None) => return tonic::Status::ok(""),
                Err(s) => return s,
            }
        }
    })
    .await
    .expect("the stream ends after a second Hello");
    assert_eq!(end.code(), Code::InvalidArgument, "{end:?}");
    assert!(end.message().contains("sent twice"), "{end:?}");

    drop(b);
    axd.stop().await;
    db.cleanup().await;
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a message panicked axd");
}
