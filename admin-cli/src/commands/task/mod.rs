//! `axctl task ...`: register, inspect, change, trigger and delete tasks.

use anyhow::Result;
use ax_proto::v1::{SchedulePreview, Task};
use clap::Subcommand;
use serde::Serialize;

use crate::{
    commands::Context,
    output::{self, OutputFormat, PreviewView, TaskView},
};

mod backfill;
mod create;
mod delete;
mod disable;
mod enable;
mod explain;
mod fields;
mod get;
mod list;
mod pause;
mod trigger;
mod update;

pub use fields::cron_kind;

/// Task verbs.
#[derive(Subcommand, Debug)]
pub enum TaskCommand {
    /// Register a task; give --app, --handler and exactly one schedule flag (--cron, --every,
    /// --fixed-delay, --at, --after or --manual). Prints the stored task and its next fire times.
    #[command(
        mut_arg("app", |a| a.required(true)),
        mut_arg("handler", |a| a.required(true)),
        mut_group("schedule", |g| g.required(true))
    )]
    Create(create::CreateArgs),
    /// Show a task, its next fire times and its recent events.
    Get(get::GetArgs),
    /// List tasks by name.
    List(list::ListArgs),
    /// Change the fields whose flags are given (at most one schedule flag); the rest stay as they are.
    Update(update::UpdateArgs),
    /// Delete a task; its PENDING instances are canceled, running ones finish.
    Delete(delete::DeleteArgs),
    /// Let a task fire again; its next fire time is computed from now (fires missed while disabled
    /// are not run).
    Enable(enable::EnableArgs),
    /// Stop a task from firing; existing instances are unaffected.
    Disable(disable::DisableArgs),
    /// Run a task now (also when disabled or paused), or later with --at / --after, optionally with
    /// other params.
    Trigger(trigger::TriggerArgs),
    /// Pause a task's schedule with a note saying why, until resumed or --until; fires that fall in
    /// the pause are not run (nor caught up afterwards).
    Pause(pause::PauseArgs),
    /// End a task's pause: its schedule fires again from now.
    Resume(pause::ResumeArgs),
    /// Create the instances the schedule would have created between --from and --to (one per fire
    /// time, in time order, none twice; at most 1000); --dry-run shows them.
    Backfill(backfill::BackfillArgs),
    /// Why a task did or did not run: disabled or paused, outside its window or on an excluded date,
    /// misfires, fires with no instance, coalesced, buffered or canceled by the overlap policy,
    /// instances that waited (no worker connected, none matching the selector, all at capacity or
    /// cooling down, --max-running reached, the app's rate limit), failed attempts.
    Explain(explain::ExplainArgs),
}

impl TaskCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            TaskCommand::Create(args) => create::run(args, ctx).await,
            TaskCommand::Get(args) => get::run(args, ctx).await,
            TaskCommand::List(args) => list::run(args, ctx).await,
            TaskCommand::Update(args) => update::run(args, ctx).await,
            TaskCommand::Delete(args) => delete::run(args, ctx).await,
            TaskCommand::Enable(args) => enable::run(args, ctx).await,
            TaskCommand::Disable(args) => disable::run(args, ctx).await,
            TaskCommand::Trigger(args) => trigger::run(args, ctx).await,
            TaskCommand::Pause(args) => pause::pause(args, ctx).await,
            TaskCommand::Resume(args) => pause::resume(args, ctx).await,
            TaskCommand::Backfill(args) => backfill::run(args, ctx).await,
            TaskCommand::Explain(args) => explain::run(args, ctx).await,
        }
    }
}

/// `task create` and `task update` output: the stored task and the preview of its schedule.
#[derive(Serialize)]
struct TaskAndPreview {
    task: TaskView,
    preview: Option<PreviewView>,
}

/// Prints a task with its schedule preview (create, update).
fn print_task_and_preview(ctx: &Context, task: &Task, preview: Option<&SchedulePreview>) -> Result<()> {
    let view = TaskAndPreview { task: TaskView::from(task), preview: preview.map(PreviewView::from) };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let mut text = output::task_details(&view.task);
            let mut warnings: &[String] = &[];
            if let Some(preview) = &view.preview {
                text.push('\n');
                text.push_str(&output::preview_details(preview, view.task.time_zone()));
                warnings = &preview.warnings;
            }
            output::print_report(&text, warnings)
        }
    }
}

/// `task enable` and `task disable` output.
#[derive(Serialize)]
struct TaskOnly {
    task: TaskView,
}

/// Prints a task alone (enable, disable).
fn print_task(ctx: &Context, task: &Task) -> Result<()> {
    let view = TaskOnly { task: TaskView::from(task) };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&output::task_details(&view.task)),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(subcommand)]
        command: TaskCommand,
    }

    fn parse(args: &[&str]) -> Result<TaskCommand, clap::Error> {
        Cli::try_parse_from(std::iter::once("task").chain(args.iter().copied())).map(|cli| cli.command)
    }

    #[test]
    fn create_needs_app_handler_and_exactly_one_schedule() {
        assert!(parse(&["create", "t", "--app", "a", "--handler", "h", "--cron", "@daily"]).is_ok());
        let err = parse(&["create", "t", "--app", "a", "--handler", "h"]).expect_err("no schedule").to_string();
        assert!(err.contains("--cron"), "{err}");
        let err = parse(&["create", "t", "--handler", "h", "--manual"]).expect_err("no app").to_string();
        assert!(err.contains("--app"), "{err}");
        let err = parse(&["create", "t", "--app", "a", "--manual"]).expect_err("no handler").to_string();
        assert!(err.contains("--handler"), "{err}");
        let err = parse(&["create", "t", "--app", "a", "--handler", "h", "--manual", "--every", "1m"])
            .expect_err("two schedules")
            .to_string();
        assert!(err.contains("cannot be used with"), "{err}");
    }

    #[test]
    fn update_takes_the_same_flags_all_optional() {
        assert!(parse(&["update", "t"]).is_ok(), "an empty update is refused later, with a clear message");
        assert!(parse(&["update", "t", "--retries", "2"]).is_ok());
        assert!(parse(&["update", "t", "--cron", "@hourly", "--tz", "Asia/Tokyo"]).is_ok());
        assert!(parse(&["update", "t", "--cron", "@hourly", "--manual"]).is_err());
    }
}
