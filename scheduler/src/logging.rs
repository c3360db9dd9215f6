//! axd's log output on stderr: human-readable text (the default) or JSON, one object per line.
//!
//! A JSON line has `timestamp` (RFC 3339, UTC, microseconds), `level`, `target` (the module),
//! `message`, the event's fields at the top level (`instance_id`, `attempt`, `task`, `app`,
//! `worker`, `error`, ...) and `span` (`{"part": "dispatch", "name": "axd"}`: which part of axd
//! wrote it). Colour is used only in text on a terminal, and never with `NO_COLOR` set.

use std::io::IsTerminal as _;

use tracing_subscriber::{
    filter::{LevelFilter, ParseError, Targets},
    layer::SubscriberExt as _,
    util::SubscriberInitExt as _,
};

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

/// Installs the global subscriber writing `format` to stderr, filtered by `filter`: comma-separated
/// `target=level` directives and an optional bare default level (`info,ax_scheduler=debug`). A
/// filter that does not parse installs `info` and returns why, for the caller to log.
///
/// The filter is tracing-subscriber's `Targets`, not its `EnvFilter`: the span and field
/// directives of `EnvFilter` need the regex crates, a large share of a fresh build, for a syntax
/// axd's logs do not need.
pub fn init(format: LogFormat, filter: &str) -> Option<ParseError> {
    let (targets, bad) = match filter.parse::<Targets>() {
        Ok(t) => (t, None),
        Err(e) => (Targets::new().with_default(LevelFilter::INFO), Some(e)),
    };
    // The builder's own level would cap what the targets let through (INFO by default).
    let builder = tracing_subscriber::fmt().with_max_level(LevelFilter::TRACE).with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder
            // Colour only on a terminal, and not when NO_COLOR is set (https://no-color.org).
            .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()))
            .finish()
            .with(targets)
            .init(),
        LogFormat::Json => builder
            .json()
            .with_ansi(false)
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .finish()
            .with(targets)
            .init(),
    }
    bad
}
