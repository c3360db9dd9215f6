//! Durations as people write them in axd's flags, variables and file (`250ms`, `10s`, `1h30m`).

use std::{str::FromStr, time::Duration};

use serde::Deserialize;

/// A duration written as `250ms`, `10s`, `5m`, `1h30m`, `7d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

/// Parses `250ms`, `10s`, `1h30m`, `2d` (a sequence of number + unit; units us, ms, s, m, h, d),
/// and a bare `0`, which means the same in every unit.
///
/// humantime does the parsing; only the units above are let through, so that its `M` (months of
/// 30.44 days) or `y` can never be mistaken for minutes in a timeout or an interval.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    const UNITS: [&str; 6] = ["us", "ms", "s", "m", "h", "d"];
    let s = s.trim();
    if let Some(other) = s.split(|c: char| !c.is_alphabetic()).find(|unit| !unit.is_empty() && !UNITS.contains(unit)) {
        return Err(format!("{s:?}: unknown unit {other:?} (use ms, s, m, h or d)"));
    }
    humantime::parse_duration(s).map_err(|err| match err {
        humantime::DurationError::Empty => "empty duration".to_owned(),
        humantime::DurationError::UnknownUnit { value, .. } => {
            format!("{s:?}: missing unit after {value} (use ms, s, m, h or d)")
        }
        humantime::DurationError::NumberOverflow => format!("{s:?}: duration too large"),
        other => format!("{s:?}: {other}"),
    })
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
