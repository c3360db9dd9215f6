//! axd, the ax scheduler, as a library.
//!
//! - [`store`]: a thin executor over SQLite, PostgreSQL and MySQL/MariaDB (no decisions);
//! - [`model`], [`schedule`], [`cron`], [`window`]: the domain, schedules, their windows and jitter,
//!   and the trigger engine;
//! - [`lifecycle`]: the instance state machine and the transactions that apply it;
//! - [`loops`]: the trigger, dispatch and sweeper loops, one file each;
//! - [`worker`]: worker sessions (stream, registry, leases, commands, the group-commit writer);
//! - [`grpc`]: the AdminService and the conversions between the wire and the domain;
//! - [`core`]: what the loops and services share (pools, signals, settings, clock, health);
//! - [`traces`]: OpenTelemetry spans of each instance's life, exported over OTLP when configured;
//! - [`console`]: the web console's port (`--console-listen`): its embedded page and AdminService
//!   over gRPC-Web;
//! - [`prometheus`]: the metrics of this process and `GET /metrics` (`--metrics-listen`);
//! - [`server`]: assembles all of it; the binary `axd` (src/main.rs) parses configuration and calls
//!   [`server::start`].

pub mod alerts;
pub mod auth;
pub mod birth;
pub mod command;
pub mod config;
pub mod console;
pub mod core;
pub mod cron;
pub mod error;
pub mod explain;
pub mod framing;
pub mod grpc;
pub mod lifecycle;
pub mod logging;
pub mod loops;
pub mod model;
pub mod origin;
pub mod prometheus;
pub mod routing;
pub mod schedule;
pub mod scrape;
pub mod server;
pub mod store;
pub mod text;
pub mod traces;
pub mod transitions;
pub mod transport;
pub mod validate;
pub mod window;
pub mod wire;
pub mod worker;
