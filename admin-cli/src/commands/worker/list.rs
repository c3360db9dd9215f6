//! `axctl worker list`: who is connected, where, with how much room.

use anyhow::Result;
use ax_proto::v1::ListWorkersRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat, Table, WorkerView},
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
        OutputFormat::Table => {
            let mut table = Table::new([
                "APP",
                "WORKER",
                "SESSION",
                "SCHEDULER",
                "CAPACITY",
                "CREDITS",
                "IN FLIGHT",
                "HANDLERS",
                "LAST SEEN",
            ]);
            for w in &view.workers {
                table.row([
                    w.app.clone(),
                    w.worker_id.clone(),
                    w.session_id.clone(),
                    w.scheduler_id.clone(),
                    w.capacity.to_string(),
                    w.credits.to_string(),
                    w.in_flight.to_string(),
                    w.handlers.join(","),
                    output::or_dash(w.last_seen_time.clone()),
                ]);
            }
            output::print_page(&table, "workers connected", "")
        }
    }
}
