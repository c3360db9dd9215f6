//! Every ending of a Connect stream by axd carries a non-OK status saying why, and a result that can
//! never arrive (a message over the size limit) does not keep its instance RUNNING for ever.

use std::time::Duration;

use ax_proto::v1::{self as pb, InstanceStatus as S, scheduler_message::Msg as In, worker_message::Msg as Out};
use ax_tests::{
    Db, TestDb,
    axd::{Axd, channel},
    client::{RawWorker, create, get, hello, manual, spec, steps, trigger, wait_status},
    on_every_backend,
};
use prost::{
    Message as _,
    bytes::{Buf as _, BufMut as _},
};
use tonic::{
    Code, Status,
    codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder},
    codegen::http,
    transport::Channel,
};

/// What one WorkerMessage may weigh (Welcome.max_message_size).
const MAX: usize = 4 * 1024 * 1024;

/// Frames of raw bytes out, SchedulerMessages in: a client that can send what no generated client
/// would.
#[derive(Default)]
struct RawCodec;

struct RawEncoder;
struct PbDecoder;

impl Encoder for RawEncoder {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for PbDecoder {
    type Item = pb::SchedulerMessage;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<pb::SchedulerMessage>, Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        pb::SchedulerMessage::decode(bytes).map(Some).map_err(|e| Status::internal(e.to_string()))
    }
}

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = pb::SchedulerMessage;
    type Encoder = RawEncoder;
    type Decoder = PbDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> PbDecoder {
        PbDecoder
    }
}

fn encoded(m: Out) -> Vec<u8> {
    pb::WorkerMessage { msg: Some(m) }.encode_to_vec()
}

/// Opens Connect with these raw frames and reads until the stream ends; returns the messages
/// received and the final status (OK as `Status::ok`).
async fn raw_connect(ch: Channel, frames: Vec<Vec<u8>>) -> (Vec<In>, Status) {
    let mut grpc = tonic::client::Grpc::new(ch).max_encoding_message_size(64 << 20);
    grpc.ready().await.expect("ready");
    let path = http::uri::PathAndQuery::from_static("/ax.v1.WorkerService/Connect");
    // Frames are sent, then the stream is held open (never half-closed), so that any end is axd's.
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(frames.len() + 1);
    for f in frames {
        tx.send(f).await.expect("queue");
    }
    let req = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    let mut got = Vec::new();
    let status = match grpc.streaming(req, path, RawCodec).await {
        Err(s) => s,
        Ok(resp) => {
            let mut inbound = resp.into_inner();
            loop {
                match tokio::time::timeout(Duration::from_secs(10), inbound.message()).await {
                    Err(_) => panic!("the stream did not end within 10 s; got {got:?}"),
                    Ok(Ok(Some(pb::SchedulerMessage { msg: Some(m) }))) => got.push(m),
                    Ok(Ok(Some(_))) => {}
                    Ok(Ok(None)) => break Status::ok(""),
                    Ok(Err(s)) => break s,
                }
            }
        }
    };
    drop(tx);
    (got, status)
}

fn hello_frame(worker_id: &str) -> Vec<u8> {
    encoded(Out::Hello(hello("demo", worker_id, "h", 1, 0)))
}

fn log_line(size: usize) -> Out {
    Out::Log(pb::Log { instance_id: 1, attempt: 1, message: "x".repeat(size), ..Default::default() })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_ending_of_a_stream_by_axd_says_why_with_a_non_ok_status() {
    let db = TestDb::create(Db::Sqlite).await.expect("sqlite");
    let axd = Axd::start(&db, |_| {}).await;
    let ch = channel(&axd.endpoint).await;

    // Welcome states the limit.
    let (w, welcome) = RawWorker::connect(ch.clone(), hello("demo", "w0", "h", 1, 0)).await.expect("connect");
    assert_eq!(welcome.max_message_size, MAX as u32);
    drop(w);

    // Too large, after Hello.
    let (got, status) = raw_connect(ch.clone(), vec![hello_frame("w1"), encoded(log_line(MAX + 1))]).await;
    assert!(matches!(got.first(), Some(In::Welcome(_))), "{got:?}");
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("message too large") && status.message().contains("4194304"), "{status:?}");
    // Just under the limit is read (and the line, for an attempt not held, dropped).
    let (mut w, _) = RawWorker::connect(ch.clone(), hello("demo", "w1b", "h", 1, 0)).await.expect("connect");
    w.send(log_line(MAX - 64)).await;
    w.send(ax_tests::client::result(999_999, 1, true)).await;
    let ack = w.expect("the session to answer after the large line", |m| match m {
        In::ResultAck(a) => Some(a.clone()),
        _ => None,
    });
    assert!(!ack.await.applied);

    // Too large, as the first message.
    let (_, status) = raw_connect(ch.clone(), vec![encoded(log_line(MAX + 1))]).await;
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");

    // Bytes that are not a WorkerMessage, after Hello and before it.
    let garbage = vec![0xff, 0xff, 0xff, 0xff];
    let (got, status) = raw_connect(ch.clone(), vec![hello_frame("w2"), garbage.clone()]).await;
    assert!(matches!(got.first(), Some(In::Welcome(_))), "{got:?}");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("undecodable message"), "{status:?}");
    let (_, status) = raw_connect(ch.clone(), vec![garbage]).await;
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("undecodable message"), "{status:?}");

    // A second Hello, and an empty message.
    let (_, status) = raw_connect(ch.clone(), vec![hello_frame("w3"), hello_frame("w3")]).await;
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("hello: sent twice"), "{status:?}");
    let (_, status) =
        raw_connect(ch.clone(), vec![hello_frame("w4"), pb::WorkerMessage { msg: None }.encode_to_vec()]).await;
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");

    // Silence: DEADLINE_EXCEEDED after three heartbeat intervals (500 ms here).
    let (_, status) = raw_connect(ch.clone(), vec![hello_frame("w5")]).await;
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(status.message().contains("no message from the worker"), "{status:?}");

    // Shutdown: Drain, then UNAVAILABLE once the drain deadline passes.
    let mut grpc = tonic::client::Grpc::new(ch.clone());
    grpc.ready().await.expect("ready");
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
    tx.send(hello_frame("w6")).await.expect("queue");
    let path = http::uri::PathAndQuery::from_static("/ax.v1.WorkerService/Connect");
    let mut inbound = grpc
        .streaming(tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx)), path, RawCodec)
        .await
        .expect("connect")
        .into_inner();
    assert!(matches!(inbound.message().await, Ok(Some(pb::SchedulerMessage { msg: Some(In::Welcome(_)) }))));
    let stopping = tokio::spawn(axd.stop());
    let end = loop {
        // Heartbeats keep the session from ending on silence while it drains.
        let _ = tx.try_send(encoded(Out::Heartbeat(pb::Heartbeat::default())));
        match tokio::time::timeout(Duration::from_secs(10), inbound.message()).await.expect("ends within 10 s") {
            Ok(Some(_)) => {}
            Ok(None) => break Status::ok(""),
            Err(s) => break s,
        }
    };
    assert_eq!(end.code(), Code::Unavailable, "{end:?}");
    assert!(end.message().contains("drained"), "{end:?}");
    stopping.await.expect("stopped");
    db.cleanup().await;
}

/// The loop: a worker that follows the rules but not the size limit holds an instance,
/// sends a 10 MB Result (the stream ends), reconnects, re-announces the attempt and sends it again.
/// The attempt is not kept for it after the first unreadable message: it comes back released, and
/// the instance fails when the lease ends, naming why.
async fn a_result_that_can_never_arrive_does_not_keep_its_instance_running(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("big", "demo", "h", manual())).await;
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("demo", "big-1", "h", 1, 1)).await.expect("connect");
    let id = trigger(&mut admin, "big", "one").await;
    let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: a.attempt })).await;
    wait_status(&mut admin, id, S::Running, Duration::from_secs(20)).await;
    let big = || {
        Out::Result(pb::Result {
            instance_id: id,
            attempt: a.attempt,
            outcome: pb::Outcome::Success.into(),
            output: "x".repeat(10 * 1024 * 1024),
            ..Default::default()
        })
    };

    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut sessions = 0;
    loop {
        w.send(big()).await;
        let end = loop {
            match tokio::time::timeout(Duration::from_secs(10), w.rx.message()).await.expect("the stream ends") {
                Ok(Some(_)) => {}
                Ok(None) => panic!("ended with OK"),
                Err(s) => break s,
            }
        };
        assert_eq!(end.code(), Code::ResourceExhausted, "{end:?}");
        sessions += 1;
        let (inst, events) = get(&mut admin, id).await;
        if inst.status == S::Failed as i32 {
            assert!(
                inst.message.contains("could not read") && inst.message.contains("message too large"),
                "the reason names the message: {}",
                inst.message
            );
            assert!(sessions >= 2, "the loop was tried");
            break;
        }
        assert_eq!(inst.status, S::Running as i32, "{:?}", steps(&events));
        assert!(tokio::time::Instant::now() < deadline, "still {:?} after {sessions} sessions", steps(&events));
        // Reconnect and re-announce, as the rules say.
        let mut h = hello("demo", "big-1", "h", 1, 0);
        h.in_flight = vec![pb::InstanceAttempt { instance_id: id, attempt: a.attempt }];
        let (again, welcome) = RawWorker::connect(channel(&axd.endpoint).await, h).await.expect("reconnect");
        assert!(welcome.adopted.is_empty(), "an attempt whose result could not be read is not kept: {welcome:?}");
        assert_eq!(welcome.released, vec![pb::InstanceAttempt { instance_id: id, attempt: a.attempt }]);
        w = again;
    }
    axd.stop().await;
}

/// Worker-side behaviours worker.proto documents (issue 11, item 14): an unknown Log.level is stored
/// as INFO, Progress.percent over 100 as 100; Reject and Progress for an attempt not held get no
/// answer while Accepted gets a Cancel; a Credit sent at capacity is dropped, not banked.
async fn documented_worker_behaviours_hold(db: &TestDb) {
    let axd = Axd::start(db, |_| {}).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("doc", "demo", "h", manual())).await;
    let (mut w, _) =
        RawWorker::connect(channel(&axd.endpoint).await, hello("demo", "doc-1", "h", 1, 1)).await.expect("connect");
    let id = trigger(&mut admin, "doc", "one").await;
    let a = w.expect("Assign", |m| if let In::Assign(a) = m { Some(a.clone()) } else { None }).await;
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: a.attempt })).await;
    wait_status(&mut admin, id, S::Running, Duration::from_secs(20)).await;

    w.send(Out::Log(pb::Log { instance_id: id, attempt: a.attempt, level: 99, message: "odd".into(), at: None })).await;
    w.send(Out::Progress(pb::Progress { instance_id: id, attempt: a.attempt, percent: 250, message: String::new() }))
        .await;
    // At capacity (one slot, held): this credit is dropped.
    w.send(Out::Credit(pb::Credit { grant: 1, reset: false })).await;
    // Not held: Reject and Progress get no answer, Accepted a Cancel; nothing comes before it.
    w.send(Out::Reject(pb::Reject { instance_id: id, attempt: 9, reason: "no".into() })).await;
    w.send(Out::Progress(pb::Progress { instance_id: id, attempt: 9, percent: 5, message: String::new() })).await;
    w.send(Out::Accepted(pb::Accepted { instance_id: id, attempt: 9 })).await;
    match w.recv().await {
        In::Cancel(c) => assert_eq!((c.instance_id, c.attempt), (id, 9)),
        other => panic!("the first answer is the Cancel for the Accepted: {other:?}"),
    }
    let logs = admin
        .get_instance_logs(pb::GetInstanceLogsRequest { id, ..Default::default() })
        .await
        .expect("logs")
        .into_inner()
        .lines;
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(logs[0].level, pb::LogLevel::Info as i32, "an unknown level is stored as INFO");
    let (inst, _) = get(&mut admin, id).await;
    assert_eq!(inst.progress_percent, 100, "250 % is stored as 100");

    // The slot frees up with the Result; the credit sent at capacity was not banked, so the
    // session shows no credit once its row reflects the freed slot. (ListWorkers lags one lease
    // round: first see the held slot, so that the freed one is seen in a later round.)
    let session_with = |in_flight: u32| {
        let admin = admin.clone();
        ax_tests::eventually(Duration::from_secs(10), "ListWorkers to catch up", move || {
            let mut admin = admin.clone();
            async move {
                let list = admin.list_workers(pb::ListWorkersRequest::default()).await.expect("list");
                list.into_inner().workers.into_iter().find(|s| s.worker_id == "doc-1" && s.in_flight == in_flight)
            }
        })
    };
    session_with(1).await;
    w.send(ax_tests::client::result(id, a.attempt, true)).await;
    w.expect("ResultAck", |m| if let In::ResultAck(r) = m { Some(r.clone()) } else { None }).await;
    let session = session_with(0).await;
    assert_eq!(session.credits, 0, "a credit sent at capacity is not banked");
    axd.stop().await;
}

on_every_backend!(a_result_that_can_never_arrive_does_not_keep_its_instance_running, documented_worker_behaviours_hold);
