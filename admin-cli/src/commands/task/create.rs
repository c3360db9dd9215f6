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
    let request = request(args);
    let mut client = ctx.client().await?;
    let response = client.create_task(request).await.rpc()?;
    let task = required(response.task, "the task")?;
    super::print_task_and_preview(ctx, &task, response.preview.as_ref())
}

/// The request of the flags. Create has no mask: a field no flag set is sent unset and takes the
/// server's default, which is also what the `none`/`default` forms ask for.
fn request(args: CreateArgs) -> CreateTaskRequest {
    let mut spec = args.fields.to_change().spec;
    spec.name = args.name;
    CreateTaskRequest { task: Some(spec) }
}

#[cfg(test)]
mod tests {
    use ax_proto::v1::{RetryTarget, RoutingStrategy, TaskSpec};
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: CreateArgs,
    }

    fn sent(flags: &[&str]) -> TaskSpec {
        let line = ["create", "t", "--app", "a", "--handler", "h", "--manual"].iter().chain(flags);
        request(Cli::try_parse_from(line).expect("valid flags").args).task.expect("a spec")
    }

    #[test]
    fn create_sends_the_routing_and_limits_settings() {
        let spec = sent(&[
            "--routing",
            "broadcast",
            "--selector",
            "gpu=true",
            "--retry-on",
            "same",
            "--priority",
            "4",
            "--max-running",
            "2",
            "--max-pending",
            "7",
            "--cooldown-after",
            "0",
            "--cooldown",
            "0s",
        ]);
        assert_eq!(spec.name, "t");
        assert_eq!(spec.routing, RoutingStrategy::Broadcast as i32);
        assert_eq!(spec.selector, "gpu=true");
        assert_eq!(spec.retry_on, RetryTarget::Same as i32);
        assert_eq!(spec.priority, 4);
        assert_eq!((spec.max_running, spec.max_pending), (Some(2), Some(7)));
        // Cooldowns off is a value, not the default.
        assert_eq!(spec.cooldown_after, Some(0));
        assert_eq!(spec.cooldown, Some(prost_types::Duration { seconds: 0, nanos: 0 }));

        let hashed = sent(&["--routing", "hash", "--hash-key", "tenant", "--shards", "5"]);
        assert_eq!(
            (hashed.routing, hashed.hash_key.as_str(), hashed.shards),
            (RoutingStrategy::Hash as i32, "tenant", 5)
        );
    }

    #[test]
    fn create_leaves_the_none_and_default_forms_to_the_server() {
        let spec = sent(&[
            "--max-running",
            "none",
            "--max-pending",
            "default",
            "--cooldown-after",
            "default",
            "--cooldown",
            "default",
            "--selector",
            "",
            "--shards",
            "0",
            "--hash-key",
            "",
        ]);
        assert_eq!((spec.max_running, spec.max_pending, spec.cooldown_after, spec.cooldown), (None, None, None, None));
        assert_eq!((spec.selector.as_str(), spec.shards, spec.hash_key.as_str()), ("", 0, ""));
        assert_eq!(spec, sent(&[]), "the same as not giving the flags at all");
    }
}
