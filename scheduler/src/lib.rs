//! axd, the ax scheduler, as a library: the trigger engine, the store on SQLite/PostgreSQL/MySQL,
//! the trigger, dispatch and sweeper loops, and the gRPC services.
//!
//! The binary `axd` (src/main.rs) only parses configuration and calls [`server::run`].

pub mod clock;
pub mod cron;
pub mod error;
pub mod model;
pub mod schedule;
pub mod store;
pub mod validate;
pub mod trigger;
pub mod auth;
pub mod convert;
pub mod service;
pub mod config;
pub mod server;
