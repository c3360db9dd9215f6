//! Timestamps and durations between the wire and the domain: what the admin API (`grpc/`), the
//! worker sessions (`worker/`) and the loops all convert, in one place below each of them, so that
//! none of them reaches into another for it.

use std::time::Duration;

use crate::{
    error::{Error, Result},
    model::Ts,
};

/// The earliest instant axd takes from the wire: 1970-01-01T00:00:00Z, in seconds since the epoch.
pub const MIN_WIRE_SECONDS: i64 = 0;
/// The latest instant axd takes from the wire, and the last one a schedule fires at:
/// 9999-12-31T23:59:59.999999999Z (what every client's date type can hold; RFC 3339 has four-digit
/// years), in whole seconds since the epoch.
pub const MAX_WIRE_SECONDS: i64 = crate::model::LATEST_SECONDS;
/// The longest duration axd takes from the wire, in seconds: the limit of `google.protobuf.Duration`
/// (about 10,000 years). Each field has its own, much smaller, bound as well.
pub const MAX_WIRE_DURATION_SECONDS: i64 = 315_576_000_000;
const NANOS_PER_SECOND: i32 = 1_000_000_000;

/// A proto timestamp as a domain instant: seconds within [`MIN_WIRE_SECONDS`]..=[`MAX_WIRE_SECONDS`]
/// (years 1970 to 9999) and nanos within 0..1e9, as `google.protobuf.Timestamp` defines them.
pub fn ts_from_pb(field: &str, t: &prost_types::Timestamp) -> Result<Ts> {
    if !(0..NANOS_PER_SECOND).contains(&t.nanos) {
        return Err(Error::invalid(field, format!("nanos = {} is out of range 0..999999999", t.nanos)));
    }
    if !(MIN_WIRE_SECONDS..=MAX_WIRE_SECONDS).contains(&t.seconds) {
        return Err(Error::invalid(
            field,
            format!(
                "seconds = {} is out of range: timestamps must lie between 1970-01-01T00:00:00Z and \
                 9999-12-31T23:59:59Z ({MIN_WIRE_SECONDS}..={MAX_WIRE_SECONDS})",
                t.seconds
            ),
        ));
    }
    chrono::DateTime::from_timestamp(t.seconds, t.nanos.unsigned_abs())
        .ok_or_else(|| Error::invalid(field, format!("{}s {}ns is not a valid timestamp", t.seconds, t.nanos)))
}

/// A domain instant as a proto timestamp.
pub fn ts_to_pb(t: Ts) -> prost_types::Timestamp {
    prost_types::Timestamp { seconds: t.timestamp(), nanos: i32::try_from(t.timestamp_subsec_nanos()).unwrap_or(0) }
}

pub(crate) fn opt_ts(t: Option<Ts>) -> Option<prost_types::Timestamp> {
    t.map(ts_to_pb)
}

/// A proto duration as a std duration: not negative, nanos within 0..1e9, seconds at most
/// [`MAX_WIRE_DURATION_SECONDS`]. Callers bound each field further with
/// [`crate::validate::duration_between`].
pub fn duration_from_pb(field: &str, d: &prost_types::Duration) -> Result<Duration> {
    if d.seconds < 0 || d.nanos < 0 {
        return Err(Error::invalid(field, "must not be negative"));
    }
    if d.nanos >= NANOS_PER_SECOND {
        return Err(Error::invalid(field, format!("nanos = {} is out of range 0..999999999", d.nanos)));
    }
    if d.seconds > MAX_WIRE_DURATION_SECONDS {
        return Err(Error::invalid(
            field,
            format!("seconds = {} is out of range 0..={MAX_WIRE_DURATION_SECONDS}", d.seconds),
        ));
    }
    Ok(Duration::new(d.seconds.unsigned_abs(), d.nanos.unsigned_abs()))
}

/// A std duration as a proto duration.
pub fn duration_to_pb(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

pub(crate) fn micros_to_pb(us: i64) -> prost_types::Duration {
    duration_to_pb(Duration::from_micros(u64::try_from(us).unwrap_or(0)))
}

pub(crate) fn required<'a, T>(field: &str, v: &'a Option<T>) -> Result<&'a T> {
    v.as_ref().ok_or_else(|| Error::invalid(field, "is required"))
}
