//! `axctl instance retry ID`: runs a finished instance again as a new attempt.

use anyhow::Result;
use ax_proto::v1::RetryInstanceRequest;
use clap::Args;

use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
};

/// Arguments of `instance retry`.
#[derive(Args, Debug)]
pub struct RetryArgs {
    /// Instance id.
    pub id: i64,
}

/// Retries the instance.
pub async fn run(args: RetryArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.retry_instance(RetryInstanceRequest { id: args.id }).await.rpc()?;
    let instance = required(response.instance, "the instance")?;
    super::print_changed(ctx, &instance, &format!("instance {} is PENDING again", instance.id))
}
