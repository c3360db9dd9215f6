//! Routing and limits: where an instance may run and how many run at once.
//!
//! The decisions that more than one axd must agree on are made from database rows (cooldown
//! streaks, rate-limit buckets, running counts under a per-task lock, parent/child links); what
//! only the axd holding a stream can know (its credits) stays in that axd's registry. This module
//! holds the pure parts, each with its own tests:
//!
//! - [`selector`]: label selectors, parsed and matched against a worker's Hello labels;
//! - [`hash`]: rendezvous hashing for routing HASH, and the key of an instance;
//! - [`cooldown`]: the failure streak of a worker for a handler, and when it cools down;
//! - [`bucket`]: the token bucket of an app's rate limit;
//! - [`fanout`]: the children of broadcast and sharded fires, and their parent's verdict.
//!
//! The dispatcher (`loops/dispatch.rs`, `worker/registry.rs`) and the lifecycle apply them.

use std::time::Duration;

pub mod bucket;
pub mod cooldown;
pub mod fanout;
pub mod hash;
pub mod selector;
pub mod state;

/// A retry with `--retry-on other` waits this long after it is due for a worker other than the
/// one its last attempt failed on; after that, that worker may take it too.
pub const RETRY_ELSEWHERE_WAIT: Duration = Duration::from_secs(5);

pub use state::RoutingState;
