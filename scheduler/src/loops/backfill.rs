//! Backfills: the instances a task's schedule would have created over a past range, one per fire
//! time, in time order, with the keys of the schedule's own fires (`fire:<time>`) — so a fire that
//! has an instance (the schedule's, or an earlier backfill's) gets no second one, and running a
//! backfill twice creates nothing new. The active window and excluded dates apply; pauses, overlap
//! policies and max-pending do not (a backfill is an operator's explicit request), but a BUFFER
//! task's instances still run one at a time.
//!
//! Backfilled instances are due at once, in fire-time order, after the work that was already due:
//! they do not jump the queue for being old.

use std::{collections::BTreeSet, time::Duration};

use chrono::NaiveDate;

use crate::{
    birth::{Spawn, shape, spawn},
    error::StoreResult,
    model::{InstanceSource, InstanceStatus, MAX_BACKFILL, Task, TaskEventKind, Ts, add},
    schedule::{Compiled, fire_key},
    store::{NewInstance, Store},
    traces::Traces,
};

/// Why a range cannot be backfilled (each names the request field at fault).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeError {
    /// The schedule has no fire grid to backfill (manual, fixed delay), or cannot be evaluated.
    Schedule(String),
    /// `to` is before `from`.
    Reversed,
    /// `to` is after now.
    Future(Ts),
    /// More fires than [`MAX_BACKFILL`] in the range (the first one past the cap).
    TooMany(Ts),
}

/// The fire times of `task`'s schedule (with its window and excluded dates; `calendar`: its
/// calendar's dates) in `[from, to)`, at most [`MAX_BACKFILL`].
pub fn fires_between(
    task: &Task,
    calendar: &BTreeSet<NaiveDate>,
    from: Ts,
    to: Ts,
    now: Ts,
) -> Result<Vec<Ts>, RangeError> {
    if to < from {
        return Err(RangeError::Reversed);
    }
    if to > now {
        return Err(RangeError::Future(now));
    }
    let c = Compiled::for_task(&task.config, calendar).map_err(|e| RangeError::Schedule(e.reason))?;
    match c.base() {
        Compiled::Manual => return Err(RangeError::Schedule("a manual schedule has no fires to backfill".to_owned())),
        Compiled::FixedDelay { .. } => {
            return Err(RangeError::Schedule(
                "a fixed-delay schedule's fires depend on when its runs ended; backfill cron, fixed-rate and \
                 one-time schedules"
                    .to_owned(),
            ));
        }
        _ => {}
    }
    let mut out = Vec::new();
    // `from` itself counts: first_fire looks strictly after its argument.
    let mut t = c.first_fire(crate::model::sub(from, Duration::from_micros(1)));
    while let Some(at) = t.filter(|at| *at < to) {
        if out.len() == MAX_BACKFILL {
            return Err(RangeError::TooMany(at));
        }
        out.push(at);
        t = c.next_after(at);
    }
    Ok(out)
}

/// One fire of a backfill: its time and its instance (new, or the one it had).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackfilledFire {
    pub fire_at: Ts,
    /// The instance; `None` in a dry run for a fire without one.
    pub instance_id: Option<i64>,
    /// Whether this backfill created it (or would, in a dry run).
    pub created: bool,
}

/// What a backfill is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The fire times (from [`fires_between`]).
    pub fires: &'a [Ts],
    /// Only say which instances it would create.
    pub dry_run: bool,
    /// The database's time.
    pub now: Ts,
    /// Who asked (the BACKFILLED task event and the instances' trails name them).
    pub actor: &'a str,
}

/// Backfills `req.fires` of `task`: creates the missing instances, or in a dry run only says which
/// it would create. Records a BACKFILLED task event naming the actor.
pub async fn backfill(
    store: &Store,
    task: &Task,
    req: Request<'_>,
    scheduler_id: &str,
    traces: &Traces,
) -> StoreResult<Vec<BackfilledFire>> {
    let Request { fires, dry_run, now, actor } = req;
    let started = std::time::SystemTime::now();
    let mut tx = store.begin().await?;
    let keys: Vec<String> = fires.iter().map(|t| fire_key(*t)).collect();
    let refs: Vec<(i64, &str)> = keys.iter().map(|k| (task.id, k.as_str())).collect();
    let existing = tx.instances().existing_keys(&refs).await?;
    // Which of a task's several schedules made each fire (the window aside: it only drops fires).
    let compiled = crate::schedule::Compiled::for_task(&task.config, &Default::default()).ok();
    let mut spawns = Vec::new();
    // Per spawn, the index of its fire.
    let mut fire_of = Vec::new();
    for (n, (at, key)) in fires.iter().zip(&keys).enumerate() {
        if existing.contains(&(task.id, key.clone())) {
            continue;
        }
        fire_of.push(n);
        let schedule = compiled.as_ref().and_then(|c| c.which(*at));
        let by = schedule.map(|i| format!(" of {}", crate::schedule::schedule_path(i))).unwrap_or_default();
        spawns.push(Spawn {
            task: 0,
            new: NewInstance {
                fire_at: *at,
                // Due now, one microsecond apart: in fire-time order, behind what was due before.
                available_at: add(now, Duration::from_micros(n as u64)),
                key: key.clone(),
                source: InstanceSource::Backfill,
                status: InstanceStatus::Pending,
                params: task.config.params.clone(),
                reason: format!("backfilled by {actor} for the fire{by} at {}", at.to_rfc3339()),
                trace_parent: traces.new_root(),
                route: shape::route_of(task, &task.config.params),
                tags: shape::fire_tags(task, schedule),
                lineage: Default::default(),
            },
        });
    }
    let mut ids: Vec<Option<i64>> = vec![None; fires.len()];
    let mut created = vec![false; fires.len()];
    if dry_run {
        drop(tx);
        for n in &fire_of {
            created[*n] = true;
        }
    } else {
        let spawned = spawn(&mut tx, &[task], spawns, now, scheduler_id).await?;
        for (id, k) in &spawned.created {
            ids[fire_of[*k]] = Some(*id);
            created[fire_of[*k]] = true;
        }
        if let (Some(first), Some(last)) = (fires.first(), fires.last()) {
            let message = format!(
                "backfilled {} fire(s) from {} to {} ({} of {} had an instance already)",
                spawned.created.len(),
                first.to_rfc3339(),
                last.to_rfc3339(),
                fires.len() - spawned.created.len(),
                fires.len()
            );
            tx.tasks().insert_task_event(task.id, &task.name, now, TaskEventKind::Backfilled, actor, &message).await?;
        }
        tx.commit().await?;
        spawned.after_commit(traces, started);
    }
    // The instances fires had already (or that a concurrent backfill made meanwhile).
    let mut conn = store.conn().await?;
    for (n, key) in keys.iter().enumerate() {
        if ids[n].is_none() && (!created[n] || !dry_run) {
            ids[n] = conn.instances().instance_by_key(task.id, key).await?.map(|i| i.id);
        }
    }
    Ok(fires
        .iter()
        .enumerate()
        .map(|(n, at)| BackfilledFire { fire_at: *at, instance_id: ids[n], created: created[n] })
        .collect())
}
