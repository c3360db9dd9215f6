//! `axctl task update NAME ...`: changes only the fields whose flags are given, through an update
//! mask, so concurrent changes to other fields are not overwritten.

use anyhow::{Result, bail};
use ax_proto::v1::{GetTaskRequest, UpdateTaskRequest};
use clap::Args;

use super::fields::{SpecChange, TaskFields, merge_retry_policy};
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
    let response = client.update_task(request(args.name, change)).await.rpc()?;
    let task = required(response.task, "the task")?;
    super::print_task_and_preview(ctx, &task, response.preview.as_ref())
}

/// The request of a change: its spec, and its paths as the update mask.
fn request(name: String, change: SpecChange) -> UpdateTaskRequest {
    UpdateTaskRequest {
        name,
        task: Some(change.spec),
        update_mask: Some(prost_types::FieldMask { paths: change.paths.iter().map(|p| (*p).to_owned()).collect() }),
    }
}

#[cfg(test)]
mod tests {
    use ax_proto::v1::{RetryTarget, RoutingStrategy, TaskSpec};
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: UpdateArgs,
    }

    /// The spec and the mask `task update t FLAGS` sends.
    fn sent(flags: &[&str]) -> (TaskSpec, Vec<String>) {
        let args = Cli::try_parse_from(["update", "t"].iter().chain(flags)).expect("valid flags").args;
        let request = request(args.name, args.fields.to_change());
        assert_eq!(request.name, "t");
        (request.task.expect("a spec"), request.update_mask.expect("a mask").paths)
    }

    #[test]
    fn update_names_each_routing_and_limits_field_it_sets() {
        let (spec, mask) = sent(&[
            "--routing",
            "hash",
            "--hash-key",
            "tenant",
            "--retry-on",
            "any",
            "--priority",
            "9",
            "--max-running",
            "3",
            "--cooldown",
            "2m",
        ]);
        assert_eq!(mask, ["routing", "retry_on", "hash_key", "priority", "max_running", "cooldown"]);
        assert_eq!(spec.routing, RoutingStrategy::Hash as i32);
        assert_eq!(spec.hash_key, "tenant");
        assert_eq!(spec.retry_on, RetryTarget::Any as i32);
        assert_eq!((spec.priority, spec.max_running), (9, Some(3)));
        assert_eq!(spec.cooldown, Some(prost_types::Duration { seconds: 120, nanos: 0 }));
    }

    #[test]
    fn update_clears_a_setting_by_naming_it_unset() {
        let (spec, mask) = sent(&[
            "--selector",
            "",
            "--shards",
            "0",
            "--hash-key",
            "",
            "--max-running",
            "none",
            "--max-pending",
            "default",
            "--cooldown-after",
            "default",
            "--cooldown",
            "default",
        ]);
        assert_eq!(
            mask,
            ["selector", "shards", "hash_key", "max_running", "max_pending", "cooldown_after", "cooldown"]
        );
        // Every named field unset: the server's default (no limit, 100, axd's cooldown).
        assert_eq!(spec, TaskSpec::default());
    }

    #[test]
    fn update_turns_cooldowns_off_with_zero_not_the_default() {
        let (spec, mask) = sent(&["--cooldown-after", "0", "--cooldown", "0s"]);
        assert_eq!(mask, ["cooldown_after", "cooldown"]);
        assert_eq!(spec.cooldown_after, Some(0));
        assert_eq!(spec.cooldown, Some(prost_types::Duration { seconds: 0, nanos: 0 }));
    }
}
