//! The parts of a task spec that have more than one shape: its schedule (cron, fixed rate, fixed
//! delay, one time, manual) and its retry policy with a list or exponential backoff. Each has a
//! JSON view tagged by `kind` and a one-line summary for people.

use ax_proto::v1::{Backoff, CronDialect, RetryPolicy, Schedule, backoff, one_time_schedule, schedule};
use serde::Serialize;

use super::{
    scalars::{enum_name, or_dash},
    time::{duration_millis, duration_text, format_millis, time_text},
};

/// JSON view of a Schedule, tagged by `kind`.
#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ScheduleView {
    Cron { expression: String, time_zone: String, dialect: String },
    FixedRate { interval: Option<String>, start_at: Option<String> },
    FixedDelay { interval: Option<String>, start_at: Option<String> },
    OneTime { at: Option<String> },
    Manual,
}

impl ScheduleView {
    /// None when no kind is set.
    pub fn from_proto(schedule: &Schedule) -> Option<Self> {
        Some(match schedule.kind.as_ref()? {
            schedule::Kind::Cron(cron) => ScheduleView::Cron {
                expression: cron.expression.clone(),
                time_zone: cron.time_zone.clone(),
                dialect: enum_name::<CronDialect>(cron.dialect),
            },
            schedule::Kind::FixedRate(every) => ScheduleView::FixedRate {
                interval: duration_text(every.interval.as_ref()),
                start_at: time_text(every.start_at.as_ref()),
            },
            schedule::Kind::FixedDelay(every) => ScheduleView::FixedDelay {
                interval: duration_text(every.interval.as_ref()),
                start_at: time_text(every.start_at.as_ref()),
            },
            // The server stores `after` as `at` and only ever returns `at`.
            schedule::Kind::OneTime(once) => ScheduleView::OneTime {
                at: match &once.when {
                    Some(one_time_schedule::When::At(at)) => time_text(Some(at)),
                    Some(one_time_schedule::When::After(_)) | None => None,
                },
            },
            schedule::Kind::Manual(_) => ScheduleView::Manual,
        })
    }

    /// The IANA zone whose wall clock a cron schedule follows (empty: UTC); empty for the other
    /// kinds, which have no wall clock.
    pub fn time_zone(&self) -> &str {
        match self {
            ScheduleView::Cron { time_zone, .. } => time_zone,
            _ => "",
        }
    }

    /// One line for people, e.g. "cron `0 2 * * *` in Europe/London (UNIX)".
    pub fn summary(&self) -> String {
        match self {
            ScheduleView::Cron { expression, time_zone, dialect } => {
                let zone = if time_zone.is_empty() { "UTC" } else { time_zone };
                format!("cron `{expression}` in {zone} ({dialect})")
            }
            ScheduleView::FixedRate { interval, start_at } => {
                format!("every {} from {}", or_dash(interval.clone()), or_dash(start_at.clone()))
            }
            ScheduleView::FixedDelay { interval, start_at } => format!(
                "{} after each run, first at {} + interval",
                or_dash(interval.clone()),
                or_dash(start_at.clone())
            ),
            ScheduleView::OneTime { at } => format!("once at {}", or_dash(at.clone())),
            ScheduleView::Manual => "manual (only when triggered)".to_owned(),
        }
    }
}

/// JSON view of a RetryPolicy.
#[derive(Debug, Serialize, PartialEq)]
pub struct RetryPolicyView {
    pub max_retries: u32,
    pub backoff: Option<BackoffView>,
}

/// JSON view of a Backoff, tagged by `kind`.
#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BackoffView {
    List { delays: Vec<String> },
    Exponential { initial: Option<String>, multiplier: f64, max: Option<String>, jitter: f64 },
}

impl From<&RetryPolicy> for RetryPolicyView {
    fn from(policy: &RetryPolicy) -> Self {
        RetryPolicyView {
            max_retries: policy.max_retries,
            backoff: policy.backoff.as_ref().and_then(BackoffView::from_proto),
        }
    }
}

impl BackoffView {
    /// None when no kind is set.
    fn from_proto(backoff: &Backoff) -> Option<Self> {
        Some(match backoff.kind.as_ref()? {
            backoff::Kind::List(list) => {
                BackoffView::List { delays: list.delays.iter().map(|d| format_millis(duration_millis(d))).collect() }
            }
            backoff::Kind::Exponential(exp) => BackoffView::Exponential {
                initial: duration_text(exp.initial.as_ref()),
                multiplier: exp.multiplier,
                max: duration_text(exp.max.as_ref()),
                jitter: exp.jitter,
            },
        })
    }
}

impl RetryPolicyView {
    /// One line for people, e.g. "3 retries, exponential 10s x2 up to 5m, jitter 0.1".
    pub fn summary(&self) -> String {
        let backoff = match &self.backoff {
            None => "default backoff".to_owned(),
            Some(BackoffView::List { delays }) => format!("delays {}", delays.join(", ")),
            Some(BackoffView::Exponential { initial, multiplier, max, jitter }) => format!(
                "exponential {} x{multiplier} up to {}, jitter {jitter}",
                or_dash(initial.clone()),
                or_dash(max.clone())
            ),
        };
        match self.max_retries {
            0 => "none".to_owned(),
            1 => format!("1 retry, {backoff}"),
            n => format!("{n} retries, {backoff}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use ax_proto::v1::{IntervalSchedule, ListBackoff, ManualSchedule, OneTimeSchedule};
    use serde_json::json;

    use super::*;

    fn dur(seconds: i64) -> Option<prost_types::Duration> {
        Some(prost_types::Duration { seconds, nanos: 0 })
    }

    #[test]
    fn every_schedule_kind_has_its_own_json_shape() {
        let view = |kind| serde_json::to_value(ScheduleView::from_proto(&Schedule { kind: Some(kind) })).expect("json");
        let start_at = Some(prost_types::Timestamp { seconds: 1_767_261_600, nanos: 0 });
        let interval = IntervalSchedule { interval: dur(90), start_at };
        assert_eq!(
            view(schedule::Kind::FixedRate(interval)),
            json!({"kind": "FIXED_RATE", "interval": "1m30s", "start_at": "2026-01-01T10:00:00Z"})
        );
        assert_eq!(
            view(schedule::Kind::FixedDelay(IntervalSchedule { interval: dur(3600), start_at: None })),
            json!({"kind": "FIXED_DELAY", "interval": "1h", "start_at": null})
        );
        assert_eq!(
            view(schedule::Kind::OneTime(OneTimeSchedule {
                when: Some(one_time_schedule::When::At(prost_types::Timestamp { seconds: 1_767_261_600, nanos: 0 }))
            })),
            json!({"kind": "ONE_TIME", "at": "2026-01-01T10:00:00Z"})
        );
        assert_eq!(view(schedule::Kind::Manual(ManualSchedule {})), json!({"kind": "MANUAL"}));
        assert_eq!(ScheduleView::from_proto(&Schedule { kind: None }), None);
    }

    #[test]
    fn list_backoffs_and_missing_policies_serialize_too() {
        let policy = RetryPolicy {
            max_retries: 2,
            backoff: Some(Backoff {
                kind: Some(backoff::Kind::List(ListBackoff {
                    delays: vec![
                        prost_types::Duration { seconds: 10, nanos: 0 },
                        prost_types::Duration { seconds: 60, nanos: 0 },
                    ],
                })),
            }),
        };
        assert_eq!(
            serde_json::to_value(RetryPolicyView::from(&policy)).expect("json"),
            json!({"max_retries": 2, "backoff": {"kind": "LIST", "delays": ["10s", "1m"]}})
        );
        assert_eq!(RetryPolicyView::from(&policy).summary(), "2 retries, delays 10s, 1m");
        let bare = RetryPolicy { max_retries: 1, backoff: None };
        assert_eq!(
            serde_json::to_value(RetryPolicyView::from(&bare)).expect("json"),
            json!({"max_retries": 1, "backoff": null})
        );
    }
}
