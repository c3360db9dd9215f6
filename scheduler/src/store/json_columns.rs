//! The columns stored as JSON text (a retry backoff, labels, lists of names, a task's extra
//! schedules), and what every row reader shares: a corrupt row's error, a stored enum's parse, a
//! stored duration.

use std::{collections::BTreeMap, str::FromStr, time::Duration};

use crate::{
    error::{StoreError, StoreResult},
    model::{Backoff, CronDialect, Schedule, ScheduleKind, duration_micros, from_micros, to_micros},
};

/// A row that breaks what axd writes.
pub(super) fn corrupt(table: &'static str, reason: impl Into<String>) -> StoreError {
    StoreError::Corrupt { table, reason: reason.into() }
}

/// A stored enum's text.
pub(super) fn parse<T: FromStr<Err = String>>(table: &'static str, v: &str) -> StoreResult<T> {
    v.parse::<T>().map_err(|e| corrupt(table, e))
}

/// Stored microseconds (a negative value as zero).
pub(super) fn micros_duration(us: i64) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0))
}

/// A retry backoff as stored: `''` for the default ([`Backoff::default`], which most tasks keep),
/// any other as JSON. The default's JSON is 94 bytes that every version of an instance row would
/// carry (PostgreSQL writes the whole row to its log on each update); migration 18 made `''` the
/// default's form (issue 31).
pub(crate) fn encode_backoff(b: &Backoff) -> String {
    if *b == Backoff::default() {
        return String::new();
    }
    serde_json::to_string(b).unwrap_or_else(|_| "{}".to_owned())
}

/// A stored backoff: `''` is the default; JSON otherwise (rows written before migration 18 hold
/// the default as JSON too, and read the same).
pub(crate) fn decode_backoff(table: &'static str, s: &str) -> StoreResult<Backoff> {
    if s.is_empty() {
        return Ok(Backoff::default());
    }
    serde_json::from_str(s).map_err(|e| corrupt(table, format!("backoff {s:?}: {e}")))
}

/// A task's extra schedules as stored (cron and fixed rate only; `None` for none).
pub(crate) fn encode_schedules(list: &[Schedule]) -> Option<String> {
    if list.is_empty() {
        return None;
    }
    let each: Vec<serde_json::Value> = list
        .iter()
        .map(|s| match s {
            Schedule::Cron { expression, time_zone, dialect } => serde_json::json!({
                "kind": ScheduleKind::Cron.as_str(),
                "expression": expression,
                "time_zone": time_zone,
                "dialect": dialect.as_str(),
            }),
            Schedule::FixedRate { interval, start_at } => serde_json::json!({
                "kind": ScheduleKind::FixedRate.as_str(),
                "interval_us": duration_micros(*interval),
                "start_us": to_micros(*start_at),
            }),
            // Refused by validation: never stored.
            other => serde_json::json!({ "kind": other.kind().as_str() }),
        })
        .collect();
    Some(serde_json::Value::Array(each).to_string())
}

/// The extra schedules of a stored task.
pub(crate) fn decode_schedules(table: &'static str, s: Option<&str>) -> StoreResult<Vec<Schedule>> {
    let Some(s) = s else { return Ok(Vec::new()) };
    let bad = |why: String| corrupt(table, format!("extra_schedules {s:?}: {why}"));
    let list: Vec<serde_json::Value> = serde_json::from_str(s).map_err(|e| bad(e.to_string()))?;
    list.iter()
        .map(|v| {
            let text = |k: &str| v[k].as_str().map(str::to_owned).ok_or_else(|| bad(format!("no {k}")));
            let int = |k: &str| v[k].as_i64().ok_or_else(|| bad(format!("no {k}")));
            match parse::<ScheduleKind>(table, &text("kind")?)? {
                ScheduleKind::Cron => Ok(Schedule::Cron {
                    expression: text("expression")?,
                    time_zone: text("time_zone")?,
                    dialect: parse::<CronDialect>(table, &text("dialect")?)?,
                }),
                ScheduleKind::FixedRate => Ok(Schedule::FixedRate {
                    interval: micros_duration(int("interval_us")?),
                    start_at: from_micros(int("start_us")?),
                }),
                other => Err(bad(format!("a {other} schedule cannot be an extra one"))),
            }
        })
        .collect()
}

pub(crate) fn encode_labels(l: &BTreeMap<String, String>) -> String {
    serde_json::to_string(l).unwrap_or_else(|_| "{}".to_owned())
}

pub(crate) fn decode_labels(table: &'static str, s: &str) -> StoreResult<BTreeMap<String, String>> {
    serde_json::from_str(s).map_err(|e| corrupt(table, format!("labels {s:?}: {e}")))
}

pub(crate) fn encode_list(l: &[String]) -> String {
    serde_json::to_string(l).unwrap_or_else(|_| "[]".to_owned())
}

pub(crate) fn decode_list(table: &'static str, s: &str) -> StoreResult<Vec<String>> {
    serde_json::from_str(s).map_err(|e| corrupt(table, format!("list {s:?}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default backoff as every axd before migration 18 stored it.
    const DEFAULT_AS_JSON: &str =
        r#"{"exponential":{"initial_us":10000000,"multiplier":2.0,"max_us":300000000,"jitter":0.1}}"#;

    #[test]
    fn the_default_backoff_is_stored_empty_and_any_other_as_json() {
        assert_eq!(encode_backoff(&Backoff::default()), "");
        assert_eq!(decode_backoff("ax_instance", "").expect("empty"), Backoff::default());
        // Migration 18 rewrites exactly this text: it must be what the default's JSON was.
        assert_eq!(serde_json::to_string(&Backoff::default()).expect("json"), DEFAULT_AS_JSON);
        assert_eq!(decode_backoff("ax_instance", DEFAULT_AS_JSON).expect("old form"), Backoff::default());
        let other = Backoff::Exponential { initial_us: 10_000_000, multiplier: 2.0, max_us: 300_000_000, jitter: 0.2 };
        let stored = encode_backoff(&other);
        assert!(stored.starts_with('{'), "{stored}");
        assert_eq!(decode_backoff("ax_instance", &stored).expect("json"), other);
        let list = Backoff::List { delays_us: vec![1_000_000] };
        assert_eq!(decode_backoff("ax_task", &encode_backoff(&list)).expect("list"), list);
        assert!(decode_backoff("ax_task", "{").is_err());
    }
}
