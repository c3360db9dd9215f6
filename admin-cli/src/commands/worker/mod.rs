//! `axctl worker ...`: the worker sessions connected to the cluster.

use anyhow::Result;
use clap::Subcommand;

use crate::commands::Context;

mod list;

/// Worker verbs.
#[derive(Subcommand, Debug)]
pub enum WorkerCommand {
    /// List connected worker sessions (all axd processes), by app then worker id, with the handlers
    /// each worker is cooling down for after consecutive failures (COOLING).
    List(list::ListArgs),
}

impl WorkerCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            WorkerCommand::List(args) => list::run(args, ctx).await,
        }
    }
}
