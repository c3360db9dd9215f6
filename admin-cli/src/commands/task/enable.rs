//! `axctl task enable NAME`: lets a task fire again, from now on.

use anyhow::Result;
use ax_proto::v1::EnableTaskRequest;
use clap::Args;

use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
};

/// Arguments of `task enable`.
#[derive(Args, Debug)]
pub struct EnableArgs {
    /// Task name.
    pub name: String,
}

/// Enables the task.
pub async fn run(args: EnableArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.enable_task(EnableTaskRequest { name: args.name }).await.rpc()?;
    super::print_task(ctx, &required(response.task, "the task")?)
}
