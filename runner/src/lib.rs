//! ax-runner: a ready-made ax worker, so that an operator can schedule work without writing and
//! deploying a worker of their own.
//!
//! It serves two handlers, each driven by the task's params:
//! - `http` ([`http::HttpExecutor`]): one HTTP request; the response body is the output;
//! - `shell` ([`shell::ShellExecutor`]): one allow-listed program with an argv; stdout is the output.
//!
//! What the runner may do beyond reading params — the secrets it may send, the private
//! destinations it may reach, the programs it may run — comes only from its own configuration file
//! ([`config::Config`]), never from params. Bad input fails the attempt without retries, with a
//! message naming the field (`params.url: required`); see [`params::Failure`].

pub mod config;
pub mod http;
pub mod params;
pub mod shell;
pub mod template;

use std::sync::Arc;

use ax_worker::{Context, HandlerError, WorkerBuilder};

/// The handler name of the http executor.
pub const HTTP_HANDLER: &str = "http";
/// The handler name of the shell executor.
pub const SHELL_HANDLER: &str = "shell";

/// Registers the `http` and `shell` handlers on `builder`.
pub fn handlers(builder: WorkerBuilder, config: Arc<Config>) -> Result<WorkerBuilder, rustls::Error> {
    let http = http::HttpExecutor::new(config.clone())?;
    let shell = shell::ShellExecutor::new(config);
    Ok(builder
        .handler(HTTP_HANDLER, move |ctx: Context| {
            let http = http.clone();
            async move { http.run(&ctx).await.map_err(HandlerError::from) }
        })
        .handler(SHELL_HANDLER, move |ctx: Context| {
            let shell = shell.clone();
            async move { shell.run(&ctx).await.map_err(HandlerError::from) }
        }))
}

pub use config::Config;
