//! `axctl run get ID`: a workflow run — the instances chains and DAG edges created from its first
//! instance — as a tree with their states.

use anyhow::Result;
use ax_proto::v1::GetRunRequest;
use clap::{Args, Subcommand};

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat, RunView},
};

/// Run verbs.
#[derive(Subcommand, Debug)]
pub enum RunCommand {
    /// Show a run as a tree: each instance under the one whose end created it.
    Get(GetArgs),
}

/// Arguments of `run get`.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// The run id: the id of its first instance (`run` in `axctl instance get`).
    pub id: i64,
}

impl RunCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        let RunCommand::Get(args) = self;
        let mut client = ctx.client().await?;
        let response = client.get_run(GetRunRequest { run_id: args.id }).await.rpc()?;
        let view = RunView::from(&response);
        match ctx.output {
            OutputFormat::Json => output::print_json(&view),
            OutputFormat::Table => output::print_text(&output::run_tree(&view)),
        }
    }
}
