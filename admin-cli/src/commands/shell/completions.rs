//! `axctl completions bash|zsh|fish`: prints the completion script for a shell on stdout.

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use clap_complete::Shell as Generator;

use crate::{commands::Context, output::OutputFormat};

/// Shells axctl writes completion scripts for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// Bash 4 or later (with the bash-completion package for the usual install places).
    Bash,
    /// Zsh (the script defines `_axctl` for a directory on `$fpath`).
    Zsh,
    /// Fish 3 or later.
    Fish,
}

impl From<Shell> for Generator {
    fn from(value: Shell) -> Self {
        match value {
            Shell::Bash => Generator::Bash,
            Shell::Zsh => Generator::Zsh,
            Shell::Fish => Generator::Fish,
        }
    }
}

/// Arguments of `completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the script for `args.shell`, generated from `command`, to stdout.
pub fn run(args: CompletionsArgs, ctx: &Context, mut command: clap::Command) -> Result<()> {
    if ctx.output == OutputFormat::Json {
        bail!("completions prints a shell script; -o json does not apply to it");
    }
    let mut script = Vec::new();
    clap_complete::generate(Generator::from(args.shell), &mut command, "axctl", &mut script);
    // The script is shell code, printed exactly as generated (print_text would escape it).
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(&script).and_then(|()| out.flush()).map_err(|e| anyhow::anyhow!("cannot write to stdout: {e}"))
}

/// The script for `shell`, for tests.
#[cfg(test)]
pub fn script(shell: Shell, mut command: clap::Command) -> String {
    let mut script = Vec::new();
    clap_complete::generate(Generator::from(shell), &mut command, "axctl", &mut script);
    String::from_utf8(script).expect("completion scripts are UTF-8")
}
