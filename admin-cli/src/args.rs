//! Parsers for the value syntaxes axctl accepts on the command line: durations (`1h30m`), RFC 3339
//! timestamps, retry backoffs, `KEY=VALUE` labels, instance statuses, the policy enums, rates, and
//! the limits that take a word (`none`, `default`) for "leave it to the server".
//!
//! Each parser returns a message that clap prints after the flag name and the offending value, so
//! the messages say what is wrong and what would be right, never which flag it was.

use ax_proto::v1::{
    Backoff, ConcurrencyPolicy, CronDialect, ExponentialBackoff, InstanceStatus, ListBackoff, MisfirePolicy,
    RetryTarget, RoutingStrategy, backoff,
};
use chrono::DateTime;
use clap::ValueEnum;

/// Parses a duration in ax's one syntax ([`ax_proto::duration`], README "Durations"): `250ms`,
/// `90s`, `1h30m`, `1.5h`, `2d` or a bare `0`; units `d`, `h`, `m`, `s`, `ms`, each at most once and
/// largest first.
pub fn parse_duration(text: &str) -> Result<prost_types::Duration, String> {
    let duration = ax_proto::duration::parse(text)?;
    let seconds = i64::try_from(duration.as_secs()).map_err(|_| "duration is too large".to_owned())?;
    // Below 1e9, so the nanos always fit an i32.
    Ok(prost_types::Duration { seconds, nanos: duration.subsec_nanos() as i32 })
}

/// [`parse_duration`] as a std duration, for options axctl uses itself (poll intervals, deadlines).
pub fn parse_std_duration(text: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(text)?;
    // parse_duration never returns a negative duration.
    Ok(std::time::Duration::new(d.seconds as u64, d.nanos as u32))
}

/// Parses an RFC 3339 timestamp with an offset, e.g. `2026-03-08T02:30:00-05:00` or
/// `2026-03-08T07:30:00Z`.
pub fn parse_timestamp(text: &str) -> Result<prost_types::Timestamp, String> {
    let time = DateTime::parse_from_rfc3339(text)
        .map_err(|e| format!("{e}; expected RFC 3339 with an offset, e.g. 2026-03-08T07:30:00Z"))?;
    Ok(prost_types::Timestamp {
        seconds: time.timestamp(),
        // chrono reports a leap second as nanos >= 1e9, which a protobuf Timestamp forbids; the
        // clamped value (below 1e9) always fits an i32.
        nanos: time.timestamp_subsec_nanos().min(999_999_999) as i32,
    })
}

/// Parses a retry backoff: a comma-separated list of durations (`10s,60s,300s`; retry n waits the
/// n-th, later retries the last), or `exp:INITIAL:MAX[:MULTIPLIER[:JITTER]]` (`exp:10s:5m:2:0.1`).
/// Ranges are left to the server, which names the field; only the syntax is checked here.
pub fn parse_backoff(text: &str) -> Result<Backoff, String> {
    let kind = if let Some(spec) = text.strip_prefix("exp:") {
        let parts: Vec<&str> = spec.split(':').collect();
        if !(2..=4).contains(&parts.len()) {
            return Err("expected exp:INITIAL:MAX[:MULTIPLIER[:JITTER]], e.g. exp:10s:5m:2:0.1".to_owned());
        }
        let number = |part: Option<&&str>, what: &str| -> Result<f64, String> {
            match part {
                None => Ok(0.0),
                Some(text) => text
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .ok_or_else(|| format!("{what} `{text}` is not a number")),
            }
        };
        backoff::Kind::Exponential(ExponentialBackoff {
            initial: Some(parse_duration(parts[0]).map_err(|e| format!("initial delay: {e}"))?),
            max: Some(parse_duration(parts[1]).map_err(|e| format!("max delay: {e}"))?),
            // 0 is the proto's "unset": the server applies its defaults (multiplier 2, jitter 0.1).
            multiplier: number(parts.get(2), "multiplier")?,
            jitter: number(parts.get(3), "jitter")?,
        })
    } else {
        let delays = text
            .split(',')
            .map(parse_duration)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{e} (a backoff is a list like 10s,60s,300s or exp:10s:5m:2:0.1)"))?;
        backoff::Kind::List(ListBackoff { delays })
    };
    Ok(Backoff { kind: Some(kind) })
}

/// Parses a `FIELD=VALUE` params filter (`--param customer_id=42`): the field as a params path
/// (`params.` is added when missing; `a.b` is a field inside an object), the value as stored (a
/// string as is, a number or other JSON value as its JSON text).
pub fn parse_param(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => {
            let k = k.trim();
            let path = if k.starts_with("params.") { k.to_owned() } else { format!("params.{k}") };
            Ok((path, v.to_owned()))
        }
        Some(_) => Err("the field is empty; expected FIELD=VALUE".to_owned()),
        None => Err("expected FIELD=VALUE, e.g. customer_id=42".to_owned()),
    }
}

/// Parses a `KEY=VALUE` label. The key must not be empty; the value may be. Limits are the server's.
pub fn parse_label(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        Some(_) => Err("the label key is empty; expected KEY=VALUE".to_owned()),
        None => Err("expected KEY=VALUE".to_owned()),
    }
}

/// Parses an instance status name, case-insensitively and without the `INSTANCE_STATUS_` prefix:
/// PENDING, DISPATCHED, RUNNING, SUCCESS, FAILED, TIMEOUT, CANCELED, SKIPPED, WAITING.
pub fn parse_status(text: &str) -> Result<InstanceStatus, String> {
    let full = format!("INSTANCE_STATUS_{}", text.to_ascii_uppercase());
    match InstanceStatus::from_str_name(&full) {
        Some(InstanceStatus::Unspecified) | None => {
            Err("expected one of PENDING, DISPATCHED, RUNNING, SUCCESS, FAILED, TIMEOUT, CANCELED, SKIPPED, WAITING"
                .to_owned())
        }
        Some(status) => Ok(status),
    }
}

/// A flag value that either sets a field or, by a word (`none`, `default`), leaves it unset so that
/// the server applies its default. On update the field is still named in the mask either way: that
/// is how a stored setting goes back to the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting<T> {
    /// This value.
    Value(T),
    /// Unset: the server's default.
    Unset,
}

impl<T> Setting<T> {
    /// The value, None for [`Setting::Unset`].
    pub fn value(self) -> Option<T> {
        match self {
            Setting::Value(value) => Some(value),
            Setting::Unset => None,
        }
    }
}

/// A whole number, with a message that says what was expected (`what`) rather than Rust's
/// "invalid digit found in string".
fn parse_count(text: &str, what: &str) -> Result<u32, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected {what}"));
    }
    // Only digits: the one way left to fail is being too large.
    text.parse::<u32>().map_err(|_| format!("{text} is too large; expected {what}"))
}

/// A whole number (`--priority`, `--shards`); its range is the server's.
pub fn parse_whole(text: &str) -> Result<u32, String> {
    parse_count(text, "a whole number")
}

/// `--max-running`: a number of instances, or `none` (no limit, the server's default).
pub fn parse_max_running(text: &str) -> Result<Setting<u32>, String> {
    match text {
        "none" => Ok(Setting::Unset),
        _ => parse_count(text, "a number of instances, or `none` for no limit").map(Setting::Value),
    }
}

/// `--max-pending`, `--cooldown-after`: a whole number, or `default` for the server's default.
pub fn parse_count_or_default(text: &str) -> Result<Setting<u32>, String> {
    match text {
        "default" => Ok(Setting::Unset),
        _ => parse_count(text, "a whole number, or `default`").map(Setting::Value),
    }
}

/// `--cooldown`: a duration ([`parse_duration`]; `0s` turns cooldowns off), or `default` for axd's.
pub fn parse_duration_or_default(text: &str) -> Result<Setting<prost_types::Duration>, String> {
    match text {
        "default" => Ok(Setting::Unset),
        _ => parse_duration(text).map(Setting::Value).map_err(|e| format!("{e}; or `default`")),
    }
}

/// `--start-at`, `--end-at`: an RFC 3339 instant ([`parse_timestamp`]), or `none` to clear it.
pub fn parse_timestamp_or_none(text: &str) -> Result<Setting<prost_types::Timestamp>, String> {
    match text {
        "none" => Ok(Setting::Unset),
        _ => parse_timestamp(text).map(Setting::Value).map_err(|e| format!("{e}; or `none`")),
    }
}

/// `--jitter`: a duration ([`parse_duration`]), or `none` to clear it.
pub fn parse_duration_or_none(text: &str) -> Result<Setting<prost_types::Duration>, String> {
    match text {
        "none" => Ok(Setting::Unset),
        _ => parse_duration(text).map(Setting::Value).map_err(|e| format!("{e}; or `none`")),
    }
}

/// The items of one comma-separated flag value. A type of its own, so that clap takes the flag
/// as one value (a `Vec` field would be read as a flag given several times).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct List(pub Vec<String>);

/// A comma-separated list (`--exclude`, `--on-success`, `--dates`, ...): its items without
/// surrounding spaces; an empty text is the empty list (which clears the field on update).
pub fn parse_list(text: &str) -> Result<List, String> {
    let items: Vec<String> = text.split(',').map(str::trim).map(str::to_owned).collect();
    if items.len() > 1 && items.iter().any(String::is_empty) {
        return Err("an empty item; expected A,B,C (or '' for none)".to_owned());
    }
    Ok(List(items.into_iter().filter(|i| !i.is_empty()).collect()))
}

/// One of a task's extra schedules (`--also`): `cron EXPR [in ZONE]` or `every DUR`; `''` (None)
/// for none.
pub fn parse_also(text: &str) -> Result<Option<ax_proto::v1::Schedule>, String> {
    use ax_proto::v1::{CronSchedule, IntervalSchedule, Schedule, schedule::Kind};
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let kind = if let Some(every) = text.strip_prefix("every ") {
        Kind::FixedRate(IntervalSchedule { interval: Some(parse_duration(every.trim())?), start_at: None })
    } else if let Some(cron) = text.strip_prefix("cron ") {
        let (expression, zone) = match cron.rsplit_once(" in ") {
            Some((e, z)) => (e.trim(), z.trim()),
            None => (cron.trim(), ""),
        };
        if expression.is_empty() {
            return Err("no cron expression; expected e.g. 'cron 0 9 * * 1-5 in Europe/Berlin'".to_owned());
        }
        Kind::Cron(CronSchedule { expression: expression.to_owned(), time_zone: zone.to_owned(), dialect: 0 })
    } else {
        return Err("expected 'cron EXPR [in ZONE]' or 'every DUR' (or '' for none)".to_owned());
    };
    Ok(Some(Schedule { kind: Some(kind) }))
}

/// A finite decimal number such as `2.5` or `0.001` (Rust's own float parser also takes `NaN` and
/// `inf`, which no rate means). The range is the server's.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    text.parse::<f64>().ok().filter(|n| n.is_finite()).ok_or_else(|| "expected a number, e.g. 2.5 or 0.1".to_owned())
}

/// `--dialect`: how a cron expression is read. Omitted: the server detects it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Dialect {
    /// 5 fields (or 6 with leading seconds); day-of-week 0-7, Sunday = 0 or 7.
    Unix,
    /// 6 fields with seconds first (or 7 with a year); day-of-week 1-7, Sunday = 1; `?`, L, W, #.
    Quartz,
}

impl From<Dialect> for CronDialect {
    fn from(value: Dialect) -> Self {
        match value {
            Dialect::Unix => CronDialect::Unix,
            Dialect::Quartz => CronDialect::Quartz,
        }
    }
}

/// `--misfire`: what happens to fires missed by more than the misfire threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Misfire {
    /// One catch-up instance for the latest missed fire.
    FireOnce,
    /// One instance per missed fire, at most --max-catch-up.
    FireAll,
    /// No catch-up; missed fires are recorded as skipped.
    Skip,
}

impl From<Misfire> for MisfirePolicy {
    fn from(value: Misfire) -> Self {
        match value {
            Misfire::FireOnce => MisfirePolicy::FireOnce,
            Misfire::FireAll => MisfirePolicy::FireAll,
            Misfire::Skip => MisfirePolicy::Skip,
        }
    }
}

/// `--concurrency`: the overlap policy, what a scheduled fire does while an earlier instance of
/// the task is unfinished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Concurrency {
    /// Instances may overlap.
    Allow,
    /// The fire is recorded as SKIPPED (FORBID on the wire; `forbid` is accepted too).
    #[value(alias = "forbid")]
    Skip,
    /// The fire waits behind the active instance; a fire while one already waits is SKIPPED.
    BufferOne,
    /// Every fire waits its turn (up to --max-pending waiting).
    BufferAll,
    /// The fire cancels the active instances and runs.
    CancelOther,
}

impl From<Concurrency> for ConcurrencyPolicy {
    fn from(value: Concurrency) -> Self {
        match value {
            Concurrency::Allow => ConcurrencyPolicy::Allow,
            Concurrency::Skip => ConcurrencyPolicy::Forbid,
            Concurrency::BufferOne => ConcurrencyPolicy::BufferOne,
            Concurrency::BufferAll => ConcurrencyPolicy::BufferAll,
            Concurrency::CancelOther => ConcurrencyPolicy::CancelOther,
        }
    }
}

/// `--routing`: how an instance picks among eligible worker streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Routing {
    /// The stream with the most free credits.
    LeastLoaded,
    /// Streams in turn.
    RoundRobin,
    /// A random stream with a free credit.
    Random,
    /// Every fire runs once on each live worker that matches: a WAITING parent with one child per
    /// worker (not with --shards).
    Broadcast,
    /// Instances with the same key (the --hash-key field of the params, else the task name) go to
    /// the same worker.
    Hash,
}

impl From<Routing> for RoutingStrategy {
    fn from(value: Routing) -> Self {
        match value {
            Routing::LeastLoaded => RoutingStrategy::LeastLoaded,
            Routing::RoundRobin => RoutingStrategy::RoundRobin,
            Routing::Random => RoutingStrategy::Random,
            Routing::Broadcast => RoutingStrategy::Broadcast,
            Routing::Hash => RoutingStrategy::Hash,
        }
    }
}

/// `--retry-on`: where the retry of an attempt that failed on a worker goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RetryOn {
    /// Another worker when one can take it, else the same one (the server's default).
    Other,
    /// Only the worker it failed on.
    Same,
    /// Any worker, the one it failed on included.
    Any,
}

impl From<RetryOn> for RetryTarget {
    fn from(value: RetryOn) -> Self {
        match value {
            RetryOn::Other => RetryTarget::Other,
            RetryOn::Same => RetryTarget::Same,
            RetryOn::Any => RetryTarget::Any,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dur(seconds: i64, nanos: i32) -> prost_types::Duration {
        prost_types::Duration { seconds, nanos }
    }

    #[test]
    fn durations_follow_the_shared_syntax_and_fit_a_protobuf_duration() {
        // The syntax itself is tested where it lives (ax_proto::duration).
        assert_eq!(parse_duration("250ms"), Ok(dur(0, 250_000_000)));
        assert_eq!(parse_duration("1d2h3m4s5ms"), Ok(dur(93_784, 5_000_000)));
        assert!(parse_duration("1m30m").unwrap_err().contains("out of order"));
        assert!(parse_duration("30").unwrap_err().contains("no unit"));
        // Fits a u64 of seconds but not the i64 of a protobuf Duration.
        assert!(parse_duration("200000000000000d").unwrap_err().contains("too large"));
    }

    #[test]
    fn timestamps_are_rfc3339_with_an_offset() {
        let utc = parse_timestamp("2026-03-08T07:30:00Z").expect("utc");
        let offset = parse_timestamp("2026-03-08T02:30:00-05:00").expect("offset");
        assert_eq!(utc, offset);
        assert_eq!(utc.seconds, 1_772_955_000);
        assert_eq!(parse_timestamp("2026-03-08T07:30:00.250Z").expect("millis").nanos, 250_000_000);
        assert!(parse_timestamp("2026-03-08 07:30").is_err());
        assert!(parse_timestamp("2026-03-08T07:30:00").is_err(), "an offset is required");
    }

    #[test]
    fn backoff_lists_become_list_backoffs() {
        let parsed = parse_backoff("10s,60s,5m").expect("list");
        assert_eq!(
            parsed.kind,
            Some(backoff::Kind::List(ListBackoff { delays: vec![dur(10, 0), dur(60, 0), dur(300, 0)] }))
        );
        assert_eq!(
            parse_backoff("30s").expect("single").kind,
            Some(backoff::Kind::List(ListBackoff { delays: vec![dur(30, 0)] }))
        );
        assert!(parse_backoff("10s,,60s").is_err());
        assert!(parse_backoff("10s,x").is_err());
    }

    #[test]
    fn exponential_backoffs_take_optional_multiplier_and_jitter() {
        let full = parse_backoff("exp:10s:5m:2:0.1").expect("full");
        assert_eq!(
            full.kind,
            Some(backoff::Kind::Exponential(ExponentialBackoff {
                initial: Some(dur(10, 0)),
                multiplier: 2.0,
                max: Some(dur(300, 0)),
                jitter: 0.1,
            }))
        );
        let short = parse_backoff("exp:1s:1m").expect("short");
        assert_eq!(
            short.kind,
            Some(backoff::Kind::Exponential(ExponentialBackoff {
                initial: Some(dur(1, 0)),
                multiplier: 0.0,
                max: Some(dur(60, 0)),
                jitter: 0.0,
            }))
        );
        assert!(parse_backoff("exp:10s").is_err());
        assert!(parse_backoff("exp:10s:5m:2:0.1:9").is_err());
        assert!(parse_backoff("exp:10s:5m:two").unwrap_err().contains("multiplier"));
        assert!(parse_backoff("exp:10s:5m:2:NaN").unwrap_err().contains("jitter"));
        assert!(parse_backoff("exp:x:5m").unwrap_err().contains("initial"));
    }

    #[test]
    fn params_filters_name_a_params_path() {
        assert_eq!(parse_param("customer_id=42"), Ok(("params.customer_id".to_owned(), "42".to_owned())));
        assert_eq!(parse_param("params.order.region=eu"), Ok(("params.order.region".to_owned(), "eu".to_owned())));
        assert!(parse_param("customer_id").is_err());
        assert!(parse_param("=4").is_err());
    }

    #[test]
    fn labels_need_a_key_and_an_equals_sign() {
        assert_eq!(parse_label("team=billing"), Ok(("team".to_owned(), "billing".to_owned())));
        assert_eq!(parse_label("url=a=b"), Ok(("url".to_owned(), "a=b".to_owned())));
        assert_eq!(parse_label("flag="), Ok(("flag".to_owned(), String::new())));
        assert!(parse_label("team").is_err());
        assert!(parse_label("=x").is_err());
    }

    #[test]
    fn statuses_are_case_insensitive_names_without_prefix() {
        assert_eq!(parse_status("PENDING"), Ok(InstanceStatus::Pending));
        assert_eq!(parse_status("failed"), Ok(InstanceStatus::Failed));
        assert_eq!(parse_status("Canceled"), Ok(InstanceStatus::Canceled));
        assert_eq!(parse_status("skipped"), Ok(InstanceStatus::Skipped));
        assert_eq!(parse_status("waiting"), Ok(InstanceStatus::Waiting));
        assert!(parse_status("unspecified").is_err());
        assert!(parse_status("INSTANCE_STATUS_PENDING").is_err());
        assert!(parse_status("done").unwrap_err().contains("PENDING"));
        assert!(parse_status("done").unwrap_err().contains("WAITING"));
    }

    #[test]
    fn policy_flags_use_kebab_case_and_map_to_proto_values() {
        let misfire = |s| Misfire::from_str(s, false).map(MisfirePolicy::from);
        assert_eq!(misfire("fire-once"), Ok(MisfirePolicy::FireOnce));
        assert_eq!(misfire("fire-all"), Ok(MisfirePolicy::FireAll));
        assert_eq!(misfire("skip"), Ok(MisfirePolicy::Skip));
        let routing = |s| Routing::from_str(s, false).map(RoutingStrategy::from);
        assert_eq!(routing("least-loaded"), Ok(RoutingStrategy::LeastLoaded));
        assert_eq!(routing("round-robin"), Ok(RoutingStrategy::RoundRobin));
        assert_eq!(routing("random"), Ok(RoutingStrategy::Random));
        assert_eq!(routing("broadcast"), Ok(RoutingStrategy::Broadcast));
        assert_eq!(routing("hash"), Ok(RoutingStrategy::Hash));
        let retry_on = |s| RetryOn::from_str(s, false).map(RetryTarget::from);
        assert_eq!(retry_on("other"), Ok(RetryTarget::Other));
        assert_eq!(retry_on("same"), Ok(RetryTarget::Same));
        assert_eq!(retry_on("any"), Ok(RetryTarget::Any));
        assert!(retry_on("unspecified").is_err());
        let concurrency = |s| Concurrency::from_str(s, false).map(ConcurrencyPolicy::from);
        assert_eq!(concurrency("allow"), Ok(ConcurrencyPolicy::Allow));
        assert_eq!(concurrency("forbid"), Ok(ConcurrencyPolicy::Forbid));
        let dialect = |s| Dialect::from_str(s, false).map(CronDialect::from);
        assert_eq!(dialect("unix"), Ok(CronDialect::Unix));
        assert_eq!(dialect("quartz"), Ok(CronDialect::Quartz));
    }

    #[test]
    fn limits_take_a_number_or_the_word_for_the_servers_default() {
        assert_eq!(parse_max_running("5"), Ok(Setting::Value(5)));
        assert_eq!(parse_max_running("0"), Ok(Setting::Value(0)), "the server names the range");
        assert_eq!(parse_max_running("none"), Ok(Setting::Unset));
        assert_eq!(parse_count_or_default("100"), Ok(Setting::Value(100)));
        assert_eq!(parse_count_or_default("default"), Ok(Setting::Unset));
        for bad in ["-1", "x", "", "1.5", "+3", " 3", "default", "None"] {
            assert!(parse_max_running(bad).is_err(), "{bad:?}");
        }
        for bad in ["-1", "none", "1e3", "0x10"] {
            assert!(parse_count_or_default(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_max_running("-1").unwrap_err(), "expected a number of instances, or `none` for no limit");
        assert!(parse_count_or_default("99999999999").unwrap_err().contains("too large"));
        assert_eq!(parse_whole("9"), Ok(9));
        assert_eq!(parse_whole("x"), Err("expected a whole number".to_owned()));
        assert!(parse_whole("-1").is_err());
    }

    #[test]
    fn the_cooldown_is_a_duration_or_default() {
        assert_eq!(
            parse_duration_or_default("30s"),
            Ok(Setting::Value(prost_types::Duration { seconds: 30, nanos: 0 }))
        );
        assert_eq!(parse_duration_or_default("0s"), Ok(Setting::Value(prost_types::Duration { seconds: 0, nanos: 0 })));
        assert_eq!(parse_duration_or_default("default"), Ok(Setting::Unset));
        let err = parse_duration_or_default("-1s").unwrap_err();
        assert!(err.contains("expected a number") && err.ends_with("or `default`"), "{err}");
        assert!(parse_duration_or_default("30").is_err());
        assert_eq!(Setting::Value(3).value(), Some(3));
        assert_eq!(Setting::<u32>::Unset.value(), None);
    }

    #[test]
    fn rates_are_finite_numbers() {
        assert_eq!(parse_rate("2.5"), Ok(2.5));
        assert_eq!(parse_rate("0.001"), Ok(0.001));
        assert_eq!(parse_rate("100000"), Ok(100_000.0));
        assert_eq!(parse_rate("-1"), Ok(-1.0), "the server names the range");
        for bad in ["NaN", "inf", "-inf", "x", "", "1/s"] {
            assert!(parse_rate(bad).is_err(), "{bad:?}");
        }
    }
}
