//! The dispatch loop: hands PENDING instances to worker streams with free credits.
//!
//! A round claims ready instances (available_at <= now) only for the (app, handler) pairs that
//! streams on this axd can take, at most their free credits, marks them DISPATCHED with a new
//! attempt and an ack lease, commits, and only then sends `Assign` without waiting (bounded
//! channels; a stream that cannot take it is treated as gone and the attempt is re-queued at once).
//! It sleeps until the next `available_at` it knows of, a local signal (instances created, credits
//! granted), or at most the poll interval; it never busy-polls.
//!
//! Streams whose worker holds assignments until their time (`Hello.start_after_supported`) get
//! instances up to `dispatch_ahead` early, with `Assign.start_after` set: the claim, the commit and
//! the trip to the worker happen before the instance is due, and the run starts on time instead of
//! one claim-and-delivery late. Other streams get an instance only once it is due.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use ax_proto::v1 as pb;
use tokio_util::sync::CancellationToken;

use crate::{
    core::Core,
    error::StoreResult,
    lifecycle::WorkerOp,
    model::{Ts, add},
    routing::selector::Selector,
    routing::{
        registry::{AppDemand, Session},
        route::RouteCtx,
    },
    wire::{duration_to_pb, ts_to_pb},
};

mod claim;

pub use claim::{Assignment, Choice, Claimed, Declined, Skips, claim};

/// The dispatcher of one axd.
pub struct Dispatcher {
    core: Arc<Core>,
    memory: Mutex<Memory>,
}

/// How long an instance routing could not place, or a task at its running limit, is left out of
/// claims (unless the streams here change first): long enough not to re-read it every round,
/// short enough that a limit freed on another axd is noticed at once to the eye.
const SKIP_FOR: Duration = Duration::from_millis(250);

/// Most instance ids left out of a claim at once.
const MAX_SKIPPED: usize = 1000;

/// Every this many rounds, a claim reads instances of every selector, including those of selectors
/// no task has any more (an operator's retry of an old instance).
const UNFILTERED_EVERY: u64 = 20;

/// The longest an instance is sent ahead of its time, however slow claims have been.
pub const MAX_AHEAD: Duration = Duration::from_millis(1500);

/// How long a claim's latency is remembered when choosing how far ahead to dispatch.
const LATENCY_WINDOW: Duration = Duration::from_secs(300);

/// How far ahead of their time instances go to streams that hold them: the configured
/// `--dispatch-ahead`, or twice the slowest claim of the last five minutes (time from the round's
/// clock reading to its commit) when that is longer, at most [`MAX_AHEAD`]. A database that stalls
/// commits now and then (a WAL flush on a slow disk) then no longer makes the second after a stall
/// start late; runs still never start early (the worker holds each until `start_after`). `0`
/// configured stays off.
pub fn adaptive_ahead(configured: Duration, slowest_claim: Duration) -> Duration {
    if configured.is_zero() {
        return Duration::ZERO;
    }
    configured.max((slowest_claim * 2).min(MAX_AHEAD))
}

/// What the dispatcher learned in earlier rounds.
#[derive(Debug, Default)]
struct Memory {
    /// Recent claims' latencies (when, how long), for [`adaptive_ahead`].
    latencies: std::collections::VecDeque<(Instant, Duration)>,
    /// Instances routing could not place, until when they are left out.
    skip: HashMap<i64, Instant>,
    /// Tasks at their running limit, until when they are left out.
    full: HashMap<i64, Instant>,
    /// (task, concurrency key value) pairs at their limit, until when they are left out.
    full_keys: HashMap<(i64, String), Instant>,
    /// Apps whose rate limit has no token, until the next one comes (database time).
    rate: HashMap<String, Ts>,
    /// Selectors of the tasks, per app, and when they were read.
    selectors: (HashMap<String, Vec<String>>, Option<Instant>),
    /// Rounds so far.
    rounds: u64,
    /// Streams seen at the last round (a change clears the skips).
    streams: Vec<String>,
    /// (app, handler) pairs whose cooldowns the floor was not applying at the last refresh.
    floored: Vec<(String, String)>,
}

/// The Assign message for an assignment; `now` is the time it is sent, for `start_after`.
pub fn assign_message(a: &Assignment, now: Ts) -> pb::SchedulerMessage {
    let i = &a.instance;
    let start_after = (i.available_at - now).to_std().ok().filter(|d| !d.is_zero()).map(duration_to_pb);
    pb::SchedulerMessage {
        msg: Some(pb::scheduler_message::Msg::Assign(pb::Assign {
            instance_id: i.id,
            attempt: i.attempt,
            task_name: i.task_name.clone(),
            handler: i.handler.clone(),
            params: i.params.clone(),
            trigger_time: Some(ts_to_pb(i.fire_at)),
            timeout: i.timeout.map(duration_to_pb),
            idempotency_key: i.idempotency_key.clone(),
            start_after,
            accept_by: i.lease_expires_at.map(ts_to_pb),
            traceparent: a.trace.map(|(span, _)| span.traceparent()).unwrap_or_default(),
            shard_index: i.route.shard.map_or(0, |(n, _)| n),
            shard_total: i.route.shard.map_or(0, |(_, t)| t),
        })),
    }
}

impl Dispatcher {
    /// A dispatcher over the shared core.
    pub fn new(core: Arc<Core>) -> Self {
        Dispatcher { core, memory: Mutex::new(Memory::default()) }
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How far ahead to dispatch now (see [`adaptive_ahead`]).
    fn ahead(&self) -> Duration {
        let mut mem = self.memory();
        while mem.latencies.front().is_some_and(|(at, _)| at.elapsed() > LATENCY_WINDOW) {
            mem.latencies.pop_front();
        }
        let slowest = mem.latencies.iter().map(|(_, d)| *d).max().unwrap_or_default();
        adaptive_ahead(self.core.sessions.dispatch_ahead, slowest)
    }

    /// Remembers how long a claim took (only the slowest of each second is kept).
    fn claimed_in(&self, took: Duration) {
        let mut mem = self.memory();
        match mem.latencies.back_mut() {
            Some((at, d)) if at.elapsed() < Duration::from_secs(1) => *d = (*d).max(took),
            _ => mem.latencies.push_back((Instant::now(), took)),
        }
    }

    /// The demand of this axd's streams, without apps waiting for a rate-limit token.
    fn demand(&self, now: Ts, ahead: Duration) -> Vec<AppDemand> {
        let core = &self.core;
        let demand = core.registry.demand(now, ahead, &core.routing);
        let mem = self.memory();
        demand.into_iter().filter(|d| mem.rate.get(&d.app).is_none_or(|t| *t <= now)).collect()
    }

    /// Reads what routing needs from the database when it is older than its refresh period:
    /// cooldowns, the cluster's workers, the tasks' selectors.
    async fn refresh(&self, apps: &[String]) -> StoreResult<()> {
        let core = &self.core;
        if core.routing.cooling_stale() {
            let began = core.routing.streaks_read_begins();
            let streaks = core.pools.dispatch.list_streaks(Some(apps)).await?;
            core.routing.set_streaks(&streaks, began);
            // The floor under cooldowns, as a metric: on for handlers it is releasing workers of.
            let floored = core.routing.floored(core.clock.now());
            let mut mem = self.memory();
            for (app, handler) in mem.floored.iter().filter(|p| !floored.contains(p)) {
                crate::prometheus::handler_failing(app, handler, false);
            }
            for (app, handler) in &floored {
                crate::prometheus::handler_failing(app, handler, true);
            }
            mem.floored = floored;
        }
        if core.routing.workers().1 {
            let began = core.routing.workers_read_begins();
            let workers = core.pools.dispatch.live_workers(None, core.alive_since()).await?;
            core.routing.set_workers(workers, began);
        }
        let stale = self.memory().selectors.1.is_none_or(|t| t.elapsed() >= crate::routing::state::REFRESH);
        if stale {
            let selectors = core.pools.dispatch.task_selectors().await?;
            self.memory().selectors = (selectors, Some(Instant::now()));
        }
        Ok(())
    }

    /// What this round's claim leaves out.
    fn skips(&self, demand: &[AppDemand]) -> Skips {
        let now = Instant::now();
        let mut mem = self.memory();
        let mut streams: Vec<String> = self.core.registry.all().iter().map(|s| s.id.clone()).collect();
        streams.sort();
        if streams != mem.streams {
            // A stream came or went: what could not be placed may be placeable now.
            mem.skip.clear();
            mem.streams = streams;
        }
        mem.skip.retain(|_, until| *until > now);
        mem.full.retain(|_, until| *until > now);
        mem.full_keys.retain(|_, until| *until > now);
        mem.rounds += 1;
        let selectors = if mem.rounds.is_multiple_of(UNFILTERED_EVERY) {
            None
        } else {
            let mut per_app: HashMap<String, Vec<String>> = HashMap::new();
            for d in demand {
                let known = mem.selectors.0.get(&d.app).map_or(&[][..], Vec::as_slice);
                let ok: Vec<String> = known
                    .iter()
                    .filter(|text| match Selector::parse(text) {
                        Ok(sel) => d.labels.iter().any(|l| sel.matches(l)),
                        Err(_) => false,
                    })
                    .cloned()
                    .collect();
                per_app.insert(d.app.clone(), ok);
            }
            Some(per_app)
        };
        Skips {
            ids: mem.skip.keys().copied().collect(),
            tasks: mem.full.keys().copied().collect(),
            keys: mem.full_keys.keys().cloned().collect(),
            selectors,
        }
    }

    /// Remembers what a claim could not do.
    fn remember(&self, declined: &[Declined], rate_limited: &[(String, Ts)]) {
        let until = Instant::now() + SKIP_FOR;
        let mut mem = self.memory();
        for d in declined {
            match d {
                Declined::Unroutable(id, _) if mem.skip.len() < MAX_SKIPPED => {
                    mem.skip.insert(*id, until);
                }
                Declined::Unroutable(..) => {}
                Declined::KeyFull(task, value) if mem.full_keys.len() < MAX_SKIPPED => {
                    mem.full_keys.insert((*task, value.clone()), until);
                }
                Declined::KeyFull(..) => {}
                Declined::TaskFull(task) => {
                    mem.full.insert(*task, until);
                }
            }
        }
        for (app, at) in rate_limited {
            mem.rate.insert(app.clone(), *at);
        }
    }

    /// One claim-and-send round. Returns how many instances were assigned.
    pub async fn run_round(&self) -> StoreResult<usize> {
        let core = &self.core;
        let started = std::time::Instant::now();
        let span_start = std::time::SystemTime::now();
        let now = core.clock.now();
        self.memory().rate.retain(|_, at| *at > now);
        let ahead = self.ahead();
        let demand = self.demand(now, ahead);
        // With no demand, the streams here may still be held back only by cooldowns that the floor
        // releases once the other workers' cooldowns are known: those are read all the same.
        if demand.is_empty() && !core.routing.any_cooling(now) {
            return Ok(0);
        }
        let apps: Vec<String> =
            if demand.is_empty() { core.registry.apps() } else { demand.iter().map(|d| d.app.clone()).collect() };
        self.refresh(&apps).await?;
        // The claim's time is read after the refresh's queries: an event it writes is never dated
        // before a change committed meanwhile.
        let claim_started = std::time::Instant::now();
        let now = core.clock.now();
        let demand = self.demand(now, ahead);
        if demand.is_empty() {
            return Ok(0);
        }
        let skips = self.skips(&demand);
        // An early assignment's ack timeout starts when its hold ends.
        let latest = demand.iter().map(|d| d.until).max().unwrap_or(now);
        let lease_until = add(latest, core.sessions.ack_timeout);
        let mut reserved: Vec<(Arc<Session>, (i64, u32))> = Vec::new();
        let registry = core.registry.clone();
        let (cluster, _) = core.routing.workers();
        let mut selectors = HashMap::new();
        let routing = core.routing.clone();
        let claimed =
            claim(&core.pools.dispatch, now, &demand, &skips, lease_until, &core.scheduler_id, &mut |ready| {
                let attempt = ready.attempt + 1;
                let mut ctx = RouteCtx { now, routing: &routing, cluster: &cluster, selectors: &mut selectors };
                let routed =
                    crate::routing::route::route(registry.all(), ready, attempt, &mut ctx, registry.round_robin())?;
                reserved.push((routed.session, (ready.id, attempt)));
                Ok((routed.r, routed.note))
            })
            .await;
        let claimed = match claimed {
            Ok(c) => c,
            Err(e) => {
                for (s, key) in reserved {
                    s.unreserve(key);
                }
                return Err(e);
            }
        };
        self.remember(&claimed.declined, &claimed.rate_limited);
        if !claimed.assignments.is_empty() {
            self.claimed_in(claim_started.elapsed());
        }
        let assignments = claimed.assignments;
        if crate::prometheus::enabled() && !assignments.is_empty() {
            let lag = metrics::histogram!(crate::prometheus::DISPATCH_LAG);
            for a in &assignments {
                lag.record((now - a.instance.available_at).as_seconds_f64().max(0.0));
            }
        }
        if !assignments.is_empty() {
            // Leases were set: the sweeper may need to wake earlier than it planned.
            core.signals.sweep.offer(lease_until);
        }
        let n = assignments.len();
        tracing::debug!(assigned = n, took_us = started.elapsed().as_micros() as u64, "dispatch round");
        // Holds are counted from the send, on a clock that never runs ahead of the database.
        let sent_at = if assignments.iter().any(|a| a.instance.available_at > now) { core.clock.now() } else { now };
        for mut a in assignments {
            a.trace = core.traces.dispatch_context(&a.instance);
            let key = (a.instance.id, a.instance.attempt);
            let delivered = match core.registry.get(&a.session_id) {
                Some(s) => {
                    // Kept before the send: the worker's answer may reach the writer at once.
                    if let Some(row) = a.stored() {
                        s.keep_row(key, row);
                    }
                    if s.send(Ok(assign_message(&a, sent_at))) {
                        s.assigned(key, lease_until);
                        true
                    } else {
                        s.unreserve(key);
                        false
                    }
                }
                None => false,
            };
            if let Some(trace) = a.trace {
                let span = (span_start, std::time::SystemTime::now());
                core.traces.dispatched(trace, &a.instance, &a.session_id, delivered, span);
            }
            if !delivered {
                let reason =
                    format!("could not be delivered to session {} (stream closed or not reading)", a.session_id);
                let op =
                    WorkerOp::Reject { instance_id: key.0, attempt: key.1, session_id: a.session_id.clone(), reason };
                // If axd is shutting down, the ack lease brings it back instead.
                let _ = core.writer.submit(op, None).await;
            }
        }
        Ok(n)
    }

    /// How long to sleep before the next round: until the next known `available_at` of apps with
    /// free credits (less the dispatch-ahead time for apps whose streams take early assignments),
    /// at most the poll interval.
    async fn idle_time(&self) -> Duration {
        let poll = self.core.sessions.poll_interval;
        let now = self.core.clock.now();
        let demand = self.core.registry.demand(now, self.ahead(), &self.core.routing);
        if demand.is_empty() {
            return poll;
        }
        // An app waiting for a rate-limit token wakes the loop when the token comes.
        let rate_wake = self.memory().rate.values().min().copied();
        let demand: Vec<AppDemand> = {
            let mem = self.memory();
            demand.into_iter().filter(|d| mem.rate.get(&d.app).is_none_or(|t| *t <= now)).collect()
        };
        if demand.is_empty() {
            return rate_wake.map_or(poll, |t| (t - now).to_std().unwrap_or(Duration::ZERO).min(poll));
        }
        // Apps grouped by how far ahead they are claimed: one query per group (at most two).
        let mut groups: Vec<(chrono::Duration, Vec<String>)> = Vec::new();
        for d in demand {
            let ahead = d.until - now;
            match groups.iter_mut().find(|(a, _)| *a == ahead) {
                Some((_, apps)) => apps.push(d.app),
                None => groups.push((ahead, vec![d.app])),
            }
        }
        let mut wake: Option<Ts> = None;
        for (ahead, apps) in groups {
            let next = async { self.core.pools.dispatch.conn().await?.instances().next_available(&apps).await };
            match next.await {
                Ok(Some(t)) => wake = Some(wake.map_or(t - ahead, |w| w.min(t - ahead))),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "dispatch: reading the next available time failed");
                    return poll;
                }
            }
        }
        let wake = match (wake, rate_wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match wake {
            Some(t) => (t - self.core.clock.now()).to_std().unwrap_or(Duration::ZERO).min(poll),
            None => poll,
        }
    }

    /// Runs until `cancel` fires.
    pub async fn run(self, cancel: CancellationToken) {
        let wake = self.core.signals.dispatch.clone();
        let mut backoff = Duration::from_millis(50);
        loop {
            let started = std::time::Instant::now();
            let round = self.run_round().await;
            crate::prometheus::loop_round("dispatch", started.elapsed(), round.is_err());
            let sleep = match round {
                Ok(n) => {
                    self.core.progress.tick(crate::core::health::Loop::Dispatch);
                    backoff = Duration::from_millis(50);
                    let full = n > 0 && self.demand(self.core.clock.now(), Duration::ZERO).iter().any(|d| d.limit > 0);
                    if full {
                        Duration::ZERO
                    } else {
                        match self.idle_time().await {
                            // Something is due but this round could not take it (a handler no
                            // stream here serves, rows locked by another axd's claim): look again
                            // soon, but never spin on the database.
                            idle if n == 0 && idle.is_zero() => Duration::from_millis(10),
                            idle => idle,
                        }
                    }
                }
                Err(e @ crate::error::StoreError::Conflict(_)) => {
                    // Another axd's claim won a lock race: claim again at once.
                    tracing::debug!(error = %e, "dispatch round lost a lock race; retrying");
                    Duration::from_millis(1)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "dispatch round failed; retrying in {backoff:?}");
                    let b = backoff;
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                    b
                }
            };
            if sleep.is_zero() {
                if cancel.is_cancelled() {
                    return;
                }
                tokio::task::yield_now().await;
                continue;
            }
            tokio::select! {
                () = cancel.cancelled() => return,
                () = wake.notified() => {}
                () = tokio::time::sleep(sleep) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{MAX_AHEAD, adaptive_ahead};

    #[test]
    fn dispatch_ahead_grows_with_slow_claims_up_to_a_cap_and_off_stays_off() {
        let ms = Duration::from_millis;
        assert_eq!(adaptive_ahead(ms(200), ms(20)), ms(200), "fast claims: the configured value");
        assert_eq!(adaptive_ahead(ms(200), ms(400)), ms(800), "twice the slowest claim");
        assert_eq!(adaptive_ahead(ms(200), ms(900)), MAX_AHEAD, "capped");
        assert_eq!(adaptive_ahead(ms(2000), ms(900)), ms(2000), "never below the configured value");
        assert_eq!(adaptive_ahead(Duration::ZERO, ms(900)), Duration::ZERO, "--dispatch-ahead 0 stays off");
    }
}
