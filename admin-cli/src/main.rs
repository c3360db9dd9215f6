//! axctl, the operator CLI of ax: a thin client of axd's AdminService over gRPC (optionally mTLS).
//!
//! Every command prints either aligned text or, with `-o json`, exactly one JSON document on
//! stdout. Every failure, a usage error included, prints `error: <message>` on stderr and exits
//! with status 1, so scripts have one rule to check.

use std::process::ExitCode;

use clap::Parser;

mod args;
mod client;
mod commands;
mod output;

/// Command-line root: global options and the noun.
#[derive(Parser, Debug)]
#[command(name = "axctl", version, about = "Operate an ax cluster: tasks, instances, workers and schedulers")]
struct Cli {
    #[command(flatten)]
    connection: client::ConnectOptions,
    /// Output format.
    #[arg(short = 'o', long, global = true, help_heading = "Global options", value_enum, default_value_t = output::OutputFormat::Table)]
    output: output::OutputFormat,
    #[command(subcommand)]
    command: commands::Command,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap's own exit status for usage errors is 2; --help and --version are not errors.
            let _ = err.print();
            return if err.use_stderr() { ExitCode::FAILURE } else { ExitCode::SUCCESS };
        }
    };
    // Both tonic and the certificate tools use rustls; with more than one provider compiled in it
    // cannot pick one itself. A second install (already installed) is harmless, hence ignored.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let ctx = commands::Context { output: cli.output, connection: cli.connection };
    match cli.command.run(&ctx).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.downcast_ref::<commands::Outcome>().is_some() => {
            let outcome = err.downcast_ref::<commands::Outcome>().expect("checked");
            eprintln!("{}", output::escape_controls(&outcome.message));
            ExitCode::from(outcome.code)
        }
        Err(err) => {
            // Server messages are part of the error: escaped like any server text for people.
            eprintln!("error: {}", output::escape_controls(&error_text(&ctx.connection.explain(err))));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line ("cannot connect to URL: transport error: ...: refused"),
/// without the repeats some libraries produce by printing their cause in their own message.
fn error_text(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if parts.last() != Some(&text) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_flags_work_before_and_after_the_subcommand() {
        let before = Cli::try_parse_from(["axctl", "-o", "json", "--endpoint", "http://h:1", "cluster", "stats"])
            .expect("before");
        let after = Cli::try_parse_from(["axctl", "cluster", "stats", "--endpoint", "http://h:1", "--output", "json"])
            .expect("after");
        for cli in [before, after] {
            assert_eq!(cli.output, output::OutputFormat::Json);
            assert_eq!(cli.connection.endpoint, "http://h:1");
        }
    }

    #[test]
    fn error_chains_print_on_one_line_without_repeats() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let err =
            anyhow::Error::new(io).context("tcp connect error").context("tcp connect error").context("cannot connect");
        assert_eq!(error_text(&err), "cannot connect: tcp connect error: refused");
    }

    #[test]
    fn a_client_certificate_needs_its_key() {
        let err = Cli::try_parse_from(["axctl", "--cert", "a.pem", "cluster", "stats"]).expect_err("no key");
        assert!(err.to_string().contains("--key"), "{err}");
    }
}
