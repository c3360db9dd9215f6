//! `axctl cluster stats`: how much is registered, queued and connected.

use anyhow::Result;
use ax_proto::v1::GetClusterStatsRequest;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, Fields, OutputFormat, StatusCounts},
};

/// JSON output of `cluster stats`.
#[derive(Serialize)]
struct Stats {
    tasks: u64,
    enabled_tasks: u64,
    instances: StatusCounts,
    workers: u64,
    schedulers: u64,
}

/// Prints the stats.
pub async fn run(ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.get_cluster_stats(GetClusterStatsRequest {}).await.rpc()?;
    let view = Stats {
        tasks: response.tasks,
        enabled_tasks: response.enabled_tasks,
        instances: StatusCounts::new(response.instances.iter().map(|c| (c.status, c.count))),
        workers: response.workers,
        schedulers: response.schedulers,
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let mut fields = Fields::new();
            fields
                .add("tasks", format!("{} ({} enabled)", view.tasks, view.enabled_tasks))
                .add("workers", view.workers.to_string())
                .add("schedulers", view.schedulers.to_string());
            let mut text = fields.render();
            text.push_str("instances:\n");
            let mut counts = Fields::new();
            for (status, count) in &view.instances.0 {
                counts.add(status, count.to_string());
            }
            text.push_str(&output::indent(&counts.render()));
            output::print_text(&text)
        }
    }
}
