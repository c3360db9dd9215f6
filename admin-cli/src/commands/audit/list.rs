//! `axctl audit list`: audit entries newest first, filtered by identity, target, RPC and time.

use anyhow::Result;
use ax_proto::v1::ListAuditEntriesRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    args::parse_timestamp,
    client::RpcResultExt as _,
    commands::Context,
    output::{self, AuditEntryView, OutputFormat},
};

/// Arguments of `audit list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only entries of this identity (its full SPIFFE id, e.g. spiffe://ax/admin/alice, or anonymous).
    #[arg(long, value_name = "ID")]
    pub identity: Option<String>,
    /// Only entries on this target: task/NAME, instance/ID, alert/NAME, app-limit/APP or intake/ROW.
    #[arg(long, value_name = "T")]
    pub target: Option<String>,
    /// Only entries of this RPC, e.g. UpdateTask.
    #[arg(long, value_name = "RPC")]
    pub rpc: Option<String>,
    /// Only entries at or after this time (RFC 3339).
    #[arg(long, value_name = "T", value_parser = parse_timestamp)]
    pub since: Option<prost_types::Timestamp>,
    /// Only entries before this time (RFC 3339).
    #[arg(long, value_name = "T", value_parser = parse_timestamp)]
    pub until: Option<prost_types::Timestamp>,
    /// Entries per page, 1-1000 [default: the server's, 100].
    #[arg(long, value_name = "N")]
    pub limit: Option<u32>,
    /// Continue after the page that returned this token.
    #[arg(long, value_name = "T")]
    pub page_token: Option<String>,
}

/// JSON output of `audit list`.
#[derive(Serialize)]
struct AuditList {
    entries: Vec<AuditEntryView>,
    next_page_token: String,
}

/// Lists the audit entries.
pub async fn run(args: ListArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let request = ListAuditEntriesRequest {
        actor: args.identity.unwrap_or_default(),
        target: args.target.unwrap_or_default(),
        rpc: args.rpc.unwrap_or_default(),
        start_time: args.since,
        end_time: args.until,
        page_size: args.limit.unwrap_or_default(),
        page_token: args.page_token.unwrap_or_default(),
    };
    let response = client.list_audit_entries(request).await.rpc()?;
    let view = AuditList {
        entries: response.entries.iter().map(AuditEntryView::from).collect(),
        next_page_token: response.next_page_token,
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            output::print_page(&output::audit_table(&view.entries), "audit entries", &view.next_page_token)
        }
    }
}
