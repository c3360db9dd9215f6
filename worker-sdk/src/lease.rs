//! How long an attempt is this worker's own, and the database clock as far as the worker can tell.
//!
//! axd renews the leases of the attempts a worker accepted and says which of the worker's
//! heartbeats each renewal answers; the lease then lasts `Welcome.lease_ttl` from when that
//! heartbeat was *sent*, on this process's monotonic clock (see proto/ax/v1/worker.proto, "Leases
//! and self-fencing"). Before a renewal covers an attempt, it is ours only until its
//! `Assign.accept_by`, a database time read through [`ServerClock`]. A [`LeaseCell`] is shared
//! with the handler's [`crate::Context`], so a handler can tell synchronously that it has been
//! fenced, even before the driver task has run (a process resumed after SIGSTOP).

use std::{
    sync::{
        Arc, OnceLock,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use chrono::{DateTime, Utc};
use tokio::time::Instant;

/// The process's reference instant: lease deadlines are stored as nanoseconds after it.
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

fn to_nanos(t: Instant) -> u64 {
    u64::try_from(t.saturating_duration_since(base()).as_nanos()).unwrap_or(u64::MAX)
}

fn from_nanos(n: u64) -> Instant {
    base() + Duration::from_nanos(n)
}

/// The lease of one attempt, shared between the driver and the handler's context.
#[derive(Debug)]
pub(crate) struct LeaseCell {
    /// When the lease may end, at the earliest (monotonic).
    end: AtomicU64,
    /// How long before the end the handler is told to stop.
    margin: AtomicU64,
    /// The driver stopped the handler because its lease ran out.
    fenced: AtomicBool,
}

impl LeaseCell {
    /// A lease that ends at `end`, fenced `margin` before.
    pub(crate) fn new(end: Instant, margin: Duration) -> Arc<Self> {
        Arc::new(LeaseCell {
            end: AtomicU64::new(to_nanos(end)),
            margin: AtomicU64::new(u64::try_from(margin.as_nanos()).unwrap_or(u64::MAX)),
            fenced: AtomicBool::new(false),
        })
    }

    /// A lease that never ends (no lease information from axd).
    pub(crate) fn unbounded() -> Arc<Self> {
        Arc::new(LeaseCell { end: AtomicU64::new(u64::MAX), margin: AtomicU64::new(0), fenced: AtomicBool::new(false) })
    }

    /// Moves the end later (renewals never shorten a lease).
    pub(crate) fn extend_to(&self, end: Instant) {
        self.end.fetch_max(to_nanos(end), Ordering::AcqRel);
    }

    /// Sets the margin (from the latest Welcome).
    pub(crate) fn set_margin(&self, margin: Duration) {
        self.margin.store(u64::try_from(margin.as_nanos()).unwrap_or(u64::MAX), Ordering::Release);
    }

    /// When the handler must be told to stop: the end less the margin.
    pub(crate) fn fence_at(&self) -> Option<Instant> {
        let end = self.end.load(Ordering::Acquire);
        (end != u64::MAX).then(|| from_nanos(end.saturating_sub(self.margin.load(Ordering::Acquire))))
    }

    /// When the handler is stopped by force if it has not returned: half the margin before the end.
    pub(crate) fn abort_at(&self) -> Option<Instant> {
        let end = self.end.load(Ordering::Acquire);
        (end != u64::MAX).then(|| from_nanos(end.saturating_sub(self.margin.load(Ordering::Acquire) / 2)))
    }

    /// True once the fence time has passed (checked against the clock, not against whether the
    /// driver has acted yet).
    pub(crate) fn expired(&self) -> bool {
        self.fence_at().is_some_and(|t| Instant::now() >= t)
    }

    pub(crate) fn mark_fenced(&self) {
        self.fenced.store(true, Ordering::Release);
    }

    pub(crate) fn was_fenced(&self) -> bool {
        self.fenced.load(Ordering::Acquire)
    }
}

/// The database clock as seen from here: the largest of the estimates that Welcome and
/// SchedulerHeartbeat samples give (each is a lower bound: axd's estimate never runs ahead of the
/// database, and the message took some time to arrive), carried forward on the monotonic clock.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ServerClock {
    sample: Option<(DateTime<Utc>, Instant)>,
}

impl ServerClock {
    /// Records `server_time` received at `at`.
    pub(crate) fn observe(&mut self, server_time: DateTime<Utc>, at: Instant) {
        let better = match self.sample {
            None => true,
            Some(_) => self.at(at).is_none_or(|current| server_time > current),
        };
        if better {
            self.sample = Some((server_time, at));
        }
    }

    /// The estimated database time at `t`.
    pub(crate) fn at(&self, t: Instant) -> Option<DateTime<Utc>> {
        let (s, at) = self.sample?;
        let d = chrono::TimeDelta::from_std(t.saturating_duration_since(at)).ok()?;
        Some(s + d)
    }

    /// The local instant at which the database time will be `ts` (in the past if it already is).
    pub(crate) fn instant_of(&self, ts: DateTime<Utc>) -> Option<Instant> {
        let (s, at) = self.sample?;
        Some(match (ts - s).to_std() {
            Ok(ahead) => at + ahead,
            Err(_) => at.checked_sub((s - ts).to_std().unwrap_or(Duration::ZERO)).unwrap_or_else(base),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).expect("valid")
    }

    #[test]
    fn the_server_clock_keeps_the_largest_estimate() {
        let now = Instant::now();
        let mut c = ServerClock::default();
        c.observe(t0(), now);
        // A sample that was delayed on its way says less than the carried estimate: ignored.
        c.observe(t0(), now + Duration::from_secs(5));
        let est = c.at(now + Duration::from_secs(5)).expect("estimate");
        assert_eq!(est, t0() + chrono::TimeDelta::seconds(5));
        // A later one wins.
        c.observe(t0() + chrono::TimeDelta::seconds(7), now + Duration::from_secs(5));
        assert_eq!(c.at(now + Duration::from_secs(5)), Some(t0() + chrono::TimeDelta::seconds(7)));
        let when = c.instant_of(t0() + chrono::TimeDelta::seconds(10)).expect("instant");
        assert_eq!(when, now + Duration::from_secs(8));
    }

    #[test]
    fn a_lease_only_grows_and_fences_before_its_end() {
        let now = Instant::now();
        let l = LeaseCell::new(now + Duration::from_secs(10), Duration::from_secs(4));
        assert_eq!(l.fence_at(), Some(now + Duration::from_secs(6)));
        assert_eq!(l.abort_at(), Some(now + Duration::from_secs(8)));
        l.extend_to(now + Duration::from_secs(5));
        assert_eq!(l.fence_at(), Some(now + Duration::from_secs(6)), "a renewal never shortens a lease");
        l.extend_to(now + Duration::from_secs(20));
        assert_eq!(l.fence_at(), Some(now + Duration::from_secs(16)));
        assert!(!l.expired());
        let past = LeaseCell::new(now, Duration::from_millis(1));
        assert!(past.expired());
        assert!(!LeaseCell::unbounded().expired());
    }
}
