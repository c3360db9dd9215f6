//! Which of a schedule's fire times a task keeps, and how late each one runs: the active window
//! (`--start-at` / `--end-at`), excluded dates (`--exclude`, and a named `--calendar`) on the
//! schedule's wall clock, and jitter (`--jitter`).
//!
//! Pure, like `schedule.rs`: every instant is an argument. The jitter offset of a fire is a hash of
//! the task name and the fire time, so every axd (and `schedule preview`) computes the same one.

use std::{collections::BTreeSet, time::Duration};

use chrono::{NaiveDate, TimeZone};
use chrono_tz::Tz;

use crate::model::{Timing, Ts, add};

/// Most consecutive skips (an excluded day, the window's start) one lookup makes before it gives
/// up: more than [`crate::model::MAX_DATES`], so a run of excluded dates is always crossed.
const MAX_SKIPS: usize = 2 * crate::model::MAX_DATES + 8;

/// The fire times a task keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// No fire before.
    pub start: Option<Ts>,
    /// No fire after.
    pub end: Option<Ts>,
    /// Dates without fires (the task's own and its calendar's).
    pub excluded: BTreeSet<NaiveDate>,
    /// The wall clock the dates are read on.
    pub tz: Tz,
}

/// What the window says about one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It fires.
    Keep,
    /// Before the window opens (at the instant given).
    BeforeStart(Ts),
    /// After the window closed (at the instant given).
    AfterEnd(Ts),
    /// On an excluded date.
    Excluded(NaiveDate),
}

impl Window {
    /// The window of a task's timing, with its calendar's dates (`calendar`), on `tz`.
    pub fn new(timing: &Timing, calendar: &BTreeSet<NaiveDate>, tz: Tz) -> Window {
        let mut excluded = timing.exclude_dates.clone();
        excluded.extend(calendar.iter().copied());
        Window { start: timing.start, end: timing.end, excluded, tz }
    }

    /// Whether it keeps every instant.
    pub fn is_open(&self) -> bool {
        self.start.is_none() && self.end.is_none() && self.excluded.is_empty()
    }

    /// The date of `t` on the window's wall clock.
    pub fn date_of(&self, t: Ts) -> NaiveDate {
        t.with_timezone(&self.tz).date_naive()
    }

    /// What the window says about `t`.
    pub fn verdict(&self, t: Ts) -> Verdict {
        if let Some(s) = self.start.filter(|s| t < *s) {
            return Verdict::BeforeStart(s);
        }
        if let Some(e) = self.end.filter(|e| t > *e) {
            return Verdict::AfterEnd(e);
        }
        if !self.excluded.is_empty() {
            let d = self.date_of(t);
            if self.excluded.contains(&d) {
                return Verdict::Excluded(d);
            }
        }
        Verdict::Keep
    }

    /// The first instant at or after `t` that the window keeps; `None` once it has closed.
    pub fn reopens(&self, t: Ts) -> Option<Ts> {
        let mut at = t;
        for _ in 0..MAX_SKIPS {
            match self.verdict(at) {
                Verdict::Keep => return Some(at),
                Verdict::AfterEnd(_) => return None,
                Verdict::BeforeStart(s) => at = s,
                Verdict::Excluded(d) => at = self.day_start(d.succ_opt()?)?,
            }
        }
        None
    }

    /// The first instant of local date `d` (midnight, or the end of a DST gap that swallowed it).
    pub fn day_start(&self, d: NaiveDate) -> Option<Ts> {
        (0..4).find_map(|h| {
            let local = d.and_hms_opt(h, 0, 0)?;
            self.tz.from_local_datetime(&local).earliest().map(|t| t.with_timezone(&chrono::Utc))
        })
    }

    /// How a preview describes it.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        match (self.start, self.end) {
            (Some(s), Some(e)) => parts.push(format!("active from {} to {}", s.to_rfc3339(), e.to_rfc3339())),
            (Some(s), None) => parts.push(format!("active from {}", s.to_rfc3339())),
            (None, Some(e)) => parts.push(format!("active until {}", e.to_rfc3339())),
            (None, None) => {}
        }
        if !self.excluded.is_empty() {
            parts.push(format!("{} excluded date(s) in {}", self.excluded.len(), self.tz.name()));
        }
        parts.join("; ")
    }
}

/// How much later than its fire time `fire_at` a fire of task `task` runs with `jitter`: an offset
/// in `[0, jitter)`, whole milliseconds, derived from the task name and the fire time only.
pub fn jitter_offset(task: &str, fire_at: Ts, jitter: Duration) -> Duration {
    let span_ms = u64::try_from(jitter.as_millis()).unwrap_or(u64::MAX);
    if span_ms == 0 {
        return Duration::ZERO;
    }
    // FNV-1a over the name and the fire time, then a SplitMix64 finish: stable across builds and
    // platforms (std's hashers are not), and spread over the whole range for nearby fire times.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let micros = fire_at.timestamp_micros();
    for b in task.as_bytes().iter().chain(&[0xff]).chain(&micros.to_le_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    Duration::from_millis(h % span_ms)
}

/// When a fire at `fire_at` of `task` runs: the fire time plus its jitter offset.
pub fn run_time(task: &str, fire_at: Ts, jitter: Option<Duration>) -> Ts {
    match jitter {
        Some(j) => add(fire_at, jitter_offset(task, fire_at, j)),
        None => fire_at,
    }
}

/// Parses a date written `YYYY-MM-DD`.
pub fn parse_date(s: &str) -> Option<NaiveDate> {
    if s.len() != 10 {
        return None;
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn ts(s: &str) -> Ts {
        chrono::DateTime::parse_from_rfc3339(s).expect("rfc3339").with_timezone(&Utc)
    }

    fn date(s: &str) -> NaiveDate {
        parse_date(s).expect("date")
    }

    #[test]
    fn a_window_keeps_its_span_and_skips_excluded_dates_on_the_local_clock() {
        let w = Window {
            start: Some(ts("2026-12-01T00:00:00Z")),
            end: Some(ts("2026-12-31T23:59:59Z")),
            excluded: [date("2026-12-25")].into(),
            tz: chrono_tz::Asia::Tokyo,
        };
        assert_eq!(w.verdict(ts("2026-11-30T23:00:00Z")), Verdict::BeforeStart(ts("2026-12-01T00:00:00Z")));
        assert_eq!(w.verdict(ts("2027-01-01T00:00:00Z")), Verdict::AfterEnd(ts("2026-12-31T23:59:59Z")));
        // 2026-12-24T15:00Z is already the 25th in Tokyo.
        assert_eq!(w.verdict(ts("2026-12-24T15:00:00Z")), Verdict::Excluded(date("2026-12-25")));
        assert_eq!(w.verdict(ts("2026-12-24T14:59:59Z")), Verdict::Keep);
        assert_eq!(w.reopens(ts("2026-12-24T16:00:00Z")), Some(ts("2026-12-25T15:00:00Z")), "Tokyo midnight");
        assert_eq!(w.reopens(ts("2026-11-01T00:00:00Z")), Some(ts("2026-12-01T00:00:00Z")));
        assert_eq!(w.reopens(ts("2027-01-02T00:00:00Z")), None);
    }

    #[test]
    fn runs_of_excluded_dates_are_crossed_at_once() {
        let excluded: BTreeSet<NaiveDate> = (0..MAX_SKIPS as i64 / 2)
            .map(|n| date("2026-01-01") + chrono::Days::new(u64::try_from(n).expect("n")))
            .collect();
        let last = *excluded.iter().next_back().expect("dates");
        let w = Window { start: None, end: None, excluded, tz: chrono_tz::UTC };
        let reopened = w.reopens(ts("2026-01-01T12:00:00Z")).expect("reopens");
        assert_eq!(w.date_of(reopened), last.succ_opt().expect("next"));
    }

    #[test]
    fn a_day_that_starts_in_a_dst_gap_starts_when_the_gap_ends() {
        // Santiago skipped 2022-09-11T00:00 (clocks went from 00:00 to 01:00).
        let w = Window { start: None, end: None, excluded: BTreeSet::new(), tz: chrono_tz::America::Santiago };
        assert_eq!(w.day_start(date("2022-09-11")), Some(ts("2022-09-11T04:00:00Z")));
    }

    #[test]
    fn jitter_is_stable_bounded_and_spread() {
        let j = Duration::from_secs(60);
        let t = ts("2026-06-01T10:00:00Z");
        assert_eq!(jitter_offset("report", t, j), jitter_offset("report", t, j), "the same on every call");
        assert_eq!(jitter_offset("report", t, j), Duration::from_millis(jitter_offset_ms_reference()));
        let offsets: BTreeSet<u64> = (0..200)
            .map(|m| jitter_offset("report", add(t, Duration::from_secs(60 * m)), j).as_millis() as u64)
            .collect();
        assert!(offsets.iter().all(|ms| *ms < 60_000));
        assert!(offsets.len() > 190, "{} distinct offsets of 200", offsets.len());
        assert!(offsets.iter().any(|ms| *ms < 15_000) && offsets.iter().any(|ms| *ms >= 45_000));
        assert_ne!(jitter_offset("report", t, j), jitter_offset("other", t, j));
        assert_eq!(run_time("report", t, None), t);
    }

    /// The offset of `report` at 2026-06-01T10:00:00Z with 60 s of jitter, pinned so that a change of
    /// the hash (which would move every task's fires on an upgrade) fails here.
    fn jitter_offset_ms_reference() -> u64 {
        43_108
    }
}
