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

use std::{collections::HashMap, sync::Arc, time::Duration};

use ax_proto::{otlp::SpanContext, v1 as pb};
use tokio_util::sync::CancellationToken;

use crate::{
    core::Core,
    error::StoreResult,
    grpc::convert::{duration_to_pb, ts_to_pb},
    lifecycle::{
        WorkerOp,
        log::{Change, Changes},
    },
    model::{Instance, InstanceStatus},
    model::{Ts, add},
    store::{NewEvent, Store},
    worker::registry::{AppDemand, ReadyInstance, Session, SessionRef},
};

/// An instance marked DISPATCHED to a session: what goes into `Assign`.
#[derive(Debug, Clone)]
pub struct Assignment {
    /// The instance as it is now (DISPATCHED, new attempt).
    pub instance: Instance,
    /// The stream.
    pub session_id: String,
    /// This dispatch's span and the instance's root span, when axd traces (README "Tracing").
    pub trace: Option<(SpanContext, Option<SpanContext>)>,
}

/// Claims PENDING instances available by each app's `until` for the demanded (app, handler) pairs,
/// at most each app's limit, oldest first (SKIP LOCKED where supported); those not available by
/// `now` are offered as `early`. `route` picks a session for each (and reserves its credit) or
/// declines; chosen ones become DISPATCHED with attempt + 1 and lease `lease_until`, in one
/// transaction.
///
/// `route` runs while the claimed rows are locked: the session it picks is what the same
/// transaction writes, and it only reads the in-memory registry (no I/O), so it holds the locks
/// for microseconds.
pub async fn claim(
    store: &Store,
    now: Ts,
    demand: &[AppDemand],
    lease_until: Ts,
    scheduler_id: &str,
    route: &mut (dyn FnMut(&ReadyInstance) -> Option<SessionRef> + Send),
) -> StoreResult<Vec<Assignment>> {
    let t0 = std::time::Instant::now();
    let mut tx = store.begin().await?;
    let t_begin = t0.elapsed();
    let mut chosen: Vec<(Instance, SessionRef)> = Vec::new();
    for d in demand {
        if d.limit == 0 || d.handlers.is_empty() {
            continue;
        }
        for inst in tx.select_ready(&d.app, &d.handlers, d.until.max(now), d.limit).await? {
            let ready = ReadyInstance {
                id: inst.id,
                app: inst.app.clone(),
                handler: inst.handler.clone(),
                routing: inst.routing,
                attempt: inst.attempt,
                early: inst.available_at > now,
            };
            if let Some(s) = route(&ready) {
                chosen.push((inst, s));
            }
        }
    }
    if chosen.is_empty() {
        return Ok(Vec::new());
    }
    let t_select = t0.elapsed();
    let mut by_session: HashMap<&str, (&str, Vec<i64>)> = HashMap::new();
    for (inst, s) in &chosen {
        by_session.entry(s.session_id.as_str()).or_insert_with(|| (s.worker_id.as_str(), Vec::new())).1.push(inst.id);
    }
    for (session, (worker, ids)) in &by_session {
        tx.mark_dispatched(session, worker, scheduler_id, lease_until, now, ids).await?;
    }
    let mut events = Vec::with_capacity(chosen.len());
    let mut changes = Changes::new();
    let logged = Changes::wants(Some(InstanceStatus::Pending), InstanceStatus::Dispatched);
    let mut out = Vec::with_capacity(chosen.len());
    for (mut inst, s) in chosen {
        let at = now.max(inst.updated_at);
        inst.status = InstanceStatus::Dispatched;
        inst.attempt += 1;
        inst.session_id = Some(s.session_id.clone());
        inst.worker_id = Some(s.worker_id.clone());
        inst.scheduler_id = Some(scheduler_id.to_owned());
        inst.lease_expires_at = Some(lease_until);
        inst.updated_at = at;
        let reason = if inst.available_at > now {
            format!(
                "assigned to worker {} (session {}) ahead of time, to start at {}",
                s.worker_id,
                s.session_id,
                inst.available_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
            )
        } else {
            format!("assigned to worker {} (session {})", s.worker_id, s.session_id)
        };
        if logged {
            changes.push(Change {
                instance_id: inst.id,
                attempt: inst.attempt,
                task: inst.task_name.clone(),
                app: inst.app.clone(),
                worker: s.worker_id.clone(),
                from: Some(InstanceStatus::Pending),
                to: InstanceStatus::Dispatched,
                reason: reason.clone(),
            });
        }
        events.push(NewEvent {
            instance_id: inst.id,
            at,
            from: Some(InstanceStatus::Pending),
            to: InstanceStatus::Dispatched,
            attempt: inst.attempt,
            scheduler_id: scheduler_id.to_owned(),
            worker_id: s.worker_id.clone(),
            reason,
        });
        out.push(Assignment { instance: inst, session_id: s.session_id, trace: None });
    }
    let t_mark = t0.elapsed();
    tx.insert_events(&events).await?;
    let t_events = t0.elapsed();
    tx.commit().await?;
    changes.log();
    tracing::debug!(
        rows = out.len(),
        begin_us = t_begin.as_micros() as u64,
        select_us = (t_select - t_begin).as_micros() as u64,
        mark_us = (t_mark - t_select).as_micros() as u64,
        events_us = (t_events - t_mark).as_micros() as u64,
        commit_us = (t0.elapsed() - t_events).as_micros() as u64,
        "claim_ready"
    );
    Ok(out)
}

/// The dispatcher of one axd.
pub struct Dispatcher {
    core: Arc<Core>,
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
        })),
    }
}

impl Dispatcher {
    /// A dispatcher over the shared core.
    pub fn new(core: Arc<Core>) -> Self {
        Dispatcher { core }
    }

    /// One claim-and-send round. Returns how many instances were assigned.
    pub async fn run_round(&self) -> StoreResult<usize> {
        let core = &self.core;
        let started = std::time::Instant::now();
        let span_start = std::time::SystemTime::now();
        let now = core.clock.now();
        let demand = core.registry.demand(now, core.sessions.dispatch_ahead);
        if demand.is_empty() {
            return Ok(0);
        }
        // An early assignment's ack timeout starts when its hold ends.
        let latest = demand.iter().map(|d| d.until).max().unwrap_or(now);
        let lease_until = add(latest, core.sessions.ack_timeout);
        let mut reserved: Vec<(Arc<Session>, (i64, u32))> = Vec::new();
        let registry = core.registry.clone();
        let claimed = claim(&core.pools.dispatch, now, &demand, lease_until, &core.scheduler_id, &mut |ready| {
            let attempt = ready.attempt + 1;
            let (session, r) = registry.route(ready, attempt)?;
            reserved.push((session, (ready.id, attempt)));
            Some(r)
        })
        .await;
        let assignments = match claimed {
            Ok(a) => a,
            Err(e) => {
                for (s, key) in reserved {
                    s.unreserve(key);
                }
                return Err(e);
            }
        };
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
        let demand = self.core.registry.demand(now, self.core.sessions.dispatch_ahead);
        if demand.is_empty() {
            return poll;
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
            let next = async { self.core.pools.dispatch.conn().await?.next_available(&apps).await };
            match next.await {
                Ok(Some(t)) => wake = Some(wake.map_or(t - ahead, |w| w.min(t - ahead))),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "dispatch: reading the next available time failed");
                    return poll;
                }
            }
        }
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
                    let full = n > 0
                        && self.core.registry.demand(self.core.clock.now(), Duration::ZERO).iter().any(|d| d.limit > 0);
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
