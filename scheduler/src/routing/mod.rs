//! Routing and limits: where an instance may run and how many run at once — all of it in this
//! folder, its explanation beside it.
//!
//! The decisions that more than one axd must agree on are made from database rows (cooldown
//! streaks, rate-limit buckets, running counts under a per-task lock, parent/child links); what
//! only the axd holding a stream can know (its credits) stays in that axd's registry.
//!
//! The rules, pure, each with its own tests (`scheduler/house.toml` keeps them off the store):
//! - [`selector`]: label selectors, parsed and matched against a worker's Hello labels;
//! - [`hash`]: rendezvous hashing for routing HASH, and the key of an instance;
//! - [`keypath`]: the params paths of concurrency keys and uniqueness windows, and their values;
//! - [`cooldown`]: the failure streak of a worker for a handler, and when it cools down;
//! - [`bucket`]: the token bucket of an app's rate limit;
//! - [`fanout`]: the children of broadcast and sharded fires, and their parent's verdict;
//! - [`state`]: cooldowns and the cluster's workers as this axd last read them.
//!
//! Applying them:
//! - [`registry`]: this axd's worker streams, their credits and what they hold;
//! - [`route`]: picks a stream of the registry for one ready instance (or says why none);
//! - [`explain`]: the routing side of `axctl task explain` (which selector found no worker, who
//!   cools down, a task at its limit, an app out of tokens), a pure function of records.
//!
//! The claim transaction that applies them under row locks — ready instances locked, app and task
//! limits applied, routed, marked DISPATCHED — is the dispatch loop's (`loops/dispatch/claim.rs`);
//! its statements are the store's: `tx.instances().select_ready(..)` (`store/ready.rs`) and
//! `tx.limits()` (`store/routing.rs`). Nothing in this folder reaches the store.

use std::time::Duration;

pub mod bucket;
pub mod cooldown;
pub mod explain;
pub mod fanout;
pub mod hash;
pub mod keypath;
pub mod registry;
pub mod route;
pub mod selector;
pub mod state;

/// A retry with `--retry-on other` waits this long after it is due for a worker other than the
/// one its last attempt failed on; after that, that worker may take it too.
pub const RETRY_ELSEWHERE_WAIT: Duration = Duration::from_secs(5);

pub use state::RoutingState;
