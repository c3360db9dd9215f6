//! `axctl calendar ...`: named sets of dates that tasks exclude (`--calendar NAME`), shared by the
//! tasks of every app (CreateCalendar, UpdateCalendar, GetCalendar, ListCalendars, DeleteCalendar).

use anyhow::Result;
use ax_proto::v1::{
    Calendar, CreateCalendarRequest, DeleteCalendarRequest, GetCalendarRequest, ListCalendarsRequest,
    UpdateCalendarRequest,
};
use clap::{Args, Subcommand};
use serde::Serialize;

use crate::{
    args::{List, parse_list},
    client::RpcResultExt as _,
    commands::{Context, required},
    output::{self, CalendarView, OutputFormat},
};

/// Calendar verbs.
#[derive(Subcommand, Debug)]
pub enum CalendarCommand {
    /// Create a calendar: dates on which the tasks that name it do not fire (read on each task's own
    /// wall clock).
    Create(SetArgs),
    /// Replace a calendar's dates (and description); the tasks that use it follow at once.
    Update(SetArgs),
    /// Show a calendar and the tasks that use it.
    Get(NameArgs),
    /// List calendars.
    List,
    /// Delete a calendar no task uses.
    Delete(NameArgs),
}

/// Arguments of `calendar create` and `calendar update`.
#[derive(Args, Debug)]
pub struct SetArgs {
    /// Calendar name.
    pub name: String,
    /// The dates, YYYY-MM-DD,YYYY-MM-DD (at most 1000).
    #[arg(long, value_name = "DATES", value_parser = parse_list)]
    pub dates: List,
    /// Free text.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub description: String,
}

/// Arguments naming one calendar.
#[derive(Args, Debug)]
pub struct NameArgs {
    /// Calendar name.
    pub name: String,
}

/// JSON output of `calendar get`.
#[derive(Serialize)]
struct CalendarWithTasks {
    calendar: CalendarView,
    tasks: Vec<String>,
}

/// JSON output of `calendar list`.
#[derive(Serialize)]
struct CalendarList {
    calendars: Vec<CalendarView>,
}

/// JSON output of `calendar delete`.
#[derive(Serialize)]
struct Deleted {
    deleted: String,
}

impl SetArgs {
    fn calendar(self) -> Calendar {
        Calendar { name: self.name, description: self.description, dates: self.dates.0, ..Calendar::default() }
    }
}

fn print_calendar(ctx: &Context, c: &Calendar) -> Result<()> {
    let view = CalendarView::from(c);
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&output::calendar_details(&view, None)),
    }
}

impl CalendarCommand {
    /// Runs the verb.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        let mut client = ctx.client().await?;
        match self {
            CalendarCommand::Create(args) => {
                let r =
                    client.create_calendar(CreateCalendarRequest { calendar: Some(args.calendar()) }).await.rpc()?;
                print_calendar(ctx, &required(r.calendar, "the calendar")?)
            }
            CalendarCommand::Update(args) => {
                let r =
                    client.update_calendar(UpdateCalendarRequest { calendar: Some(args.calendar()) }).await.rpc()?;
                print_calendar(ctx, &required(r.calendar, "the calendar")?)
            }
            CalendarCommand::Get(args) => {
                let r = client.get_calendar(GetCalendarRequest { name: args.name }).await.rpc()?;
                let view = CalendarWithTasks {
                    calendar: CalendarView::from(&required(r.calendar, "the calendar")?),
                    tasks: r.tasks,
                };
                match ctx.output {
                    OutputFormat::Json => output::print_json(&view),
                    OutputFormat::Table => {
                        output::print_text(&output::calendar_details(&view.calendar, Some(&view.tasks)))
                    }
                }
            }
            CalendarCommand::List => {
                let r = client.list_calendars(ListCalendarsRequest {}).await.rpc()?;
                let view = CalendarList { calendars: r.calendars.iter().map(CalendarView::from).collect() };
                match ctx.output {
                    OutputFormat::Json => output::print_json(&view),
                    OutputFormat::Table => {
                        output::print_page(&output::calendar_table(&view.calendars), "calendars", "")
                    }
                }
            }
            CalendarCommand::Delete(args) => {
                client.delete_calendar(DeleteCalendarRequest { name: args.name.clone() }).await.rpc()?;
                let view = Deleted { deleted: args.name };
                match ctx.output {
                    OutputFormat::Json => output::print_json(&view),
                    OutputFormat::Table => {
                        output::print_text(&format!("deleted calendar {}", output::escape_controls(&view.deleted)))
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(subcommand)]
        command: CalendarCommand,
    }

    fn parse(args: &[&str]) -> Result<CalendarCommand, clap::Error> {
        Cli::try_parse_from(std::iter::once("calendar").chain(args.iter().copied())).map(|cli| cli.command)
    }

    #[test]
    fn dates_are_one_comma_separated_list() {
        let Ok(CalendarCommand::Create(args)) =
            parse(&["create", "holidays", "--dates", "2026-12-25, 2027-01-01", "--description", "public"])
        else {
            panic!("create parses")
        };
        let c = args.calendar();
        assert_eq!(c.dates, ["2026-12-25", "2027-01-01"]);
        assert_eq!((c.name.as_str(), c.description.as_str()), ("holidays", "public"));
        assert!(parse(&["get"]).is_err(), "a name is needed");
        assert!(parse(&["create", "x", "--dates", "2026-12-25,,2027-01-01"]).is_err());
    }
}
