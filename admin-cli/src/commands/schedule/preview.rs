//! `axctl schedule preview`: asks the server (the same engine that fires tasks) when a schedule
//! would fire — with an active window, excluded dates, a calendar and jitter as a task would have
//! them — so what the operator sees is exactly what axd will do.

use anyhow::Result;
use ax_proto::v1::{IntervalSchedule, PreviewScheduleRequest, Schedule, schedule};
use clap::{ArgGroup, Args};
use serde::Serialize;

use crate::{
    args::{Dialect, List, parse_duration, parse_list, parse_timestamp},
    client::RpcResultExt as _,
    commands::{Context, required, task::cron_kind},
    output::{self, OutputFormat, PreviewView},
};

/// Arguments of `schedule preview`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("schedule").args(["cron", "every"]).required(true)))]
pub struct PreviewArgs {
    /// A cron expression, e.g. "0 2 * * *".
    #[arg(long, value_name = "EXPR")]
    pub cron: Option<String>,
    /// IANA time zone of --cron [default: UTC].
    // `requires` is waived by clap when a conflicting flag (--every) is present, hence the conflicts.
    #[arg(long, value_name = "ZONE", requires = "cron", conflicts_with = "every")]
    pub tz: Option<String>,
    /// How to read --cron [default: detect].
    #[arg(long, value_enum, requires = "cron", conflicts_with = "every")]
    pub dialect: Option<Dialect>,
    /// A fixed rate, e.g. 15m.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub every: Option<prost_types::Duration>,
    /// No fire before this instant (RFC 3339); with --every also its anchor [default: now].
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub start_at: Option<prost_types::Timestamp>,
    /// Another schedule whose fires are merged in (each instant once): 'cron EXPR [in ZONE]' or
    /// 'every DUR'; repeatable.
    #[arg(long, value_name = "SCHEDULE", value_parser = crate::args::parse_also)]
    pub also: Vec<Option<Schedule>>,
    /// No fire after this instant (RFC 3339).
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub end_at: Option<prost_types::Timestamp>,
    /// Dates without fires, YYYY-MM-DD,YYYY-MM-DD (on the cron's wall clock).
    #[arg(long, value_name = "DATES", value_parser = parse_list)]
    pub exclude: Option<List>,
    /// A calendar whose dates are left out too.
    #[arg(long, value_name = "NAME")]
    pub calendar: Option<String>,
    /// Show when each fire runs with this jitter (the offsets of task --task).
    #[arg(long, value_name = "DUR", value_parser = parse_duration, requires = "task")]
    pub jitter: Option<prost_types::Duration>,
    /// The task name the jitter offsets are derived from.
    #[arg(long, value_name = "NAME", requires = "jitter")]
    pub task: Option<String>,
    /// Fires after this instant (RFC 3339) [default: now].
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub from: Option<prost_types::Timestamp>,
    /// Number of fires, 1-1000.
    #[arg(
        short = 'n',
        long = "count",
        value_name = "N",
        default_value_t = 10,
        value_parser = clap::value_parser!(u32).range(1..=1000)
    )]
    pub count: u32,
}

/// JSON output of `schedule preview`.
#[derive(Serialize)]
struct Preview {
    preview: PreviewView,
}

impl PreviewArgs {
    /// The schedule of the flags (clap guarantees exactly one of --cron and --every).
    fn schedule(&self) -> Schedule {
        let kind = match (&self.cron, self.every) {
            (Some(expression), _) => cron_kind(expression, self.tz.as_deref(), self.dialect),
            (None, every) => schedule::Kind::FixedRate(IntervalSchedule { interval: every, start_at: self.start_at }),
        };
        Schedule { kind: Some(kind) }
    }
}

/// Previews the schedule.
pub async fn run(args: PreviewArgs, ctx: &Context) -> Result<()> {
    let request = PreviewScheduleRequest {
        schedule: Some(args.schedule()),
        from: args.from,
        count: args.count,
        jitter: args.jitter,
        task_name: args.task.clone().unwrap_or_default(),
        start_time: args.start_at,
        end_time: args.end_at,
        exclude_dates: args.exclude.clone().unwrap_or_default().0,
        calendar: args.calendar.clone().unwrap_or_default(),
        extra_schedules: args.also.iter().flatten().cloned().collect(),
    };
    let mut client = ctx.client().await?;
    let response = client.preview_schedule(request).await.rpc()?;
    let view = Preview { preview: PreviewView::from(&required(response.preview, "the preview")?) };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let zone = args.tz.as_deref().unwrap_or_default();
            output::print_report(&output::preview_details(&view.preview, zone), &view.preview.warnings)
        }
    }
}

#[cfg(test)]
mod tests {
    use ax_proto::v1::{CronDialect, CronSchedule};
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: PreviewArgs,
    }

    fn parse(args: &[&str]) -> Result<PreviewArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("preview").chain(args.iter().copied())).map(|cli| cli.args)
    }

    #[test]
    fn cron_previews_carry_zone_dialect_and_count() {
        let args =
            parse(&["--cron", "0 0 * * 1", "--tz", "Asia/Tokyo", "--dialect", "quartz", "-n", "3"]).expect("valid");
        assert_eq!(args.count, 3);
        assert_eq!(
            args.schedule().kind,
            Some(schedule::Kind::Cron(CronSchedule {
                expression: "0 0 * * 1".into(),
                time_zone: "Asia/Tokyo".into(),
                dialect: CronDialect::Quartz as i32,
            }))
        );
    }

    #[test]
    fn fixed_rate_previews_default_to_ten_fires() {
        let args = parse(&["--every", "90s", "--start-at", "2026-01-01T00:00:00Z"]).expect("valid");
        assert_eq!(args.count, 10);
        assert!(matches!(
            args.schedule().kind,
            Some(schedule::Kind::FixedRate(IntervalSchedule { interval: Some(_), start_at: Some(_) }))
        ));
    }

    #[test]
    fn exactly_one_of_cron_and_every_is_needed() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["--every", "1h", "-n", "0"]).is_err());
        assert!(parse(&["--every", "1h", "-n", "1001"]).is_err());
        assert!(parse(&["--cron", "@daily", "--every", "1h"]).is_err());
        assert!(parse(&["--every", "1h", "--tz", "UTC"]).is_err());
        assert!(parse(&["--every", "1h", "--dialect", "unix"]).is_err());
        assert!(parse(&["--tz", "UTC"]).is_err());
        assert!(parse(&["--cron", "@daily", "--jitter", "1m"]).is_err(), "jitter needs --task");
    }

    #[test]
    fn windows_exclusions_and_jitter_reach_the_request() {
        let args = parse(&[
            "--cron",
            "0 9 * * *",
            "--start-at",
            "2026-01-01T00:00:00Z",
            "--end-at",
            "2026-02-01T00:00:00Z",
            "--exclude",
            "2026-01-02,2026-01-03",
            "--calendar",
            "holidays",
            "--jitter",
            "5m",
            "--task",
            "report",
        ])
        .expect("valid");
        assert_eq!(args.start_at.map(|t| t.seconds), Some(1_767_225_600));
        assert_eq!(args.exclude, Some(List(vec!["2026-01-02".into(), "2026-01-03".into()])));
        assert_eq!(args.jitter.map(|d| d.seconds), Some(300));
        assert!(matches!(args.schedule().kind, Some(schedule::Kind::Cron(_))), "the window does not anchor a cron");
    }
}
