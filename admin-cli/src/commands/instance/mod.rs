//! `axctl instance ...`: instances (one trigger of a task each), their event trails and logs.

use anyhow::Result;
use ax_proto::v1::Instance;
use clap::Subcommand;
use serde::Serialize;

use crate::{
    commands::Context,
    output::{self, InstanceView, OutputFormat},
};

mod bulk;
mod cancel;
mod delete;
mod filters;
mod follow;
mod get;
mod list;
mod logs;
mod retry;

/// Instance verbs.
#[derive(Subcommand, Debug)]
pub enum InstanceCommand {
    /// List instances, newest first.
    List(list::ListArgs),
    /// Show an instance and its event trail: every state change, who made it, why, and the time
    /// since the previous one; for the parent of a broadcast or sharded fire, its children.
    Get(get::GetArgs),
    /// Cancel a PENDING, DISPATCHED or RUNNING instance (its worker is told to stop), or a WAITING
    /// parent with its children; with filters instead of an id, every instance they match (a
    /// count first, then a confirmation).
    Cancel(cancel::CancelArgs),
    /// Run a finished instance again as a new attempt; with filters instead of an id, every
    /// finished instance they match (a count first, then a confirmation).
    Retry(retry::RetryArgs),
    /// Delete a finished instance with its trail, log lines and links, as retention does; with
    /// filters instead of an id, every finished instance they match (a count first, then a
    /// confirmation).
    Delete(delete::DeleteArgs),
    /// Show the log lines workers sent for an instance; with --follow, keep printing new ones until
    /// the instance is final.
    Logs(logs::LogsArgs),
}

impl InstanceCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            InstanceCommand::List(args) => list::run(args, ctx).await,
            InstanceCommand::Get(args) => get::run(args, ctx).await,
            InstanceCommand::Cancel(args) => cancel::run(args, ctx).await,
            InstanceCommand::Retry(args) => retry::run(args, ctx).await,
            InstanceCommand::Delete(args) => delete::run(args, ctx).await,
            InstanceCommand::Logs(args) => logs::run(args, ctx).await,
        }
    }
}

/// `instance cancel` and `instance retry` output.
#[derive(Serialize)]
struct InstanceOnly {
    instance: InstanceView,
}

/// Prints an instance after a change, with a headline saying what happened.
fn print_changed(ctx: &Context, instance: &Instance, headline: &str) -> Result<()> {
    let view = InstanceOnly { instance: InstanceView::from(instance) };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            output::print_text(&format!("{headline}\n\n{}", output::instance_details(&view.instance)))
        }
    }
}
