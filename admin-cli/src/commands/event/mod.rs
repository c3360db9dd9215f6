//! `axctl event publish`: an event to an app; each task subscribed to its name (`task create
//! --on-event NAME`) whose filter holds gets one instance (PublishEvent).

use anyhow::Result;
use ax_proto::v1::PublishEventRequest;
use clap::{Args, Subcommand};
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, InstanceView, OutputFormat},
};

/// Event verbs.
#[derive(Subcommand, Debug)]
pub enum EventCommand {
    /// Publish an event: one instance per subscribed task of the app whose filter holds, with the
    /// payload merged into its params; the same --id again creates nothing.
    Publish(PublishArgs),
}

/// Arguments of `event publish`.
#[derive(Args, Debug)]
pub struct PublishArgs {
    /// Event name.
    pub name: String,
    /// The app whose subscribed tasks get it.
    #[arg(long)]
    pub app: String,
    /// The payload: a JSON object, merged into each instance's params.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub payload: String,
    /// Event id (idempotency); default: generated.
    #[arg(long, value_name = "ID", default_value = "")]
    pub id: String,
}

/// JSON output of `event publish`.
#[derive(Serialize)]
struct Published {
    id: String,
    created: bool,
    instances: Vec<InstanceView>,
    filtered_out: Vec<String>,
}

impl EventCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        let mut client = ctx.client().await?;
        match self {
            EventCommand::Publish(a) => {
                let r = client
                    .publish_event(PublishEventRequest { app: a.app, name: a.name, payload: a.payload, id: a.id })
                    .await
                    .rpc()?;
                let view = Published {
                    id: r.id,
                    created: r.created,
                    instances: r.instances.iter().map(InstanceView::from).collect(),
                    filtered_out: r.filtered_out,
                };
                match ctx.output {
                    OutputFormat::Json => output::print_json(&view),
                    OutputFormat::Table => output::print_text(&published_text(&view)),
                }
            }
        }
    }
}

fn published_text(v: &Published) -> String {
    let id = output::escape_controls(&v.id);
    let mut text = match (v.instances.len(), v.created) {
        (0, _) => format!("event {id}: no subscribed task took it\n"),
        (n, true) => format!("event {id}: created {n} instance(s)\n"),
        (n, false) => format!("event {id} was published before: its {n} instance(s), nothing new was created\n"),
    };
    if !v.instances.is_empty() {
        text.push('\n');
        text.push_str(&output::instance_table(&v.instances).render());
    }
    if !v.filtered_out.is_empty() {
        let names: Vec<String> = v.filtered_out.iter().map(|n| output::escape_controls(n).into_owned()).collect();
        text.push_str(&format!("filtered out: {}\n", names.join(", ")));
    }
    text
}
