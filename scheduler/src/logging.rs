//! axd's log output on stderr: human-readable text (the default) or JSON, one object per line.
//!
//! A JSON line has `timestamp` (RFC 3339, UTC, microseconds), `level`, `target` (the module),
//! `message`, the event's fields at the top level (`instance_id`, `attempt`, `task`, `app`,
//! `worker`, `error`, ...) and `span` (`{"part": "dispatch", "name": "axd"}`: which part of axd
//! wrote it). Colour is used only in text on a terminal, and never with `NO_COLOR` set.

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// `--log-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One human-readable line per event.
    #[default]
    Text,
    /// One JSON object per line, fields at the top level.
    Json,
}

/// Installs the global subscriber writing `format` to stderr through `filter`.
pub fn init(format: LogFormat, filter: EnvFilter) {
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder
            // Colour only on a terminal, and not when NO_COLOR is set (https://no-color.org).
            .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()))
            .init(),
        LogFormat::Json => {
            builder.json().with_ansi(false).flatten_event(true).with_current_span(true).with_span_list(false).init()
        }
    }
}
