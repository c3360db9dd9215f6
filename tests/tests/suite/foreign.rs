//! A worker can act only on the attempts its session holds: messages about any other instance —
//! of its own app or another — write nothing, and the answers say nothing about that instance.

use std::time::Duration;

use ax_proto::v1::{self as pb, InstanceStatus as S, scheduler_message::Msg as In, worker_message::Msg as Out};
use ax_scheduler::config::HumanDuration;
use ax_tests::{
    TestDb,
    axd::{Axd, channel},
    client::{RawWorker, create, get, hello, manual, result, spec, steps, trigger, wait_status},
    on_every_backend,
};

const LONG: Duration = Duration::from_secs(20);

/// Every kind of message a worker sends about an attempt.
fn reports(id: i64, attempt: u32) -> Vec<Out> {
    vec![
        result(id, attempt, true),
        result(id, attempt, false),
        Out::Log(pb::Log {
            instance_id: id,
            attempt,
            level: pb::LogLevel::Info.into(),
            message: "written by a stranger".into(),
            at: None,
        }),
        Out::Progress(pb::Progress { instance_id: id, attempt, percent: 99, message: "a stranger's progress".into() }),
        Out::Reject(pb::Reject { instance_id: id, attempt, reason: "a stranger's reject".into() }),
        Out::Accepted(pb::Accepted { instance_id: id, attempt }),
    ]
}

async fn messages_about_attempts_a_session_does_not_hold_write_nothing_and_reveal_nothing(db: &TestDb) {
    // The holder sends no heartbeat while the strangers' ~450 messages are answered: on a slow or
    // loaded machine that takes longer than the tests' default 1.5 s of silence, and its session
    // would end. Long timings keep the test's own peer alive whatever the machine's speed.
    let axd = Axd::start(db, |o| {
        let s = |n| Some(HumanDuration(Duration::from_secs(n)));
        o.heartbeat_interval = s(5);
        o.lost_worker_grace = s(5);
        o.ack_timeout = s(10);
    })
    .await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("payroll", "billing", "h", manual())).await;
    create(&mut admin, spec("pending", "billing", "other-handler", manual())).await;
    let (mut holder, _) = RawWorker::connect(channel(&axd.endpoint).await, hello("billing", "billing-1", "h", 1, 1))
        .await
        .expect("holder");
    let id = trigger(&mut admin, "payroll", "one").await;
    let a = holder.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    assert_eq!((a.instance_id, a.attempt), (id, 1));
    holder.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: 1 })).await;
    wait_status(&mut admin, id, S::Running, LONG).await;
    holder.send(Out::Progress(pb::Progress { instance_id: id, attempt: 1, percent: 10, message: "mine".into() })).await;
    // An instance no worker holds (no stream serves its handler): PENDING.
    let waiting = trigger(&mut admin, "pending", "one").await;
    let progress_of = |i: &pb::Instance| (i.progress_percent, i.progress_message.clone());
    let (running, running_trail) = get(&mut admin, id).await;
    let (pending, pending_trail) = get(&mut admin, waiting).await;

    // A worker of another app, and another worker of the same app, report on both instances, on
    // the current attempt, an old one and a future one.
    for (app, worker) in [("demo", "demo-1"), ("billing", "billing-2")] {
        let (mut stranger, _) =
            RawWorker::connect(channel(&axd.endpoint).await, hello(app, worker, "h", 1, 0)).await.expect("stranger");
        for target in [id, waiting] {
            for attempt in [0, 1, 7] {
                for m in reports(target, attempt) {
                    let accepted = matches!(m, Out::Accepted(_));
                    let is_result = matches!(m, Out::Result(_));
                    stranger.send(m).await;
                    if is_result {
                        let ack = stranger
                            .expect("ack", |m| if let In::ResultAck(a) = m { Some(a.clone()) } else { None })
                            .await;
                        assert!(!ack.applied);
                        // The same words whatever the instance is, or whether it exists.
                        assert_eq!(ack.note, "not recorded: this session does not hold that attempt");
                    }
                    if accepted {
                        let c = stranger
                            .expect("Cancel", |m| if let In::Cancel(c) = m { Some(c.clone()) } else { None })
                            .await;
                        assert_eq!((c.instance_id, c.attempt), (target, attempt));
                        for status in ["RUNNING", "PENDING", "DISPATCHED", "billing", "payroll"] {
                            assert!(!c.reason.contains(status), "the Cancel reveals nothing: {}", c.reason);
                        }
                    }
                }
            }
        }
        // A flood of them (each answered; a worker that reads none of its answers is cut off as
        // not reading): still nothing.
        for _ in 0..200 {
            stranger.send(result(id, 1, false)).await;
            stranger.expect("ack", |m| if let In::ResultAck(a) = m { Some(a.clone()) } else { None }).await;
        }
    }

    let (after, trail) = get(&mut admin, id).await;
    assert_eq!((after.status, after.attempt), (S::Running as i32, 1));
    assert_eq!(progress_of(&after), progress_of(&running).max((10, "mine".into())));
    assert_eq!(steps(&trail), steps(&running_trail), "nothing was added to the trail");
    let (after_pending, pending_after) = get(&mut admin, waiting).await;
    assert_eq!((after_pending.status, after_pending.attempt), (pending.status, pending.attempt));
    assert_eq!(progress_of(&after_pending), progress_of(&pending));
    assert_eq!(steps(&pending_after), steps(&pending_trail));
    for target in [id, waiting] {
        let logs = admin
            .get_instance_logs(pb::GetInstanceLogsRequest { id: target, after_seq: 0, limit: 100 })
            .await
            .expect("logs")
            .into_inner();
        assert!(logs.lines.is_empty(), "no log line of a stranger was stored: {:?}", logs.lines);
    }

    // The holder is untouched by all of it: its result is applied.
    holder.send(result(id, 1, true)).await;
    let ack = holder.expect("ack", |m| if let In::ResultAck(a) = m { Some(a.clone()) } else { None }).await;
    assert!(ack.applied, "{}", ack.note);
    wait_status(&mut admin, id, S::Success, LONG).await;
    axd.stop().await;
}

on_every_backend!(messages_about_attempts_a_session_does_not_hold_write_nothing_and_reveal_nothing);
