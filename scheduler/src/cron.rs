//! Cron expressions: dialect detection, field-by-field validation with precise errors, and
//! evaluation on a time zone's wall clock with ax's DST policy.
//!
//! Dialects. UNIX: 5 fields, or 6 with a leading seconds field; day-of-week 0 or 7 = Sunday.
//! QUARTZ (Quartz, XXL-JOB, Spring): 6 fields with seconds first, or 7 with a trailing year;
//! day-of-week 1 = Sunday ... 7 = Saturday; `?`, `L`, `W`, `LW`, `L-n`, `#` and steps like `0/15`.
//! Unless a dialect is given, an expression containing `?` or having 7 fields is QUARTZ (Quartz
//! requires `?` in one of the day fields, so anything pasted from XXL-JOB has one), anything else UNIX.
//!
//! DST policy. Matching is done on the wall clock (croner over naive local time), then each wall
//! time is placed on the time line: a time inside a spring-forward gap fires once, at the first
//! instant after the gap (several gap times collapse into that one fire); a time inside a fall-back
//! overlap fires once, at its first occurrence, and the repeated hour does not fire again.

use chrono::{Datelike, LocalResult, NaiveDateTime, TimeZone};
use chrono_tz::Tz;
use croner::{
    Cron,
    parser::{CronParser, Seconds, Year},
};

use crate::{
    model::{CronDialect, Ts},
    text::quote,
};

/// A validated, compiled cron expression with its time zone.
#[derive(Clone)]
pub struct CronExpr {
    source: String,
    dialect: CronDialect,
    has_seconds: bool,
    cron: Cron,
    /// Quartz `L-n` in day-of-month: the n-th day before the last day of the month.
    dom_last_offset: Option<u32>,
    tz: Tz,
    fields: Vec<String>,
}

impl std::fmt::Debug for CronExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronExpr")
            .field("source", &self.source)
            .field("dialect", &self.dialect)
            .field("time_zone", &self.tz.name())
            .finish_non_exhaustive()
    }
}

/// A parse error, naming the request field (`expression`, `time_zone` or `dialect`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronError {
    /// `expression` or `time_zone`.
    pub field: &'static str,
    /// What is wrong.
    pub reason: String,
}

impl CronError {
    fn expr(reason: impl Into<String>) -> Self {
        CronError { field: "expression", reason: reason.into() }
    }
}

/// The longest expression accepted.
pub const MAX_EXPRESSION_LEN: usize = 256;

const MONTHS: [&str; 12] = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Second,
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
    Year,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Second => "seconds",
            Field::Minute => "minutes",
            Field::Hour => "hours",
            Field::DayOfMonth => "day-of-month",
            Field::Month => "month",
            Field::DayOfWeek => "day-of-week",
            Field::Year => "year",
        }
    }
}

/// Resolves the dialect of `expression`: the explicit one, or detection (see the module doc).
pub fn detect_dialect(expression: &str, explicit: Option<CronDialect>) -> CronDialect {
    explicit.unwrap_or_else(|| {
        if expression.contains('?') || expression.split_whitespace().count() == 7 {
            CronDialect::Quartz
        } else {
            CronDialect::Unix
        }
    })
}

/// Parses a time zone name.
pub fn parse_time_zone(name: &str) -> Result<Tz, CronError> {
    let name = if name.is_empty() { "UTC" } else { name };
    name.parse::<Tz>().map_err(|_| CronError {
        field: "time_zone",
        reason: format!("unknown time zone {} (use an IANA name such as \"Europe/London\")", quote(name)),
    })
}

impl CronExpr {
    /// Parses and validates `expression` in `time_zone` (default UTC) with `dialect` (default: detect).
    pub fn parse(expression: &str, time_zone: &str, dialect: Option<CronDialect>) -> Result<CronExpr, CronError> {
        let tz = parse_time_zone(time_zone)?;
        let source = expression.trim();
        if source.is_empty() {
            return Err(CronError::expr("is empty"));
        }
        if source.len() > MAX_EXPRESSION_LEN {
            return Err(CronError::expr(format!(
                "is {} bytes long, at most {MAX_EXPRESSION_LEN} allowed",
                source.len()
            )));
        }
        let dialect = detect_dialect(source, dialect);
        let upper = source.to_ascii_uppercase();
        let fields: Vec<String> = if upper.starts_with('@') {
            let expanded = expand_nickname(&upper).ok_or_else(|| {
                CronError::expr(format!(
                    "unknown nickname {} (use @yearly, @monthly, @weekly, @daily or @hourly)",
                    quote(source)
                ))
            })?;
            expanded.split_whitespace().map(str::to_owned).collect()
        } else {
            upper.split_whitespace().map(str::to_owned).collect()
        };
        let layout: &[Field] = match (dialect, fields.len()) {
            (CronDialect::Unix, 5) => &[Field::Minute, Field::Hour, Field::DayOfMonth, Field::Month, Field::DayOfWeek],
            (CronDialect::Unix, 6) => {
                &[Field::Second, Field::Minute, Field::Hour, Field::DayOfMonth, Field::Month, Field::DayOfWeek]
            }
            (CronDialect::Quartz, 6) => {
                &[Field::Second, Field::Minute, Field::Hour, Field::DayOfMonth, Field::Month, Field::DayOfWeek]
            }
            (CronDialect::Quartz, 7) => &[
                Field::Second,
                Field::Minute,
                Field::Hour,
                Field::DayOfMonth,
                Field::Month,
                Field::DayOfWeek,
                Field::Year,
            ],
            (CronDialect::Unix, n) => {
                return Err(CronError::expr(format!(
                    "has {n} fields; a unix expression has 5 (minute hour day-of-month month day-of-week) \
                     or 6 with a leading seconds field"
                )));
            }
            (CronDialect::Quartz, n) => {
                return Err(CronError::expr(format!(
                    "has {n} fields; a quartz expression has 6 (second minute hour day-of-month month \
                     day-of-week) or 7 with a trailing year"
                )));
            }
        };
        let mut dom_last_offset = None;
        let mut croner_fields = Vec::with_capacity(fields.len());
        for (i, (text, &field)) in fields.iter().zip(layout).enumerate() {
            let rewritten = check_field(i + 1, field, text, dialect, &mut dom_last_offset)?;
            croner_fields.push(rewritten);
        }
        if dialect == CronDialect::Quartz {
            let dom = &fields[3];
            let dow = &fields[5];
            let restricted = |f: &str| f != "*" && f != "?";
            if restricted(dom) && restricted(dow) {
                return Err(CronError::expr(format!(
                    "quartz does not support both day-of-month ({dom}) and day-of-week ({dow}); put `?` in one of them"
                )));
            }
        }
        let has_seconds = layout[0] == Field::Second;
        let parser = CronParser::builder()
            .seconds(if has_seconds { Seconds::Required } else { Seconds::Disallowed })
            .year(if layout.len() == 7 { Year::Required } else { Year::Disallowed })
            .alternative_weekdays(dialect == CronDialect::Quartz)
            .sloppy_ranges(true)
            .build();
        let cron = parser.parse(&croner_fields.join(" ")).map_err(|e| {
            // croner's message may repeat the expression: capped and escaped like any echo of input.
            let m = e.to_string();
            let safe = m.len() <= crate::text::MAX_QUOTE && m.chars().all(|c| crate::text::is_display_safe(c, false));
            CronError::expr(if safe { m } else { quote(&m) })
        })?;
        Ok(CronExpr { source: source.to_owned(), dialect, has_seconds, cron, dom_last_offset, tz, fields })
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The dialect it was read in.
    pub fn dialect(&self) -> CronDialect {
        self.dialect
    }

    /// Whether it has a seconds field.
    pub fn has_seconds(&self) -> bool {
        self.has_seconds
    }

    /// Its time zone.
    pub fn time_zone(&self) -> Tz {
        self.tz
    }

    /// The first fire strictly after `t`, following the DST policy of this module; `None` if it never
    /// fires again.
    /// Nothing fires after [`crate::model::latest`] (year 9999), which also keeps every instant
    /// this evaluates far from the end of chrono's range, where placing it in a zone would panic.
    pub fn next_after(&self, t: Ts) -> Option<Ts> {
        if t >= crate::model::latest() {
            return None;
        }
        let mut local = wall_clock(self.tz, t)?;
        // Each loop step moves forward on the wall clock; only an overlap (at most a few hours of
        // candidates) or a gap can make a step not produce a fire.
        for _ in 0..100_000 {
            let candidate = self.next_naive(local)?;
            let instant = resolve_local(self.tz, candidate)?;
            if instant > crate::model::latest() {
                return None;
            }
            if instant > t {
                return Some(instant);
            }
            local = candidate;
        }
        None
    }

    /// The wall-clock time of `t` in this expression's zone, RFC 3339 with offset.
    /// At the very ends of chrono's range (never a fire time) it is the UTC time instead.
    pub fn local_rfc3339(&self, t: Ts) -> String {
        match wall_clock(self.tz, t) {
            Some(_) => t.with_timezone(&self.tz).to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
            None => t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        }
    }

    /// Warnings about the shape of the expression (the typos that make a job run far too often or on
    /// the wrong days), given its measured frequency.
    pub fn warnings(&self, fires_per_day: f64) -> Vec<String> {
        let mut out = Vec::new();
        let (sec, min, hour, dow) = if self.has_seconds {
            (Some(self.fields[0].as_str()), &self.fields[1], &self.fields[2], &self.fields[5])
        } else {
            (None, &self.fields[0], &self.fields[1], &self.fields[4])
        };
        let every = |f: &str| f == "*" || f == "*/1" || f == "0/1" || f == "0-59";
        let per_day = fires_per_day.round();
        if sec.is_some_and(every) {
            out.push(format!(
                "the seconds field is `*`: this fires every second while the other fields match \
                 ({per_day} times a day); to fire once a minute put 0 in the seconds field"
            ));
        } else if every(min) && hour != "*" {
            out.push(format!(
                "the minutes field is `*`: this fires every minute of hour(s) {hour} ({per_day} times a day); \
                 to fire once at {hour}:00 put 0 in the minutes field"
            ));
        } else if every(min) && hour == "*" && sec.is_none_or(|s| s == "0") {
            out.push(format!(
                "`{}` fires every minute ({per_day} times a day); for once a day at midnight use `{}`",
                self.source,
                if self.has_seconds { "0 0 0 * * ?" } else { "0 0 * * *" }
            ));
        } else if fires_per_day > 1440.0 {
            out.push(format!("fires {per_day} times a day (more than once a minute)"));
        }
        if self.dialect == CronDialect::Unix && self.has_seconds && dow.chars().any(|c| c.is_ascii_digit()) {
            out.push(format!(
                "read as a unix expression, where day-of-week 0 or 7 = Sunday and 1 = Monday; if it comes from \
                 Quartz or XXL-JOB (1 = Sunday), write `?` in a day field or choose dialect QUARTZ (day-of-week {dow})"
            ));
        }
        out
    }

    fn next_naive(&self, after: NaiveDateTime) -> Option<NaiveDateTime> {
        let mut from = after;
        loop {
            let c = self.cron.find_next_occurrence(&from, false).ok()?;
            match self.dom_last_offset {
                Some(offset) if c.day() + offset != days_in_month(c.year(), c.month()) => {
                    // Not the wanted day: continue from the last second of this day.
                    from = c.date().and_hms_opt(23, 59, 59)?;
                }
                _ => return Some(c),
            }
        }
    }
}

/// The wall-clock time of `t` in `tz`; `None` at the ends of chrono's range, where
/// `DateTime::naive_local` would panic.
fn wall_clock(tz: Tz, t: Ts) -> Option<NaiveDateTime> {
    use chrono::Offset;
    let zoned = t.with_timezone(&tz);
    zoned.naive_utc().checked_add_offset(zoned.offset().fix())
}

fn days_in_month(year: i32, month: u32) -> u32 {
    let (ny, nm) = if month == 12 { (year + 1, 1) } else { (year, month + 1) };
    chrono::NaiveDate::from_ymd_opt(ny, nm, 1).and_then(|d| d.pred_opt()).map(|d| d.day()).unwrap_or(31)
}

/// Places a wall-clock time of `tz` on the time line: the single instant, the first of two in an
/// overlap, or the first instant after a gap.
pub fn resolve_local(tz: Tz, local: NaiveDateTime) -> Option<Ts> {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(d) => Some(d.to_utc()),
        LocalResult::Ambiguous(a, b) => Some(a.to_utc().min(b.to_utc())),
        LocalResult::None => {
            // Inside a gap: find the transition, the first instant whose wall time is past `local`.
            let mut lo = local.and_utc().timestamp() - 36 * 3600;
            let mut hi = local.and_utc().timestamp() + 36 * 3600;
            let past = |secs: i64| -> Option<bool> {
                let u = chrono::DateTime::from_timestamp(secs, 0)?;
                Some(wall_clock(tz, u)? > local)
            };
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if past(mid)? { hi = mid } else { lo = mid }
            }
            chrono::DateTime::from_timestamp(hi, 0)
        }
    }
}

fn expand_nickname(s: &str) -> Option<&'static str> {
    Some(match s {
        "@YEARLY" | "@ANNUALLY" => "0 0 1 1 *",
        "@MONTHLY" => "0 0 1 * *",
        "@WEEKLY" => "0 0 * * 0",
        "@DAILY" | "@MIDNIGHT" => "0 0 * * *",
        "@HOURLY" => "0 * * * *",
        _ => return None,
    })
}

/// Validates one field and returns the text to hand to croner.
fn check_field(
    pos: usize,
    field: Field,
    text: &str,
    dialect: CronDialect,
    dom_last_offset: &mut Option<u32>,
) -> Result<String, CronError> {
    let name = field.name();
    let err = |reason: String| CronError::expr(format!("field {pos} ({name}) {reason}"));
    // The field as errors show it: quoted, escaped and capped (see text::quote).
    let text_q = quote(text);
    let (lo, hi) = match field {
        Field::Second | Field::Minute => (0, 59),
        Field::Hour => (0, 23),
        Field::DayOfMonth => (1, 31),
        Field::Month => (1, 12),
        Field::DayOfWeek if dialect == CronDialect::Quartz => (1, 7),
        Field::DayOfWeek => (0, 7),
        Field::Year => (1970, 2099),
    };
    let value = |s: &str| -> Result<u32, CronError> {
        let n = match (field, s) {
            (Field::Month, _) if MONTHS.contains(&s) => {
                return Ok(MONTHS.iter().position(|m| *m == s).map_or(1, |i| i as u32 + 1));
            }
            (Field::DayOfWeek, _) if DAYS.contains(&s) => {
                let i = DAYS.iter().position(|d| *d == s).map_or(0, |i| i as u32);
                return Ok(if dialect == CronDialect::Quartz { i + 1 } else { i });
            }
            _ => s
                .parse::<u32>()
                .map_err(|_| err(format!("= {text_q}: {} is not a number{}", quote(s), names_hint(field))))?,
        };
        if n < lo || n > hi {
            return Err(err(format!("= {n} is out of range {lo}-{hi}")));
        }
        Ok(n)
    };
    // Quartz `L-n` (n days before the last day of the month): evaluated by ax itself.
    if field == Field::DayOfMonth
        && dialect == CronDialect::Quartz
        && let Some(rest) = text.strip_prefix("L-")
    {
        let n: u32 = rest.parse().map_err(|_| err(format!("= {text_q}: offset {} is not a number", quote(rest))))?;
        if n > 30 {
            return Err(err(format!("= {text_q}: offset {n} is out of range 0-30")));
        }
        *dom_last_offset = Some(n);
        return Ok("*".to_owned());
    }
    if field == Field::DayOfWeek && dialect == CronDialect::Quartz && text == "L" {
        // Quartz: `L` alone in day-of-week means the last day of the week, Saturday.
        return Ok("7".to_owned());
    }
    let body = if field == Field::DayOfWeek && dialect == CronDialect::Unix {
        text.strip_prefix('+').unwrap_or(text)
    } else {
        text
    };
    for item in body.split(',') {
        if item.is_empty() {
            return Err(err(format!("= {text_q}: empty list item")));
        }
        let (base, step) = match item.split_once('/') {
            Some((b, s)) => (b, Some(s)),
            None => (item, None),
        };
        if let Some(s) = step {
            let n: u32 = s.parse().map_err(|_| err(format!("= {text_q}: step {} is not a number", quote(s))))?;
            if n == 0 {
                return Err(err(format!("= {text_q}: step must be at least 1")));
            }
            if n > hi {
                return Err(err(format!("= {text_q}: step {n} is larger than the range {lo}-{hi}")));
            }
        }
        match base {
            "*" | "" if step.is_some() || base == "*" => {}
            "?" if matches!(field, Field::DayOfMonth | Field::DayOfWeek) => {}
            "?" => {
                return Err(err("= ?: `?` is only allowed in day-of-month and day-of-week".to_owned()));
            }
            "L" | "LW" if field == Field::DayOfMonth => {}
            _ if field == Field::DayOfMonth && base.ends_with('W') => {
                value(&base[..base.len() - 1])?;
            }
            _ if field == Field::DayOfWeek && base.contains('#') => {
                let (day, nth) = base.split_once('#').unwrap_or((base, ""));
                value(day)?;
                if nth != "L" && !matches!(nth.parse::<u32>(), Ok(1..=5)) {
                    return Err(err(format!("= {text_q}: occurrence #{} must be 1-5 or L", quote(nth))));
                }
            }
            _ if field == Field::DayOfWeek && base.len() > 1 && base.ends_with('L') => {
                value(&base[..base.len() - 1])?;
            }
            _ => match base.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (value(a)?, value(b)?);
                    if a > b && field != Field::DayOfWeek {
                        return Err(err(format!("= {text_q}: range {a}-{b} runs backwards")));
                    }
                }
                None => {
                    value(base)?;
                }
            },
        }
    }
    Ok(text.to_owned())
}

fn names_hint(field: Field) -> &'static str {
    match field {
        Field::Month => " or month name (JAN-DEC)",
        Field::DayOfWeek => " or day name (SUN-SAT)",
        _ => "",
    }
}
