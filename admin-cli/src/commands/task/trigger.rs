//! `axctl task trigger NAME`: creates an instance now. With an idempotency key a repeated trigger
//! returns the first instance instead of running the task twice.

use anyhow::Result;
use ax_proto::v1::TriggerTaskRequest;
use clap::Args;
use serde::Serialize;

use crate::{
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
    let request = TriggerTaskRequest {
        name: args.name,
        params: args.params,
        idempotency_key: args.idempotency_key.unwrap_or_default(),
    };
    let response = client.trigger_task(request).await.rpc()?;
    let instance = required(response.instance, "the instance")?;
    let view = Triggered { instance: InstanceView::from(&instance), created: response.created };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let headline = if view.created {
                format!("created instance {}", view.instance.id)
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
