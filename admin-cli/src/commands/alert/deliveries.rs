//! `axctl alert deliveries`: the outbox, newest first.

use anyhow::Result;
use ax_proto::v1::ListAlertDeliveriesRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, DeliveryView, OutputFormat},
};

/// Arguments of `alert deliveries`.
#[derive(Args, Debug)]
pub struct DeliveriesArgs {
    /// Only deliveries of this rule.
    #[arg(long, value_name = "NAME")]
    pub rule: Option<String>,
    /// Only this status: pending, delivered or failed.
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// Deliveries per page, 1-1000 [default: the server's, 100].
    #[arg(long, value_name = "N")]
    pub limit: Option<u32>,
    /// Continue after the page that returned this token.
    #[arg(long, value_name = "T")]
    pub page_token: Option<String>,
}

/// JSON output of `alert deliveries`.
#[derive(Serialize)]
struct DeliveryList {
    deliveries: Vec<DeliveryView>,
    next_page_token: String,
}

/// Lists the deliveries.
pub async fn run(args: DeliveriesArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let request = ListAlertDeliveriesRequest {
        rule: args.rule.unwrap_or_default(),
        status: args.status.unwrap_or_default(),
        page_size: args.limit.unwrap_or_default(),
        page_token: args.page_token.unwrap_or_default(),
    };
    let response = client.list_alert_deliveries(request).await.rpc()?;
    let view = DeliveryList {
        deliveries: response.deliveries.iter().map(DeliveryView::from).collect(),
        next_page_token: response.next_page_token,
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            output::print_page(&output::delivery_table(&view.deliveries), "alert deliveries", &view.next_page_token)
        }
    }
}
