//! `axctl scheduler ...`: the axd processes of the cluster.

use anyhow::Result;
use clap::Subcommand;

use crate::commands::Context;

mod list;

/// Scheduler verbs.
#[derive(Subcommand, Debug)]
pub enum SchedulerCommand {
    /// List the axd processes, whether they are alive and how many workers each holds.
    List,
}

impl SchedulerCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            SchedulerCommand::List => list::run(ctx).await,
        }
    }
}
