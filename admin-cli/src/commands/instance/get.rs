//! `axctl instance get ID`: an instance and its event trail, which answers "why did it (not) run,
//! and where did the time go"; for the parent of a broadcast or sharded fire, its children too; for
//! an instance in a chain or DAG, what created it and what it created.

use anyhow::Result;
use ax_proto::v1::GetInstanceRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
    output::{self, InstanceEventView, InstanceView, LinkView, OutputFormat},
};

/// Arguments of `instance get`.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// Instance id.
    pub id: i64,
}

/// JSON output of `instance get`.
#[derive(Serialize)]
struct InstanceWithEvents {
    instance: InstanceView,
    events: Vec<InstanceEventView>,
    /// By shard index; empty for an instance that is not a parent.
    children: Vec<InstanceView>,
    /// The instances whose end created it (chains, DAG joins).
    upstream: Vec<LinkView>,
    /// The instances its end created.
    downstream: Vec<LinkView>,
}

/// Shows the instance.
pub async fn run(args: GetArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.get_instance(GetInstanceRequest { id: args.id }).await.rpc()?;
    let instance = required(response.instance, "the instance")?;
    let view = InstanceWithEvents {
        instance: InstanceView::from(&instance),
        events: output::instance_event_views(&response.events),
        children: response.children.iter().map(InstanceView::from).collect(),
        upstream: response.upstream.iter().map(LinkView::from).collect(),
        downstream: response.downstream.iter().map(LinkView::from).collect(),
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let mut text = output::instance_details(&view.instance);
            // A parent never runs itself: its children are the answer to "what happened", so they
            // come before its own (short) trail.
            if view.instance.is_parent(&view.children) {
                text.push('\n');
                text.push_str(&output::children_report(&view.children));
            }
            let links = output::links_report(&view.upstream, &view.downstream);
            if !links.is_empty() {
                text.push('\n');
                text.push_str(&links);
            }
            text.push_str("\nevents:\n");
            if response.events.is_empty() {
                text.push_str("  none\n");
            } else {
                text.push_str(&output::indent(&output::event_trail(&response.events).render()));
            }
            output::print_text(&text)
        }
    }
}
