//! `ax-runner`: the worker binary. Reads and checks its configuration file, then serves the `http`
//! and `shell` handlers for one app until SIGTERM or SIGINT, which drain it gracefully.

use std::{path::PathBuf, sync::Arc, time::Duration};

use anyhow::Context as _;
use ax_runner::Config;
use ax_worker::Worker;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(name = "ax-runner", about = "ax worker running http requests and allow-listed commands from task params")]
struct Args {
    /// Configuration file (TOML): secrets, http.allow, shell.allow, default timeouts. Without it
    /// the runner has no secrets, reaches only public addresses and runs no command.
    #[arg(long, env = "AX_RUNNER_CONFIG")]
    config: Option<PathBuf>,
    /// Check the configuration file, print `ok` and exit.
    #[arg(long)]
    check_config: bool,
    /// axd endpoint; repeat (or separate with commas) for failover.
    #[arg(long, env = "AX_ENDPOINT", value_delimiter = ',', default_value = "http://127.0.0.1:7070")]
    endpoint: Vec<String>,
    /// App whose http and shell tasks this runner serves.
    #[arg(long, env = "AX_APP", default_value = "runner")]
    app: String,
    /// Worker id, stable across restarts of one deployment slot [default: <host>-<pid>].
    #[arg(long)]
    worker_id: Option<String>,
    /// Attempts run at once (1-10000).
    #[arg(long, default_value_t = 4)]
    capacity: u32,
    /// CA certificate (PEM) for mTLS.
    #[arg(long, env = "AX_CA")]
    ca: Option<PathBuf>,
    /// Worker certificate (PEM) for mTLS (identity spiffe://ax/worker/<app>).
    #[arg(long, env = "AX_CERT")]
    cert: Option<PathBuf>,
    /// Worker key (PEM) for mTLS.
    #[arg(long, env = "AX_KEY")]
    key: Option<PathBuf>,
    /// Seconds a graceful shutdown waits for running attempts before canceling them.
    #[arg(long, default_value_t = 30)]
    shutdown_deadline: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    use tracing_subscriber::{filter::Targets, layer::SubscriberExt as _, util::SubscriberInitExt as _};
    // AX_LOG: `target=level` directives and a default level, e.g. `info,ax_worker=debug`.
    let filter = std::env::var("AX_LOG").ok().and_then(|f| f.parse::<Targets>().ok());
    tracing_subscriber::fmt()
        .with_max_level(tracing::level_filters::LevelFilter::TRACE)
        .with_writer(std::io::stderr)
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .finish()
        .with(filter.unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO)))
        .init();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = Args::parse();
    let config = match &args.config {
        Some(path) => Config::load(path).context("configuration")?,
        None => Config::parse("", |_| None).context("configuration")?,
    };
    if args.check_config {
        println!("ok");
        return Ok(());
    }
    let mut builder = Worker::builder()
        .endpoints(args.endpoint.clone())
        .app(args.app.clone())
        .capacity(args.capacity)
        .shutdown_deadline(Duration::from_secs(args.shutdown_deadline))
        .label("runner", env!("CARGO_PKG_VERSION"));
    if let Some(id) = &args.worker_id {
        builder = builder.worker_id(id.clone());
    }
    match (&args.ca, &args.cert, &args.key) {
        (Some(ca), Some(cert), Some(key)) => builder = builder.tls_files(ca, cert, key)?,
        (None, None, None) => {}
        _ => anyhow::bail!("--ca, --cert and --key go together"),
    }
    let worker = ax_runner::handlers(builder, Arc::new(config))?.build()?;
    use tokio::signal::unix::{SignalKind, signal};
    let (mut term, mut int) = (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?);
    eprintln!("ax-runner {} serving app {:?} via {}", worker.worker_id(), args.app, args.endpoint.join(","));
    worker
        .run_until(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        })
        .await?;
    Ok(())
}
