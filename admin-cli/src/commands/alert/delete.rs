//! `axctl alert delete NAME`: removes a rule; its deliveries stay listed.

use anyhow::Result;
use ax_proto::v1::DeleteAlertRuleRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat},
};

/// Arguments of `alert delete`.
#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// Rule name.
    pub name: String,
}

/// JSON output of `alert delete`.
#[derive(Serialize)]
struct Deleted {
    deleted: String,
}

/// Deletes the rule.
pub async fn run(args: DeleteArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    client.delete_alert_rule(DeleteAlertRuleRequest { name: args.name.clone() }).await.rpc()?;
    let view = Deleted { deleted: args.name };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&format!("deleted alert rule {}", view.deleted)),
    }
}
