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

/// How long a sample stays the one estimates count from, even when later ones are looser: it is
/// carried forward on the monotonic clock, whose rate may drift from the database's.
const SAMPLE_REFRESH: Duration = Duration::from_secs(60);

/// The database clock as seen from here, estimated so that it is never behind: an assignment read
/// late must look late, and a lease must end early rather than late.
///
/// axd reads its clock (`Welcome.server_time`, `SchedulerHeartbeat.server_time`) after the message
/// it answers has arrived: Hello for Welcome, heartbeat `renewed_seq` (or, when 0, Hello) for a
/// SchedulerHeartbeat. So `server_time` plus the monotonic time since this process *sent* that
/// message is at least the database time (less axd's own lag behind it, which the fence margin
/// covers), however long the answer then waited to be read — in a buffer, or in a process that was
/// paused. The estimate is the smallest of these bounds, and a sample older than
/// [`SAMPLE_REFRESH`] gives way to the next one.
///
/// Counting from when the answer was *received* would be a lower bound instead: a Welcome read nine
/// seconds late (the process was stopped right after sending Hello) then makes the clock nine
/// seconds slow, and an assignment axd has already taken back looks fresh.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ServerClock {
    sample: Option<Sample>,
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    /// axd's reading of the database clock.
    server: DateTime<Utc>,
    /// A local instant before axd took the reading (when the message it answers was sent).
    from: Instant,
    /// When the reading was received.
    received: Instant,
}

/// `b - a` on the monotonic clock, signed.
fn signed(a: Instant, b: Instant) -> chrono::TimeDelta {
    let d = |x: Duration| chrono::TimeDelta::from_std(x).unwrap_or(chrono::TimeDelta::MAX);
    if b >= a { d(b - a) } else { -d(a - b) }
}

impl ServerClock {
    /// Records `server_time`, read by axd after this process's instant `sent` (when it sent the
    /// message axd answers), and received at `received`.
    pub(crate) fn observe(&mut self, server_time: DateTime<Utc>, sent: Instant, received: Instant) {
        let replace = match self.sample {
            None => true,
            Some(s) => {
                received.saturating_duration_since(s.received) >= SAMPLE_REFRESH
                    || server_time < s.server + signed(s.from, sent)
            }
        };
        if replace {
            self.sample = Some(Sample { server: server_time, from: sent, received });
        }
    }

    /// The estimated database time at `t` (never behind it, but for axd's own lag).
    pub(crate) fn at(&self, t: Instant) -> Option<DateTime<Utc>> {
        let s = self.sample?;
        Some(s.server + signed(s.from, t))
    }

    /// The local instant at which the database time will be `ts`, at the latest (in the past if it
    /// already is).
    pub(crate) fn instant_of(&self, ts: DateTime<Utc>) -> Option<Instant> {
        let s = self.sample?;
        Some(match (ts - s.server).to_std() {
            Ok(ahead) => s.from + ahead,
            Err(_) => s.from.checked_sub((s.server - ts).to_std().unwrap_or(Duration::ZERO)).unwrap_or_else(base),
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
    fn the_server_clock_counts_from_the_send_and_keeps_the_smallest_estimate() {
        let sent = Instant::now();
        let secs = chrono::TimeDelta::seconds;
        let mut c = ServerClock::default();
        // A Welcome read 9 s after its Hello went out (the process was paused): the database time
        // is taken to be at least 9 s past the reading, not just past it.
        c.observe(t0(), sent, sent + Duration::from_secs(9));
        assert_eq!(c.at(sent + Duration::from_secs(9)), Some(t0() + secs(9)));
        // A reading that answers a later message and came back quickly is tighter: it wins.
        let hb = sent + Duration::from_secs(10);
        c.observe(t0() + secs(2), hb, hb + Duration::from_millis(5));
        assert_eq!(c.at(hb), Some(t0() + secs(2)));
        // A looser one (it answers an older message) is ignored...
        c.observe(t0() + secs(3), sent + Duration::from_secs(1), hb + Duration::from_secs(1));
        assert_eq!(c.at(hb), Some(t0() + secs(2)));
        // ... until the sample has been carried forward for a minute.
        let later = hb + SAMPLE_REFRESH + Duration::from_secs(1);
        c.observe(t0() + secs(64), later - Duration::from_secs(1), later);
        assert_eq!(c.at(later), Some(t0() + secs(65)));
        // Instants before the sample's own are estimated too (a lease that began earlier).
        assert_eq!(c.at(later - Duration::from_secs(4)), Some(t0() + secs(61)));
        let when = c.instant_of(t0() + secs(70)).expect("instant");
        assert_eq!(when, later + Duration::from_secs(5));
        assert_eq!(c.instant_of(t0() + secs(60)), Some(later - Duration::from_secs(5)));
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
