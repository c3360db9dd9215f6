//! `axctl alert list`: the rules, ordered by name.

use anyhow::Result;
use ax_proto::v1::ListAlertRulesRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, AlertRuleView, OutputFormat},
};

/// Arguments of `alert list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only rules of this app.
    #[arg(long, value_name = "APP")]
    pub app: Option<String>,
}

/// JSON output of `alert list`.
#[derive(Serialize)]
struct RuleList {
    rules: Vec<AlertRuleView>,
}

/// Lists the rules.
pub async fn run(args: ListArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.list_alert_rules(ListAlertRulesRequest { app: args.app.unwrap_or_default() }).await.rpc()?;
    let view = RuleList { rules: response.rules.iter().map(AlertRuleView::from).collect() };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_page(&output::alert_rule_table(&view.rules), "alert rules", ""),
    }
}
