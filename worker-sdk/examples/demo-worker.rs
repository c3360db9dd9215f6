//! A worker with a few demonstration handlers, used by the README quick start and by the tests.
//!
//! Handlers:
//! - `echo`: returns its params.
//! - `noop`: does nothing.
//! - `sleep`: `{"ms": 500, "attempts": [1]}` sleeps (only on the listed attempts, if given); stops
//!   early, failing, when canceled. With `"block": true` it blocks its thread instead, deaf to
//!   cancellation (a handler that cannot be stopped), and fails afterwards if it was canceled.
//! - `fail`: `{"message": "...", "retryable": true}` fails.
//! - `flaky`: fails (retryable) on attempt 1, succeeds afterwards.
//! - `panic`: panics.
//!
//! With `--exec-log FILE` the start and the end of every execution are appended as JSON lines
//! (instance, attempt, worker, handler, trigger time, time, outcome, and `fenced` when the attempt's
//! lease had run out by its end), so tests can check what really ran where and when; a killed
//! worker leaves a start without an end.

use std::{io::Write as _, path::PathBuf, sync::Arc, time::Duration};

use anyhow::Context as _;
use ax_worker::{Context, HandlerError, Level, Worker};
use clap::Parser;

#[derive(Debug, Parser)]
#[command(about = "ax demo worker")]
struct Args {
    /// axd endpoint; repeat (or separate with commas) for failover.
    #[arg(long, env = "AX_ENDPOINT", value_delimiter = ',', default_value = "http://127.0.0.1:7070")]
    endpoint: Vec<String>,
    /// App name.
    #[arg(long, default_value = "demo")]
    app: String,
    /// Worker id [default: <host>-<pid>].
    #[arg(long)]
    worker_id: Option<String>,
    /// Attempts run at once.
    #[arg(long, default_value_t = 4)]
    capacity: u32,
    /// CA certificate (PEM) for mTLS.
    #[arg(long, env = "AX_CA")]
    ca: Option<PathBuf>,
    /// Worker certificate (PEM) for mTLS.
    #[arg(long, env = "AX_CERT")]
    cert: Option<PathBuf>,
    /// Worker key (PEM) for mTLS.
    #[arg(long, env = "AX_KEY")]
    key: Option<PathBuf>,
    /// Append one JSON line per execution to this file.
    #[arg(long)]
    exec_log: Option<PathBuf>,
    /// Seconds a graceful shutdown waits for running handlers.
    #[arg(long, default_value_t = 30)]
    shutdown_deadline: u64,
    /// OpenTelemetry: export each run as a span to this OTLP/gRPC collector (http://host:port).
    #[arg(long, env = "AX_OTLP_ENDPOINT")]
    otlp_endpoint: Option<String>,
    /// Print `acked N` on stdout every 10 ms while the count of results axd acknowledged (durably
    /// recorded) grows: how ax-bench learns a burn-down's end without querying the database.
    #[arg(long)]
    print_acked: bool,
}

#[derive(serde::Deserialize, Default)]
struct SleepParams {
    #[serde(default)]
    ms: u64,
    #[serde(default)]
    attempts: Option<Vec<u32>>,
    #[serde(default)]
    block: bool,
}

#[derive(serde::Deserialize, Default)]
struct FailParams {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    retryable: bool,
}

struct ExecLog {
    worker: String,
    file: Option<std::sync::Mutex<std::fs::File>>,
}

impl ExecLog {
    fn write(&self, line: serde_json::Value) {
        let Some(file) = &self.file else { return };
        // One write per line: `writeln!` on the unbuffered file made a system call per JSON token
        // (~75 µs a line), and handlers starting together queued behind each other's lines.
        let mut text = line.to_string();
        text.push('\n');
        let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = f.write_all(text.as_bytes());
    }

    fn line(&self, ctx: &Context, event: &str, outcome: Option<&str>) -> serde_json::Value {
        let mut line = serde_json::json!({
            "event": event,
            "instance": ctx.instance_id,
            "attempt": ctx.attempt,
            "worker": self.worker,
            "handler": ctx.handler,
            "task": ctx.task_name,
            "trigger_time": ctx.trigger_time.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            "at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            "outcome": outcome,
        });
        if event == "end" && ctx.lease_expired() {
            // The attempt's lease ran out before the handler ended: the SDK fenced it, and the
            // handler did no work past that point.
            line["fenced"] = serde_json::Value::Bool(true);
        }
        line
    }
}

/// Wraps a handler so its start and end are logged (a killed worker leaves a start without an end).
async fn logged<F, Fut>(log: Arc<ExecLog>, ctx: Context, f: F) -> Result<String, HandlerError>
where
    F: FnOnce(Context) -> Fut,
    Fut: std::future::Future<Output = Result<String, HandlerError>>,
{
    /// Writes the end of an execution whose handler was dropped before it returned (the SDK
    /// aborted it): outcome ABORTED.
    struct Dropped(Option<(Arc<ExecLog>, Context)>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            if let Some((log, ctx)) = self.0.take() {
                log.write(log.line(&ctx, "end", Some("ABORTED")));
            }
        }
    }
    log.write(log.line(&ctx, "start", None));
    let mut guard = Dropped(Some((log, ctx.clone())));
    let r = f(ctx).await;
    if let Some((log, probe)) = guard.0.take() {
        log.write(log.line(&probe, "end", Some(if r.is_ok() { "SUCCESS" } else { "FAILED" })));
    }
    r
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    use tracing_subscriber::{filter::Targets, layer::SubscriberExt as _, util::SubscriberInitExt as _};
    // AX_LOG: `target=level` directives and a default level, e.g. `info,ax_worker=debug`.
    let filter = std::env::var("AX_LOG").ok().and_then(|f| f.parse::<Targets>().ok());
    tracing_subscriber::fmt()
        .with_max_level(tracing::level_filters::LevelFilter::TRACE)
        .with_writer(std::io::stderr)
        // Colour only on a terminal, and not when NO_COLOR is set (https://no-color.org).
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .finish()
        .with(filter.unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO)))
        .init();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = Args::parse();
    let mut builder = Worker::builder()
        .endpoints(args.endpoint.clone())
        .app(args.app.clone())
        .capacity(args.capacity)
        .shutdown_deadline(Duration::from_secs(args.shutdown_deadline))
        .label("example", "demo-worker");
    if let Some(id) = &args.worker_id {
        builder = builder.worker_id(id.clone());
    }
    if let Some(url) = &args.otlp_endpoint {
        builder = builder.otlp_endpoint(url.clone());
    }
    if let (Some(ca), Some(cert), Some(key)) = (&args.ca, &args.cert, &args.key) {
        builder = builder.tls_files(ca, cert, key)?;
    }
    let worker_id = args.worker_id.clone().unwrap_or_else(ax_worker::default_worker_id);
    let file = match &args.exec_log {
        Some(p) => Some(std::sync::Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("{}", p.display()))?,
        )),
        None => None,
    };
    let log = Arc::new(ExecLog { worker: worker_id, file });

    let l = log.clone();
    builder = builder
        .handler("echo", move |ctx: Context| logged(l.clone(), ctx, |ctx| async move { Ok(ctx.params_raw.clone()) }));
    let l = log.clone();
    builder = builder.handler("noop", move |ctx: Context| logged(l.clone(), ctx, |_| async { Ok(String::new()) }));
    let l = log.clone();
    builder = builder.handler("sleep", move |ctx: Context| {
        logged(l.clone(), ctx, |ctx| async move {
            let p: SleepParams = if ctx.params_raw.trim() == "{}" { SleepParams::default() } else { ctx.params()? };
            let applies = p.attempts.as_ref().is_none_or(|a| a.contains(&ctx.attempt));
            if applies && p.ms > 0 && p.block {
                // Deaf to cancellation and to an abort: only its end lets the worker know.
                std::thread::sleep(Duration::from_millis(p.ms));
                if ctx.is_cancelled() {
                    return Err(HandlerError::retryable("canceled while blocked"));
                }
            } else if applies && p.ms > 0 {
                ctx.log(Level::Info, format!("sleeping {} ms", p.ms));
                tokio::select! {
                    biased;
                    () = ctx.cancellation().cancelled() => {
                        ctx.log(Level::Warn, "canceled while sleeping");
                        return Err(HandlerError::retryable("canceled while sleeping"));
                    }
                    () = tokio::time::sleep(Duration::from_millis(p.ms)) => {}
                }
                // Waking from a long pause, the sleep and the lease may both have run out: the
                // work counts only if the attempt is still ours.
                if ctx.is_cancelled() {
                    return Err(HandlerError::retryable("canceled while sleeping"));
                }
            }
            Ok(format!("{{\"slept_ms\":{}}}", if applies { p.ms } else { 0 }))
        })
    });
    let l = log.clone();
    builder = builder.handler("fail", move |ctx: Context| {
        logged(l.clone(), ctx, |ctx| async move {
            let p: FailParams = ctx.params().unwrap_or_default();
            let message = p.message.unwrap_or_else(|| "failed on purpose".into());
            Err(if p.retryable { HandlerError::retryable(message) } else { HandlerError::fatal(message) })
        })
    });
    let l = log.clone();
    builder = builder.handler("flaky", move |ctx: Context| {
        logged(l.clone(), ctx, |ctx| async move {
            if ctx.attempt == 1 { Err(HandlerError::retryable("first attempts fail")) } else { Ok("ok".to_owned()) }
        })
    });
    builder = builder.handler("panic", |_ctx: Context| async move {
        if std::hint::black_box(true) {
            panic!("demo panic");
        }
        Ok::<_, HandlerError>(())
    });
    let worker = builder.build()?;
    // Caught from before the line that says the worker serves: a SIGTERM sent right after it
    // drains the worker instead of killing it by the default action.
    use tokio::signal::unix::{SignalKind, signal};
    let (mut term, mut int) = (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?);
    eprintln!("demo-worker {} serving app {:?} via {}", worker.worker_id(), args.app, args.endpoint.join(","));
    if args.print_acked {
        tokio::spawn(print_acked(worker.stats()));
    }
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

/// Prints the acknowledged-result count each time it has grown, checked every 10 ms.
async fn print_acked(stats: ax_worker::Stats) {
    use std::io::Write as _;
    let mut shown = 0;
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    loop {
        tick.tick().await;
        let acked = stats.acked();
        if acked != shown {
            shown = acked;
            let mut out = std::io::stdout().lock();
            if writeln!(out, "acked {acked}").and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    }
}
