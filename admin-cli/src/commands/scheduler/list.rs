//! `axctl scheduler list`: every axd that shares the database, with its heartbeat.

use anyhow::Result;
use ax_proto::v1::ListSchedulersRequest;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat, SchedulerView, Table},
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
        OutputFormat::Table => {
            let mut table =
                Table::new(["ID", "HOST", "ADDRESS", "VERSION", "ALIVE", "WORKERS", "STARTED", "HEARTBEAT"]);
            for s in &view.schedulers {
                table.row([
                    s.scheduler_id.clone(),
                    s.host.clone(),
                    s.address.clone(),
                    s.version.clone(),
                    if s.alive { "yes" } else { "NO" }.to_owned(),
                    if s.worker_ids.is_empty() {
                        "0".to_owned()
                    } else {
                        format!("{} ({})", s.workers, s.worker_ids.join(","))
                    },
                    output::or_dash(s.start_time.clone()),
                    output::or_dash(s.heartbeat_time.clone()),
                ]);
            }
            output::print_page(&table, "schedulers", "")
        }
    }
}
