//! The claim transaction: locks ready instances, applies the cluster-wide limits under row locks
//! (an app's rate-limit bucket, each task's running limit), lets routing pick a stream for each,
//! and marks the chosen ones DISPATCHED with their events.
//!
//! Lock order, the same in every transaction that takes these locks: the app's bucket row, then the
//! instances (SKIP LOCKED, so never waiting), then the tasks' limit rows in task order. A task with
//! a BUFFER overlap policy has a limit row too (one at a time), and only its oldest unfinished
//! instance may start. So has a task with a concurrency key: under its row the claim counts what
//! runs per key value of its ready instances, and starts at most its limit per value. Two claims
//! on different axd therefore serialize on a bucket or a limit row, never deadlock, and the second
//! sees what the first dispatched (READ COMMITTED on every server backend; SQLite's write
//! transactions are exclusive).

use std::collections::HashMap;

use ax_proto::otlp::SpanContext;

use crate::{
    error::StoreResult,
    lifecycle::log::{Change, Changes},
    model::{Instance, InstanceEvent, InstanceStatus, Ts, trail},
    routing::bucket::Bucket,
    routing::registry::{AppDemand, ReadyInstance, SessionRef},
    store::{ReadyFilter, Store, Tx},
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
    /// The row's version after the claim (PostgreSQL only; see [`Assignment::stored`]).
    pub version: Option<i64>,
}

impl Assignment {
    /// The claimed row as reading it back would give it, with its version: what the session keeps
    /// so that the group commit of the attempt's first messages need not read the row again (it
    /// writes only if the row is still this version). `None` without a version.
    pub fn stored(&self) -> Option<(Instance, i64)> {
        let version = self.version?;
        let mut i = self.instance.clone();
        // The claim set these from `now` and the lease; the row keeps microseconds.
        fn micros(t: Ts) -> Ts {
            crate::model::from_micros(crate::model::to_micros(t))
        }
        i.updated_at = micros(i.updated_at);
        i.lease_expires_at = i.lease_expires_at.map(micros);
        i.trail.dispatched_at = i.trail.dispatched_at.map(micros);
        i.trail.held = if i.trail.bits == 0 { Vec::new() } else { trail::implied(&i, i.trail.bits) };
        Some((i, version))
    }
}

/// What a claim may leave out, learned from earlier rounds.
#[derive(Debug, Clone, Default)]
pub struct Skips {
    /// Instances routing could not place lately.
    pub ids: Vec<i64>,
    /// Tasks at their running limit lately.
    pub tasks: Vec<i64>,
    /// (task, concurrency key value) pairs at their limit lately.
    pub keys: Vec<(i64, String)>,
    /// Per app, the selectors its streams here can satisfy; `None`: read every selector.
    pub selectors: Option<HashMap<String, Vec<String>>>,
}

/// Why a ready instance was not claimed this round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declined {
    /// Routing found no stream (the reason).
    Unroutable(i64, String),
    /// Its task has `max_running` instances dispatched or running.
    TaskFull(i64),
    /// A value of a task's concurrency key has `concurrency_limit` instances dispatched or running.
    KeyFull(i64, String),
}

/// What a claim did.
#[derive(Debug, Default)]
pub struct Claimed {
    /// Instances marked DISPATCHED, to send.
    pub assignments: Vec<Assignment>,
    /// Ready instances left PENDING, and why.
    pub declined: Vec<Declined>,
    /// Apps whose rate limit has no token now, with when the next one comes.
    pub rate_limited: Vec<(String, Ts)>,
}

/// A stream chosen by routing, with the note its DISPATCHED event carries.
pub type Choice = (SessionRef, String);

/// One claim transaction over `demand` (see the module doc). `route` picks a stream for each
/// ready instance (reserving its credit) or says why not; it only reads this axd's registry (no
/// I/O), so it holds the locks for microseconds.
pub async fn claim(
    store: &Store,
    now: Ts,
    demand: &[AppDemand],
    skips: &Skips,
    lease_until: Ts,
    scheduler_id: &str,
    route: &mut (dyn FnMut(&ReadyInstance) -> Result<Choice, String> + Send),
) -> StoreResult<Claimed> {
    let t0 = std::time::Instant::now();
    let mut out = Claimed::default();
    let mut tx = store.begin().await?;
    let t_begin = t0.elapsed();
    let apps: Vec<&str> =
        demand.iter().filter(|d| d.limit > 0 && !d.handlers.is_empty()).map(|d| d.app.as_str()).collect();
    if apps.is_empty() {
        return Ok(out);
    }
    let mut buckets = lock_buckets(&mut tx, &apps, now).await?;
    let ready = select_ready(&mut tx, now, demand, skips, &buckets, &mut out).await?;
    if ready.is_empty() {
        return Ok(out);
    }
    let t_select = t0.elapsed();
    let chosen = choose(&mut tx, now, ready, &mut buckets, &mut out, route).await?;
    for (app, b) in &buckets {
        tx.limits().write_app_tokens(app, b.tokens, b.refilled_at).await?;
        if b.available() == 0 {
            out.rate_limited.push((app.clone(), b.next_token_at()));
        }
    }
    if chosen.is_empty() {
        tx.commit().await?;
        return Ok(out);
    }
    let first = out.assignments.len();
    let (events, changes) = dispatched(chosen, now, lease_until, scheduler_id, tx.trail_in_row(), &mut out);
    // One statement per session and per which events the rows hold.
    let mut groups: HashMap<(&str, u8), (&str, Vec<i64>)> = HashMap::new();
    for a in &out.assignments[first..] {
        let worker = a.instance.worker_id.as_deref().unwrap_or_default();
        let bits = a.instance.trail.bits;
        groups.entry((a.session_id.as_str(), bits)).or_insert_with(|| (worker, Vec::new())).1.push(a.instance.id);
    }
    let mut versions = HashMap::new();
    for ((session, bits), (worker, ids)) in &groups {
        versions
            .extend(tx.instances().mark_dispatched(session, worker, scheduler_id, lease_until, now, *bits, ids).await?);
    }
    for a in &mut out.assignments[first..] {
        a.version = versions.get(&a.instance.id).copied();
    }
    let t_mark = t0.elapsed();
    tx.instances().insert_events(&events).await?;
    let t_events = t0.elapsed();
    tx.commit().await?;
    changes.log();
    tracing::debug!(
        rows = out.assignments.len(),
        begin_us = t_begin.as_micros() as u64,
        select_us = (t_select - t_begin).as_micros() as u64,
        mark_us = (t_mark - t_select).as_micros() as u64,
        events_us = (t_events - t_mark).as_micros() as u64,
        commit_us = (t0.elapsed() - t_events).as_micros() as u64,
        "claim_ready"
    );
    Ok(out)
}

/// Locks the rate-limit rows of `apps` (first in the lock order) and refills their buckets to `now`.
async fn lock_buckets(tx: &mut Tx, apps: &[&str], now: Ts) -> StoreResult<HashMap<String, Bucket>> {
    Ok(tx
        .limits()
        .lock_app_limits(apps)
        .await?
        .into_iter()
        .map(|l| {
            let mut b =
                Bucket { per_second: l.per_second, burst: l.burst, tokens: l.tokens, refilled_at: l.refilled_at };
            b.refill(now);
            (l.app, b)
        })
        .collect())
}

/// Locks the ready instances of each app with demand, at most its free credits and rate-limit
/// tokens; an app without a token is noted in `out` and skipped.
async fn select_ready(
    tx: &mut Tx,
    now: Ts,
    demand: &[AppDemand],
    skips: &Skips,
    buckets: &HashMap<String, Bucket>,
    out: &mut Claimed,
) -> StoreResult<Vec<Instance>> {
    let mut ready: Vec<Instance> = Vec::new();
    for d in demand.iter().filter(|d| d.limit > 0 && !d.handlers.is_empty()) {
        let mut limit = d.limit;
        if let Some(b) = buckets.get(&d.app) {
            if b.available() == 0 {
                out.rate_limited.push((d.app.clone(), b.next_token_at()));
                continue;
            }
            limit = limit.min(b.available());
        }
        let selectors = skips.selectors.as_ref().map(|m| m.get(&d.app).map_or(&[][..], Vec::as_slice));
        let filter = ReadyFilter {
            workers: &d.workers,
            selectors,
            skip_ids: &skips.ids,
            skip_tasks: &skips.tasks,
            skip_keys: &skips.keys,
        };
        ready.extend(tx.instances().select_ready(&d.app, &d.handlers, d.until.max(now), limit, &filter).await?);
    }
    Ok(ready)
}

/// Applies the tasks' running limits (their rows locked now, in task order) and the apps' tokens to
/// `ready`, and routes what may start; what may not is declined in `out`.
async fn choose(
    tx: &mut Tx,
    now: Ts,
    ready: Vec<Instance>,
    buckets: &mut HashMap<String, Bucket>,
    out: &mut Claimed,
    route: &mut (dyn FnMut(&ReadyInstance) -> Result<Choice, String> + Send),
) -> StoreResult<Vec<(Instance, SessionRef, String)>> {
    let task_ids: Vec<i64> = ready.iter().map(|i| i.task_id).collect();
    let limits = tx.limits().lock_task_limits(&task_ids).await?;
    let mut room: HashMap<i64, u32> =
        limits.iter().map(|(id, l)| (*id, l.max_running.saturating_sub(l.active))).collect();
    let mut key_room = key_room(tx, &ready, &limits).await?;
    let mut chosen: Vec<(Instance, SessionRef, String)> = Vec::new();
    for inst in ready {
        if room.get(&inst.task_id) == Some(&0) {
            out.declined.push(Declined::TaskFull(inst.task_id));
            continue;
        }
        let key = inst.route.concurrency_value.as_ref().map(|v| (inst.task_id, v.clone()));
        if let Some(k) = key.as_ref().filter(|k| key_room.get(*k) == Some(&0)) {
            out.declined.push(Declined::KeyFull(k.0, k.1.clone()));
            continue;
        }
        // A BUFFER task runs its instances in creation order: only its oldest unfinished one
        // starts (an earlier one waiting for a retry holds the rest back too).
        if let Some(first) = limits.get(&inst.task_id).and_then(|l| l.first_unfinished)
            && first != inst.id
        {
            out.declined.push(Declined::TaskFull(inst.task_id));
            continue;
        }
        if buckets.get(&inst.app).is_some_and(|b| b.available() == 0) {
            continue;
        }
        // Its attempt before may still run (taken from its worker, not yet confirmed stopped).
        if let Some(lease) = crate::lifecycle::stopped_by(&inst, now) {
            let why = format!(
                "attempt {} may still run on worker {} until its lease ends at {}",
                inst.attempt,
                inst.worker_id.as_deref().unwrap_or("-"),
                lease.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            );
            out.declined.push(Declined::Unroutable(inst.id, why));
            continue;
        }
        match route(&ReadyInstance::of(&inst, now)) {
            Ok((s, note)) => {
                if let Some(r) = room.get_mut(&inst.task_id) {
                    *r -= 1;
                }
                if let Some(r) = key.and_then(|k| key_room.get_mut(&k)) {
                    *r -= 1;
                }
                if let Some(b) = buckets.get_mut(&inst.app) {
                    b.take(1);
                }
                chosen.push((inst, s, note));
            }
            Err(why) => out.declined.push(Declined::Unroutable(inst.id, why)),
        }
    }
    Ok(chosen)
}

/// What may start per (task, concurrency key value) among `ready`, for the tasks with a key limit
/// (their limit rows locked by the caller): the limit less what is dispatched or running.
async fn key_room(
    tx: &mut Tx,
    ready: &[Instance],
    limits: &HashMap<i64, crate::store::TaskRoom>,
) -> StoreResult<HashMap<(i64, String), u32>> {
    let mut values: HashMap<i64, Vec<String>> = HashMap::new();
    for inst in ready {
        if let Some(v) = &inst.route.concurrency_value
            && limits.get(&inst.task_id).is_some_and(|l| l.key_limit.is_some())
        {
            values.entry(inst.task_id).or_default().push(v.clone());
        }
    }
    let mut out = HashMap::new();
    for (task, vs) in values {
        let max = limits.get(&task).and_then(|l| l.key_limit).unwrap_or(0);
        let active = tx.limits().count_by_key(task, &vs).await?;
        for v in vs {
            let n = u32::try_from(active.get(&v).copied().unwrap_or(0)).unwrap_or(u32::MAX);
            out.insert((task, v), max.saturating_sub(n));
        }
    }
    Ok(out)
}

/// The chosen instances as DISPATCHED (new attempt, session, lease), pushed to `out`'s
/// assignments, with the DISPATCHED events to write and the changes to log. With `trail_in_row`,
/// an instance whose row says its DISPATCHED event exactly holds it instead (its trail bits are
/// then set; see [`crate::model::trail`]).
fn dispatched(
    chosen: Vec<(Instance, SessionRef, String)>,
    now: Ts,
    lease_until: Ts,
    scheduler_id: &str,
    trail_in_row: bool,
    out: &mut Claimed,
) -> (Vec<InstanceEvent>, Changes) {
    let mut events = Vec::with_capacity(chosen.len());
    let mut changes = Changes::new();
    let logged = Changes::wants(Some(InstanceStatus::Pending), InstanceStatus::Dispatched);
    for (mut inst, s, note) in chosen {
        let at = now.max(inst.updated_at);
        inst.status = InstanceStatus::Dispatched;
        inst.attempt += 1;
        inst.session_id = Some(s.session_id.clone());
        inst.worker_id = Some(s.worker_id.clone());
        inst.scheduler_id = Some(scheduler_id.to_owned());
        inst.lease_expires_at = Some(lease_until);
        inst.updated_at = at;
        let mut reason = if inst.available_at > now {
            format!(
                "assigned to worker {} (session {}) ahead of time, to start at {}",
                s.worker_id,
                s.session_id,
                inst.available_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
            )
        } else {
            format!("assigned to worker {} (session {})", s.worker_id, s.session_id)
        };
        if !note.is_empty() {
            reason = format!("{reason}; {note}");
        }
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
        let event = InstanceEvent {
            id: 0,
            instance_id: inst.id,
            at,
            from: Some(InstanceStatus::Pending),
            to: InstanceStatus::Dispatched,
            attempt: inst.attempt,
            scheduler_id: scheduler_id.to_owned(),
            worker_id: s.worker_id.clone(),
            reason,
        };
        // A PENDING row holds at most its creation event (every change to PENDING writes the
        // others): the row keeps holding it and this one if it still says both exactly (this axd
        // created it), else writes what it held first and holds this one alone, or none.
        let held = std::mem::take(&mut inst.trail.held);
        let created = inst.trail.bits & trail::CREATED;
        inst.trail = trail::Trail { bits: 0, dispatched_at: Some(at), held: Vec::new() };
        let both: Vec<InstanceEvent> = held.iter().cloned().chain(std::iter::once(event.clone())).collect();
        if trail_in_row && trail::implied(&inst, created | trail::DISPATCHED) == both {
            inst.trail.bits = created | trail::DISPATCHED;
        } else {
            events.extend(held);
            if trail_in_row && trail::implied(&inst, trail::DISPATCHED) == std::slice::from_ref(&event) {
                inst.trail.bits = trail::DISPATCHED;
            } else {
                events.push(event);
            }
        }
        out.assignments.push(Assignment { instance: inst, session_id: s.session_id, trace: None, version: None });
    }
    (events, changes)
}
