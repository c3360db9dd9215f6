//! `axctl rate-limit ...`: app rate limits of instance starts, token buckets kept in the database
//! and shared by every axd of the cluster (SetAppLimit, ListAppLimits, DeleteAppLimit).

use anyhow::Result;
use clap::Subcommand;

use crate::commands::Context;

mod delete;
mod list;
mod set;

/// Rate limit verbs.
#[derive(Subcommand, Debug)]
pub enum RateLimitCommand {
    /// Set (create or replace) an app's rate limit of instance starts.
    ///
    /// At most --per-second starts per second on average and --burst at once [default: the rate
    /// rounded up]. Every attempt takes a token; while none is left the app's instances wait
    /// PENDING (task explain says RATE_LIMITED). A new limit starts with a full bucket.
    Set(set::SetArgs),
    /// List the apps' rate limits with the tokens available now.
    List,
    /// Remove an app's rate limit; its instances start as fast as workers take them.
    Delete(delete::DeleteArgs),
}

impl RateLimitCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            RateLimitCommand::Set(args) => set::run(args, ctx).await,
            RateLimitCommand::List => list::run(ctx).await,
            RateLimitCommand::Delete(args) => delete::run(args, ctx).await,
        }
    }
}
