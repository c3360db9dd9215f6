//! `axctl rate-limit list`: the apps' rate limits, ordered by app, with their tokens now.

use anyhow::Result;
use ax_proto::v1::ListAppLimitsRequest;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, AppLimitView, OutputFormat},
};

/// JSON output of `rate-limit list`.
#[derive(Serialize)]
struct LimitList {
    limits: Vec<AppLimitView>,
}

/// Lists the limits.
pub async fn run(ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.list_app_limits(ListAppLimitsRequest {}).await.rpc()?;
    let view = LimitList { limits: response.limits.iter().map(AppLimitView::from).collect() };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_page(&output::app_limit_table(&view.limits), "rate limits", ""),
    }
}
