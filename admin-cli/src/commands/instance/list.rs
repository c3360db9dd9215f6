//! `axctl instance list`: instances newest first, filtered by task, status, trigger time, tags and
//! params fields.

use anyhow::Result;
use ax_proto::v1::ListInstancesRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, InstanceView, OutputFormat},
};

use super::filters::Filters;

/// Arguments of `instance list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    pub filters: Filters,
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
    let f = &args.filters;
    let request = ListInstancesRequest {
        task_name: f.task.clone().unwrap_or_default(),
        status: f.status(),
        page_size: args.limit.unwrap_or_default(),
        page_token: args.page_token.unwrap_or_default(),
        start_time: f.since,
        end_time: f.until,
        tags: f.tags(),
        params: f.params(),
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
