//! `axctl instance cancel ID`: stops an instance; a running one's worker is sent a cancel.

use anyhow::Result;
use ax_proto::v1::CancelInstanceRequest;
use clap::Args;

use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
};

/// Arguments of `instance cancel`.
#[derive(Args, Debug)]
pub struct CancelArgs {
    /// Instance id.
    pub id: i64,
    /// Why, recorded in the event trail.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

/// Cancels the instance.
pub async fn run(args: CancelArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let request = CancelInstanceRequest { id: args.id, reason: args.reason.unwrap_or_default() };
    let response = client.cancel_instance(request).await.rpc()?;
    let instance = required(response.instance, "the instance")?;
    super::print_changed(ctx, &instance, &format!("canceled instance {}", instance.id))
}
