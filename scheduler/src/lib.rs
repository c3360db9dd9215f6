//! axd, the ax scheduler, as a library: the trigger engine, the store on SQLite/PostgreSQL/MySQL,
//! the trigger, dispatch and sweeper loops, and the gRPC services.
//!
//! The binary `axd` (src/main.rs) only parses configuration and calls [`server::run`].

pub mod auth;
pub mod clock;
pub mod commands;
pub mod config;
pub mod convert;
pub mod cron;
pub mod dispatch;
pub mod error;
pub mod health;
pub mod lease;
pub mod lifecycle;
pub mod model;
pub mod registry;
pub mod schedule;
pub mod server;
pub mod service;
pub mod store;
pub mod sweeper;
pub mod trigger;
pub mod validate;
pub mod writer;
