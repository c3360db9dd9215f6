//! Worker sessions: the Connect stream, the registry of this axd's streams and their credits, lease
//! renewal, commands from other axd, the group-commit writer of worker messages, and the session
//! rows in the database.

pub mod commands;
pub mod lease;
pub mod queue;
pub mod registry;
pub mod route;
pub mod sessions;
pub mod stream;
pub mod writer;
