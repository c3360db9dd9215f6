//! `axctl instance delete ID`: deletes a finished instance with its trail, logs and links (as
//! retention does). With filters instead of an id, deletes every finished instance they match
//! (see `bulk`).

use anyhow::{Result, bail};
use ax_proto::v1::{BulkAction, BulkInstancesRequest, InstanceSelector};
use clap::Args;

use super::bulk::{self, BulkArgs};
use crate::{client::RpcResultExt as _, commands::Context, output};

/// Arguments of `instance delete`.
#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// Instance id; without it, the filters choose the instances.
    pub id: Option<i64>,
    #[command(flatten)]
    pub bulk: BulkArgs,
}

/// Deletes the instance, or the instances the filters match.
pub async fn run(args: DeleteArgs, ctx: &Context) -> Result<()> {
    let Some(id) = args.id else { return bulk::run(BulkAction::Delete, args.bulk, None, ctx).await };
    if args.bulk.any_bulk_flag() {
        bail!("give an instance id or filters, not both");
    }
    let mut client = ctx.client().await?;
    let request = BulkInstancesRequest {
        action: BulkAction::Delete as i32,
        selector: Some(InstanceSelector { ids: vec![id], ..Default::default() }),
        max_instances: 1,
        ..Default::default()
    };
    let r = client.bulk_instances(request).await.rpc()?;
    if r.matched == 0 {
        bail!("instance {id} was not found");
    }
    if r.changed == 0 {
        bail!(
            "instance {id} was not deleted: only a finished instance that is no child of a broadcast or sharded fire, outside a DAG run still going, can be deleted"
        );
    }
    match ctx.output {
        output::OutputFormat::Json => output::print_json(&serde_json::json!({ "deleted": id })),
        output::OutputFormat::Table => output::print_text(&format!("deleted instance {id}")),
    }
}
