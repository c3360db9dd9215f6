//! `axctl instance logs ID`: the log lines workers sent for an instance, oldest first.

use anyhow::Result;
use ax_proto::v1::GetInstanceLogsRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, LogLineView, OutputFormat},
};

/// Arguments of `instance logs`.
#[derive(Args, Debug)]
pub struct LogsArgs {
    /// Instance id.
    pub id: i64,
}

/// JSON output of `instance logs`.
#[derive(Serialize)]
struct Logs {
    lines: Vec<LogLineView>,
    dropped: u64,
}

/// Prints the logs.
pub async fn run(args: LogsArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    // after_seq 0 and limit 0 ask for everything the server keeps (up to its limit of 1000 lines).
    let request = GetInstanceLogsRequest { id: args.id, after_seq: 0, limit: 0 };
    let response = client.get_instance_logs(request).await.rpc()?;
    let view = Logs { lines: response.lines.iter().map(LogLineView::from).collect(), dropped: response.dropped };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let table = output::log_table(&view.lines);
            let mut text = if table.is_empty() { "no log lines\n".to_owned() } else { table.render() };
            if view.dropped > 0 {
                text.push_str(&format!("({} lines dropped: the instance exceeded the server's limit)\n", view.dropped));
            }
            output::print_text(&text)
        }
    }
}
