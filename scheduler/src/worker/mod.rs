//! Worker sessions: the Connect stream, lease renewal, commands from other axd, the group-commit
//! writer of worker messages, and the session rows in the database. The registry of this axd's
//! streams and their credits is routing's (`routing/registry.rs`); the queue to the writer is in
//! `core/queue.rs`, so that the loops may submit to it too.

pub mod commands;
pub mod lease;
pub mod sessions;
pub mod stream;
pub mod writer;
