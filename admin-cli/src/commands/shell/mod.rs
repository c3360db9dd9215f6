//! `axctl completions SHELL` and `axctl man --dir DIR`: shell completion scripts and man pages,
//! both generated from axctl's own clap definition (never written by hand), so they always name
//! exactly the subcommands and options this binary accepts. Neither talks to axd.

mod completions;
mod man;

pub use completions::{CompletionsArgs, run as completions};
pub use man::{ManArgs, run as man};

#[cfg(test)]
mod tests;
