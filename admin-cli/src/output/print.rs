//! Writing to stdout: a report for people (control characters escaped, always ending in a
//! newline) or exactly one JSON document (exact, serde's escaping only). Warnings that belong to a
//! report are repeated on stderr, after it, when stdout is not a terminal. A closed pipe is an error
//! like any other rather than a panic (which `println!` would be).

use std::io::{IsTerminal as _, Write};

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::{layout::Table, terminal::escape_controls_but_newlines};

/// Writes a report for people; a final newline is added if missing, so nothing written after it
/// (a warning on stderr into the same pipe, the shell's prompt) joins its last line.
pub fn print_text(text: &str) -> Result<()> {
    // The renderers escape server text field by field; this catches anything that reached a report
    // another way. Only the report's own line breaks stay.
    write_stdout(&escape_controls_but_newlines(text))
}

/// [`print_text`], then the warnings on stderr if stdout is not a terminal (piped into a file or
/// another program), so that the operator still sees them. They come after the report, each on
/// its own line.
pub fn print_report(text: &str, warnings: &[String]) -> Result<()> {
    print_text(text)?;
    if !warnings.is_empty() && !std::io::stdout().is_terminal() {
        let mut err = std::io::stderr().lock();
        for warning in warnings {
            // stderr is for people too; a failure to write it has nowhere to be reported.
            let _ = writeln!(err, "warning: {}", super::terminal::escape_controls(warning));
        }
    }
    Ok(())
}

/// Writes one pretty-printed JSON document to stdout, exactly as serde_json encodes it.
pub fn print_json(value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).context("cannot encode the JSON output")?;
    write_stdout(&text)
}

/// Writes one compact JSON object on a line of its own (JSON Lines, for streams such as
/// `instance logs --follow`), flushed so a reader sees it at once.
pub fn print_json_line(value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string(value).context("cannot encode the JSON output")?;
    write_stdout(&text)
}

/// Prints one page of a list: the table (or a note when it is empty), then how to get the next page.
pub fn print_page<const N: usize>(table: &Table<N>, what: &str, next_page_token: &str) -> Result<()> {
    let mut text = if table.is_empty() { format!("no {what}\n") } else { table.render() };
    if !next_page_token.is_empty() {
        text.push_str(&format!("more: add --page-token {next_page_token}\n"));
    }
    print_text(&text)
}

fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    write_ending_in_newline(&mut out, text).context("cannot write to stdout")
}

fn write_ending_in_newline(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(text: &str) -> String {
        let mut out = Vec::new();
        write_ending_in_newline(&mut out, &escape_controls_but_newlines(text)).expect("write");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn every_report_ends_with_a_newline() {
        assert_eq!(
            written("deleted task nightly (0 pending instances canceled)"),
            "deleted task nightly (0 pending instances canceled)\n"
        );
        assert_eq!(written("a\nb\n"), "a\nb\n");
    }

    #[test]
    fn a_report_keeps_its_lines_but_no_other_control_character() {
        assert_eq!(written("title\x1b]0;x\x07\nnext\r\n"), "title\\x1b]0;x\\x07\nnext\\r\n");
    }
}
