//! `axctl cluster stats`: how much is registered, queued and connected.

use anyhow::Result;
use ax_proto::v1::GetClusterStatsRequest;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat, StatsView},
};

/// Prints the stats.
pub async fn run(ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.get_cluster_stats(GetClusterStatsRequest {}).await.rpc()?;
    let view = StatsView::from(&response);
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&output::stats_details(&view)),
    }
}
