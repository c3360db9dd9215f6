//! `axctl rate-limit set APP --per-second R [--burst N]`: creates or replaces an app's limit and
//! shows it as stored.

use anyhow::Result;
use ax_proto::v1::{AppLimit, SetAppLimitRequest};
use clap::Args;

use crate::{
    args::{parse_rate, parse_whole},
    client::RpcResultExt as _,
    commands::{Context, required},
    output::{self, AppLimitView, OutputFormat},
};

/// Arguments of `rate-limit set`.
#[derive(Args, Debug)]
pub struct SetArgs {
    /// The app whose instance starts are limited.
    pub app: String,
    /// Tokens added per second, e.g. 2.5 or 0.1 (0.001-100000).
    #[arg(long, value_name = "R", value_parser = parse_rate, allow_negative_numbers = true)]
    pub per_second: f64,
    /// Most tokens the bucket holds: the largest burst of starts (1-100000) [default: --per-second
    /// rounded up, at least 1].
    #[arg(long, value_name = "N", value_parser = parse_whole, allow_negative_numbers = true)]
    pub burst: Option<u32>,
}

/// Sets the limit.
pub async fn run(args: SetArgs, ctx: &Context) -> Result<()> {
    let request = request(args);
    let mut client = ctx.client().await?;
    let response = client.set_app_limit(request).await.rpc()?;
    let view = AppLimitView::from(&required(response.limit, "the limit")?);
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&output::app_limit_summary(&view)),
    }
}

/// The request of the flags; the output-only fields stay unset, and an omitted burst is sent as 0,
/// the proto's "use the default".
fn request(args: SetArgs) -> SetAppLimitRequest {
    SetAppLimitRequest {
        limit: Some(AppLimit {
            app: args.app,
            per_second: args.per_second,
            burst: args.burst.unwrap_or(0),
            ..AppLimit::default()
        }),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: SetArgs,
    }

    fn parse(args: &[&str]) -> Result<SetArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("set").chain(args.iter().copied())).map(|cli| cli.args)
    }

    #[test]
    fn set_sends_the_rate_and_the_burst() {
        let limit = request(parse(&["billing", "--per-second", "2.5", "--burst", "5"]).expect("valid")).limit;
        assert_eq!(limit, Some(AppLimit { app: "billing".into(), per_second: 2.5, burst: 5, ..AppLimit::default() }));
        let limit = request(parse(&["billing", "--per-second", "0.1"]).expect("valid")).limit.expect("limit");
        assert_eq!(limit.burst, 0, "no --burst: the server's default");
    }

    #[test]
    fn bad_numbers_are_refused_naming_the_flag() {
        for (args, flag) in [
            (&["billing", "--per-second", "fast"][..], "--per-second"),
            (&["billing", "--per-second", "NaN"], "--per-second"),
            (&["billing", "--per-second", "1", "--burst", "-1"], "--burst"),
            (&["billing", "--per-second", "1", "--burst", "1.5"], "--burst"),
        ] {
            let err = parse(args).expect_err("invalid").to_string();
            assert!(err.contains(&format!("for '{flag}")), "{args:?}: {err}");
        }
        // A negative rate is a number: the server says it is out of range.
        assert_eq!(parse(&["billing", "--per-second", "-1"]).expect("a number").per_second, -1.0);
        let err = parse(&["billing"]).expect_err("no rate").to_string();
        assert!(err.contains("--per-second"), "{err}");
    }
}
