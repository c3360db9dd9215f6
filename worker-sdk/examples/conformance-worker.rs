//! The Rust SDK's worker for the conformance kit (`ax-conformance -- <this binary>`).
//!
//! It serves the kit's handlers and takes its settings from the environment the kit sets:
//! `AX_ENDPOINT` (comma-separated), `AX_APP`, `AX_WORKER_ID`, `AX_CAPACITY`.
//!
//! - `echo`: returns its params.
//! - `sleep`: `{"ms": N}` sleeps N ms; canceled, it stops at once and fails. With
//!   `"ignore_cancel": true` it ignores its cancellation: only the SDK aborting it ends it early.
//! - `fail`: `{"message": "..."}` fails with that message.
//! - `panic`: panics.
//! - `big-output`: `{"bytes": N}` returns N bytes of `x`.

use std::time::Duration;

use ax_worker::{Context, HandlerError, Worker};

fn env(name: &str) -> anyhow::Result<String> {
    std::env::var(name).map_err(|_| anyhow::anyhow!("{name} is not set (the conformance kit sets it)"))
}

fn number(ctx: &Context, field: &str) -> Result<u64, HandlerError> {
    let params: serde_json::Value = ctx.params()?;
    params[field].as_u64().ok_or_else(|| HandlerError::fatal(format!("params.{field} must be a number")))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    use tracing_subscriber::{filter::Targets, layer::SubscriberExt as _, util::SubscriberInitExt as _};
    // AX_LOG: `target=level` directives and a default level, e.g. `info,ax_worker=debug`.
    let filter = std::env::var("AX_LOG").ok().and_then(|f| f.parse::<Targets>().ok());
    tracing_subscriber::fmt()
        .with_max_level(tracing::level_filters::LevelFilter::TRACE)
        .with_writer(std::io::stderr)
        .with_ansi(false) // read from the kit's log files, not a terminal
        .finish()
        .with(filter.unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO)))
        .init();
    let worker = Worker::builder()
        .endpoints(env("AX_ENDPOINT")?.split(','))
        .app(env("AX_APP")?)
        .worker_id(env("AX_WORKER_ID")?)
        .capacity(env("AX_CAPACITY")?.parse()?)
        .reconnect_max(Duration::from_secs(1))
        .handler("echo", |ctx: Context| async move { Ok::<_, HandlerError>(ctx.params_raw.clone()) })
        .handler("sleep", |ctx: Context| async move {
            let ms = number(&ctx, "ms")?;
            let params: serde_json::Value = ctx.params()?;
            if params["ignore_cancel"].as_bool() == Some(true) {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                return Ok(String::new());
            }
            tokio::select! {
                () = ctx.cancellation().cancelled() => Err(HandlerError::retryable("canceled")),
                () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(String::new()),
            }
        })
        .handler("fail", |ctx: Context| async move {
            let params: serde_json::Value = ctx.params()?;
            Err::<String, _>(HandlerError::fatal(params["message"].as_str().unwrap_or("failed on purpose")))
        })
        .handler("panic", |_ctx: Context| async move {
            if std::hint::black_box(true) {
                panic!("conformance: panicking on purpose");
            }
            Ok::<_, HandlerError>(String::new())
        })
        .handler("big-output", |ctx: Context| async move {
            let n = number(&ctx, "bytes")?;
            Ok::<_, HandlerError>("x".repeat(usize::try_from(n).unwrap_or(usize::MAX)))
        })
        .build()?;
    worker
        .run_until(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
