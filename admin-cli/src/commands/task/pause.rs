//! `axctl task pause NAME --note TEXT [--until TIME]` and `axctl task resume NAME`: stop and restart
//! a task's schedule, saying why. Fires that fall in a pause are not run (no catch-up when it ends);
//! `task get` and `task list` show who paused it, why and until when.

use anyhow::Result;
use ax_proto::v1::{PauseTaskRequest, ResumeTaskRequest};
use clap::Args;

use crate::{
    args::parse_timestamp,
    client::RpcResultExt as _,
    commands::{Context, required},
};

/// Arguments of `task pause`.
#[derive(Args, Debug)]
pub struct PauseArgs {
    /// Task name.
    pub name: String,
    /// Why it is paused (shown with the task and kept in its events).
    #[arg(long, value_name = "TEXT")]
    pub note: String,
    /// When the pause ends by itself (RFC 3339) [default: when resumed].
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub until: Option<prost_types::Timestamp>,
}

/// Arguments of `task resume`.
#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// Task name.
    pub name: String,
}

/// Pauses the task.
pub async fn pause(args: PauseArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let request = PauseTaskRequest { name: args.name, note: args.note, until: args.until };
    let response = client.pause_task(request).await.rpc()?;
    super::print_task(ctx, &required(response.task, "the task")?)
}

/// Resumes the task.
pub async fn resume(args: ResumeArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.resume_task(ResumeTaskRequest { name: args.name }).await.rpc()?;
    super::print_task(ctx, &required(response.task, "the task")?)
}
