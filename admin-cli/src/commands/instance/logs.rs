//! `axctl instance logs ID [--follow]`: the log lines workers sent for an instance, oldest first;
//! with `--follow`, new lines as they arrive until the instance is final (see [`super::follow`]).

use std::time::Duration;

use anyhow::{Result, bail};
use ax_proto::v1::GetInstanceLogsRequest;
use clap::Args;
use serde::Serialize;

use super::follow::{self, Follow};
use crate::{
    args::parse_std_duration,
    client::RpcResultExt as _,
    commands::Context,
    output::{self, LogLineView, OutputFormat},
};

/// Arguments of `instance logs`.
#[derive(Args, Debug)]
pub struct LogsArgs {
    /// Instance id.
    pub id: i64,
    /// Keep printing new lines until the instance is final (SUCCESS, FAILED, TIMEOUT, CANCELED or
    /// SKIPPED), then exit 0. With -o json, one JSON object per line (JSON Lines) instead of one
    /// document.
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// With --follow: how often to ask axd for new lines, 100ms to 1m.
    #[arg(long, value_parser = parse_std_duration, default_value = "1s", requires = "follow")]
    pub interval: Duration,
    /// With --follow: how long axd may stay unreachable (restarting, failing over) before the
    /// command gives up with an error; 0 gives up at the first failure.
    #[arg(long, value_parser = parse_std_duration, default_value = "30s", requires = "follow")]
    pub reconnect_for: Duration,
}

/// JSON output of `instance logs`.
#[derive(Serialize)]
struct Logs {
    lines: Vec<LogLineView>,
    dropped: u64,
}

/// Prints the logs.
pub async fn run(args: LogsArgs, ctx: &Context) -> Result<()> {
    if args.follow {
        if !(Duration::from_millis(100)..=Duration::from_secs(60)).contains(&args.interval) {
            bail!("--interval must be between 100ms and 1m");
        }
        let follow = Follow { interval: args.interval, reconnect_for: args.reconnect_for };
        return follow::run(args.id, follow, ctx).await;
    }
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
