//! `axctl man --dir DIR`: writes roff man pages generated from the clap definition: `axctl.1`, one
//! page per noun (`axctl-task.1`) and one per verb (`axctl-task-create.1`), each with the
//! command's help text and every option it takes.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::Args;
use serde::Serialize;

use crate::{
    commands::Context,
    output::{self, OutputFormat},
};

/// Arguments of `man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Directory to write the pages into (created if missing; pages already there are replaced).
    #[arg(long)]
    pub dir: PathBuf,
}

/// JSON output of `man`.
#[derive(Serialize)]
struct Written {
    files: Vec<String>,
}

/// Writes every page of `command` into `args.dir` and lists the files written.
pub fn run(args: ManArgs, ctx: &Context, command: clap::Command) -> Result<()> {
    let files = write_pages(command, &args.dir)?;
    let files: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    match ctx.output {
        OutputFormat::Json => output::print_json(&Written { files }),
        OutputFormat::Table => output::print_text(&format!("wrote {} man pages:\n{}\n", files.len(), files.join("\n"))),
    }
}

/// Writes the page of `command` and of each of its subcommands, recursively, into `dir`; the paths
/// written, the root's first.
pub fn write_pages(command: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // `help` is not a command worth a page; building gives every subcommand its display name
    // (`axctl-task-create`), which names its page.
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let mut written = Vec::new();
    write_tree(&command, dir, &mut written)?;
    Ok(written)
}

fn write_tree(command: &clap::Command, dir: &Path, written: &mut Vec<PathBuf>) -> Result<()> {
    let page = clap_mangen::Man::new(command.clone());
    let path = dir.join(page.get_filename());
    let mut roff = Vec::new();
    page.render(&mut roff).context("cannot render a man page")?;
    std::fs::write(&path, roff).with_context(|| format!("cannot write {}", path.display()))?;
    written.push(path);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_tree(sub, dir, written)?;
    }
    Ok(())
}
