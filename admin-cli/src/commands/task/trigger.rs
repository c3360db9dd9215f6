//! `axctl task trigger NAME [--at T | --after DUR]`: creates an instance now, to run now or later.
//! With an idempotency key a repeated trigger returns the first instance instead of running the
//! task twice.

use anyhow::Result;
use ax_proto::v1::{TriggerTaskRequest, trigger_task_request::When};
use clap::Args;
use serde::Serialize;

use crate::{
    args::{parse_duration, parse_timestamp},
    client::RpcResultExt as _,
    commands::{Context, required},
    output::{self, InstanceView, OutputFormat},
};

/// Arguments of `task trigger`.
#[derive(Args, Debug)]
pub struct TriggerArgs {
    /// Task name.
    pub name: String,
    /// Parameters for this instance instead of the task's (JSON).
    #[arg(long, value_name = "JSON")]
    pub params: Option<String>,
    /// Makes the trigger idempotent: the same key again returns the first instance.
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
    /// Run it at this instant (RFC 3339), at most 366 days ahead; one in the past beyond the task's
    /// misfire threshold is refused.
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp, conflicts_with = "after")]
    pub at: Option<prost_types::Timestamp>,
    /// Run it this long from now, e.g. 10m.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub after: Option<prost_types::Duration>,
}

/// JSON output of `task trigger`.
#[derive(Serialize)]
struct Triggered {
    instance: InstanceView,
    created: bool,
}

/// Triggers the task.
pub async fn run(args: TriggerArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let request = request(args);
    let response = client.trigger_task(request).await.rpc()?;
    let instance = required(response.instance, "the instance")?;
    let key = |t: &Option<prost_types::Timestamp>| t.as_ref().map(|t| (t.seconds, t.nanos));
    let later = key(&instance.available_time) > key(&instance.create_time);
    let view = Triggered { instance: InstanceView::from(&instance), created: response.created };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let runs_at = match &view.instance.available_time {
                Some(at) if later => format!(", to run at {at}"),
                _ => String::new(),
            };
            let headline = if view.created {
                format!("created instance {}{runs_at}", view.instance.id)
            } else {
                format!(
                    "the idempotency key {} was used before: existing instance {}, nothing new was created",
                    output::escape_controls(&view.instance.idempotency_key),
                    view.instance.id
                )
            };
            output::print_text(&format!("{headline}\n\n{}", output::instance_details(&view.instance)))
        }
    }
}

/// The request of the flags.
fn request(args: TriggerArgs) -> TriggerTaskRequest {
    TriggerTaskRequest {
        name: args.name,
        params: args.params,
        idempotency_key: args.idempotency_key.unwrap_or_default(),
        when: args.at.map(When::RunAt).or(args.after.map(When::Delay)),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: TriggerArgs,
    }

    fn parse(args: &[&str]) -> Result<TriggerArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("trigger").chain(args.iter().copied())).map(|cli| cli.args)
    }

    #[test]
    fn at_and_after_say_when_it_runs() {
        let when = |args: &[&str]| request(parse(args).expect("valid")).when;
        assert_eq!(when(&["t"]), None);
        assert_eq!(
            when(&["t", "--at", "2026-01-01T10:00:00Z"]),
            Some(When::RunAt(prost_types::Timestamp { seconds: 1_767_261_600, nanos: 0 }))
        );
        assert_eq!(when(&["t", "--after", "10m"]), Some(When::Delay(prost_types::Duration { seconds: 600, nanos: 0 })));
        let err = parse(&["t", "--at", "2026-01-01T10:00:00Z", "--after", "1m"]).expect_err("both").to_string();
        assert!(err.contains("cannot be used with"), "{err}");
        let err = parse(&["t", "--after", "soon"]).expect_err("bad").to_string();
        assert!(err.contains("--after"), "{err}");
    }
}
