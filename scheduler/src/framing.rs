//! The gRPC framing of request bodies, checked before tonic reads them.
//!
//! tonic answers a request body whose gRPC framing is broken with INTERNAL, as if axd had failed:
//! a message whose compressed-flag is set (axd accepts no compression), a flag other than 0 or 1,
//! a body that ends inside a frame (its length prefix says more than came), a unary call without
//! a message, and what tonic-web could not read (bad base64 in `grpc-web-text`). The caller sent
//! all of these, so [`FramingLayer`] answers them first: INVALID_ARGUMENT saying what is wrong, and
//! RESOURCE_EXHAUSTED for a message longer than the method accepts (tonic says OUT_OF_RANGE).
//! Well-framed bodies pass through untouched; a message that does not decode is the codec's
//! business (`ax_proto::codec`: INVALID_ARGUMENT too). A broken connection stays what it was.
//!
//! This departs from one line of the gRPC compression spec, which asks for INTERNAL on a compressed
//! flag without `grpc-encoding`: axd's rule is that INTERNAL means axd failed, never the caller.

use std::{
    pin::Pin,
    task::{Context, Poll},
};

use bytes::{Buf, Bytes};
use http_body::{Body, Frame};
use tonic::{
    Status,
    codegen::{Service, http},
};

/// The path prefix of the one service whose every method takes exactly one request message.
const UNARY_PREFIX: &str = "/ax.v1.AdminService/";
/// The worker stream, whose messages have a limit of their own.
const WORKER_CONNECT: &str = "/ax.v1.WorkerService/Connect";
/// tonic's default limit of a received message, which every other method keeps.
const DEFAULT_LIMIT: usize = 4 * 1024 * 1024;

/// Checks the framing of every request body (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct FramingLayer;

impl<S> tower_layer::Layer<S> for FramingLayer {
    type Service = Framing<S>;

    fn layer(&self, inner: S) -> Framing<S> {
        Framing { inner }
    }
}

/// The service of [`FramingLayer`].
#[derive(Debug, Clone)]
pub struct Framing<S> {
    inner: S,
}

impl<S, B> Service<http::Request<B>> for Framing<S>
where
    S: Service<http::Request<tonic::body::Body>>,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> S::Future {
        let path = req.uri().path();
        let limit = if path == WORKER_CONNECT { crate::worker::stream::MAX_WORKER_MESSAGE } else { DEFAULT_LIMIT };
        let unary = path.starts_with(UNARY_PREFIX);
        let req = req.map(|body| tonic::body::Body::new(Framed::new(tonic::body::Body::new(body), limit, unary)));
        self.inner.call(req)
    }
}

/// Where the reader is in the body's frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// This many bytes of a 5-byte frame header are read (kept in `header`).
    Header(usize),
    /// This many bytes of the current message are still to come.
    Message(usize),
    /// An error was returned: the body ends.
    Failed,
}

/// A request body whose framing is checked as it passes.
struct Framed {
    body: tonic::body::Body,
    state: State,
    /// An error found in a chunk whose first bytes were passed on: returned next.
    pending: Option<Status>,
    header: [u8; 5],
    limit: usize,
    /// Whether the method takes exactly one message (so a body without one is an error).
    unary: bool,
    messages: u64,
}

impl Framed {
    fn new(body: tonic::body::Body, limit: usize, unary: bool) -> Self {
        Framed { body, state: State::Header(0), pending: None, header: [0; 5], limit, unary, messages: 0 }
    }

    /// Follows `data` through the frames. An error says what is wrong with them, and how many bytes
    /// of `data` came before the header of the frame at fault (they pass, so that the messages
    /// before it are read as they would have been).
    fn follow(&mut self, data: &[u8]) -> Result<(), (usize, Status)> {
        let mut at = 0;
        // Where the header being read started in `data` (0 if in an earlier chunk).
        let mut header_start = 0;
        while at < data.len() {
            match self.state {
                State::Header(read) => {
                    if read == 0 {
                        header_start = at;
                    }
                    let n = (5 - read).min(data.len() - at);
                    self.header[read..read + n].copy_from_slice(&data[at..at + n]);
                    at += n;
                    if read + n < 5 {
                        self.state = State::Header(read + n);
                        continue;
                    }
                    self.header_done().map_err(|status| (header_start, status))?;
                }
                State::Message(left) => {
                    let n = left.min(data.len() - at);
                    at += n;
                    self.state = if n == left { self.message_done() } else { State::Message(left - n) };
                }
                State::Failed => return Ok(()),
            }
        }
        Ok(())
    }

    fn header_done(&mut self) -> Result<(), Status> {
        let flag = self.header[0];
        let len = u32::from_be_bytes([self.header[1], self.header[2], self.header[3], self.header[4]]);
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        match flag {
            0 => {}
            1 => {
                return Err(Status::invalid_argument(
                    "gRPC frame: the compressed-flag is set, and axd accepts no compression (send the message uncompressed)",
                ));
            }
            f => {
                return Err(Status::invalid_argument(format!(
                    "gRPC frame: compressed-flag {f} (the only valid flags are 0 and 1)"
                )));
            }
        }
        if len > self.limit {
            return Err(Status::resource_exhausted(format!(
                "gRPC frame: a message of {len} bytes, over this method's limit of {} bytes",
                self.limit
            )));
        }
        self.state = if len == 0 { self.message_done() } else { State::Message(len) };
        Ok(())
    }

    fn message_done(&mut self) -> State {
        self.messages += 1;
        State::Header(0)
    }

    /// The body ended: an error if it ended inside a frame, or without the one message of a unary
    /// call.
    fn ended(&self) -> Option<Status> {
        match self.state {
            State::Header(0) if self.unary && self.messages == 0 => {
                Some(Status::invalid_argument("no request message: the body holds no gRPC frame"))
            }
            State::Header(0) | State::Failed => None,
            State::Header(read) => {
                Some(Status::invalid_argument(format!("gRPC frame: the body ended after {read} of its 5 header bytes")))
            }
            State::Message(left) => Some(Status::invalid_argument(format!(
                "gRPC frame: the body ended {left} bytes short of the length its prefix gives"
            ))),
        }
    }
}

/// An error of the body below (as tonic converts it): what tonic-web could not read (an INTERNAL
/// status it made, without a source) is the caller's; anything else (a broken connection, which
/// carries its error as the source) passes as it is.
fn from_below(status: Status) -> Status {
    use std::error::Error as _;
    if status.code() == tonic::Code::Internal && status.source().is_none() {
        Status::invalid_argument(format!("unreadable request body: {}", status.message()))
    } else {
        status
    }
}

impl Body for Framed {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        if let Some(status) = self.pending.take() {
            self.state = State::Failed;
            return Poll::Ready(Some(Err(status)));
        }
        if self.state == State::Failed {
            return Poll::Ready(None);
        }
        let polled = std::task::ready!(Pin::new(&mut self.body).poll_frame(cx));
        let answer = match polled {
            None => self.ended().map(Err),
            Some(Err(e)) => Some(Err(from_below(e))),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(mut data) => match self.follow(data.chunk()) {
                    Ok(()) => Some(Ok(Frame::data(data))),
                    Err((0, status)) => Some(Err(status)),
                    Err((before, status)) => {
                        self.pending = Some(status);
                        Some(Ok(Frame::data(data.split_to(before))))
                    }
                },
                Err(frame) => Some(Ok(frame)),
            },
        };
        if matches!(answer, Some(Err(_))) {
            self.state = State::Failed;
        }
        Poll::Ready(answer)
    }

    fn is_end_stream(&self) -> bool {
        // Never ahead of the check at the end (a unary body without a message).
        self.state == State::Failed && self.pending.is_none()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(unary: bool) -> Framed {
        Framed::new(tonic::body::Body::empty(), 100, unary)
    }

    fn frame(flag: u8, len: u32, body: &[u8]) -> Vec<u8> {
        let mut v = vec![flag];
        v.extend_from_slice(&len.to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn well_framed_messages_pass_in_any_chunks() {
        let mut bytes = frame(0, 3, b"abc");
        bytes.extend(frame(0, 0, b""));
        bytes.extend(frame(0, 2, b"xy"));
        for size in 1..bytes.len() {
            let mut f = framed(true);
            for chunk in bytes.chunks(size) {
                f.follow(chunk).expect("well framed");
            }
            assert_eq!(f.ended().map(|s| s.code()), None, "chunks of {size}");
            assert_eq!(f.messages, 3);
        }
    }

    #[test]
    fn broken_framing_is_the_caller_s_error() {
        let code = |bytes: &[u8]| {
            let mut f = framed(true);
            f.follow(bytes).err().map(|(_, s)| s).or_else(|| f.ended()).map(|s| s.code())
        };
        use tonic::Code::{InvalidArgument, ResourceExhausted};
        assert_eq!(code(&frame(1, 3, b"abc")), Some(InvalidArgument), "compressed");
        assert_eq!(code(&frame(7, 3, b"abc")), Some(InvalidArgument), "bad flag");
        assert_eq!(code(&frame(0, 101, b"")), Some(ResourceExhausted), "over the limit");
        assert_eq!(code(&frame(0, 10, b"abc")), Some(InvalidArgument), "short body");
        assert_eq!(code(&[0, 0]), Some(InvalidArgument), "short header");
        assert_eq!(code(b""), Some(InvalidArgument), "unary without a message");
        let streaming = framed(false);
        assert!(streaming.ended().is_none(), "a stream may be empty");
        // The frames before the one at fault pass: the error says where its header began.
        let mut two = frame(0, 3, b"abc");
        two.extend(frame(1, 1, b"z"));
        let mut f = framed(false);
        assert_eq!(f.follow(&two).err().map(|(at, _)| at), Some(8));
    }

    #[test]
    fn what_tonic_web_could_not_read_is_invalid_argument_and_a_broken_connection_is_not() {
        let web = from_below(Status::internal("tonic-web: malformed base64 request"));
        assert_eq!(web.code(), tonic::Code::InvalidArgument);
        assert!(web.message().contains("malformed base64"), "{}", web.message());
        let io = Status::from_error(Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionReset)));
        assert_eq!(from_below(io.clone()).code(), io.code());
    }
}
