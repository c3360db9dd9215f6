//! Half-dead detection: the process being alive is not enough.
//!
//! Every loop (trigger, dispatch, sweeper, scheduler heartbeat) records when it last completed a
//! round successfully. When one has not for `stall_after` — a query stuck on an exhausted pool, a
//! lock wait, an unreachable database — `grpc.health.v1` reports NOT_SERVING (so load balancers and
//! operators see it) and the worker streams on this axd are drained so their workers move to a
//! healthy axd. When every loop makes progress again, it reports SERVING. The alert loop is
//! watched too, but only reported: its stall makes alerts late, not runs, so it drains nothing.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use tokio_util::sync::CancellationToken;
use tonic_health::{ServingStatus, server::HealthReporter};

/// The loops whose progress is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loop {
    /// Turns schedules into instances.
    Trigger,
    /// Hands instances to workers.
    Dispatch,
    /// Applies deadlines and leases.
    Sweeper,
    /// Refreshes this axd's row and the database clock (the plain "is the database reachable").
    Heartbeat,
    /// Sends webhook deliveries and evaluates condition rules (reported, never NOT_SERVING).
    Alerts,
}

impl Loop {
    /// Every loop, in the order they are reported.
    pub const ALL: [Loop; 5] = [Loop::Trigger, Loop::Dispatch, Loop::Sweeper, Loop::Heartbeat, Loop::Alerts];

    /// Whether a stall of this loop makes axd NOT_SERVING (and drain its worker streams): every
    /// loop but the alert loop, whose stall delays alerts, not runs.
    pub fn serves(self) -> bool {
        !matches!(self, Loop::Alerts)
    }

    fn index(self) -> usize {
        match self {
            Loop::Trigger => 0,
            Loop::Dispatch => 1,
            Loop::Sweeper => 2,
            Loop::Heartbeat => 3,
            Loop::Alerts => 4,
        }
    }

    /// One word for the API (`SchedulerHealth.loops[].name`).
    pub fn key(self) -> &'static str {
        match self {
            Loop::Trigger => "trigger",
            Loop::Dispatch => "dispatch",
            Loop::Sweeper => "sweeper",
            Loop::Heartbeat => "heartbeat",
            Loop::Alerts => "alerts",
        }
    }

    /// Name for logs.
    pub fn name(self) -> &'static str {
        match self {
            Loop::Trigger => "trigger",
            Loop::Dispatch => "dispatch",
            Loop::Sweeper => "sweeper",
            Loop::Heartbeat => "scheduler heartbeat",
            Loop::Alerts => "alert",
        }
    }
}

/// When each loop last completed a round, and whether axd reports itself serving.
#[derive(Debug)]
pub struct Progress {
    start: Instant,
    last_ms: [AtomicU64; 5],
    serving: AtomicBool,
}

impl Default for Progress {
    fn default() -> Self {
        Progress { start: Instant::now(), last_ms: Default::default(), serving: AtomicBool::new(true) }
    }
}

impl Progress {
    /// Records a successful round of `l`.
    pub fn tick(&self, l: Loop) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms[l.index()].store(ms, Ordering::Relaxed);
    }

    /// Every loop with the time since its last completed round (since start, if none yet).
    pub fn since_last_rounds(&self) -> Vec<(Loop, Duration)> {
        let now = self.start.elapsed();
        Loop::ALL
            .iter()
            .map(|l| (*l, now.saturating_sub(Duration::from_millis(self.last_ms[l.index()].load(Ordering::Relaxed)))))
            .collect()
    }

    /// Loops that have not completed a round for longer than `after`, with how long.
    pub fn stalled(&self, after: Duration) -> Vec<(Loop, Duration)> {
        self.since_last_rounds().into_iter().filter(|(_, since)| *since > after).collect()
    }

    /// The stalled loops that make axd NOT_SERVING ([`Loop::serves`]).
    pub fn unhealthy(&self, after: Duration) -> Vec<(Loop, Duration)> {
        self.stalled(after).into_iter().filter(|(l, _)| l.serves()).collect()
    }

    /// What axd last reported.
    pub fn serving(&self) -> bool {
        self.serving.load(Ordering::Relaxed)
    }
}

/// Watches progress every 250 ms and reports it through `reporter`; calls `drain` once each time
/// axd turns unhealthy.
pub async fn monitor(
    progress: Arc<Progress>,
    reporter: HealthReporter,
    services: Vec<&'static str>,
    stall_after: Duration,
    drain: impl Fn() + Send,
    cancel: CancellationToken,
) {
    let mut alerts_stalled = false;
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
        let late = progress.stalled(stall_after).into_iter().find(|(l, _)| !l.serves());
        if late.is_some() != alerts_stalled {
            alerts_stalled = late.is_some();
            match late {
                Some((l, d)) => tracing::error!(
                    "the {} loop has made no round for {}s: alerts are late (axd keeps serving)",
                    l.name(),
                    d.as_secs()
                ),
                None => tracing::info!("the alert loop is making progress again"),
            }
        }
        let stalled = progress.unhealthy(stall_after);
        let healthy = stalled.is_empty();
        if healthy == progress.serving() {
            continue;
        }
        progress.serving.store(healthy, Ordering::Relaxed);
        let status = if healthy { ServingStatus::Serving } else { ServingStatus::NotServing };
        for s in &services {
            reporter.set_service_status(*s, status).await;
        }
        if healthy {
            tracing::info!("every loop is making progress again: SERVING");
        } else {
            let what: Vec<String> = stalled.iter().map(|(l, d)| format!("{} for {}s", l.name(), d.as_secs())).collect();
            tracing::error!(stalled = %what.join(", "), "loops stopped making progress: NOT_SERVING; draining worker streams");
            drain();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_without_a_recent_round_is_stalled() {
        let p = Progress::default();
        for l in Loop::ALL {
            p.tick(l);
        }
        assert!(p.stalled(Duration::from_secs(60)).is_empty());
        assert_eq!(p.stalled(Duration::ZERO).len(), 5, "every tick is older than zero");
    }

    #[test]
    fn a_stalled_alert_loop_is_reported_but_keeps_axd_serving() {
        let p = Progress::default();
        let unhealthy: Vec<Loop> = p.unhealthy(Duration::ZERO).into_iter().map(|(l, _)| l).collect();
        assert_eq!(unhealthy, [Loop::Trigger, Loop::Dispatch, Loop::Sweeper, Loop::Heartbeat]);
        assert!(p.stalled(Duration::ZERO).iter().any(|(l, _)| *l == Loop::Alerts), "reported as stalled");
    }
}
