//! The one duration syntax of ax, read by axd (flags, environment variables, configuration file),
//! by axctl (every duration argument) and, in TypeScript, by the web console's task form
//! (`console/src/parse.ts` follows this file). README "Durations" documents it.
//!
//! A duration is one or more number+unit pairs, `250ms`, `90s`, `1h30m`, `1.5h`, `2d`, or a bare
//! `0`:
//! - units `d`, `h`, `m`, `s`, `ms`, each at most once and largest first, so that `1m30m` or
//!   `30s1m` (likely typos) are refused rather than silently summed;
//! - a number is digits with an optional fraction (`1.5h` is 90 minutes); spaces may separate the
//!   pairs (`1h 30m`);
//! - nothing else: no sign, no `us` (no ax setting is finer than a millisecond), and none of the
//!   units humantime would add (`M` for months of 30.44 days, `y`, `min`, `sec`, ...), so that a
//!   months-long timeout can never be mistaken for minutes.

#![warn(missing_docs, clippy::all)]

use std::time::Duration;

use humantime::DurationError;

/// The units, largest first.
pub const UNITS: [&str; 5] = ["d", "h", "m", "s", "ms"];

/// What every message about a malformed duration ends with.
pub const HINT: &str = "use numbers with units ms, s, m, h, d, e.g. 250ms, 90s, 1h30m, 2d";

/// Parses `text` in the syntax above. The message says what is wrong and what would be right; it
/// never names the flag or field, which the caller adds.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    // Index into UNITS of the last unit seen; the next unit must be strictly smaller.
    let mut last_unit: Option<usize> = None;
    for unit in text.split(|c: char| !c.is_alphabetic()).filter(|unit| !unit.is_empty()) {
        let Some(index) = UNITS.iter().position(|name| *name == unit) else {
            return Err(format!("unknown unit `{unit}`; {HINT}"));
        };
        if last_unit.is_some_and(|last| index <= last) {
            return Err(format!("unit `{unit}` is repeated or out of order; write larger units first, e.g. 1h30m"));
        }
        last_unit = Some(index);
    }
    // humantime reads the numbers and adds them up; every unit it sees is one of ours by now.
    humantime::parse_duration(text).map_err(|err| match err {
        DurationError::Empty => format!("empty duration; {HINT}"),
        // Every unit is known by now, so an unknown one is a missing one.
        DurationError::UnknownUnit { value, .. } => format!("`{value}` has no unit; {HINT}"),
        DurationError::NumberExpected(at) => format!("expected a number at `{}`; {HINT}", &text[at..]),
        DurationError::InvalidCharacter(at) => format!("unexpected character at `{}`; {HINT}", &text[at..]),
        DurationError::NumberOverflow => "duration is too large".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every case of `proto/duration-cases.txt`, which the console's parser is held to as well.
    #[test]
    fn the_shared_cases_hold() {
        let mut failures = Vec::new();
        let mut n = 0;
        for line in include_str!("../duration-cases.txt").lines().filter(|l| l.starts_with('|')) {
            let (input, expected) = line[1..].split_once("| ").expect("|input| expected");
            let got = parse(input);
            let ok = match expected.split_once(' ').expect("ok or err") {
                ("ok", v) => {
                    let (secs, nanos) = v.split_once(' ').expect("seconds nanos");
                    got == Ok(Duration::new(secs.parse().expect("seconds"), nanos.parse().expect("nanos")))
                }
                ("err", part) => got.as_ref().is_err_and(|e| e.contains(part)),
                other => panic!("unknown expectation {other:?}"),
            };
            if !ok {
                failures.push(format!("{input:?}: expected {expected}, got {got:?}"));
            }
            n += 1;
        }
        assert!(n >= 30, "only {n} cases read");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn messages_end_with_the_hint() {
        assert_eq!(parse("30").unwrap_err(), format!("`30` has no unit; {HINT}"));
    }
}
