//! Times and durations as axctl shows them: instants as RFC 3339 UTC (`2026-01-01T10:00:00Z`),
//! wall-clock times with their zone's abbreviation and offset, durations in the syntax of the
//! flags (`1h30m`, millisecond precision), and gaps between events as signed seconds (`+1.204s`).

use chrono::{DateTime, Offset as _, SecondsFormat, Utc};
use chrono_tz::{OffsetName as _, Tz};

/// A protobuf timestamp as a UTC time; None when unset or out of chrono's range.
pub fn utc(timestamp: Option<&prost_types::Timestamp>) -> Option<DateTime<Utc>> {
    let t = timestamp?;
    DateTime::from_timestamp(t.seconds, u32::try_from(t.nanos).ok()?)
}

/// RFC 3339 in UTC with as many fractional digits as needed (`2026-01-01T10:00:00Z`).
pub fn time_text(timestamp: Option<&prost_types::Timestamp>) -> Option<String> {
    utc(timestamp).map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// A wall-clock time the server sent (RFC 3339 with the zone's offset at that instant) for people:
/// `2026-12-01 09:00:00 GMT (+00:00)`. The abbreviation comes from `zone` (IANA name, empty for
/// UTC) when this axctl knows the zone and agrees on its offset; otherwise only the offset is
/// shown, and text that is not RFC 3339 is shown as it came.
pub fn wall_clock_text(local_time: &str, zone: &str) -> String {
    let Ok(local) = DateTime::parse_from_rfc3339(local_time) else {
        return local_time.to_owned();
    };
    let zone = if zone.is_empty() { "UTC" } else { zone };
    let abbreviation = zone
        .parse::<Tz>()
        .ok()
        .map(|tz| local.with_timezone(&tz))
        // An older or newer time zone database than the server's: trust the server's offset.
        .filter(|zoned| zoned.offset().fix() == *local.offset())
        .and_then(|zoned| zoned.offset().abbreviation().map(str::to_owned));
    let clock = local.format("%Y-%m-%d %H:%M:%S%.f");
    let offset = local.format("%:z");
    match abbreviation {
        Some(abbreviation) => format!("{clock} {abbreviation} ({offset})"),
        None => format!("{clock} ({offset})"),
    }
}

/// Milliseconds of a protobuf duration, truncated toward zero (the duration syntax stops at ms).
pub fn duration_millis(duration: &prost_types::Duration) -> i64 {
    duration.seconds.saturating_mul(1000).saturating_add(i64::from(duration.nanos / 1_000_000))
}

/// A number of milliseconds in the duration syntax of the flags: `1h30m`, `250ms`, `0s`; negative
/// values get a leading `-`.
pub fn format_millis(ms: i64) -> String {
    if ms == 0 {
        return "0s".to_owned();
    }
    let mut rest = ms.unsigned_abs();
    let mut text = String::new();
    if ms < 0 {
        text.push('-');
    }
    for (unit, size) in [("d", 86_400_000u64), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)] {
        if rest >= size {
            text.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    text
}

/// A duration field in the duration syntax, None when unset.
pub fn duration_text(duration: Option<&prost_types::Duration>) -> Option<String> {
    duration.map(|d| format_millis(duration_millis(d)))
}

/// The gap between two events for people: `+1.204s`, `+2m5.300s`, `+1h0m5.000s`.
pub fn gap_text(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    let abs = ms.unsigned_abs();
    let (hours, minutes, seconds, millis) = (abs / 3_600_000, abs / 60_000 % 60, abs / 1000 % 60, abs % 1000);
    if hours > 0 {
        format!("{sign}{hours}h{minutes}m{seconds}.{millis:03}s")
    } else if minutes > 0 {
        format!("{sign}{minutes}m{seconds}.{millis:03}s")
    } else {
        format!("{sign}{seconds}.{millis:03}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::parse_duration;

    fn ts(seconds: i64, nanos: i32) -> Option<prost_types::Timestamp> {
        Some(prost_types::Timestamp { seconds, nanos })
    }

    #[test]
    fn durations_print_in_the_flag_syntax_and_round_trip() {
        assert_eq!(format_millis(0), "0s");
        assert_eq!(format_millis(30_000), "30s");
        assert_eq!(format_millis(5_400_000), "1h30m");
        assert_eq!(format_millis(250), "250ms");
        assert_eq!(format_millis(172_800_000), "2d");
        assert_eq!(format_millis(93_784_005), "1d2h3m4s5ms");
        assert_eq!(format_millis(-1_204), "-1s204ms");
        for text in ["250ms", "1m30s", "1h30m", "2d", "1d2h3m4s5ms", "0s"] {
            let parsed = parse_duration(text).expect("valid");
            assert_eq!(duration_text(Some(&parsed)).as_deref(), Some(text));
        }
        assert_eq!(duration_text(None), None);
        // Below a millisecond is truncated: the syntax has no smaller unit.
        assert_eq!(duration_text(Some(&prost_types::Duration { seconds: 1, nanos: 999_999 })).as_deref(), Some("1s"));
    }

    #[test]
    fn gaps_read_as_signed_seconds_with_millis() {
        assert_eq!(gap_text(1_204), "+1.204s");
        assert_eq!(gap_text(0), "+0.000s");
        assert_eq!(gap_text(125_300), "+2m5.300s");
        assert_eq!(gap_text(3_605_000), "+1h0m5.000s");
        assert_eq!(gap_text(-40), "-0.040s");
    }

    #[test]
    fn times_are_rfc3339_utc_and_null_when_unset() {
        assert_eq!(time_text(ts(1_767_261_600, 0).as_ref()).as_deref(), Some("2026-01-01T10:00:00Z"));
        assert_eq!(time_text(ts(1_767_261_600, 250_000_000).as_ref()).as_deref(), Some("2026-01-01T10:00:00.250Z"));
        assert_eq!(time_text(None), None);
    }

    #[test]
    fn wall_clock_times_show_the_zone_abbreviation_and_offset() {
        // The server writes a zero offset as `Z`; people should see which zone's clock it is.
        assert_eq!(wall_clock_text("2026-12-01T09:00:00Z", "Europe/London"), "2026-12-01 09:00:00 GMT (+00:00)");
        assert_eq!(wall_clock_text("2026-07-01T10:00:00+01:00", "Europe/London"), "2026-07-01 10:00:00 BST (+01:00)");
        assert_eq!(
            wall_clock_text("2026-03-08T03:00:00-04:00", "America/New_York"),
            "2026-03-08 03:00:00 EDT (-04:00)"
        );
        assert_eq!(wall_clock_text("2026-01-01T02:00:00Z", ""), "2026-01-01 02:00:00 UTC (+00:00)");
        assert_eq!(wall_clock_text("2026-01-01T02:00:00.250Z", "UTC"), "2026-01-01 02:00:00.250 UTC (+00:00)");
    }

    #[test]
    fn wall_clock_times_without_a_known_zone_keep_the_servers_offset() {
        assert_eq!(wall_clock_text("2026-12-01T09:00:00+05:30", "Mars/Olympus"), "2026-12-01 09:00:00 (+05:30)");
        // The offset disagrees with this axctl's zone data: the server's offset wins, unnamed.
        assert_eq!(wall_clock_text("2026-12-01T09:00:00+01:00", "Europe/London"), "2026-12-01 09:00:00 (+01:00)");
        assert_eq!(wall_clock_text("not a time", "UTC"), "not a time");
    }
}
