//! `axctl task update NAME ...`: changes only the fields whose flags are given, through an update
//! mask, so concurrent changes to other fields are not overwritten.

use anyhow::{Result, bail};
use ax_proto::v1::{GetTaskRequest, UpdateTaskRequest};
use clap::Args;

use super::fields::{TaskFields, merge_retry_policy};
use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
};

/// Arguments of `task update`.
#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// Name of the task to change.
    pub name: String,
    #[command(flatten)]
    pub fields: TaskFields,
}

/// Updates the task.
pub async fn run(args: UpdateArgs, ctx: &Context) -> Result<()> {
    let mut change = args.fields.to_change();
    if change.paths.is_empty() {
        bail!(
            "nothing to update: give at least one field flag, e.g. --cron, --params or --retries (see axctl task update --help)"
        );
    }
    let mut client = ctx.client().await?;
    if args.fields.changes_retry_policy() {
        // The mask can only replace retry_policy as a whole; read the stored one so that --retries
        // alone keeps the backoff and --backoff alone keeps the retry count.
        let current = client.get_task(GetTaskRequest { name: args.name.clone() }).await.rpc()?;
        let stored = current.task.and_then(|t| t.spec).and_then(|s| s.retry_policy);
        change.spec.retry_policy = Some(merge_retry_policy(stored, args.fields.retries, args.fields.backoff.clone()));
    }
    let request = UpdateTaskRequest {
        name: args.name,
        task: Some(change.spec),
        update_mask: Some(prost_types::FieldMask { paths: change.paths.iter().map(|p| (*p).to_owned()).collect() }),
    };
    let response = client.update_task(request).await.rpc()?;
    let task = required(response.task, "the task")?;
    super::print_task_and_preview(ctx, &task, response.preview.as_ref())
}
