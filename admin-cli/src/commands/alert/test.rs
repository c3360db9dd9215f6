//! `axctl alert test NAME`: queues a `test` delivery for a rule.

use anyhow::Result;
use ax_proto::v1::TestAlertRuleRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat},
};

/// Arguments of `alert test`.
#[derive(Args, Debug)]
pub struct TestArgs {
    /// Rule name.
    pub name: String,
}

/// JSON output of `alert test`.
#[derive(Serialize)]
struct Queued {
    rule: String,
    delivery_id: i64,
}

/// Queues the test delivery.
pub async fn run(args: TestArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.test_alert_rule(TestAlertRuleRequest { name: args.name.clone() }).await.rpc()?;
    let view = Queued { rule: args.name, delivery_id: response.delivery_id };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&format!(
            "queued test delivery {} for alert rule {} (see: axctl alert deliveries --rule {})",
            view.delivery_id, view.rule, view.rule
        )),
    }
}
