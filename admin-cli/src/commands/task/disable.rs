//! `axctl task disable NAME`: stops a task from firing; its instances are left alone.

use anyhow::Result;
use ax_proto::v1::DisableTaskRequest;
use clap::Args;

use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
};

/// Arguments of `task disable`.
#[derive(Args, Debug)]
pub struct DisableArgs {
    /// Task name.
    pub name: String,
}

/// Disables the task.
pub async fn run(args: DisableArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.disable_task(DisableTaskRequest { name: args.name }).await.rpc()?;
    super::print_task(ctx, &required(response.task, "the task")?)
}
