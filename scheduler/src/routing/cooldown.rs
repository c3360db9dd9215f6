//! Worker cooldowns: consecutive failures of one worker for one handler, and the pause in new
//! assignments they cause.
//!
//! The streak lives in the database (`ax_worker_streak`), written in the transaction that records
//! an attempt's end by whichever axd records it: a worker's stream is held by one axd, but its
//! attempts may be timed out or declared lost by any axd's sweeper, and its results arrive at
//! whichever axd it is connected to after a reconnect. This module decides the next streak; the
//! store reads and writes it.

use std::time::Duration;

use crate::model::{CooldownPolicy, Ts, WorkerRecord, WorkerStreak, add, sub};

/// axd's defaults for tasks that do not set their own, and the cap of the doubling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CooldownDefaults {
    /// Consecutive failures that start a cooldown (`--cooldown-after`, default 5; 0 = off).
    pub after: u32,
    /// The first cooldown (`--cooldown`, default 30 s; zero = off).
    pub duration: Duration,
    /// The longest cooldown the doubling reaches (`--cooldown-max`, default 10 min).
    pub max: Duration,
    /// The largest share, in percent, of the live workers serving a handler that cool down for it
    /// at once (`--cooldown-max-share`, default 50; see [`released`]).
    pub max_share: u8,
}

impl Default for CooldownDefaults {
    fn default() -> Self {
        CooldownDefaults { after: 5, duration: Duration::from_secs(30), max: Duration::from_secs(600), max_share: 50 }
    }
}

/// The floor under cooldowns (Envoy's `max_ejection_percent`): of `serving` live workers serving a
/// handler of an app, at most `max_share` percent (rounded down) cool down for it at once. When
/// more of them are cooling (`cooling`: worker and when its cooldown began), the failure is the
/// handler's or its downstream's, not the workers', and cooling them only delays the instances'
/// own retries: the longest-cooling are routed to again until the share holds. Returns those.
pub fn released<'a>(cooling: &[(&'a str, Ts)], serving: usize, max_share: u8) -> Vec<&'a str> {
    let allowed = serving.saturating_mul(usize::from(max_share.min(100))) / 100;
    if cooling.len() <= allowed {
        return Vec::new();
    }
    let mut by_age: Vec<(&'a str, Ts)> = cooling.to_vec();
    by_age.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)));
    by_age.into_iter().take(cooling.len() - allowed).map(|(w, _)| w).collect()
}

/// A task's cooldown settings with axd's defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CooldownRule {
    /// Failures that start a cooldown; 0 = never.
    pub after: u32,
    /// First cooldown; zero = never.
    pub first: Duration,
    /// Cap.
    pub max: Duration,
}

impl CooldownRule {
    /// The rule for a task's policy.
    pub fn of(policy: &CooldownPolicy, defaults: &CooldownDefaults) -> CooldownRule {
        CooldownRule {
            after: policy.after.unwrap_or(defaults.after),
            first: policy.duration.unwrap_or(defaults.duration),
            max: defaults.max.max(policy.duration.unwrap_or(Duration::ZERO)),
        }
    }

    fn off(&self) -> bool {
        self.after == 0 || self.first.is_zero()
    }
}

/// Consecutive failures of a worker for a handler, and its cooldown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streak {
    /// Failed or timed-out attempts since the last success.
    pub failures: u32,
    /// No new assignment of the handler to the worker before this.
    pub cooldown_until: Option<Ts>,
    /// Length of the last cooldown of this streak (the next one doubles it).
    pub cooldown: Option<Duration>,
}

impl Streak {
    /// Whether the worker is cooling down at `now`.
    pub fn cooling(&self, now: Ts) -> bool {
        self.cooldown_until.is_some_and(|u| u > now)
    }
}

/// The streak after one more failure at `now`. The first cooldown starts at the `after`-th
/// consecutive failure; a failure while it lasts (an attempt assigned before it began) only counts;
/// a failure after it ended starts the next one at twice the length, up to the cap.
pub fn after_failure(prev: Option<Streak>, rule: CooldownRule, now: Ts) -> Streak {
    let prev = prev.unwrap_or(Streak { failures: 0, cooldown_until: None, cooldown: None });
    let mut next = Streak { failures: prev.failures.saturating_add(1), ..prev };
    if rule.off() || next.failures < rule.after || prev.cooling(now) {
        return next;
    }
    let length = match prev.cooldown {
        Some(last) => (last * 2).min(rule.max),
        None => rule.first.min(rule.max.max(rule.first)),
    };
    next.cooldown = Some(length);
    next.cooldown_until = Some(add(now, length));
    next
}

/// The floor of [`released`] over records, for one handler: the workers of `live` serving it, those
/// of `streaks` cooling down for it at `now` among them, and which of those the floor releases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Floor {
    /// Cooling workers routed to anyway.
    pub released: Vec<String>,
    /// Live workers serving the handler that are cooling down.
    pub cooling: usize,
    /// Live workers serving the handler.
    pub serving: usize,
}

/// [`Floor`] of `handler` from the app's live sessions and its workers' streaks.
pub fn floor_of(streaks: &[WorkerStreak], live: &[WorkerRecord], handler: &str, now: Ts, max_share: u8) -> Floor {
    let mut serving: Vec<&str> =
        live.iter().filter(|w| w.handlers.iter().any(|h| h == handler)).map(|w| w.worker_id.as_str()).collect();
    serving.sort_unstable();
    serving.dedup();
    let cooling: Vec<(&str, Ts)> = streaks
        .iter()
        .filter(|s| s.handler == handler && serving.contains(&s.worker_id.as_str()))
        .filter_map(|s| {
            let until = s.cooldown_until.filter(|u| *u > now)?;
            Some((s.worker_id.as_str(), s.cooldown.map_or(until, |d| sub(until, d))))
        })
        .collect();
    let released = released(&cooling, serving.len(), max_share).into_iter().map(str::to_owned).collect();
    Floor { released, cooling: cooling.len(), serving: serving.len() }
}

/// The trail's words for a cooldown the floor does not apply.
pub fn floor_note(handler: &str, worker: &str, until: Ts, cooling: usize, serving: usize, share: u8) -> String {
    let who = if cooling >= serving {
        format!("every worker failing handler {handler}")
    } else {
        format!("{cooling} of {serving} workers serving handler {handler} failing it")
    };
    format!(
        "{who}: cooldown not applied to {worker} (cooling until {}; at most {share} % of them cool down at once)",
        until.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> Ts {
        chrono::DateTime::from_timestamp(1_800_000_000 + secs, 0).expect("valid")
    }

    const RULE: CooldownRule = CooldownRule { after: 3, first: Duration::from_secs(30), max: Duration::from_secs(100) };

    #[test]
    fn the_kth_consecutive_failure_starts_a_cooldown() {
        let s1 = after_failure(None, RULE, t(0));
        let s2 = after_failure(Some(s1), RULE, t(1));
        assert_eq!((s2.failures, s2.cooldown_until), (2, None), "two failures: not yet");
        let s3 = after_failure(Some(s2), RULE, t(2));
        assert_eq!(s3.cooldown_until, Some(t(32)));
        assert!(s3.cooling(t(31)) && !s3.cooling(t(32)));
    }

    #[test]
    fn failures_during_a_cooldown_count_but_do_not_extend_it_and_later_ones_double_up_to_the_cap() {
        let mut s = None;
        for i in 0..3 {
            s = Some(after_failure(s, RULE, t(i)));
        }
        let during = after_failure(s, RULE, t(10));
        assert_eq!(during.failures, 4);
        assert_eq!(during.cooldown_until, Some(t(32)), "an attempt assigned before the cooldown failed late");
        let next = after_failure(Some(during), RULE, t(40));
        assert_eq!(next.cooldown_until, Some(t(100)), "60 s: doubled");
        let capped = after_failure(Some(next), RULE, t(200));
        assert_eq!(capped.cooldown_until, Some(t(300)), "120 s capped at 100 s");
        let again = after_failure(Some(capped), RULE, t(400));
        assert_eq!(again.cooldown, Some(Duration::from_secs(100)));
    }

    #[test]
    fn at_most_the_share_of_serving_workers_cools_and_the_longest_cooling_are_released_first() {
        // Two of four may cool: with three cooling, the one cooling longest is released.
        let cooling = [("w1", t(20)), ("w2", t(5)), ("w3", t(10))];
        assert_eq!(released(&cooling, 4, 50), vec!["w2"]);
        assert!(released(&cooling[..2], 4, 50).is_empty(), "two of four: within the share");
        // Every worker failing: half of them serve again, the longest-cooling first.
        assert_eq!(released(&cooling, 3, 50), vec!["w2", "w3"]);
        // One worker: 50 % of one is none, so it never cools; 100 % lets every worker cool.
        assert_eq!(released(&[("w1", t(0))], 1, 50), vec!["w1"]);
        assert!(released(&cooling, 3, 100).is_empty());
        assert_eq!(released(&cooling, 3, 0).len(), 3);
    }

    #[test]
    fn zero_turns_it_off_and_defaults_fill_what_a_task_leaves_unset() {
        let off = CooldownRule { after: 0, ..RULE };
        let mut s = None;
        for i in 0..10 {
            s = Some(after_failure(s, off, t(i)));
        }
        assert_eq!(s.map(|s| (s.failures, s.cooldown_until)), Some((10, None)));
        let d = CooldownDefaults::default();
        let r = CooldownRule::of(&CooldownPolicy { after: None, duration: Some(Duration::from_secs(5)) }, &d);
        assert_eq!((r.after, r.first, r.max), (5, Duration::from_secs(5), Duration::from_secs(600)));
        let zero = CooldownRule::of(&CooldownPolicy { after: Some(2), duration: Some(Duration::ZERO) }, &d);
        assert!(zero.off());
    }
}
