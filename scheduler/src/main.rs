//! `axd`: parses the configuration, starts the scheduler and stops it on SIGTERM/SIGINT.

use std::process::ExitCode;

use anyhow::Context as _;
use ax_scheduler::{
    config::{Args, Config},
    server,
};
use clap::Parser as _;

fn main() -> ExitCode {
    let config = match Config::resolve(Args::parse()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("axd: {e}");
            return ExitCode::from(2);
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_new(&config.log).unwrap_or_else(|e| {
        eprintln!("axd: log: {e}; using \"info\"");
        tracing_subscriber::EnvFilter::new("info")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Colour only on a terminal, and not when NO_COLOR is set (https://no-color.org).
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("axd: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("axd: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(config: Config) -> anyhow::Result<()> {
    // One TLS crypto provider for the whole process.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let running = server::start(&config, None).await.context("starting axd")?;
    // The readiness line: scripts and tests wait for it (the first line).
    println!("axd listening on {} (scheduler {})", running.addr, running.scheduler_id());
    if let Some(addr) = running.metrics_addr {
        println!("axd metrics at http://{addr}/metrics");
    }
    shutdown_signal().await?;
    tracing::info!("shutting down (at most {:?})", config.shutdown_timeout);
    running.shutdown(config.shutdown_timeout).await;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}
