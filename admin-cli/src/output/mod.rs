//! What axctl prints: the JSON views of the proto messages (a contract scripts and tests parse)
//! and the plain-text tables and field lists people read.
//!
//! JSON rules: snake_case keys in proto field order; enums are their proto value names without the
//! type prefix (`PENDING`, `FIRE_ONCE`); timestamps are RFC 3339 UTC strings and durations use the
//! `--every` syntax (`1h30m`), both null when unset; params and output are embedded as JSON when
//! they parse and as strings otherwise. JSON is exact: text from the server is only JSON-escaped.
//!
//! Text rules: columns laid out by comfy-table without borders, values `-` when unset, every
//! control character in server text escaped visibly (`\x1b`), every report ending in a newline.
//! A command builds its view (`TaskView`, ...), then prints it with `print_json` or with one of the
//! renderers here and `print_text`:
//!
//! ```ignore
//! let view = TaskView::from(&task);
//! match ctx.output {
//!     OutputFormat::Json => output::print_json(&view),
//!     OutputFormat::Table => output::print_text(&output::task_details(&view)),
//! }
//! ```

mod alerts;
mod audit;
mod cluster;
mod explain;
mod flow;
mod instances;
mod layout;
mod limits;
mod preview;
mod print;
mod scalars;
mod task_spec;
mod tasks;
mod terminal;
#[cfg(test)]
mod terminal_safety_tests;
mod time;
mod trail;

use clap::ValueEnum;

pub use alerts::{AlertRuleView, DeliveryView, alert_rule_table, delivery_table};
pub use audit::{AuditEntryView, audit_table};
pub use cluster::{SchedulerView, StatsView, WorkerView, scheduler_table, stats_details, worker_table};
pub use explain::{ExplainView, explain_report};
pub use flow::{
    BackfilledFireView, CalendarView, LinkView, RunView, backfill_report, calendar_details, calendar_table,
    links_report, run_tree,
};
pub use instances::{InstanceView, children_report, instance_details, instance_table};
pub use layout::indent;
pub use limits::{AppLimitView, app_limit_summary, app_limit_table};
pub use preview::{PreviewView, preview_details};
pub use print::{print_json, print_json_line, print_page, print_report, print_text};
pub use tasks::{TaskEventView, TaskView, task_details, task_event_table, task_table};
pub use terminal::{escape_controls, escape_controls_but_newlines};
pub use time::time_text;
pub use trail::{InstanceEventView, LogLineView, event_trail, instance_event_views, log_line_text, log_table};

/// What `-o/--output` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned text for people.
    Table,
    /// Exactly one JSON document on stdout, for scripts.
    Json,
}
