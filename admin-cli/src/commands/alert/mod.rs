//! `axctl alert ...`: alert rules (which events of an app or task are POSTed to a webhook) and the
//! deliveries of the outbox.

use anyhow::Result;
use clap::Subcommand;

use crate::commands::Context;

mod create;
mod delete;
mod deliveries;
mod list;
mod test;

/// Alert verbs.
#[derive(Subcommand, Debug)]
pub enum AlertCommand {
    /// Create a rule: --app (and optionally --task), one or more --event, --url and a secret
    /// (--secret-file, or the AX_ALERT_SECRET variable). Events: final_failure, timeout,
    /// worker_lost, skipped, misfire, no_worker (with --no-worker-for), backlog (with
    /// --backlog-over).
    Create(create::CreateArgs),
    /// List rules (secrets are never shown).
    List(list::ListArgs),
    /// Delete a rule; its deliveries stay listed.
    Delete(delete::DeleteArgs),
    /// Queue a delivery of event `test` for a rule, sent, signed and retried like any other.
    Test(test::TestArgs),
    /// List deliveries newest first: status (pending, delivered, failed), attempts, last error.
    Deliveries(deliveries::DeliveriesArgs),
}

impl AlertCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            AlertCommand::Create(args) => create::run(args, ctx).await,
            AlertCommand::List(args) => list::run(args, ctx).await,
            AlertCommand::Delete(args) => delete::run(args, ctx).await,
            AlertCommand::Test(args) => test::run(args, ctx).await,
            AlertCommand::Deliveries(args) => deliveries::run(args, ctx).await,
        }
    }
}
