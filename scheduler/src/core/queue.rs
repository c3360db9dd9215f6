//! The queue between worker streams and the group-commit writer ([`crate::worker::writer`]): streams
//! submit messages here; the writer takes them in batches.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::lifecycle::WorkerOp;
use crate::routing::registry::Session;

/// Most messages applied in one transaction.
pub const MAX_BATCH: usize = 512;
/// Messages waiting for the writer before streams wait.
pub const QUEUE: usize = 8192;

// A session keeps the claimed row of every attempt whose messages wait here or are held back
// for a round (see `Session::keep_row`).
const _: () = assert!(crate::routing::registry::KEPT_WHILE_QUEUED >= QUEUE + MAX_BATCH);

/// A queued worker message and the stream to answer on.
pub struct Pending {
    /// The message.
    pub op: WorkerOp,
    /// Where to send the ack or cancel (`None`: nobody to answer).
    pub session: Option<Arc<Session>>,
}

/// The sending side of the writer queue.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Pending>,
}

/// The receiving side, consumed by [`crate::worker::writer::run`].
pub struct WriterQueue(pub(crate) mpsc::Receiver<Pending>);

impl Writer {
    /// A writer queue.
    pub fn new() -> (Writer, WriterQueue) {
        let (tx, rx) = mpsc::channel(QUEUE);
        (Writer { tx }, WriterQueue(rx))
    }

    /// Queues a message; waits while the queue is full. False if axd is shutting down.
    pub async fn submit(&self, op: WorkerOp, session: Option<Arc<Session>>) -> bool {
        self.tx.send(Pending { op, session }).await.is_ok()
    }
}
