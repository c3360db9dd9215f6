//! The subcommands of axctl, one module per noun (`task`, `instance`, ...) and one file per verb,
//! plus the context every command runs with: how to reach axd and how to print.

use anyhow::{Result, anyhow};
use clap::Subcommand;

use crate::{
    client::{self, AdminClient, ConnectOptions},
    output::OutputFormat,
};

pub mod alert;
pub mod audit;
pub mod calendar;
pub mod certs;
pub mod cluster;
pub mod code;
pub mod event;
pub mod instance;
pub mod rate_limit;
pub mod run;
pub mod schedule;
pub mod scheduler;
pub mod shell;
pub mod task;
pub mod worker;

/// What a command needs from the global options.
#[derive(Debug)]
pub struct Context {
    /// How to print the result.
    pub output: OutputFormat,
    /// Where axd is; commands that talk to it connect through [`Context::client`].
    pub connection: ConnectOptions,
}

impl Context {
    /// A client connected to the endpoint (fails naming the endpoint when it cannot connect).
    pub async fn client(&self) -> Result<AdminClient> {
        client::connect(&self.connection).await
    }

    /// [`Context::client`] for calls that wait on purpose, up to `timeout`.
    pub async fn client_for(&self, timeout: std::time::Duration) -> Result<AdminClient> {
        client::connect_for(&self.connection, timeout).await
    }
}

/// A command that ran and says how what it did went through its exit status, with a line on
/// stderr (`task trigger --wait`: the instance's outcome). README "axctl" lists the statuses.
#[derive(Debug)]
pub struct Outcome {
    /// The exit status.
    pub code: u8,
    /// What went the way the status says.
    pub message: String,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Outcome {}

/// A response field axd always sets; without it the server is broken or speaks another version.
pub fn required<T>(value: Option<T>, what: &str) -> Result<T> {
    value.ok_or_else(|| anyhow!("axd sent a response without {what}"))
}

/// axctl's whole command line, as clap defines it (completions and man pages are made from it).
pub fn definition() -> clap::Command {
    <crate::Cli as clap::CommandFactory>::command()
}

/// Top-level nouns.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create, inspect, change, trigger and delete tasks.
    // Boxed: the task flags make this variant several times larger than the others.
    #[command(subcommand)]
    Task(Box<task::TaskCommand>),
    /// Evaluate schedules without storing anything.
    #[command(subcommand)]
    Schedule(schedule::ScheduleCommand),
    /// Inspect, cancel and retry instances (one trigger of a task each).
    #[command(subcommand)]
    Instance(instance::InstanceCommand),
    /// Connected worker sessions.
    #[command(subcommand)]
    Worker(worker::WorkerCommand),
    /// The axd processes of the cluster.
    #[command(subcommand)]
    Scheduler(scheduler::SchedulerCommand),
    /// Cluster-wide counts.
    #[command(subcommand)]
    Cluster(cluster::ClusterCommand),
    /// The audit trail of changes made through AdminService.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Alert rules (events sent to signed webhooks) and their deliveries.
    #[command(subcommand)]
    Alert(alert::AlertCommand),
    /// App rate limits of instance starts, shared by the whole cluster.
    #[command(subcommand)]
    RateLimit(rate_limit::RateLimitCommand),
    /// Named sets of dates that tasks exclude (`task create --calendar NAME`).
    #[command(subcommand)]
    Calendar(calendar::CalendarCommand),
    /// Events that create instances of the tasks subscribed to them (`task create --on-event NAME`).
    #[command(subcommand)]
    Event(event::EventCommand),
    /// Workflow runs: the instances chains and DAG edges created from one first instance.
    #[command(subcommand)]
    Run(run::RunCommand),
    /// Show what `apply` would change for task files (JSON or YAML TaskSets), changing nothing.
    Plan(code::PlanArgs),
    /// Make the tasks of files true in one all-or-nothing call: create, update and (with --prune)
    /// delete tasks.
    Apply(code::ApplyArgs),
    /// Write the stored tasks as a task file that `apply` reads back with no change.
    Export(code::ExportArgs),
    /// Development certificates for mTLS (local files only, no server needed).
    #[command(subcommand)]
    Certs(certs::CertsCommand),
    /// Print the shell completion script for bash, zsh or fish on stdout (no server needed).
    Completions(shell::CompletionsArgs),
    /// Write man pages generated from this CLI into a directory: axctl.1 and one page per
    /// subcommand (axctl-task-create.1, ...). No server needed.
    Man(shell::ManArgs),
}

impl Command {
    /// Runs the command.
    pub async fn run(self, ctx: &Context) -> Result<()> {
        match self {
            Command::Task(command) => command.run(ctx).await,
            Command::Schedule(command) => command.run(ctx).await,
            Command::Instance(command) => command.run(ctx).await,
            Command::Worker(command) => command.run(ctx).await,
            Command::Scheduler(command) => command.run(ctx).await,
            Command::Cluster(command) => command.run(ctx).await,
            Command::Audit(command) => command.run(ctx).await,
            Command::Alert(command) => command.run(ctx).await,
            Command::RateLimit(command) => command.run(ctx).await,
            Command::Calendar(command) => command.run(ctx).await,
            Command::Event(command) => command.run(ctx).await,
            Command::Run(command) => command.run(ctx).await,
            Command::Plan(args) => code::plan(args, ctx).await,
            Command::Apply(args) => code::apply(args, ctx).await,
            Command::Export(args) => code::export(args, ctx).await,
            Command::Certs(command) => command.run(ctx),
            Command::Completions(args) => shell::completions(args, ctx, definition()),
            Command::Man(args) => shell::man(args, ctx, definition()),
        }
    }
}
