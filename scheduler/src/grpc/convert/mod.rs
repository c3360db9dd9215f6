//! Mapping between the wire (`ax_proto::v1`) and the domain, with validation and defaults.
//!
//! Every request field is checked here and a bad one becomes `InvalidArgument` naming its dotted path
//! (e.g. `task.schedule.cron.expression`). Responses are built from domain values only.

use std::{collections::BTreeMap, num::NonZeroU32, time::Duration};

use ax_proto::v1 as pb;

use crate::{
    cron::CronExpr,
    error::{Error, Result},
    model::{
        Backoff, ConcurrencyPolicy, CronDialect, DEFAULT_MAX_CATCH_UP, DEFAULT_MAX_PENDING, DEFAULT_MISFIRE_THRESHOLD,
        FireSpan, Instance, InstanceEvent, InstanceSource, InstanceStatus, LogLine, MAX_PRIORITY, MAX_SHARDS,
        MisfirePolicy, Placement, RetryOn, RetryPolicy, Routing, Schedule, Task, TaskConfig, TaskEvent, Ts,
        WorkerRecord, WorkerStreak, add, duration_micros,
    },
    schedule::{Compiled, Preview},
    validate,
};

const DAY: Duration = Duration::from_secs(86_400);

mod enums;
mod explain;
#[cfg(test)]
mod props;
mod records;
mod retry;
mod schedule;
mod tasks;

use self::{
    enums::{
        concurrency_from_pb, concurrency_to_pb, dialect_from_pb, dialect_to_pb, misfire_from_pb, misfire_to_pb,
        retry_on_from_pb, retry_on_to_pb, routing_from_pb, routing_to_pb, source_to_pb,
    },
    retry::{backoff_to_pb, retry_from_pb},
    schedule::schedule_to_pb,
};
// Named one by one: a glob re-export would keep an unused converter from the dead-code lint.
pub use self::{
    enums::{link_kind_to_pb, status_from_pb, status_to_pb},
    explain::{explanation_to_pb, finding_kind_to_pb},
    records::{event_to_pb, instance_to_pb, log_to_pb, worker_to_pb},
    schedule::{extra_schedules_from_pb, schedule_from_pb},
    tasks::{
        MAX_SEARCH_PARAMS, MAX_TASK_LIMIT, UPDATABLE_FIELDS, apply_field, check_placement, check_timing, dates_from_pb,
        dates_to_pb, fire_span_to_pb, preview_to_pb, spec_to_pb, task_event_to_pb, task_from_pb, task_to_pb,
    },
};
pub use crate::wire::{
    MAX_WIRE_DURATION_SECONDS, MAX_WIRE_SECONDS, MIN_WIRE_SECONDS, duration_from_pb, duration_to_pb, ts_from_pb,
    ts_to_pb,
};
pub(crate) use crate::wire::{micros_to_pb, opt_ts, required};

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> Ts {
        chrono::Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).single().expect("valid")
    }

    fn cron_spec(expr: &str) -> pb::TaskSpec {
        pb::TaskSpec {
            name: "t".into(),
            app: "app".into(),
            handler: "h".into(),
            schedule: Some(pb::Schedule {
                kind: Some(pb::schedule::Kind::Cron(pb::CronSchedule {
                    expression: expr.into(),
                    ..Default::default()
                })),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_are_filled_in() {
        let (name, c) = task_from_pb(&cron_spec("0 * * * *"), now()).expect("valid");
        assert_eq!(name, "t");
        assert!(c.enabled);
        assert_eq!(c.params, "{}");
        assert_eq!(c.misfire_policy, MisfirePolicy::FireOnce);
        assert_eq!(c.max_catch_up.get(), 10);
        assert_eq!(c.retry, RetryPolicy::default());
        assert_eq!(
            c.schedule,
            Schedule::Cron { expression: "0 * * * *".into(), time_zone: "UTC".into(), dialect: CronDialect::Unix }
        );
    }

    #[test]
    fn a_fixed_rate_fires_first_at_its_start_which_defaults_to_one_interval_from_now() {
        let rate = |start_at| pb::Schedule {
            kind: Some(pb::schedule::Kind::FixedRate(pb::IntervalSchedule {
                interval: Some(duration_to_pb(Duration::from_secs(60))),
                start_at,
            })),
        };
        let s = schedule_from_pb("schedule", &rate(None), now()).expect("valid");
        let start = add(now(), Duration::from_secs(60));
        assert_eq!(s, Schedule::FixedRate { interval: Duration::from_secs(60), start_at: start });
        // Fire n is at start + n * interval with n = 0, 1, ... (as proto/ax/v1/admin.proto says).
        let c = crate::schedule::Compiled::compile(&s).expect("compile");
        assert_eq!(c.first_fire(now()), Some(start));
        let explicit = add(now(), Duration::from_secs(7));
        let s = schedule_from_pb("schedule", &rate(Some(ts_to_pb(explicit))), now()).expect("valid");
        let c = crate::schedule::Compiled::compile(&s).expect("compile");
        assert_eq!(c.first_fire(now()), Some(explicit), "an explicit start is the first fire (n = 0)");
    }

    #[test]
    fn errors_name_the_request_path() {
        let e = task_from_pb(&cron_spec("0 25 * * *"), now()).expect_err("bad");
        assert_eq!(e.to_string(), "task.schedule.cron.expression: field 2 (hours) = 25 is out of range 0-23");
        let mut s = cron_spec("0 * * * *");
        s.params = "{oops".into();
        assert!(task_from_pb(&s, now()).expect_err("bad").to_string().starts_with("task.params: is not valid JSON"));
        let mut s = cron_spec("0 * * * *");
        s.schedule = None;
        assert_eq!(task_from_pb(&s, now()).expect_err("bad").to_string(), "task.schedule: is required");
        let mut s = cron_spec("0 * * * *");
        s.retry_policy = Some(pb::RetryPolicy { max_retries: 101, backoff: None });
        assert!(task_from_pb(&s, now()).expect_err("bad").to_string().starts_with("task.retry_policy.max_retries"));
        let mut s = cron_spec("0 0 30 2 *");
        s.name = "feb30".into();
        assert!(task_from_pb(&s, now()).expect_err("never").to_string().contains("never fires"));
    }

    #[test]
    fn a_task_survives_the_round_trip_through_proto() {
        let (name, c) = task_from_pb(&cron_spec("0 0 2 ? * 2"), now()).expect("valid");
        let back = spec_to_pb(&name, &c);
        let (_, again) = task_from_pb(&back, now()).expect("valid");
        assert_eq!(c, again);
    }
}
