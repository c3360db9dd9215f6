//! `axctl task explain NAME [--at TIME]`: why a task did, or did not, run.

use anyhow::Result;
use ax_proto::v1::ExplainTaskRequest;
use clap::Args;

use crate::{
    args::parse_timestamp,
    client::RpcResultExt as _,
    commands::Context,
    output::{self, ExplainView, OutputFormat},
};

/// Arguments of `task explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// Task name.
    pub name: String,
    /// Explain this instant instead of now (RFC 3339 with an offset, e.g. 2026-03-08T02:30:00-05:00):
    /// fires at or before it are "recent", later ones "next".
    #[arg(long, value_parser = parse_timestamp)]
    pub at: Option<prost_types::Timestamp>,
    /// How many recent instances, next fires and task events (1-100).
    #[arg(long, default_value_t = 10)]
    pub limit: u32,
}

/// Asks axd and prints the answer.
pub async fn run(args: ExplainArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response =
        client.explain_task(ExplainTaskRequest { name: args.name, at: args.at, limit: args.limit }).await.rpc()?;
    let view = ExplainView::from(&response);
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&output::explain_report(&view)),
    }
}
