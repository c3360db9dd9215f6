//! Raw gRPC request bodies that axd cannot read, sent over HTTP/2 to a unary method (CreateTask)
//! and to the worker stream (Connect, before and after a valid Hello): bytes that do not decode
//! (a truncated varint, a wrong wire type, a string that is not UTF-8), a length prefix longer
//! than the body, a compressed-flag without compression, an unknown flag, a message over the limit,
//! a unary call without a message. Each is answered INVALID_ARGUMENT (RESOURCE_EXHAUSTED for the
//! size) in bounded time: the caller sent them, and INTERNAL would say axd failed (issue 33, item
//! 10). See `ax_proto::codec` and `ax_scheduler::framing`.

use std::time::Duration;

use ax_proto::v1 as pb;
use ax_tests::{
    Db, TestDb,
    axd::{Axd, channel},
    client::hello,
};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use prost::Message as _;
use tonic::{
    Code,
    codegen::{Service as _, http},
    transport::Channel,
};

/// A gRPC frame: flag, big-endian length, bytes.
fn frame(flag: u8, len: u32, body: &[u8]) -> Vec<u8> {
    let mut v = vec![flag];
    v.extend_from_slice(&len.to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn message(body: &[u8]) -> Vec<u8> {
    frame(0, u32::try_from(body.len()).expect("small"), body)
}

/// POSTs `body` as a gRPC request to `path`; the grpc-status (header or trailer) and grpc-message.
async fn raw_call(channel: &Channel, path: &str, body: Vec<u8>) -> (Option<i32>, String) {
    let req = http::Request::builder()
        .method("POST")
        .uri(path)
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(tonic::body::Body::new(Full::new(Bytes::from(body))))
        .expect("request");
    let mut channel = channel.clone();
    std::future::poll_fn(|cx| channel.poll_ready(cx)).await.expect("channel ready");
    let response = channel.call(req).await.expect("an HTTP answer");
    let (parts, body) = response.into_parts();
    let collected = body.collect().await;
    let trailers = collected.as_ref().ok().and_then(|c| c.trailers().cloned()).unwrap_or_default();
    let pick = |name: &str| {
        trailers
            .get(name)
            .or_else(|| parts.headers.get(name))
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    (pick("grpc-status").and_then(|c| c.parse().ok()), pick("grpc-message").unwrap_or_default())
}

/// The bodies and the code each must get. `prefix` goes before each (a Hello, for the stream).
fn cases(prefix: &[u8]) -> Vec<(&'static str, Vec<u8>, Code)> {
    let with = |b: Vec<u8>| [prefix, &b].concat();
    // Field 1 (length-delimited) whose length varint never ends.
    let truncated_varint = message(&[0x0a, 0xff, 0xff]);
    // Field 1 of both requests is a message: sent as a varint (wire type 0).
    let wrong_wire_type = message(&[0x08, 0x01]);
    // Field 1 with wire type 7, which does not exist.
    let no_such_wire_type = message(&[0x0f]);
    let over_limit = frame(0, 5 << 20, &[0; 16]);
    vec![
        ("a truncated varint", with(truncated_varint), Code::InvalidArgument),
        ("a wrong wire type", with(wrong_wire_type), Code::InvalidArgument),
        ("wire type 7", with(no_such_wire_type), Code::InvalidArgument),
        ("a length prefix past the body", with(frame(0, 100, &[0x0a, 0x00])), Code::InvalidArgument),
        ("a body that ends inside the header", with(vec![0, 0, 0]), Code::InvalidArgument),
        ("the compressed-flag without compression", with(frame(1, 2, &[0x0a, 0x00])), Code::InvalidArgument),
        ("compressed-flag 7", with(frame(7, 2, &[0x0a, 0x00])), Code::InvalidArgument),
        ("a message of 5 MiB", with(over_limit), Code::ResourceExhausted),
    ]
}

/// Sends `body` to `path`: a line about it in `wrong` unless it is answered `want`, with a reason,
/// within 10 s.
async fn check(channel: &Channel, path: &str, what: &str, body: Vec<u8>, want: Code, wrong: &mut Vec<String>) {
    let hex: String = body.iter().take(64).map(|b| format!("{b:02x}")).collect();
    match tokio::time::timeout(Duration::from_secs(10), raw_call(channel, path, body)).await {
        Err(_) => wrong.push(format!("{path} with {what} ({hex}): no answer within 10 s")),
        Ok((code, text)) if code != Some(want as i32) || text.is_empty() => {
            wrong.push(format!("{path} with {what} ({hex}): grpc-status {code:?} {text:?}, want {want:?}"));
        }
        Ok(_) => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_frames_that_do_not_decode_are_invalid_argument_never_internal() {
    let db = TestDb::create(Db::Sqlite).await.expect("a SQLite database");
    let axd = Axd::start(&db, |_| {}).await;
    let channel = channel(&axd.endpoint).await;

    let mut wrong = Vec::new();
    let create = "/ax.v1.AdminService/CreateTask";
    for (what, body, want) in cases(&[]) {
        check(&channel, create, what, body, want, &mut wrong).await;
    }
    check(&channel, create, "no message at all", Vec::new(), Code::InvalidArgument, &mut wrong).await;
    let name = pb::CreateTaskRequest { task: Some(pb::TaskSpec { name: "x".into(), ..Default::default() }) };
    let mut not_utf8 = name.encode_to_vec();
    let at = not_utf8.iter().position(|b| *b == b'x').expect("the name");
    not_utf8[at] = 0xff;
    check(&channel, create, "a name that is not UTF-8", message(&not_utf8), Code::InvalidArgument, &mut wrong).await;
    // A valid message still passes (and is refused by validation, which names the field).
    let (code, text) = raw_call(&channel, create, message(&name.encode_to_vec())).await;
    assert_eq!(code, Some(Code::InvalidArgument as i32), "{text}");
    assert!(text.contains("task."), "{text}");

    let connect = "/ax.v1.WorkerService/Connect";
    for (what, body, want) in cases(&[]) {
        check(&channel, connect, &format!("{what} before Hello"), body, want, &mut wrong).await;
    }
    let h = hello("app", "w-frames", "h", 1, 1);
    let hello = message(&pb::WorkerMessage { msg: Some(pb::worker_message::Msg::Hello(h)) }.encode_to_vec());
    for (what, body, want) in cases(&hello) {
        check(&channel, connect, &format!("{what} after Hello"), body, want, &mut wrong).await;
    }
    // A Hello and nothing wrong after it: the worker closed its side, the stream ends OK.
    let (code, text) = raw_call(&channel, connect, hello).await;
    assert_eq!(code, Some(0), "{text}");

    axd.stop().await;
    db.cleanup().await;
    assert!(wrong.is_empty(), "{} bodies were answered wrong:\n{}", wrong.len(), wrong.join("\n"));
}
