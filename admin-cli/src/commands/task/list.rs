//! `axctl task list`: tasks ordered by name, one page at a time.

use anyhow::Result;
use ax_proto::v1::ListTasksRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat, TaskView},
};

/// Arguments of `task list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only tasks of this app.
    #[arg(long)]
    pub app: Option<String>,
    /// Tasks per page, 1-1000 [default: the server's, 100].
    #[arg(long, value_name = "N")]
    pub limit: Option<u32>,
    /// Continue after the page that returned this token.
    #[arg(long, value_name = "T")]
    pub page_token: Option<String>,
}

/// JSON output of `task list`.
#[derive(Serialize)]
struct TaskList {
    tasks: Vec<TaskView>,
    next_page_token: String,
}

/// Lists the tasks.
pub async fn run(args: ListArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let request = ListTasksRequest {
        app: args.app.unwrap_or_default(),
        page_size: args.limit.unwrap_or_default(),
        page_token: args.page_token.unwrap_or_default(),
    };
    let response = client.list_tasks(request).await.rpc()?;
    let view = TaskList {
        tasks: response.tasks.iter().map(TaskView::from).collect(),
        next_page_token: response.next_page_token,
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_page(&output::task_table(&view.tasks), "tasks", &view.next_page_token),
    }
}
