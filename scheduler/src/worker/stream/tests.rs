use super::*;
use tokio_stream::StreamExt as _;

fn filler() -> Outbound {
    Ok(pb::SchedulerMessage { msg: None })
}

/// A group commit may answer more results than the stream's channel has room for (a result frees
/// its slot, and brings the next Assign, before its commit): every acknowledgement still reaches
/// the worker, which would otherwise keep those results until it reconnects.
#[tokio::test]
async fn acknowledgements_are_never_dropped_for_a_full_channel() {
    let (tx, rx) = mpsc::channel(2);
    let hello = pb::Hello { capacity: 1, ..Default::default() };
    let session = Session::new("s".into(), &hello, tx, chrono::Utc::now());
    let acks = session.take_acks().expect("acks");
    assert!(session.send(filler()) && session.send(filler()), "room for two");
    assert!(!session.send(filler()), "the channel is full");
    for id in 0..100 {
        let ack = pb::ResultAck { instance_id: id, attempt: 1, applied: true, note: String::new() };
        assert!(session.ack(ack), "ack {id} queued");
    }
    drop(session);
    let mut stream = ConnectStream { rx: ReceiverStream::new(rx), acks, end: Arc::new(Mutex::new(None)), done: false };
    let (mut acked, mut others) = (Vec::new(), 0);
    while let Some(m) = stream.next().await {
        match m.expect("no error").msg {
            Some(pb::scheduler_message::Msg::ResultAck(a)) => acked.push(a.instance_id),
            _ => others += 1,
        }
    }
    assert_eq!(acked, (0..100).collect::<Vec<_>>(), "every ack, in order");
    assert_eq!(others, 2, "and what the channel held");
}

/// A worker that re-sends Results without reading its stream cannot grow axd's memory: at most
/// MAX_UNREAD_ACKS acknowledgements wait; past that an ack is refused (the worker re-sends that
/// result after it reconnects) until the stream takes one.
#[tokio::test]
async fn unread_acknowledgements_are_bounded() {
    use crate::routing::registry::MAX_UNREAD_ACKS;
    let (tx, rx) = mpsc::channel(2);
    let session = Session::new("s".into(), &pb::Hello { capacity: 1, ..Default::default() }, tx, chrono::Utc::now());
    let acks = session.take_acks().expect("acks");
    let ack = |id| pb::ResultAck { instance_id: id, attempt: 1, applied: true, note: String::new() };
    for id in 0..MAX_UNREAD_ACKS as i64 {
        assert!(session.ack(ack(id)), "ack {id} queued");
    }
    assert!(!session.ack(ack(-1)), "one more than the bound is refused");
    let mut stream = ConnectStream { rx: ReceiverStream::new(rx), acks, end: Arc::new(Mutex::new(None)), done: false };
    let first = stream.next().await.expect("an ack").expect("not an error");
    assert!(matches!(first.msg, Some(pb::scheduler_message::Msg::ResultAck(a)) if a.instance_id == 0));
    assert!(session.ack(ack(-2)), "room again once the stream took one");
    assert!(!session.ack(ack(-3)), "and full again");
}
