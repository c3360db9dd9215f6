//! Time for axd's decisions, injectable for tests.
//!
//! axd never decides "is it due?" with its own wall clock: [`DbClock`] follows the database's clock
//! (sampled now and then, advanced in between with the monotonic clock), so axd processes with skewed
//! clocks agree on what time it is. Tests use [`ManualClock`] and move time by hand.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use crate::model::{Ts, add};

/// A source of "now" for scheduling decisions.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> Ts;
}

/// The database's clock: the last sampled database time plus monotonic time elapsed since.
///
/// [`DbClock::observe`] records a sample; the scheduler's heartbeat refreshes it every few seconds.
/// Between samples the estimate drifts only by the monotonic clock's rate error (ppm), and it never
/// reads the local wall clock, so a wrong system time on the axd host does not matter.
#[derive(Debug, Clone)]
pub struct DbClock {
    sample: Arc<Mutex<(Ts, Instant)>>,
}

impl DbClock {
    /// A clock that starts from `db_now`, observed at the moment of the call.
    pub fn new(db_now: Ts) -> Self {
        DbClock { sample: Arc::new(Mutex::new((db_now, Instant::now()))) }
    }

    /// Records a fresh database time sample, taken at `observed_at` (take it just after the query
    /// returns; half the round trip is within the error the scheduler tolerates).
    pub fn observe(&self, db_now: Ts, observed_at: Instant) {
        let mut s = self.sample.lock().unwrap_or_else(|p| p.into_inner());
        *s = (db_now, observed_at);
    }
}

impl Clock for DbClock {
    fn now(&self) -> Ts {
        let (db, at) = *self.sample.lock().unwrap_or_else(|p| p.into_inner());
        add(db, at.elapsed())
    }
}

/// A clock that only moves when told to.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<Ts>>,
}

impl ManualClock {
    /// A clock showing `now`.
    pub fn new(now: Ts) -> Self {
        ManualClock { now: Arc::new(Mutex::new(now)) }
    }

    /// Sets the time.
    pub fn set(&self, now: Ts) {
        *self.now.lock().unwrap_or_else(|p| p.into_inner()) = now;
    }

    /// Moves the time forward.
    pub fn advance(&self, d: Duration) {
        let mut n = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *n = add(*n, d);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Ts {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn db_clock_advances_from_its_sample_not_from_the_wall_clock() {
        let db_time = chrono::Utc.with_ymd_and_hms(2001, 1, 1, 0, 0, 0).single().expect("valid");
        let clock = DbClock::new(db_time);
        let now = clock.now();
        assert!(now >= db_time && now < add(db_time, Duration::from_secs(5)), "{now}");
        let later = chrono::Utc.with_ymd_and_hms(2001, 1, 1, 1, 0, 0).single().expect("valid");
        clock.observe(later, Instant::now());
        assert!(clock.now() >= later);
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let t = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).single().expect("valid");
        let c = ManualClock::new(t);
        assert_eq!(c.now(), t);
        c.advance(Duration::from_secs(90));
        assert_eq!(c.now(), add(t, Duration::from_secs(90)));
    }
}
