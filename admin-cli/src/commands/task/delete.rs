//! `axctl task delete NAME`: removes a task; its PENDING instances are canceled.

use anyhow::Result;
use ax_proto::v1::DeleteTaskRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat},
};

/// Arguments of `task delete`.
#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// Task name.
    pub name: String,
}

/// JSON output of `task delete`.
#[derive(Serialize)]
struct Deleted {
    deleted: String,
    canceled_instances: u64,
}

/// Deletes the task.
pub async fn run(args: DeleteArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.delete_task(DeleteTaskRequest { name: args.name.clone() }).await.rpc()?;
    let view = Deleted { deleted: args.name, canceled_instances: response.canceled_instances };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&format!(
            "deleted task {} ({} pending instances canceled)",
            view.deleted, view.canceled_instances
        )),
    }
}
