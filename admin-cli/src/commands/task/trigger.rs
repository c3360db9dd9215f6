//! `axctl task trigger NAME [--at T | --after DUR] [--wait [DUR]]`: creates an instance now, to run
//! now or later. With an idempotency key a repeated trigger returns the first instance instead of
//! running the task twice. With `--wait` it prints the instance once it is final (its output
//! among its fields) and exits with its outcome: 0 SUCCESS, 3 another final state, 4 still not
//! final when the wait ran out.

use std::time::{Duration, Instant};

use anyhow::Result;
use ax_proto::v1::{self as pb, TriggerTaskRequest, trigger_task_request::When};
use clap::Args;
use serde::Serialize;

use crate::{
    args::{parse_duration, parse_label, parse_timestamp},
    client::RpcResultExt as _,
    commands::{Context, Outcome, required},
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
    /// Wait until the instance is final (at most DUR, 10m without a value, at most 10m), print it
    /// with its output, and exit 0 on SUCCESS, 3 on another final state, 4 if the wait ran out.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, num_args = 0..=1, default_missing_value = "10m")]
    pub wait: Option<prost_types::Duration>,
    /// A tag of the instance (repeatable): `instance list --tag KEY=VALUE` finds it.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub tags: Vec<(String, String)>,
}

/// Exit status of `--wait` when the instance ended in another state than SUCCESS.
pub const EXIT_NOT_SUCCESS: u8 = 3;
/// Exit status of `--wait` when the wait ran out before the instance was final.
pub const EXIT_WAIT_RAN_OUT: u8 = 4;

/// JSON output of `task trigger`.
#[derive(Serialize)]
struct Triggered {
    instance: InstanceView,
    created: bool,
    /// With --wait: the instance is final.
    done: bool,
}

/// Triggers the task.
pub async fn run(args: TriggerArgs, ctx: &Context) -> Result<()> {
    let mut request = request(args);
    let asked_key = request.idempotency_key.clone();
    let wait = request.wait.as_ref().map_or(Duration::ZERO, |w| {
        Duration::new(u64::try_from(w.seconds).unwrap_or(0), u32::try_from(w.nanos).unwrap_or(0))
    });
    let waits = !wait.is_zero();
    // A waiting call answers by the wait's end (or axd's own call limit): give it a minute more.
    let mut client = if waits { ctx.client_for(wait + Duration::from_secs(60)).await? } else { ctx.client().await? };
    let until = Instant::now() + wait;
    let mut created = None;
    let response = loop {
        let response = client.trigger_task(request.clone()).await.rpc()?;
        let first = *created.get_or_insert(response.created);
        let left = until.saturating_duration_since(Instant::now());
        let key = required(response.instance.as_ref(), "the instance")?.idempotency_key.clone();
        if !waits || response.done || left.is_zero() {
            break pb::TriggerTaskResponse { created: first, ..response };
        }
        // axd answered before its call limit: wait on for the same instance, by its key.
        request.idempotency_key = key;
        request.wait = Some(prost_types::Duration {
            seconds: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
            nanos: i32::try_from(left.subsec_nanos()).unwrap_or(0),
        });
    };
    let instance = required(response.instance, "the instance")?;
    let key = |t: &Option<prost_types::Timestamp>| t.as_ref().map(|t| (t.seconds, t.nanos));
    let later = key(&instance.available_time) > key(&instance.create_time);
    let view = Triggered { instance: InstanceView::from(&instance), created: response.created, done: response.done };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view)?,
        OutputFormat::Table => {
            let runs_at = match &view.instance.available_time {
                Some(at) if later && !waits => format!(", to run at {at}"),
                _ => String::new(),
            };
            let headline = if view.created {
                format!("created instance {}{runs_at}", view.instance.id)
            } else if view.instance.idempotency_key != asked_key {
                // Not the key asked for: the task's uniqueness window answered.
                format!(
                    "an instance triggered within the task's uniqueness window holds the same value: existing \
                     instance {}, nothing new was created",
                    view.instance.id
                )
            } else {
                format!(
                    "the idempotency key {} was used before: existing instance {}, nothing new was created",
                    output::escape_controls(&view.instance.idempotency_key),
                    view.instance.id
                )
            };
            output::print_text(&format!("{headline}\n\n{}", output::instance_details(&view.instance)))?
        }
    }
    if !waits {
        return Ok(());
    }
    let status = &view.instance.status;
    if !view.done {
        return Err(Outcome {
            code: EXIT_WAIT_RAN_OUT,
            message: format!("instance {} is still {status}: the wait ran out", view.instance.id),
        }
        .into());
    }
    if status != "SUCCESS" {
        return Err(Outcome {
            code: EXIT_NOT_SUCCESS,
            message: format!("instance {} ended {status}", view.instance.id),
        }
        .into());
    }
    Ok(())
}

/// The request of the flags.
fn request(args: TriggerArgs) -> TriggerTaskRequest {
    TriggerTaskRequest {
        name: args.name,
        params: args.params,
        idempotency_key: args.idempotency_key.unwrap_or_default(),
        when: args.at.map(When::RunAt).or(args.after.map(When::Delay)),
        wait: args.wait,
        tags: args.tags.into_iter().collect(),
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

    #[test]
    fn wait_takes_an_optional_duration() {
        let wait = |args: &[&str]| request(parse(args).expect("valid")).wait;
        assert_eq!(wait(&["t"]), None);
        assert_eq!(wait(&["t", "--wait"]), Some(prost_types::Duration { seconds: 600, nanos: 0 }));
        assert_eq!(wait(&["t", "--wait", "30s"]), Some(prost_types::Duration { seconds: 30, nanos: 0 }));
        let err = parse(&["t", "--wait", "later"]).expect_err("bad").to_string();
        assert!(err.contains("--wait"), "{err}");
    }
}
