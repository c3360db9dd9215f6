//! `axctl cluster ...`: cluster-wide figures.

use anyhow::Result;
use clap::Subcommand;

use crate::commands::Context;

mod stats;

/// Cluster verbs.
#[derive(Subcommand, Debug)]
pub enum ClusterCommand {
    /// Count tasks, instances by status, connected workers and live schedulers.
    Stats,
}

impl ClusterCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            ClusterCommand::Stats => stats::run(ctx).await,
        }
    }
}
