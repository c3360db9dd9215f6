//! `axctl instance list`: instances newest first, filtered by task, status and trigger time.

use anyhow::Result;
use ax_proto::v1::{InstanceStatus, ListInstancesRequest};
use clap::Args;
use serde::Serialize;

use crate::{
    args::{parse_label, parse_param, parse_status, parse_timestamp},
    client::RpcResultExt as _,
    commands::Context,
    output::{self, InstanceView, OutputFormat},
};

/// Arguments of `instance list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only instances of this task.
    #[arg(long, value_name = "NAME")]
    pub task: Option<String>,
    /// Only instances in this status: PENDING, DISPATCHED, RUNNING, SUCCESS, FAILED, TIMEOUT,
    /// CANCELED, SKIPPED or WAITING (parents of broadcast or sharded fires), any case.
    #[arg(long, value_name = "S", value_parser = parse_status)]
    pub status: Option<InstanceStatus>,
    /// Only instances triggered at or after this instant (RFC 3339, e.g. 2026-03-08T07:30:00Z).
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub since: Option<prost_types::Timestamp>,
    /// Only instances triggered before this instant (RFC 3339).
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub until: Option<prost_types::Timestamp>,
    /// Only instances with this tag, or of a task with this label (repeatable: all must hold).
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub tags: Vec<(String, String)>,
    /// Only instances whose params field holds this value, e.g. customer_id=42 (repeatable; the
    /// task must list the field in --search-params).
    #[arg(long = "param", value_name = "FIELD=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
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
        start_time: args.since,
        end_time: args.until,
        tags: args.tags.into_iter().collect(),
        params: args.params.into_iter().collect(),
    };
    let response = client.list_instances(request).await.rpc()?;
    let view = InstanceList {
        instances: response.instances.iter().map(InstanceView::from).collect(),
        next_page_token: response.next_page_token,
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            output::print_page(&output::instance_table(&view.instances), "instances", &view.next_page_token)
        }
    }
}
