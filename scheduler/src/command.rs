//! The `axd` command: parses the configuration, starts the scheduler and stops it on SIGTERM/SIGINT.
//!
//! It lives in the library, and `src/main.rs` only calls [`main`]: everything the command
//! instantiates is compiled once, here, and the binary crate links instead of compiling again.

use std::process::ExitCode;

use clap::Parser as _;

use crate::{
    config::{Args, Config},
    logging::LogFormat,
    server::{self, ServerError},
};

/// Why `axd` stopped with a failure.
#[derive(Debug, thiserror::Error)]
enum CommandError {
    #[error("starting axd: {0}")]
    Start(#[from] ServerError),
    #[error("installing the {0} handler: {1}")]
    Signal(&'static str, std::io::Error),
}

/// Runs `axd` with the process's arguments and environment: 0 after a graceful stop, 2 for a bad
/// configuration, 1 for any other failure.
pub fn main() -> ExitCode {
    let config = match Config::resolve(Args::parse()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("axd: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(e) = crate::logging::init(config.log_format, &config.log) {
        tracing::warn!(filter = %config.log, "log: {e}; using \"info\"");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("axd: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config_format = config.log_format;
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            // In JSON every stderr line is an object; the error above is the one.
            if config_format == LogFormat::Text {
                eprintln!("axd: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

async fn run(config: Config) -> Result<(), CommandError> {
    // One TLS crypto provider for the whole process.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let running = server::start(&config, None).await?;
    // The readiness line: scripts and tests wait for it (the first line).
    println!("axd listening on {} (scheduler {})", running.addr, running.scheduler_id());
    if let Some(addr) = running.metrics_addr {
        println!("axd metrics at http://{addr}/metrics");
    }
    if let Some(addr) = running.console_addr {
        let scheme = if config.tls.is_some() { "https" } else { "http" };
        println!("axd console at {scheme}://{addr}/");
    }
    shutdown_signal().await?;
    tracing::info!("shutting down (at most {:?})", config.shutdown_timeout);
    running.shutdown(config.shutdown_timeout).await;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() -> Result<(), CommandError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).map_err(|e| CommandError::Signal("SIGTERM", e))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| CommandError::Signal("SIGINT", e))?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}
