//! Tasks as code: `axctl plan` and `axctl apply` make the tasks of files true (one `ApplyTasks`
//! call, all or nothing), `axctl export` writes the stored tasks in the same format.

use std::{
    io::{BufRead as _, IsTerminal as _, Write as _},
    path::PathBuf,
};

use anyhow::{Result, anyhow, bail};
use ax_proto::v1::{ApplyTasksRequest, ApplyTasksResponse, ListTasksRequest, TaskChange, TaskChangeKind, TaskSet};
use clap::Args;
use serde::Serialize;

use crate::{
    client::{AdminClient, RpcError, RpcResultExt as _},
    commands::{Context, Outcome},
    output::{self, OutputFormat, escape_controls_but_newlines, time_text},
};

pub mod files;

use files::{Format, Sourced};

/// What `plan` and `apply` read and change.
#[derive(Args, Debug)]
pub struct SetArgs {
    /// A task file or a directory of them (.json, .yaml, .yml; `-` for stdin). Repeatable.
    #[arg(short = 'f', long = "file", value_name = "PATH", required = true)]
    pub files: Vec<PathBuf>,
    /// Also delete the tasks of the apps (see --app) that the files do not define.
    #[arg(long)]
    pub prune: bool,
    /// The apps the files describe: each task must belong to one, and --prune deletes only within
    /// them (default: the apps of the files' tasks). Repeatable.
    #[arg(long = "app", value_name = "APP")]
    pub apps: Vec<String>,
}

/// Arguments of `plan`.
#[derive(Args, Debug)]
pub struct PlanArgs {
    #[command(flatten)]
    pub set: SetArgs,
    /// Exit with status 2 when the plan changes something (0: nothing to change), for drift
    /// checks in CI.
    #[arg(long)]
    pub exit_code: bool,
}

/// Arguments of `apply`.
#[derive(Args, Debug)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub set: SetArgs,
    /// Kept in the audit entry: why, or which commit the files come from.
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Apply without asking (needed when stdin is not a terminal).
    #[arg(long)]
    pub yes: bool,
}

/// Arguments of `export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Only the tasks of this app (default: every task you may read).
    #[arg(long, value_name = "APP")]
    pub app: Option<String>,
    /// The file's format.
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    pub format: Format,
    /// Write to this file instead of stdout.
    #[arg(short = 'f', long = "file", value_name = "PATH")]
    pub file: Option<PathBuf>,
}

/// JSON output of one task's change.
#[derive(Serialize)]
struct ChangeView {
    name: String,
    app: String,
    kind: &'static str,
    file: Option<String>,
    changed_fields: Vec<String>,
    next_fire_before: Option<String>,
    next_fire_after: Option<String>,
    edges_removed: Vec<String>,
    edges_added: Vec<String>,
    calendars: Vec<String>,
}

/// JSON output of `plan` and `apply`.
#[derive(Serialize)]
struct PlanView {
    applied: bool,
    create: usize,
    update: usize,
    delete: usize,
    unchanged: usize,
    changes: Vec<ChangeView>,
}

fn kind_of(c: &TaskChange) -> TaskChangeKind {
    TaskChangeKind::try_from(c.kind).unwrap_or(TaskChangeKind::Unspecified)
}

fn kind_name(k: TaskChangeKind) -> &'static str {
    match k {
        TaskChangeKind::Create => "create",
        TaskChangeKind::Update => "update",
        TaskChangeKind::Delete => "delete",
        TaskChangeKind::Unchanged => "unchanged",
        TaskChangeKind::Unspecified => "unknown",
    }
}

fn view(r: &ApplyTasksResponse, tasks: &[Sourced]) -> PlanView {
    let count = |k: TaskChangeKind| r.changes.iter().filter(|c| kind_of(c) == k).count();
    PlanView {
        applied: r.applied,
        create: count(TaskChangeKind::Create),
        update: count(TaskChangeKind::Update),
        delete: count(TaskChangeKind::Delete),
        unchanged: count(TaskChangeKind::Unchanged),
        changes: r
            .changes
            .iter()
            .map(|c| ChangeView {
                name: c.name.clone(),
                app: c.app.clone(),
                kind: kind_name(kind_of(c)),
                file: tasks.iter().find(|t| t.spec.name == c.name).map(|t| t.file.clone()),
                changed_fields: c.changed_fields.clone(),
                next_fire_before: time_text(c.next_fire_before.as_ref()),
                next_fire_after: time_text(c.next_fire_after.as_ref()),
                edges_removed: c.edges_removed.clone(),
                edges_added: c.edges_added.clone(),
                calendars: c.calendars.clone(),
            })
            .collect(),
    }
}

/// The plan as text: one line per task created, changed or deleted, with its schedule impact,
/// then the counts.
fn plan_text(v: &PlanView) -> String {
    let mut out = String::new();
    for c in v.changes.iter().filter(|c| c.kind != "unchanged") {
        let sign = match c.kind {
            "create" => '+',
            "update" => '~',
            "delete" => '-',
            _ => '?',
        };
        let fields =
            if c.changed_fields.is_empty() { String::new() } else { format!(": {}", c.changed_fields.join(", ")) };
        out.push_str(&format!("{sign} {} {} (app {}){fields}\n", c.kind, c.name, c.app));
        let none = || "none".to_owned();
        match (c.kind, &c.next_fire_before, &c.next_fire_after) {
            ("create", _, after) => out.push_str(&format!("    next fire: {}\n", after.clone().unwrap_or_else(none))),
            ("delete", before, _) => {
                out.push_str(&format!("    next fire: {} -> none\n", before.clone().unwrap_or_else(none)))
            }
            (_, before, after) if before != after => out.push_str(&format!(
                "    next fire moves: {} -> {}\n",
                before.clone().unwrap_or_else(none),
                after.clone().unwrap_or_else(none)
            )),
            _ => {}
        }
        for e in &c.edges_removed {
            out.push_str(&format!("    edge removed: {e}\n"));
        }
        for e in &c.edges_added {
            out.push_str(&format!("    edge added: {e}\n"));
        }
        if !c.calendars.is_empty() {
            out.push_str(&format!("    calendars: {}\n", c.calendars.join(", ")));
        }
    }
    let counts =
        format!("{} to create, {} to update, {} to delete, {} unchanged", v.create, v.update, v.delete, v.unchanged);
    if v.applied {
        out.push_str(&format!(
            "Applied: {} created, {} updated, {} deleted, {} unchanged.",
            v.create, v.update, v.delete, v.unchanged
        ));
    } else if v.create + v.update + v.delete == 0 {
        out.push_str(&format!("No changes: {} task(s) as the files say.", v.unchanged));
    } else {
        out.push_str(&format!("Plan: {counts}."));
    }
    escape_controls_but_newlines(&out).into_owned()
}

async fn call(
    client: &mut AdminClient,
    set: &SetArgs,
    tasks: &[Sourced],
    dry_run: bool,
    note: &str,
) -> Result<ApplyTasksResponse> {
    let request = ApplyTasksRequest {
        tasks: tasks.iter().map(|t| t.spec.clone()).collect(),
        prune: set.prune,
        apps: set.apps.clone(),
        dry_run,
        change_note: note.to_owned(),
    };
    match client.apply_tasks(request).await {
        Ok(r) => Ok(r.into_inner()),
        // An error about tasks[i] names the file and the task instead of the index.
        Err(status) => {
            Err(RpcError::from(&tonic::Status::new(status.code(), files::locate(status.message(), tasks))).into())
        }
    }
}

fn print(ctx: &Context, v: &PlanView) -> Result<()> {
    match ctx.output {
        OutputFormat::Json => output::print_json(v),
        OutputFormat::Table => output::print_text(&plan_text(v)),
    }
}

/// `axctl plan`: what `apply` would change, changing nothing.
pub async fn plan(args: PlanArgs, ctx: &Context) -> Result<()> {
    let tasks = files::read_all(&args.set.files)?;
    let mut client = ctx.client().await?;
    let r = call(&mut client, &args.set, &tasks, true, "").await?;
    let v = view(&r, &tasks);
    print(ctx, &v)?;
    if args.exit_code && v.create + v.update + v.delete > 0 {
        return Err(Outcome { code: 2, message: "the plan changes tasks".to_owned() }.into());
    }
    Ok(())
}

/// `axctl apply`: the plan, a confirmation, then the change in one call.
pub async fn apply(args: ApplyArgs, ctx: &Context) -> Result<()> {
    let tasks = files::read_all(&args.set.files)?;
    let note = args.note.clone().unwrap_or_default();
    let mut client = ctx.client().await?;
    let planned = view(&call(&mut client, &args.set, &tasks, true, &note).await?, &tasks);
    if planned.create + planned.update + planned.delete == 0 {
        return print(ctx, &planned);
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            bail!(
                "{} to create, {} to update, {} to delete: pass --yes to apply, or run axctl plan to see the changes",
                planned.create,
                planned.update,
                planned.delete
            );
        }
        eprintln!("{}", plan_text(&planned));
        eprint!("Apply these changes? [y/N] ");
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES") {
            bail!("nothing applied");
        }
    }
    let applied = view(&call(&mut client, &args.set, &tasks, false, &note).await?, &tasks);
    print(ctx, &applied)
}

/// `axctl export`: every task of an app (or every task the caller may read) as a task file.
pub async fn export(args: ExportArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let mut set = TaskSet::default();
    let mut page_token = String::new();
    loop {
        let request = ListTasksRequest {
            app: args.app.clone().unwrap_or_default(),
            page_size: 1000,
            page_token: std::mem::take(&mut page_token),
        };
        let page = client.list_tasks(request).await.rpc()?;
        for t in page.tasks {
            set.tasks.push(t.spec.ok_or_else(|| anyhow!("axd sent a task without its spec"))?);
        }
        if page.next_page_token.is_empty() {
            break;
        }
        page_token = page.next_page_token;
    }
    let text = files::write_set(&set, args.format)?;
    match &args.file {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
            eprintln!("exported {} task(s) to {}", set.tasks.len(), path.display());
            Ok(())
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}
