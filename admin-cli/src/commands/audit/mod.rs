//! `axctl audit ...`: the trail of changes made through AdminService.

use anyhow::Result;
use clap::Subcommand;

use crate::commands::Context;

mod list;

/// Audit verbs.
#[derive(Subcommand, Debug)]
pub enum AuditCommand {
    /// List audit entries, newest first: every create, update, delete, enable, disable, trigger,
    /// cancel and retry, with who, when, the outcome (ok, denied, or the error) and, for task
    /// changes, the task before and after.
    List(list::ListArgs),
}

impl AuditCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            AuditCommand::List(args) => list::run(args, ctx).await,
        }
    }
}
