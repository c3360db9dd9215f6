//! `axctl alert create NAME`: a rule sending chosen events of an app (or task) to a webhook.

use anyhow::{Context as _, Result, bail};
use ax_proto::v1::{AlertRuleSpec, CreateAlertRuleRequest};
use clap::Args;

use crate::{
    args::parse_duration,
    client::RpcResultExt as _,
    commands::{Context, required},
    output::{self, AlertRuleView, OutputFormat},
};

/// Arguments of `alert create`.
#[derive(Args, Debug)]
pub struct CreateArgs {
    /// Rule name: letters, digits, . _ -
    pub name: String,
    /// The app whose events are watched.
    #[arg(long, value_name = "APP")]
    pub app: String,
    /// Only this task of the app [default: every task of the app].
    #[arg(long, value_name = "NAME")]
    pub task: Option<String>,
    /// An event to watch; repeat for several (or separate with commas).
    #[arg(long = "event", value_name = "EVENT", required = true, value_delimiter = ',')]
    pub events: Vec<String>,
    /// The webhook: http:// or https://.
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// File holding the signing secret (16-255 bytes; a trailing newline is dropped).
    #[arg(long, value_name = "FILE", conflicts_with = "secret")]
    pub secret_file: Option<std::path::PathBuf>,
    /// The signing secret (16-255 bytes). Prefer --secret-file: the environment variable keeps it
    /// out of the process list.
    #[arg(long, env = "AX_ALERT_SECRET", hide_env_values = true, value_name = "SECRET")]
    pub secret: Option<String>,
    /// For event no_worker: how long the app must have no worker connected, e.g. 5m.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub no_worker_for: Option<prost_types::Duration>,
    /// For event backlog: alert when more than N instances are PENDING.
    #[arg(long, value_name = "N")]
    pub backlog_over: Option<u64>,
}

/// Creates the rule.
pub async fn run(args: CreateArgs, ctx: &Context) -> Result<()> {
    let secret = match (&args.secret_file, args.secret) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            text.strip_suffix('\n').map(|s| s.strip_suffix('\r').unwrap_or(s)).unwrap_or(&text).to_owned()
        }
        (None, Some(s)) => s,
        (None, None) => bail!("a secret is required: --secret-file FILE, or the AX_ALERT_SECRET variable"),
    };
    let mut client = ctx.client().await?;
    let spec = AlertRuleSpec {
        name: args.name,
        app: args.app,
        task: args.task.unwrap_or_default(),
        events: args.events,
        url: args.url,
        secret,
        no_worker_for: args.no_worker_for,
        backlog_over: args.backlog_over,
    };
    let response = client.create_alert_rule(CreateAlertRuleRequest { rule: Some(spec) }).await.rpc()?;
    let view = AlertRuleView::from(&required(response.rule, "the rule")?);
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&format!("created alert rule {}", view.name)),
    }
}
