//! `axctl task create NAME ...`: registers a task and shows what the server stored (defaults
//! filled in) and when it will fire.

use anyhow::Result;
use ax_proto::v1::CreateTaskRequest;
use clap::Args;

use super::fields::TaskFields;
use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
};

/// Arguments of `task create`.
#[derive(Args, Debug)]
pub struct CreateArgs {
    /// Unique task name: letters, digits and . _ : - (at most 128).
    pub name: String,
    #[command(flatten)]
    pub fields: TaskFields,
}

/// Creates the task.
pub async fn run(args: CreateArgs, ctx: &Context) -> Result<()> {
    let mut spec = args.fields.to_change().spec;
    spec.name = args.name;
    let mut client = ctx.client().await?;
    let response = client.create_task(CreateTaskRequest { task: Some(spec) }).await.rpc()?;
    let task = required(response.task, "the task")?;
    super::print_task_and_preview(ctx, &task, response.preview.as_ref())
}
