//! `axctl schedule ...`: evaluate schedules without storing anything.

use anyhow::Result;
use clap::Subcommand;

use crate::commands::Context;

mod preview;

/// Schedule verbs.
#[derive(Subcommand, Debug)]
pub enum ScheduleCommand {
    /// Show the next fire times of a cron or fixed-rate schedule (UTC and local), how often it
    /// fires per day, and warnings such as a cron that fires every minute.
    Preview(preview::PreviewArgs),
}

impl ScheduleCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            ScheduleCommand::Preview(args) => preview::run(args, ctx).await,
        }
    }
}
