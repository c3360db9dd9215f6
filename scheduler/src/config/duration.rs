//! Durations in configuration: `250ms`, `10s`, `1h30m`, `2d`, in flags, variables and the file, in
//! ax's one duration syntax ([`ax_proto::duration`], README "Durations").

use std::{str::FromStr, time::Duration};

use serde::Deserialize;

/// A duration written as `250ms`, `10s`, `5m`, `1h30m`, `7d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

/// Parses `250ms`, `10s`, `1h30m`, `2d` or a bare `0` ([`ax_proto::duration::parse`]); the message
/// quotes the text.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    ax_proto::duration::parse(s).map_err(|e| format!("{s:?}: {e}"))
}

impl FromStr for HumanDuration {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_duration(s).map(HumanDuration)
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
