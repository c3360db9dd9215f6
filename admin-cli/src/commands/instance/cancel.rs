//! `axctl instance cancel ID`: stops an instance; a running one's worker is sent a cancel. With
//! filters instead of an id, cancels every instance they match (see `bulk`).

use anyhow::{Result, bail};
use ax_proto::v1::{BulkAction, CancelInstanceRequest};
use clap::Args;

use super::bulk::{self, BulkArgs};
use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
};

/// Arguments of `instance cancel`.
#[derive(Args, Debug)]
pub struct CancelArgs {
    /// Instance id; without it, the filters choose the instances.
    pub id: Option<i64>,
    /// Why, recorded in the event trail.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    #[command(flatten)]
    pub bulk: BulkArgs,
}

/// Cancels the instance, or the instances the filters match.
pub async fn run(args: CancelArgs, ctx: &Context) -> Result<()> {
    let Some(id) = args.id else { return bulk::run(BulkAction::Cancel, args.bulk, args.reason, ctx).await };
    if args.bulk.any_bulk_flag() {
        bail!("give an instance id or filters, not both");
    }
    let mut client = ctx.client().await?;
    let request = CancelInstanceRequest { id, reason: args.reason.unwrap_or_default() };
    let response = client.cancel_instance(request).await.rpc()?;
    let instance = required(response.instance, "the instance")?;
    super::print_changed(ctx, &instance, &format!("canceled instance {}", instance.id))
}
