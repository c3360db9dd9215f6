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
    // The handlers come first: a SIGTERM sent as soon as the readiness line is out (by a test, a
    // supervisor, an operator) must drain and stop axd, not kill it by the default action. They
    // were installed after that line once, and under load a SIGTERM arrived before them.
    let signals = ShutdownSignals::install()?;
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
    signals.recv().await;
    tracing::info!("shutting down (at most {:?})", config.shutdown_timeout);
    running.shutdown(config.shutdown_timeout).await;
    tracing::info!("stopped");
    Ok(())
}

/// SIGTERM and SIGINT, caught from [`ShutdownSignals::install`] on.
struct ShutdownSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl ShutdownSignals {
    fn install() -> Result<Self, CommandError> {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate()).map_err(|e| CommandError::Signal("SIGTERM", e))?;
        let int = signal(SignalKind::interrupt()).map_err(|e| CommandError::Signal("SIGINT", e))?;
        Ok(ShutdownSignals { term, int })
    }

    /// Until one of them arrives (or arrived since [`ShutdownSignals::install`]).
    async fn recv(mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
    }
}
