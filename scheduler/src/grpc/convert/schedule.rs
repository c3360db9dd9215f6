//! Schedules from and to the wire, and a new task's first fire.

use super::*;

/// Validates a proto schedule (at path `field`) against `now` and resolves defaults (dialect, time
/// zone, start times, `after`).
pub fn schedule_from_pb(field: &str, s: &pb::Schedule, now: Ts) -> Result<Schedule> {
    use pb::schedule::Kind;
    let kind = s
        .kind
        .as_ref()
        .ok_or_else(|| Error::invalid(field, "one of cron, fixed_rate, fixed_delay, one_time or manual is required"))?;
    let interval = |f: &str, i: &pb::IntervalSchedule| -> Result<(Duration, Ts)> {
        let d = duration_from_pb(&format!("{f}.interval"), required(&format!("{f}.interval"), &i.interval)?)?;
        validate::duration_between(&format!("{f}.interval"), d, Duration::from_secs(1), 366 * DAY)?;
        let start = match &i.start_at {
            Some(t) => ts_from_pb(&format!("{f}.start_at"), t)?,
            None => add(now, d),
        };
        Ok((d, start))
    };
    Ok(match kind {
        Kind::Cron(c) => {
            let f = format!("{field}.cron");
            let dialect = dialect_from_pb(&format!("{f}.dialect"), c.dialect)?;
            let expr = CronExpr::parse(&c.expression, &c.time_zone, dialect)
                .map_err(|e| Error::invalid(format!("{f}.{}", e.field), e.reason))?;
            let schedule = Schedule::Cron {
                expression: expr.source().to_owned(),
                time_zone: expr.time_zone().name().to_owned(),
                dialect: expr.dialect(),
            };
            if expr.next_after(now).is_none() {
                return Err(Error::invalid(
                    format!("{f}.expression"),
                    format!("{} never fires after {}", validate::quote(expr.source()), now.to_rfc3339()),
                ));
            }
            schedule
        }
        Kind::FixedRate(i) => {
            let (interval, start_at) = interval(&format!("{field}.fixed_rate"), i)?;
            Schedule::FixedRate { interval, start_at }
        }
        Kind::FixedDelay(i) => {
            let (interval, start_at) = interval(&format!("{field}.fixed_delay"), i)?;
            Schedule::FixedDelay { interval, start_at }
        }
        Kind::OneTime(o) => {
            let f = format!("{field}.one_time");
            use pb::one_time_schedule::When;
            let at = match o.when.as_ref().ok_or_else(|| Error::invalid(&f, "one of at or after is required"))? {
                When::At(t) => {
                    let at = ts_from_pb(&format!("{f}.at"), t)?;
                    if at < crate::model::sub(now, Duration::from_secs(60)) {
                        return Err(Error::invalid(
                            format!("{f}.at"),
                            format!("{} is more than a minute in the past (now {})", at.to_rfc3339(), now.to_rfc3339()),
                        ));
                    }
                    at
                }
                When::After(d) => {
                    let d = duration_from_pb(&format!("{f}.after"), d)?;
                    validate::duration_between(&format!("{f}.after"), d, Duration::ZERO, 366 * DAY)?;
                    add(now, d)
                }
            };
            Schedule::OneTime { at }
        }
        Kind::Manual(_) => Schedule::Manual,
    })
}

/// A task's `extra_schedules`: each a cron or fixed-rate schedule, at most
/// [`crate::model::MAX_EXTRA_SCHEDULES`], none the same as another.
pub fn extra_schedules_from_pb(field: &str, list: &[pb::Schedule], now: Ts) -> Result<Vec<Schedule>> {
    use pb::schedule::Kind;
    let max = crate::model::MAX_EXTRA_SCHEDULES;
    if list.len() > max {
        return Err(Error::invalid(field, format!("{} schedules; at most {max}", list.len())));
    }
    let mut out: Vec<Schedule> = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let f = format!("{field}[{i}]");
        if !matches!(s.kind, Some(Kind::Cron(_) | Kind::FixedRate(_))) {
            return Err(Error::invalid(&f, "must be a cron or fixed_rate schedule"));
        }
        let parsed = schedule_from_pb(&f, s, now)?;
        if let Some(j) = out.iter().position(|o| *o == parsed) {
            return Err(Error::invalid(f, format!("is the same as {field}[{j}]")));
        }
        out.push(parsed);
    }
    Ok(out)
}

pub(super) fn schedule_to_pb(s: &Schedule) -> pb::Schedule {
    use pb::schedule::Kind;
    let kind = match s {
        Schedule::Cron { expression, time_zone, dialect } => Kind::Cron(pb::CronSchedule {
            expression: expression.clone(),
            time_zone: time_zone.clone(),
            dialect: dialect_to_pb(*dialect).into(),
        }),
        Schedule::FixedRate { interval, start_at } => Kind::FixedRate(pb::IntervalSchedule {
            interval: Some(duration_to_pb(*interval)),
            start_at: Some(ts_to_pb(*start_at)),
        }),
        Schedule::FixedDelay { interval, start_at } => Kind::FixedDelay(pb::IntervalSchedule {
            interval: Some(duration_to_pb(*interval)),
            start_at: Some(ts_to_pb(*start_at)),
        }),
        Schedule::OneTime { at } => {
            Kind::OneTime(pb::OneTimeSchedule { when: Some(pb::one_time_schedule::When::At(ts_to_pb(*at))) })
        }
        Schedule::Manual => Kind::Manual(pb::ManualSchedule {}),
    };
    pb::Schedule { kind: Some(kind) }
}
