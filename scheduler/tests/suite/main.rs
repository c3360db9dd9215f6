//! The scheduler crate's integration tests, one test binary.

mod backoff;
mod engine;
mod layout;
