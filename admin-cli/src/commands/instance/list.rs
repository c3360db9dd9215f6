//! `axctl instance list`: instances newest first, filtered by task and status.

use anyhow::Result;
use ax_proto::v1::{InstanceStatus, ListInstancesRequest};
use clap::Args;
use serde::Serialize;

use crate::{
    args::parse_status,
    client::RpcResultExt as _,
    commands::Context,
    output::{self, InstanceView, OutputFormat, Table},
};

/// Arguments of `instance list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only instances of this task.
    #[arg(long, value_name = "NAME")]
    pub task: Option<String>,
    /// Only instances in this status: PENDING, DISPATCHED, RUNNING, SUCCESS, FAILED, TIMEOUT,
    /// CANCELED or SKIPPED (any case).
    #[arg(long, value_name = "S", value_parser = parse_status)]
    pub status: Option<InstanceStatus>,
    /// Instances per page, 1-1000 [default: the server's, 50].
    #[arg(long, value_name = "N")]
    pub limit: Option<u32>,
    /// Continue after the page that returned this token.
    #[arg(long, value_name = "T")]
    pub page_token: Option<String>,
}

/// JSON output of `instance list`.
#[derive(Serialize)]
struct InstanceList {
    instances: Vec<InstanceView>,
    next_page_token: String,
}

/// Lists the instances.
pub async fn run(args: ListArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let request = ListInstancesRequest {
        task_name: args.task.unwrap_or_default(),
        status: args.status.unwrap_or(InstanceStatus::Unspecified) as i32,
        page_size: args.limit.unwrap_or_default(),
        page_token: args.page_token.unwrap_or_default(),
    };
    let response = client.list_instances(request).await.rpc()?;
    let view = InstanceList {
        instances: response.instances.iter().map(InstanceView::from).collect(),
        next_page_token: response.next_page_token,
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let mut table =
                Table::new(["ID", "TASK", "STATUS", "ATTEMPT", "SOURCE", "TRIGGER TIME", "WORKER", "MESSAGE"]);
            for i in &view.instances {
                table.row([
                    i.id.to_string(),
                    i.task_name.clone(),
                    i.status.clone(),
                    i.attempt.to_string(),
                    i.source.clone(),
                    output::or_dash(i.trigger_time.clone()),
                    output::or_dash(Some(i.worker_id.as_str())),
                    i.message.clone(),
                ]);
            }
            output::print_page(&table, "instances", &view.next_page_token)
        }
    }
}
