//! The trigger engine's arithmetic: next fire times of every schedule kind, previews with frequency
//! warnings, and the misfire plan that decides which instances a trigger round creates.
//!
//! Everything here is pure: "now" is always an argument, so cron, DST, fixed-rate drift and misfire
//! behaviour are tested with exact instants and no sleeping.

use std::time::Duration;

use crate::{
    cron::{CronError, CronExpr},
    model::{
        FireSpan, InstanceSource, MisfirePolicy, Schedule, TaskConfig, TaskEventKind, Ts, add, duration_micros,
        from_micros, latest, to_micros,
    },
    window::{Verdict, Window},
};

/// A fire time, unless it is past [`latest`]: no schedule fires after 9999-12-31T23:59:59Z.
fn bounded(t: Option<Ts>) -> Option<Ts> {
    t.filter(|t| *t <= latest())
}

/// A schedule ready for evaluation.
#[derive(Debug, Clone)]
pub enum Compiled {
    /// Cron on a wall clock (boxed: a parsed expression is several hundred bytes).
    Cron(Box<CronExpr>),
    /// Anchored fixed rate (microseconds).
    FixedRate {
        /// Interval in microseconds (> 0).
        interval_us: i64,
        /// Anchor in microseconds since the epoch.
        start_us: i64,
    },
    /// Fixed delay after completion.
    FixedDelay {
        /// The delay.
        interval: Duration,
        /// First fire.
        start_at: Ts,
    },
    /// Once.
    OneTime {
        /// The instant.
        at: Ts,
    },
    /// Never by itself.
    Manual,
    /// Another schedule's fires that a task's active window and excluded dates keep.
    Windowed(Box<Windowed>),
    /// A task's cron and fixed-rate schedules (its `schedule`, then its `extra_schedules`) with their
    /// fires merged: each instant once, made by the first of them that fires then.
    Merged(Vec<Compiled>),
}

/// The TaskSpec path of a task's schedule number `i` in [`Compiled::Merged`] order.
pub fn schedule_path(i: usize) -> String {
    match i {
        0 => "schedule".to_owned(),
        n => format!("extra_schedules[{}]", n - 1),
    }
}

/// The earliest of the fires.
fn earliest(fires: impl Iterator<Item = Option<Ts>>) -> Option<Ts> {
    fires.flatten().min()
}

/// A schedule whose fires are filtered by a [`Window`].
#[derive(Debug, Clone)]
pub struct Windowed {
    /// The schedule (never itself windowed).
    pub inner: Compiled,
    /// What it keeps.
    pub window: Window,
}

impl Compiled {
    /// Compiles a task's schedule with its window (`calendar`: the dates of its named calendar, if
    /// any); without a window this is [`Compiled::compile`].
    pub fn for_task(
        config: &TaskConfig,
        calendar: &std::collections::BTreeSet<chrono::NaiveDate>,
    ) -> Result<Compiled, CronError> {
        let mut inner = Compiled::compile(&config.schedule)?;
        if !config.timing.extra_schedules.is_empty() {
            let mut all = vec![inner];
            for s in &config.timing.extra_schedules {
                all.push(Compiled::compile(s)?);
            }
            inner = Compiled::Merged(all);
        }
        // The wall clock of excluded dates: the cron's zone (with several schedules, the first's).
        let tz = match &inner {
            Compiled::Cron(c) => c.time_zone(),
            Compiled::Merged(all) => match all.first() {
                Some(Compiled::Cron(c)) => c.time_zone(),
                _ => chrono_tz::UTC,
            },
            _ => chrono_tz::UTC,
        };
        let window = Window::new(&config.timing, calendar, tz);
        if window.is_open() {
            return Ok(inner);
        }
        Ok(Compiled::Windowed(Box::new(Windowed { inner, window })))
    }

    /// The schedule without its window.
    pub fn base(&self) -> &Compiled {
        match self {
            Compiled::Windowed(w) => &w.inner,
            other => other,
        }
    }

    /// The window, if the task has one.
    pub fn window(&self) -> Option<&Window> {
        match self {
            Compiled::Windowed(w) => Some(&w.window),
            _ => None,
        }
    }

    /// The first fire of the unfiltered schedule at or after `t` (for interval kinds without a fire
    /// grid, `t` itself).
    fn at_or_after(&self, t: Ts) -> Option<Ts> {
        match self {
            Compiled::Cron(_) | Compiled::FixedRate { .. } => self.next_at_or_after(t),
            Compiled::FixedDelay { .. } => Some(t),
            Compiled::OneTime { at } => (*at >= t).then_some(*at),
            Compiled::Manual => None,
            Compiled::Windowed(w) => w.keep(w.inner.at_or_after(t)),
            Compiled::Merged(all) => earliest(all.iter().map(|m| m.at_or_after(t))),
        }
    }

    /// Which of a task's several schedules makes the fire at `t` (the first that fires then, in
    /// [`schedule_path`] order); `None` for a task with one schedule.
    pub fn which(&self, t: Ts) -> Option<usize> {
        match self {
            Compiled::Merged(all) => all.iter().position(|m| m.at_or_after(t) == Some(t)),
            Compiled::Windowed(w) => w.inner.which(t),
            _ => None,
        }
    }

    /// The first fire kept at or after `t`, a fire time this schedule (or its database row) holds:
    /// `t` itself unless the window skips it (a calendar changed since it was computed, a fixed
    /// delay that ends on an excluded date).
    pub fn settle(&self, t: Ts) -> Option<Ts> {
        match self {
            Compiled::Windowed(w) => w.keep(Some(t)),
            _ => Some(t),
        }
    }
    /// Compiles a stored or validated schedule.
    pub fn compile(s: &Schedule) -> Result<Compiled, CronError> {
        Ok(match s {
            Schedule::Cron { expression, time_zone, dialect } => {
                Compiled::Cron(Box::new(CronExpr::parse(expression, time_zone, Some(*dialect))?))
            }
            Schedule::FixedRate { interval, start_at } => {
                Compiled::FixedRate { interval_us: duration_micros(*interval).max(1), start_us: to_micros(*start_at) }
            }
            Schedule::FixedDelay { interval, start_at } => {
                Compiled::FixedDelay { interval: *interval, start_at: *start_at }
            }
            Schedule::OneTime { at } => Compiled::OneTime { at: *at },
            Schedule::Manual => Compiled::Manual,
        })
    }

    /// The first fire of a schedule that is (re)set at `now`: fires before `now` are not owed.
    pub fn first_fire(&self, now: Ts) -> Option<Ts> {
        bounded(match self {
            Compiled::Cron(c) => c.next_after(now),
            Compiled::FixedRate { .. } => self.next_at_or_after(now),
            Compiled::FixedDelay { interval, start_at } => {
                Some(if *start_at >= now { *start_at } else { add(now, *interval) })
            }
            Compiled::OneTime { at } => (*at >= now).then_some(*at),
            Compiled::Manual => None,
            Compiled::Windowed(w) => w.keep(w.inner.first_fire(now)),
            Compiled::Merged(all) => earliest(all.iter().map(|m| m.first_fire(now))),
        })
    }

    /// The scheduled fire that follows the fire at `t` (`None` for kinds that do not repeat by
    /// themselves: fixed delay waits for completion, one-time and manual never repeat).
    pub fn next_after(&self, t: Ts) -> Option<Ts> {
        bounded(match self {
            Compiled::Cron(c) => c.next_after(t),
            Compiled::FixedRate { interval_us, start_us } => {
                let t_us = to_micros(t);
                if t_us < *start_us {
                    return Some(from_micros(*start_us));
                }
                // Fire n = start + n * interval: exact integer arithmetic, no accumulated drift.
                let n = (t_us - start_us) / interval_us + 1;
                Some(from_micros(start_us.checked_add(n.checked_mul(*interval_us)?)?))
            }
            Compiled::FixedDelay { .. } | Compiled::OneTime { .. } | Compiled::Manual => None,
            Compiled::Windowed(w) => w.keep(w.inner.next_after(t)),
            Compiled::Merged(all) => earliest(all.iter().map(|m| m.next_after(t))),
        })
    }

    /// The next fire of a FIXED_DELAY schedule whose previous scheduled instance finished at
    /// `finished_at`; `None` for other kinds.
    pub fn after_completion(&self, finished_at: Ts) -> Option<Ts> {
        match self {
            Compiled::FixedDelay { interval, .. } => bounded(Some(add(finished_at, *interval))),
            Compiled::Cron(_)
            | Compiled::FixedRate { .. }
            | Compiled::OneTime { .. }
            | Compiled::Manual
            | Compiled::Merged(_) => None,
            Compiled::Windowed(w) => w.keep(w.inner.after_completion(finished_at)),
        }
    }

    /// The shortest time between two consecutive fires of the schedule over its next `n` fires after
    /// `from` (`None` for a schedule that fires at most once, or not by itself). Jitter must stay
    /// below it, so that fires keep their order.
    pub fn shortest_period(&self, from: Ts, n: usize) -> Option<Duration> {
        match self.base() {
            Compiled::FixedRate { interval_us, .. } => Some(Duration::from_micros(*interval_us as u64)),
            Compiled::FixedDelay { interval, .. } => Some(*interval),
            Compiled::OneTime { .. } | Compiled::Manual | Compiled::Windowed(_) => None,
            cron @ (Compiled::Cron(_) | Compiled::Merged(_)) => {
                let mut prev = cron.first_fire(from)?;
                let mut shortest: Option<Duration> = None;
                for _ in 0..n {
                    let Some(next) = cron.next_after(prev) else { break };
                    let gap = (next - prev).to_std().unwrap_or(Duration::ZERO);
                    shortest = Some(shortest.map_or(gap, |s| s.min(gap)));
                    prev = next;
                }
                shortest
            }
        }
    }

    fn next_at_or_after(&self, t: Ts) -> Option<Ts> {
        match self {
            Compiled::FixedRate { start_us, .. } if to_micros(t) <= *start_us => Some(from_micros(*start_us)),
            _ => self.next_after(from_micros(to_micros(t) - 1)),
        }
    }

    /// How a preview describes the schedule.
    pub fn describe(&self) -> String {
        match self {
            Compiled::Cron(c) => format!(
                "cron `{}` ({} dialect{}) in {}",
                c.source(),
                c.dialect().as_str().to_ascii_lowercase(),
                if c.has_seconds() { ", with seconds" } else { "" },
                c.time_zone().name()
            ),
            Compiled::FixedRate { interval_us, start_us } => format!(
                "every {} anchored at {}",
                fmt_duration(Duration::from_micros(*interval_us as u64)),
                from_micros(*start_us).to_rfc3339()
            ),
            Compiled::FixedDelay { interval, start_at } => format!(
                "first at {}, then {} after each run finishes (preview assumes runs take no time)",
                start_at.to_rfc3339(),
                fmt_duration(*interval)
            ),
            Compiled::OneTime { at } => format!("once at {}", at.to_rfc3339()),
            Compiled::Manual => "only when triggered by hand".to_owned(),
            Compiled::Windowed(w) => format!("{}; {}", w.inner.describe(), w.window.describe()),
            Compiled::Merged(all) => {
                let each: Vec<String> =
                    all.iter().enumerate().map(|(i, m)| format!("{}: {}", schedule_path(i), m.describe())).collect();
                format!("fires of {} schedules merged, each instant once ({})", all.len(), each.join("; "))
            }
        }
    }

    fn local_time(&self, t: Ts) -> String {
        match self {
            Compiled::Cron(c) => c.local_rfc3339(t),
            Compiled::Windowed(w) => w.inner.local_time(t),
            Compiled::Merged(all) => {
                self.which(t).and_then(|i| all.get(i)).map(|m| m.local_time(t)).unwrap_or_default()
            }
            _ => String::new(),
        }
    }

    /// For previews: the fire after `t`, treating a fixed delay as if runs took no time.
    fn preview_next(&self, t: Ts) -> Option<Ts> {
        match self {
            Compiled::FixedDelay { interval, .. } => bounded(Some(add(t, *interval))),
            Compiled::Windowed(w) => w.keep(w.inner.preview_next(t)),
            other => other.next_after(t),
        }
    }
}

impl Windowed {
    /// `t`, a fire of the inner schedule, if the window keeps it; otherwise the first later fire it
    /// keeps (`None` once the window has closed).
    fn keep(&self, mut t: Option<Ts>) -> Option<Ts> {
        for _ in 0..MAX_WINDOW_SKIPS {
            let at = t?;
            match self.window.verdict(at) {
                Verdict::Keep => return Some(at),
                Verdict::AfterEnd(_) => return None,
                Verdict::BeforeStart(_) | Verdict::Excluded(_) => {
                    t = self.inner.at_or_after(self.window.reopens(at)?);
                }
            }
        }
        None
    }
}

/// Most times one lookup moves past instants the window skips: each move crosses a whole run of
/// excluded days or the window's start, so a few suffice unless the schedule's fires keep landing on
/// excluded days (e.g. a yearly cron on an excluded date), which ends the schedule.
const MAX_WINDOW_SKIPS: usize = 1000;

/// Formats a duration the way the CLI accepts it (e.g. `1h30m`, `250ms`).
pub fn fmt_duration(d: Duration) -> String {
    let mut us = d.as_micros();
    if us == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    for (unit, size) in
        [("d", 86_400_000_000u128), ("h", 3_600_000_000), ("m", 60_000_000), ("s", 1_000_000), ("ms", 1_000), ("us", 1)]
    {
        if us >= size {
            out.push_str(&format!("{}{unit}", us / size));
            us %= size;
        }
    }
    out
}

/// One fire of a preview: the instant and its wall-clock rendering (cron only).
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewFire {
    /// Instant.
    pub at: Ts,
    /// Wall clock, RFC 3339 with offset; empty for interval kinds.
    pub local: String,
}

/// The result of [`preview`].
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The next fires.
    pub fires: Vec<PreviewFire>,
    /// Estimated fires per day over the next week.
    pub fires_per_day: f64,
    /// Warnings about the shape or frequency.
    pub warnings: Vec<String>,
    /// How the schedule was read.
    pub description: String,
}

const WEEK: Duration = Duration::from_secs(7 * 86_400);
const FREQUENCY_SAMPLE_CAP: usize = 20_000;

/// The first `count` fires after `from`, the estimated frequency, and warnings.
pub fn preview(schedule: &Compiled, from: Ts, count: usize) -> Preview {
    let mut fires = Vec::with_capacity(count.min(1000));
    let first = schedule.first_fire(from);
    let mut t = first;
    while let Some(at) = t {
        if fires.len() >= count {
            break;
        }
        fires.push(PreviewFire { at, local: schedule.local_time(at) });
        t = schedule.preview_next(at);
    }
    // Frequency over the next week (or the span of the first FREQUENCY_SAMPLE_CAP fires).
    let end = add(from, WEEK);
    let mut n = 0usize;
    let mut last = from;
    let mut t = first;
    while let Some(at) = t {
        if at > end || n >= FREQUENCY_SAMPLE_CAP {
            break;
        }
        n += 1;
        last = at;
        t = schedule.preview_next(at);
    }
    let days = |d: chrono::TimeDelta| (d.num_microseconds().unwrap_or(i64::MAX).max(1) as f64) / 86_400e6;
    let fires_per_day = match first {
        // A sample cut short: n fires span n - 1 gaps from the first to the last (counting from
        // `from` instead made `--every 2s` 43,201 or 43,202 a day).
        Some(first) if n >= FREQUENCY_SAMPLE_CAP => (n - 1) as f64 / days(last - first),
        _ => n as f64 / 7.0,
    };
    let warn = |c: &Compiled| match c {
        Compiled::Cron(c) => c.warnings(fires_per_day),
        Compiled::FixedRate { interval_us, .. } if *interval_us < 60_000_000 => {
            vec![format!(
                "fires every {} ({} times a day)",
                fmt_duration(Duration::from_micros(*interval_us as u64)),
                fires_per_day.round()
            )]
        }
        _ => Vec::new(),
    };
    let mut warnings = match schedule.base() {
        Compiled::Merged(all) => {
            // Each schedule's, once (two crons warn alike about the merged frequency).
            let mut each: Vec<String> = Vec::new();
            for w in all.iter().flat_map(warn) {
                if !each.contains(&w) {
                    each.push(w);
                }
            }
            each
        }
        other => warn(other),
    };
    if first.is_none() && !matches!(schedule.base(), Compiled::Manual) {
        warnings.push("never fires after the given time".to_owned());
    }
    Preview { fires, fires_per_day, warnings, description: schedule.describe() }
}

/// One instance a trigger round should create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFire {
    /// The fire time (becomes `available_at`).
    pub fire_at: Ts,
    /// On time or catch-up.
    pub source: InstanceSource,
    /// For a task with several schedules, which made the fire ([`schedule_path`] order).
    pub schedule: Option<usize>,
}

/// What a trigger round does with one due task.
#[derive(Debug, Clone, PartialEq)]
pub struct FirePlan {
    /// Instances to create, in fire order.
    pub fires: Vec<PlannedFire>,
    /// The task's new next fire time.
    pub next_fire_at: Option<Ts>,
    /// Task events to record (misfire decisions).
    pub events: Vec<PlannedEvent>,
}

/// A misfire decision of a plan, to record as a task event.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedEvent {
    /// MISFIRE_CATCH_UP or MISFIRE_SKIPPED.
    pub kind: TaskEventKind,
    /// The sentence the event carries.
    pub message: String,
    /// The fires it decided: the ones caught up, or the ones skipped.
    pub fires: FireSpan,
}

/// The per-task inputs of [`plan`].
#[derive(Debug, Clone, Copy)]
pub struct MisfireRules {
    pub policy: MisfirePolicy,
    /// Later than this is missed.
    pub threshold: Duration,
    /// FIRE_ALL bound.
    pub max_catch_up: u32,
}

/// The most fires one plan walks through; a longer backlog is worked off over several rounds.
pub const MAX_FIRES_PER_PLAN: usize = 10_000;

/// Plans the fires of a task whose next fire time `next` is due (`next <= horizon`).
///
/// Fires up to `horizon` (now + look-ahead) are created; fires older than `now - threshold` are
/// missed and handled by the misfire policy. Instances are never created for times beyond `horizon`.
pub fn plan(schedule: &Compiled, next: Ts, now: Ts, horizon: Ts, rules: MisfireRules) -> FirePlan {
    let missed_before = crate::model::sub(now, rules.threshold);
    let keep = match rules.policy {
        MisfirePolicy::FireOnce => 1,
        MisfirePolicy::FireAll => rules.max_catch_up.max(1) as usize,
        MisfirePolicy::Skip => 0,
    };
    let mut missed_count = 0usize;
    let mut missed_first: Option<Ts> = None;
    // Kept apart from the tail, which SKIP leaves empty: its message names the span it skipped.
    let mut missed_last: Option<Ts> = None;
    // The latest missed fire that no catch-up keeps (the tail pushed it out, or SKIP keeps none).
    let mut skipped_last: Option<Ts> = None;
    let mut missed_tail: std::collections::VecDeque<Ts> = std::collections::VecDeque::with_capacity(keep);
    let mut on_time = Vec::new();
    let mut t = schedule.settle(next);
    let mut walked = 0usize;
    let mut truncated = false;
    while let Some(at) = t {
        if at > horizon {
            break;
        }
        if walked >= MAX_FIRES_PER_PLAN {
            truncated = true;
            break;
        }
        walked += 1;
        if at < missed_before {
            missed_count += 1;
            missed_first.get_or_insert(at);
            missed_last = Some(at);
            if keep == 0 {
                skipped_last = Some(at);
            } else {
                if missed_tail.len() == keep {
                    skipped_last = missed_tail.pop_front();
                }
                missed_tail.push_back(at);
            }
        } else {
            on_time.push(at);
        }
        t = schedule.next_after(at);
    }
    let mut events = Vec::new();
    let mut fires = Vec::new();
    if missed_count > 0 {
        let first = missed_first.unwrap_or(next);
        let last = missed_last;
        let range = |a: Ts, b: Option<Ts>| match b {
            Some(b) if b != a => format!("from {} to {}", a.to_rfc3339(), b.to_rfc3339()),
            _ => format!("at {}", a.to_rfc3339()),
        };
        // While a long backlog is being walked, catch-ups wait for the final chunk, which holds the
        // most recent missed fires.
        let catch_up: Vec<Ts> = if truncated { Vec::new() } else { missed_tail.into_iter().collect() };
        let skipped = missed_count - catch_up.len();
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let span = range(first, last.or(Some(first)));
        let threshold = crate::schedule::fmt_duration(rules.threshold);
        if let (Some(&c_first), Some(&c_last)) = (catch_up.first(), catch_up.last()) {
            events.push(PlannedEvent {
                kind: TaskEventKind::MisfireCatchUp,
                message: format!(
                    "{missed_count} fire(s) missed by more than {threshold} {span}; {} catch-up instance(s) ({})",
                    catch_up.len(),
                    rules.policy
                ),
                fires: FireSpan { first: c_first, last: c_last, count: count(catch_up.len()) },
            });
        }
        if skipped > 0 {
            // A truncated walk keeps no catch-up: every missed fire of this chunk is skipped.
            let last = if truncated { last } else { skipped_last };
            events.push(PlannedEvent {
                kind: TaskEventKind::MisfireSkipped,
                message: format!(
                    "skipped {skipped} of {missed_count} fire(s) missed by more than {threshold} {span} ({}{})",
                    rules.policy,
                    if truncated { "; more missed fires follow" } else { "" }
                ),
                fires: FireSpan { first, last: last.unwrap_or(first), count: count(skipped) },
            });
        }
        fires.extend(catch_up.into_iter().map(|fire_at| PlannedFire {
            fire_at,
            source: InstanceSource::CatchUp,
            schedule: schedule.which(fire_at),
        }));
    }
    fires.extend(on_time.into_iter().map(|fire_at| PlannedFire {
        fire_at,
        source: InstanceSource::Schedule,
        schedule: schedule.which(fire_at),
    }));
    FirePlan { fires, next_fire_at: t, events }
}

/// The idempotency key of a scheduled fire: `fire:` and the fire time in RFC 3339 (UTC, with
/// sub-second digits only when present). The same fire time can never produce two instances.
pub fn fire_key(at: Ts) -> String {
    format!("fire:{}", at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
}

/// The next fire time of a task whose schedule, window, enabled flag or pause was just set at
/// `now` (`calendar`: its named calendar's dates): none while disabled or paused without an end; the
/// first fire at or after the pause's end while paused until then; otherwise the first fire from
/// now (fires before now are not owed). A one-time task accepted up to a minute late fires at once.
pub fn next_fire_from(
    config: &TaskConfig,
    calendar: &std::collections::BTreeSet<chrono::NaiveDate>,
    pause: Option<&crate::model::Pause>,
    now: Ts,
) -> Option<Ts> {
    if !config.enabled {
        return None;
    }
    let compiled = Compiled::for_task(config, calendar).ok()?;
    let from = match pause {
        Some(p) => now.max(p.until?),
        None => now,
    };
    match compiled.base() {
        Compiled::OneTime { at } if *at >= from || pause.is_none() => compiled.settle(*at),
        Compiled::OneTime { .. } => None,
        // A fire at the very end of a pause runs: the pause is over then.
        _ if pause.is_some() => compiled.first_fire(crate::model::sub(from, Duration::from_micros(1))),
        _ => compiled.first_fire(from),
    }
}
