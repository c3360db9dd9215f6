//! Timestamps and durations between the wire and the domain.

use super::*;

/// A proto timestamp as a domain instant.
pub fn ts_from_pb(field: &str, t: &prost_types::Timestamp) -> Result<Ts> {
    chrono::DateTime::from_timestamp(t.seconds, u32::try_from(t.nanos).unwrap_or(u32::MAX))
        .ok_or_else(|| Error::invalid(field, format!("{}s {}ns is not a valid timestamp", t.seconds, t.nanos)))
}

/// A domain instant as a proto timestamp.
pub fn ts_to_pb(t: Ts) -> prost_types::Timestamp {
    prost_types::Timestamp { seconds: t.timestamp(), nanos: i32::try_from(t.timestamp_subsec_nanos()).unwrap_or(0) }
}

pub(super) fn opt_ts(t: Option<Ts>) -> Option<prost_types::Timestamp> {
    t.map(ts_to_pb)
}

/// A proto duration as a std duration (negative is an error).
pub fn duration_from_pb(field: &str, d: &prost_types::Duration) -> Result<Duration> {
    if d.seconds < 0 || d.nanos < 0 {
        return Err(Error::invalid(field, "must not be negative"));
    }
    Ok(Duration::new(u64::try_from(d.seconds).unwrap_or(0), u32::try_from(d.nanos).unwrap_or(0)))
}

/// A std duration as a proto duration.
pub fn duration_to_pb(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

pub(super) fn micros_to_pb(us: i64) -> prost_types::Duration {
    duration_to_pb(Duration::from_micros(u64::try_from(us).unwrap_or(0)))
}

pub(super) fn required<'a, T>(field: &str, v: &'a Option<T>) -> Result<&'a T> {
    v.as_ref().ok_or_else(|| Error::invalid(field, "is required"))
}
