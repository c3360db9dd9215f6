//! `axctl worker list`: who is connected, where, with how much room, and which handlers are cooling
//! down on which worker after consecutive failures.

use anyhow::Result;
use ax_proto::v1::ListWorkersRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat, WorkerView},
};

/// Arguments of `worker list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only workers of this app.
    #[arg(long)]
    pub app: Option<String>,
}

/// JSON output of `worker list`.
#[derive(Serialize)]
struct WorkerList {
    workers: Vec<WorkerView>,
}

/// Lists the workers.
pub async fn run(args: ListArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.list_workers(ListWorkersRequest { app: args.app.unwrap_or_default() }).await.rpc()?;
    let view = WorkerList { workers: response.workers.iter().map(WorkerView::from).collect() };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        // A cooldown whose end has passed is over even if the server still holds its time.
        OutputFormat::Table => {
            output::print_page(&output::worker_table(&view.workers, chrono::Utc::now()), "workers connected", "")
        }
    }
}
