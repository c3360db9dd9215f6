//! Time for axd's decisions, injectable for tests.
//!
//! axd never decides "is it due?" with its own wall clock: [`DbClock`] follows the database's clock
//! (sampled now and then, advanced in between with the monotonic clock), so axd processes with skewed
//! clocks agree on what time it is. Tests use [`ManualClock`] and move time by hand.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use crate::model::{Ts, add, sub};

/// The largest rate difference assumed between this host's monotonic clock and the database's
/// clock, in parts per million (real clocks stay within tens).
pub const DRIFT_PPM: u32 = 200;

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

    /// Records a fresh database time sample, read by the database at or before `observed_at`
    /// (and, as far as is known, at `observed_at` itself).
    pub fn observe(&self, db_now: Ts, observed_at: Instant) {
        self.observe_within(db_now, observed_at, Duration::ZERO);
    }

    /// Records a sample that the database read at most `round_trip` before `observed_at`: the true
    /// database time at `observed_at` lies in `[db_now, db_now + round_trip]`.
    ///
    /// The estimate keeps the later of this sample and the previous estimate carried forward (less
    /// [`DRIFT_PPM`] of the time since), because both are lower bounds: a sample delayed by a
    /// stalled database or a busy pool would otherwise drag the estimate behind by the delay, and
    /// leases written in that window would end early by as much. A sample that contradicts the
    /// estimate even at the far end of its round trip means the database clock was set back; it is
    /// taken as it is, so the estimate never runs ahead of the database.
    pub fn observe_within(&self, db_now: Ts, observed_at: Instant, round_trip: Duration) {
        let mut s = self.sample.lock().unwrap_or_else(|p| p.into_inner());
        let (old_db, old_at) = *s;
        let at = observed_at.max(old_at);
        let fresh = add(db_now, at.duration_since(observed_at));
        let carried_for = at.duration_since(old_at);
        let carried = sub(add(old_db, carried_for), carried_for * DRIFT_PPM / 1_000_000);
        *s = if fresh >= carried || add(fresh, round_trip) < carried { (fresh, at) } else { (carried, at) };
    }

    /// A clock started from a sample known to within `max_round_trip`: reads the database time
    /// with `read` until one answer comes back within that round trip, or `deadline` passes
    /// (failed reads are tried again until then).
    /// Returns the clock and the round trip of the sample it started from (the most the estimate
    /// can lag the database, which only shrinks afterwards).
    ///
    /// Why: the first sample decides how far this axd's clock may lag the database until a
    /// faster one arrives, and workers keep the earliest reading they were given (worker.proto,
    /// "The database clock") for a minute. A sample the database gave just before a freeze, read
    /// seconds later, would make Welcomes and the accept-by times of Assigns seconds behind the
    /// database, while another axd's sweeper expires the same leases on time: more than the fence
    /// margin of lag, and an attempt could start after it was given to another worker.
    pub async fn from_tight_sample<E, F, Fut>(
        mut read: F,
        max_round_trip: Duration,
        deadline: Instant,
    ) -> Result<(DbClock, Duration), E>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Ts, E>>,
    {
        loop {
            let sent = Instant::now();
            let now = match read().await {
                Ok(now) => now,
                // The database may be restarting or frozen: keep trying until the deadline.
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let arrived = Instant::now();
            let round_trip = arrived - sent;
            if round_trip <= max_round_trip || arrived >= deadline {
                return Ok((DbClock { sample: Arc::new(Mutex::new((now, arrived))) }, round_trip));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Reads the database time with `read` and records it as of the moment the answer arrived.
    ///
    /// The database read its clock somewhere inside the round trip, and where is unknown: a wait
    /// for a pooled connection counts toward the round trip too. Dating the sample at the arrival
    /// makes the estimate lag the database by at most that round trip and never run ahead of it,
    /// so nothing is ever judged due early. (Dating it mid-way ran ahead by half of a slow round
    /// trip, and a run started 8 ms before its fire time under load.)
    pub async fn refresh<E>(&self, read: impl Future<Output = Result<Ts, E>>) -> Result<Ts, E> {
        let sent = Instant::now();
        let now = read.await?;
        let arrived = Instant::now();
        self.observe_within(now, arrived, arrived - sent);
        Ok(now)
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

    #[tokio::test]
    async fn db_clock_never_runs_ahead_of_the_database_after_a_slow_read() {
        let clock = DbClock::new(chrono::Utc::now());
        // The database reads its clock at the very start of a slow round trip.
        let slow_read = async {
            let read_at = chrono::Utc::now();
            tokio::time::sleep(Duration::from_millis(60)).await;
            Ok::<_, ()>(read_at)
        };
        clock.refresh(slow_read).await.expect("read");
        let (estimate, truth) = (clock.now(), chrono::Utc::now());
        assert!(estimate <= truth, "estimate {estimate} is ahead of the real time {truth}");
    }

    #[tokio::test]
    async fn the_first_sample_is_one_known_to_within_the_round_trip_asked_for() {
        // The first two answers are slow, and stale by as much as they were slow (the database read
        // its clock, then froze): a clock started from them would lag by 300 ms.
        let mut delays = vec![Duration::ZERO, Duration::from_millis(300), Duration::from_millis(300)];
        let read = || {
            let delay = delays.pop().expect("no more reads expected");
            async move {
                let read_at = chrono::Utc::now();
                tokio::time::sleep(delay).await;
                Ok::<_, ()>(read_at)
            }
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let (clock, round_trip) =
            DbClock::from_tight_sample(read, Duration::from_millis(100), deadline).await.expect("read");
        assert!(round_trip <= Duration::from_millis(100), "{round_trip:?}");
        let lag = chrono::Utc::now() - clock.now();
        assert!(lag < chrono::TimeDelta::milliseconds(100), "the clock lags the database by {lag}");
    }

    #[test]
    fn a_delayed_sample_does_not_drag_the_estimate_back() {
        let t = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).single().expect("valid");
        let start = Instant::now();
        let clock = DbClock::new(t);
        clock.observe_within(t, start, Duration::ZERO);
        // Ten seconds later an answer arrives that the database gave six seconds earlier, after a
        // round trip of seven: it says less than the estimate, but not impossibly less.
        let later = start + Duration::from_secs(10);
        clock.observe_within(add(t, Duration::from_secs(4)), later, Duration::from_secs(7));
        let (db, at) = *clock.sample.lock().expect("lock");
        assert_eq!(at, later);
        let ten = add(t, Duration::from_secs(10));
        assert!(db <= ten && db >= sub(ten, Duration::from_millis(3)), "kept the carried estimate: {db}");
    }

    #[test]
    fn a_clock_set_back_is_followed_so_the_estimate_never_runs_ahead() {
        let t = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).single().expect("valid");
        let start = Instant::now();
        let clock = DbClock::new(t);
        clock.observe_within(t, start, Duration::ZERO);
        // A quick answer one second later says the database is 30 s behind: its clock was set back.
        let later = start + Duration::from_secs(1);
        let back = sub(t, Duration::from_secs(29));
        clock.observe_within(back, later, Duration::from_millis(2));
        assert_eq!(*clock.sample.lock().expect("lock"), (back, later));
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
