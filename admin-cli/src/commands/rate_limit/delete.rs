//! `axctl rate-limit delete APP`: removes an app's rate limit (NOT_FOUND if it has none).

use anyhow::Result;
use ax_proto::v1::DeleteAppLimitRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat},
};

/// Arguments of `rate-limit delete`.
#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// The app whose limit is removed.
    pub app: String,
}

/// JSON output of `rate-limit delete`.
#[derive(Serialize)]
struct Deleted {
    deleted: String,
}

/// Deletes the limit.
pub async fn run(args: DeleteArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    client.delete_app_limit(DeleteAppLimitRequest { app: args.app.clone() }).await.rpc()?;
    let view = Deleted { deleted: args.app };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&format!("deleted rate limit of app {}", view.deleted)),
    }
}
