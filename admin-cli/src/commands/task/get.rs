//! `axctl task get NAME`: a task, its next fire times and its recent task-level events.

use anyhow::Result;
use ax_proto::v1::{GetTaskRequest, PreviewScheduleRequest, SchedulePreview};
use clap::Args;
use serde::Serialize;

use crate::{
    client::{AdminClient, RpcResultExt as _},
    commands::{Context, required},
    output::{self, OutputFormat, PreviewView, TaskEventView, TaskView},
};

/// Fire times shown under a task, as many as create and update show.
const PREVIEW_FIRES: u32 = 5;

/// Arguments of `task get`.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// Task name.
    pub name: String,
}

/// JSON output of `task get`.
#[derive(Serialize)]
struct TaskWithEvents {
    task: TaskView,
    events: Vec<TaskEventView>,
}

/// Shows the task.
pub async fn run(args: GetArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let response = client.get_task(GetTaskRequest { name: args.name }).await.rpc()?;
    let task = required(response.task, "the task")?;
    let view = TaskWithEvents {
        task: TaskView::from(&task),
        events: response.events.iter().map(TaskEventView::from).collect(),
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let mut text = output::task_details(&view.task);
            let mut warnings = Vec::new();
            // GetTask carries no preview; people reading a task want to see when it fires, so ask.
            // A failure here must not hide the task itself, so it becomes a note.
            match preview(&mut client, task.spec).await {
                Ok(Some(preview)) => {
                    let preview = PreviewView::from(&preview);
                    text.push('\n');
                    text.push_str(&output::preview_details(&preview, view.task.time_zone()));
                    warnings = preview.warnings;
                }
                Ok(None) => {}
                Err(err) => {
                    eprintln!("note: cannot preview the schedule: {}", output::escape_controls(&format!("{err:#}")))
                }
            }
            text.push_str("\nrecent events:\n");
            if view.events.is_empty() {
                text.push_str("  none\n");
            } else {
                text.push_str(&output::indent(&output::task_event_table(&view.events).render()));
            }
            output::print_report(&text, &warnings)
        }
    }
}

/// The next fires of a stored task's schedule from now, with its window, excluded dates, calendar
/// and jitter; None for a task without a schedule.
async fn preview(client: &mut AdminClient, spec: Option<ax_proto::v1::TaskSpec>) -> Result<Option<SchedulePreview>> {
    let Some(spec) = spec.filter(|s| s.schedule.is_some()) else {
        return Ok(None);
    };
    let request = PreviewScheduleRequest {
        schedule: spec.schedule,
        from: None,
        count: PREVIEW_FIRES,
        jitter: spec.jitter,
        task_name: spec.name,
        start_time: spec.start_time,
        end_time: spec.end_time,
        exclude_dates: spec.exclude_dates,
        calendar: spec.calendar,
        extra_schedules: spec.extra_schedules,
    };
    let response = client.preview_schedule(request).await.rpc()?;
    Ok(response.preview)
}
