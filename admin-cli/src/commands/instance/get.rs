//! `axctl instance get ID`: an instance and its event trail, which answers "why did it (not) run,
//! and where did the time go".

use anyhow::Result;
use ax_proto::v1::{GetInstanceRequest, InstanceEvent};
use chrono::SecondsFormat;
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::{Context, required},
    output::{self, InstanceEventView, InstanceView, OutputFormat, Table},
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
}

/// Shows the instance.
pub async fn run(args: GetArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.get_instance(GetInstanceRequest { id: args.id }).await.rpc()?;
    let instance = required(response.instance, "the instance")?;
    let view = InstanceWithEvents {
        instance: InstanceView::from(&instance),
        events: output::instance_event_views(&response.events),
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let mut text = output::instance_details(&view.instance);
            text.push_str("\nevents:\n");
            if response.events.is_empty() {
                text.push_str("  none\n");
            } else {
                text.push_str(&output::indent(&trail(&response.events).render()));
            }
            output::print_text(&text)
        }
    }
}

/// The event trail, one row per event, with millisecond times so that short gaps are visible.
fn trail(events: &[InstanceEvent]) -> Table {
    let mut table = Table::new(["TIME", "TRANSITION", "ATTEMPT", "SCHEDULER", "WORKER", "REASON", "SINCE PREV"]);
    let rows = events.iter().zip(output::instance_event_views(events)).zip(output::gaps_millis(events));
    for ((event, view), gap) in rows {
        let time = output::utc(event.time.as_ref()).map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true));
        table.row([
            output::or_dash(time),
            format!("{} -> {}", view.from_status.as_deref().unwrap_or("-"), view.to_status),
            view.attempt.to_string(),
            output::or_dash(Some(view.scheduler_id)),
            output::or_dash(Some(view.worker_id)),
            view.reason,
            gap.map_or_else(String::new, output::gap_text),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use ax_proto::v1::InstanceStatus;

    use super::*;

    fn event(seconds: i64, nanos: i32, from: InstanceStatus, to: InstanceStatus, reason: &str) -> InstanceEvent {
        InstanceEvent {
            time: Some(prost_types::Timestamp { seconds, nanos }),
            from_status: from as i32,
            to_status: to as i32,
            attempt: u32::from(to != InstanceStatus::Pending),
            scheduler_id: "axd-1".into(),
            worker_id: if to == InstanceStatus::Pending { String::new() } else { "w1".into() },
            reason: reason.into(),
        }
    }

    #[test]
    fn the_trail_shows_transitions_and_the_time_between_events() {
        let events = [
            event(1_767_261_600, 0, InstanceStatus::Unspecified, InstanceStatus::Pending, "fire"),
            event(1_767_261_601, 204_000_000, InstanceStatus::Pending, InstanceStatus::Dispatched, "assigned"),
        ];
        let text = trail(&events).render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[1].starts_with("2026-01-01T10:00:00.000Z  - -> PENDING"), "{text}");
        assert!(lines[1].ends_with("fire"), "the first event has no gap: {text}");
        assert!(lines[2].contains("PENDING -> DISPATCHED"), "{text}");
        assert!(lines[2].contains("w1"), "{text}");
        assert!(lines[2].ends_with("assigned  +1.204s"), "{text}");
    }
}
