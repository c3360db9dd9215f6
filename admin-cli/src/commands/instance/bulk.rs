//! `axctl instance cancel|retry|delete` by filter: a dry run counts what matches, a confirmation
//! (a prompt on a terminal, `--yes` otherwise), then one `BulkInstances` call pinned to what was
//! counted (no instance created since, and no more than were counted).

use std::io::{BufRead as _, IsTerminal as _, Write as _};

use anyhow::{Result, bail};
use ax_proto::v1::{BulkAction, BulkInstancesRequest, BulkInstancesResponse, InstanceSelector};
use clap::Args;
use serde::Serialize;

use crate::{
    client::RpcResultExt as _,
    commands::Context,
    output::{self, OutputFormat},
};

use super::filters::Filters;

/// The filters and safeguards of a bulk action.
#[derive(Args, Debug, Default)]
pub struct BulkArgs {
    #[command(flatten)]
    pub filters: Filters,
    /// Only instances of this app.
    #[arg(long, value_name = "APP")]
    pub app: Option<String>,
    /// The most instances the filter may match; more is refused with nothing changed (1-100000).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max: u32,
    /// Only count what matches and what would change.
    #[arg(long)]
    pub dry_run: bool,
    /// Act without asking (needed when stdin is not a terminal).
    #[arg(long)]
    pub yes: bool,
}

impl BulkArgs {
    /// Whether any filter is set (an id and filters do not go together).
    pub fn any_filter(&self) -> bool {
        self.filters.any() || self.app.is_some()
    }

    /// Whether a flag that only a filter uses is set (with an id, they mean nothing).
    pub fn any_bulk_flag(&self) -> bool {
        self.any_filter() || self.dry_run || self.yes || self.max != 1000
    }

    fn selector(&self) -> InstanceSelector {
        let f = &self.filters;
        InstanceSelector {
            task_name: f.task.clone().unwrap_or_default(),
            app: self.app.clone().unwrap_or_default(),
            status: f.status(),
            start_time: f.since,
            end_time: f.until,
            tags: f.tags(),
            params: f.params(),
            ..Default::default()
        }
    }
}

/// JSON output of a bulk action.
#[derive(Serialize)]
struct BulkView {
    action: &'static str,
    dry_run: bool,
    matched: u64,
    changed: u64,
    skipped: u64,
    max_id: i64,
    sample_ids: Vec<i64>,
}

/// Verb forms of an action: (infinitive, past participle).
fn words(action: BulkAction) -> (&'static str, &'static str) {
    match action {
        BulkAction::Cancel => ("cancel", "canceled"),
        BulkAction::Retry => ("retry", "retried"),
        _ => ("delete", "deleted"),
    }
}

/// Runs a bulk action: count, confirm, act.
pub async fn run(action: BulkAction, args: BulkArgs, reason: Option<String>, ctx: &Context) -> Result<()> {
    if !args.any_filter() {
        bail!(
            "give an instance id, or at least one filter (--task, --app, --status, --since, --until, --tag, --param)"
        );
    }
    let (verb, done) = words(action);
    let mut client = ctx.client().await?;
    let request = |selector: InstanceSelector, dry_run: bool, max_instances: u32| BulkInstancesRequest {
        action: action as i32,
        selector: Some(selector),
        dry_run,
        max_instances,
        reason: reason.clone().unwrap_or_default(),
    };
    let counted = client.bulk_instances(request(args.selector(), true, args.max)).await.rpc()?;
    if args.dry_run || counted.changed == 0 {
        return print(ctx, verb, done, &counted, true);
    }
    if !args.yes {
        let question = format!(
            "{} instance(s) match; {verb} {} of them ({} skipped: not in a state to {verb})? [y/N] ",
            counted.matched, counted.changed, counted.skipped
        );
        if !std::io::stdin().is_terminal() {
            bail!(
                "{} instance(s) match and {} would be {done}: pass --yes to {verb} them, or --dry-run to only count",
                counted.matched,
                counted.changed
            );
        }
        eprint!("{question}");
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES") {
            bail!("nothing {done}");
        }
    }
    // Pinned to what was counted: nothing created since, and no more than were counted.
    let mut selector = args.selector();
    selector.max_id = counted.max_id;
    let max = u32::try_from(counted.matched).unwrap_or(u32::MAX).max(1);
    let response = client.bulk_instances(request(selector, false, max)).await.rpc()?;
    print(ctx, verb, done, &response, false)
}

fn print(ctx: &Context, verb: &'static str, done: &str, r: &BulkInstancesResponse, dry_run: bool) -> Result<()> {
    let view = BulkView {
        action: verb,
        dry_run,
        matched: r.matched,
        changed: r.changed,
        skipped: r.skipped,
        max_id: r.max_id,
        sample_ids: r.sample_ids.clone(),
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => {
            let head = if dry_run {
                format!("{} instance(s) match; {} would be {done}, {} skipped", r.matched, r.changed, r.skipped)
            } else {
                format!("{done} {} instance(s); {} matched, {} skipped", r.changed, r.matched, r.skipped)
            };
            let sample = if r.sample_ids.is_empty() {
                String::new()
            } else {
                let ids: Vec<String> = r.sample_ids.iter().map(i64::to_string).collect();
                let more = if r.matched > r.sample_ids.len() as u64 { ", ..." } else { "" };
                format!("\nids (newest first): {}{more}", ids.join(", "))
            };
            output::print_text(&format!("{head}{sample}"))
        }
    }
}
