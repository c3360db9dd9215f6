//! `axctl instance retry ID`: runs a finished instance again as a new attempt. With filters
//! instead of an id, retries every finished instance they match (see `bulk`).

use anyhow::{Result, bail};
use ax_proto::v1::{BulkAction, RetryInstanceRequest};
use clap::Args;

use super::bulk::{self, BulkArgs};
use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
};

/// Arguments of `instance retry`.
#[derive(Args, Debug)]
pub struct RetryArgs {
    /// Instance id; without it, the filters choose the instances.
    pub id: Option<i64>,
    #[command(flatten)]
    pub bulk: BulkArgs,
}

/// Retries the instance, or the instances the filters match.
pub async fn run(args: RetryArgs, ctx: &Context) -> Result<()> {
    let Some(id) = args.id else { return bulk::run(BulkAction::Retry, args.bulk, None, ctx).await };
    if args.bulk.any_bulk_flag() {
        bail!("give an instance id or filters, not both");
    }
    let mut client = ctx.client().await?;
    let response = client.retry_instance(RetryInstanceRequest { id }).await.rpc()?;
    let instance = required(response.instance, "the instance")?;
    super::print_changed(ctx, &instance, &format!("instance {} is PENDING again", instance.id))
}
