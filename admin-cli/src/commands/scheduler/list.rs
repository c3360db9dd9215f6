//! `axctl scheduler list`: every axd that shares the database, with its heartbeat.

use anyhow::Result;
use ax_proto::v1::ListSchedulersRequest;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat, SchedulerView},
};

/// JSON output of `scheduler list`.
#[derive(Serialize)]
struct SchedulerList {
    schedulers: Vec<SchedulerView>,
}

/// Lists the schedulers.
pub async fn run(ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.list_schedulers(ListSchedulersRequest {}).await.rpc()?;
    let view = SchedulerList { schedulers: response.schedulers.iter().map(SchedulerView::from).collect() };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_page(&output::scheduler_table(&view.schedulers), "schedulers", ""),
    }
}
