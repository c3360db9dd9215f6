//! The trigger loop: turns due schedules into instances (and, each round, committed rows of the
//! intake table: `loops::intake`).
//!
//! Each round claims due tasks (next fire <= now + look-ahead) with `FOR UPDATE SKIP LOCKED`,
//! creates their instances with `available_at` = the exact fire time and an idempotency key derived
//! from it, advances next fire times by the misfire rules, and commits: one transaction, so a crash
//! before commit leaves nothing behind and a fire can never produce two instances. Between rounds it
//! sleeps until the earliest next fire minus the look-ahead, a local wake-up (a task changed), or at
//! most `max_idle` (other axd may have changed tasks).

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
    time::Duration,
};

use chrono::NaiveDate;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

pub use crate::birth::trigger_manual;
use crate::{
    alerts::{AlertCause, AlertEvent},
    birth::{self, Birth, shape},
    core::{
        clock::Clock,
        health::{Loop, Progress},
    },
    error::StoreResult,
    loops::{overlap, pause},
    model::{InstanceStatus, Task, TaskEvent, TaskEventKind, Ts, WorkerRecord, add, sub},
    prometheus::Tally,
    schedule::{Compiled, FirePlan, MisfireRules, fire_key, plan},
    store::{NewInstance, Store, Tx},
    traces::Traces,
    window,
};

/// What the trigger loop decides for one claimed task.
#[derive(Debug, Clone)]
pub enum PlanDecision {
    /// Create these instances and move the next fire time.
    Fire(FirePlan),
    /// The stored schedule cannot be evaluated: disable the task and record why.
    Broken(String),
}

/// Computes the plan of a due task (the engine in production; tests inject others).
pub trait Planner: Sync {
    /// The plan for `task`, whose next fire time is due; `calendar` holds the dates of its named
    /// calendar (empty without one).
    fn plan(&self, task: &Task, calendar: &BTreeSet<NaiveDate>) -> PlanDecision;
}

/// What one trigger transaction did.
#[derive(Debug, Clone, Default)]
pub struct TriggerRound {
    /// Tasks claimed.
    pub tasks: usize,
    /// Instances created: (id, app, available_at).
    pub created: Vec<(i64, String, Ts)>,
    /// Instances recorded as SKIPPED by the concurrency policy.
    pub skipped: usize,
    /// Instances canceled by fires of CANCEL_OTHER tasks.
    pub canceled: usize,
}

/// Trigger loop settings.
#[derive(Debug, Clone)]
pub struct TriggerConfig {
    /// How far ahead of their fire time instances are created (dispatch assigns them at the fire
    /// time, or `--dispatch-ahead` before it to workers that hold them). Default 2.5 s: cron fires fall on whole seconds, so the rounds that create
    /// them run at half-seconds, away from the instants when the dispatcher claims that second's
    /// fires (with 2 s both competed for the same cores: fire lag p50 20.6 ms instead of 14.2 ms
    /// for 5,000 cron tasks on PostgreSQL).
    pub lookahead: Duration,
    /// Most tasks claimed per transaction. Default 500.
    pub batch: u32,
    /// Longest sleep between rounds. Default 1 s.
    pub max_idle: Duration,
}

impl Default for TriggerConfig {
    fn default() -> Self {
        TriggerConfig { lookahead: Duration::from_millis(2500), batch: 500, max_idle: Duration::from_secs(1) }
    }
}

/// The trigger engine as a [`Planner`]: misfire rules and look-ahead applied at one `now`.
#[derive(Debug, Clone, Copy)]
pub struct EnginePlanner {
    /// The database time of this round.
    pub now: Ts,
    /// Look-ahead for tasks that allow overlap.
    pub lookahead: Duration,
}

impl Planner for EnginePlanner {
    fn plan(&self, task: &Task, calendar: &BTreeSet<NaiveDate>) -> PlanDecision {
        let Some(next) = task.next_fire_at else {
            return PlanDecision::Fire(FirePlan { fires: Vec::new(), next_fire_at: None, events: Vec::new() });
        };
        let compiled = match Compiled::for_task(&task.config, calendar) {
            Ok(c) => c,
            Err(e) => return PlanDecision::Broken(format!("{}: {}", e.field, e.reason)),
        };
        // The overlap policies other than ALLOW decide "is an earlier instance still active?" at
        // the fire time itself, so their fires are never created ahead of time.
        let horizon =
            if task.config.concurrency.decides_at_fire_time() { self.now } else { add(self.now, self.lookahead) };
        if next > horizon {
            return PlanDecision::Fire(FirePlan { fires: Vec::new(), next_fire_at: Some(next), events: Vec::new() });
        }
        let rules = MisfireRules {
            policy: task.config.misfire_policy,
            threshold: task.config.misfire_threshold,
            max_catch_up: task.config.max_catch_up.get(),
        };
        PlanDecision::Fire(plan(&compiled, next, self.now, horizon, rules))
    }
}

/// What a finished round reports (tests and health watch these).
#[derive(Debug, Clone, Default)]
pub struct RoundReport {
    /// Rounds completed since start, counting the idle loop's checks (a read that found nothing
    /// due) as rounds.
    pub rounds: u64,
    /// Database time of the last round or check.
    pub at: Option<Ts>,
    /// Instances created by the last round.
    pub created: usize,
}

/// The trigger loop of one axd.
pub struct TriggerLoop {
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    scheduler_id: String,
    config: TriggerConfig,
    wake: Arc<Notify>,
    created: Arc<Notify>,
    progress: Arc<Progress>,
    report: watch::Sender<RoundReport>,
    traces: Traces,
}

impl TriggerLoop {
    /// A loop over `store`. `created` is notified whenever instances were created (the dispatcher
    /// listens); `wake` wakes the loop early (a task changed on this axd or, through a notification,
    /// on another).
    pub fn new(
        store: Arc<Store>,
        clock: Arc<dyn Clock>,
        scheduler_id: String,
        config: TriggerConfig,
        created: Arc<Notify>,
        wake: Arc<Notify>,
        progress: Arc<Progress>,
    ) -> Self {
        TriggerLoop {
            store,
            clock,
            scheduler_id,
            config,
            wake,
            created,
            progress,
            report: watch::channel(RoundReport::default()).0,
            traces: Traces::off(),
        }
    }

    /// Records the root span of each instance it creates (README "Tracing").
    pub fn with_traces(mut self, traces: Traces) -> Self {
        self.traces = traces;
        self
    }

    /// Reports of completed rounds.
    pub fn reports(&self) -> watch::Receiver<RoundReport> {
        self.report.subscribe()
    }

    /// Runs rounds until every due task is handled; returns what they created.
    pub async fn run_round(&self) -> StoreResult<TriggerRound> {
        let started = std::time::Instant::now();
        let now = self.clock.now();
        let planner = EnginePlanner { now, lookahead: self.config.lookahead };
        let horizon = add(now, self.config.lookahead);
        let mut total = TriggerRound::default();
        loop {
            // Each batch's phase timings are the `trigger_due` debug line.
            let round =
                trigger_due(&self.store, now, horizon, self.config.batch, &planner, &self.scheduler_id, &self.traces)
                    .await?;
            let claimed = round.tasks;
            // Each transaction is progress: a backlog of thousands of due tasks takes many of them,
            // and the health monitor must not read that as a stalled loop.
            self.progress.tick(Loop::Trigger);
            total.tasks += round.tasks;
            total.skipped += round.skipped;
            total.canceled += round.canceled;
            total.created.extend(round.created);
            if claimed < self.config.batch as usize {
                break;
            }
        }
        // Rows applications committed to ax_intake, in batches until none is left.
        loop {
            let intake = super::intake::consume_intake(
                &self.store,
                now,
                super::intake::INTAKE_BATCH,
                &self.scheduler_id,
                &self.traces,
            )
            .await?;
            self.progress.tick(Loop::Trigger);
            total.created.extend(intake.created);
            if intake.rows < super::intake::INTAKE_BATCH as usize {
                break;
            }
        }
        if !total.created.is_empty() {
            self.created.notify_waiters();
            self.created.notify_one();
        }
        self.progress.tick(Loop::Trigger);
        tracing::debug!(
            tasks = total.tasks,
            created = total.created.len(),
            took_us = started.elapsed().as_micros() as u64,
            "trigger round"
        );
        self.report.send_modify(|r| {
            r.rounds += 1;
            r.at = Some(now);
            r.created = total.created.len();
        });
        Ok(total)
    }

    /// Runs until `cancel` fires. Database errors are logged and retried after a short pause; they
    /// never end the loop.
    pub async fn run(self: Arc<Self>, cancel: CancellationToken) {
        let mut backoff = Duration::from_millis(100);
        loop {
            let started = std::time::Instant::now();
            let round = self.run_round().await;
            crate::prometheus::loop_round("trigger", started.elapsed(), round.is_err());
            let mut idle_round = false;
            let retry = match round {
                Ok(r) => {
                    backoff = Duration::from_millis(100);
                    idle_round = r.tasks == 0 && r.created.is_empty();
                    None
                }
                Err(e @ crate::error::StoreError::Conflict(_)) => {
                    tracing::debug!(error = %e, "trigger round lost a lock race; retrying");
                    Some(Duration::from_millis(1))
                }
                Err(e) => {
                    tracing::warn!(error = %e, "trigger round failed; retrying in {:?}", backoff);
                    let b = backoff;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                    Some(b)
                }
            };
            let go_on = match retry {
                Some(pause) => tokio::select! {
                    () = cancel.cancelled() => false,
                    () = self.wake.notified() => true,
                    () = tokio::time::sleep(pause) => true,
                },
                None => self.wait_for_work(&cancel, idle_round).await,
            };
            if !go_on {
                return;
            }
        }
    }

    /// Waits until a round has something to do: the earliest next fire (less the lookahead for
    /// tasks that allow overlap), rows in `ax_intake`, or a wake-up (a task changed on this axd
    /// or, through a notification, on another). While nothing is due it asks the database once
    /// every `max_idle` — one read, where a round would take three transactions (README "Idle
    /// cost"); each such check counts as a round in [`TriggerLoop::reports`]. Work that is due but
    /// that the last round (`idle_round`) could not take — tasks or intake rows another axd holds
    /// locked — is looked at again after 50 ms, so the loop never spins on the database. False
    /// when `cancel` fired.
    async fn wait_for_work(&self, cancel: &CancellationToken, idle_round: bool) -> bool {
        const LOCKED_ELSEWHERE: Duration = Duration::from_millis(50);
        let mut idle_round = idle_round;
        loop {
            let now = self.clock.now();
            let due_now = if idle_round { Some((LOCKED_ELSEWHERE, true)) } else { None };
            let (sleep, due_then) = match next_trigger_work(&self.store, self.config.lookahead).await {
                Ok(TriggerWake::Now) => match due_now {
                    Some(wait) => wait,
                    None => return true,
                },
                Ok(TriggerWake::At(at)) => match (at - now).to_std() {
                    Ok(until) if !until.is_zero() => {
                        if until <= self.config.max_idle {
                            (until, true)
                        } else {
                            (self.config.max_idle, false)
                        }
                    }
                    _ => match due_now {
                        Some(wait) => wait,
                        None => return true,
                    },
                },
                Ok(TriggerWake::Idle) => (self.config.max_idle, false),
                Err(e) => {
                    tracing::warn!(error = %e, "trigger: reading the next fire time failed");
                    (self.config.max_idle, true)
                }
            };
            // The check is progress: an idle loop that reads the database is alive.
            self.progress.tick(Loop::Trigger);
            self.report.send_modify(|r| {
                r.rounds += 1;
                r.at = Some(now);
                r.created = 0;
            });
            tokio::select! {
                () = cancel.cancelled() => return false,
                () = self.wake.notified() => return true,
                () = tokio::time::sleep(sleep) => {
                    if due_then {
                        return true;
                    }
                }
            }
            idle_round = false;
        }
    }
}

/// When the trigger loop next has work ([`next_trigger_work`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerWake {
    /// Rows wait in `ax_intake`.
    Now,
    /// The earliest next fire of tasks that allow overlap minus the lookahead, or of tasks with
    /// another overlap policy (claimed only once due).
    At(Ts),
    /// No task has a next fire and the intake is empty.
    Idle,
}

/// When the trigger loop next has work, in one read (see [`TriggerWake`]).
pub async fn next_trigger_work(store: &Store, lookahead: Duration) -> StoreResult<TriggerWake> {
    let next = store.conn().await?.tasks().next_trigger_work().await?;
    if next.intake {
        return Ok(TriggerWake::Now);
    }
    let allow = next.allow.map(|t| sub(t, lookahead));
    Ok(match (allow, next.others) {
        (Some(a), Some(f)) => TriggerWake::At(a.min(f)),
        (a, f) => a.or(f).map_or(TriggerWake::Idle, TriggerWake::At),
    })
}

/// Most unfinished instances of one task the overlap decision reads (CANCEL_OTHER cancels at most
/// these in one fire; the next fire cancels the rest).
const ACTIVE_READ: u32 = 1000;

/// Cancels, in `tx`, the instances that fires of CANCEL_OTHER tasks replace: (instance, the fire
/// time that replaces it). How many it canceled, and what to do after the commit.
async fn cancel_replaced(
    tx: &mut crate::store::Tx,
    cancels: &[(i64, Ts)],
    now: Ts,
    scheduler_id: &str,
) -> StoreResult<Option<(usize, crate::transitions::Persisted)>> {
    if cancels.is_empty() {
        return Ok(None);
    }
    let mut ids: Vec<i64> = cancels.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut rows = tx.instances().lock_instances(&ids).await?;
    let ctx = crate::lifecycle::Ctx { now, scheduler_id };
    let mut batch = crate::lifecycle::Batch::default();
    let mut n = 0;
    for (id, fire_at) in cancels {
        let Some(i) = rows.get_mut(id) else { continue };
        if let Some(fx) = crate::lifecycle::cancel(i, &overlap::canceled_by(*fire_at), "concurrency CANCEL_OTHER", ctx)
        {
            batch.add(*id, fx);
            n += 1;
        }
    }
    // No attempt ends as a failure here, so no failure streak (and no routing state) is involved.
    let routing = crate::routing::RoutingState::default();
    let persisted = crate::transitions::persist(tx, &mut rows, batch, ctx, &routing).await?;
    Ok(Some((n, persisted)))
}

/// What is the same for every task a trigger round plans.
struct RoundCtx<'a> {
    now: Ts,
    scheduler_id: &'a str,
    traces: &'a Traces,
    /// The live workers, when a task of the round fans out or has a selector.
    workers: &'a [WorkerRecord],
}

/// What a trigger round has planned for its tasks, written once every task is planned.
#[derive(Default)]
struct RoundPlan {
    /// The instances to bear.
    births: Vec<Birth>,
    /// Each planned task's new next fire time.
    next_fires: Vec<(i64, Option<Ts>)>,
    /// Tasks whose run of coalesced fires (max-pending) began, grew or ended.
    coalesced: Vec<(i64, Option<(Ts, u64)>)>,
    /// Misfire alerts, enqueued with the births' own.
    alerts: Vec<AlertCause>,
    /// Instances that CANCEL_OTHER fires replace: (instance, the fire time that replaces it).
    cancels: Vec<(i64, Ts)>,
    tally: Tally,
}

/// Plans one claimed task (index `ti`) into `p`: a pause that holds it or ends, a schedule that
/// broke (the task is disabled), its fires through the overlap policy and max-pending (`waiting`:
/// the task's PENDING instances so far), its next fire time and its misfire decisions. Task events
/// are written in `tx` as they are decided.
#[allow(clippy::too_many_arguments)]
async fn plan_task(
    tx: &mut Tx,
    rc: &RoundCtx<'_>,
    p: &mut RoundPlan,
    ti: usize,
    task: &Task,
    calendar: &BTreeSet<NaiveDate>,
    planner: &dyn Planner,
    waiting: &mut u64,
) -> StoreResult<()> {
    let (now, scheduler_id) = (rc.now, rc.scheduler_id);
    if let Some(pause) = &task.pause {
        match pause::step(task, pause, calendar, now) {
            pause::Step::Hold(next) => {
                p.next_fires.push((task.id, next));
                return Ok(());
            }
            pause::Step::Resume(message) => {
                tx.tasks().set_pause(task.id, None).await?;
                tx.tasks()
                    .insert_task_event(task.id, &task.name, now, TaskEventKind::Resumed, scheduler_id, &message)
                    .await?;
            }
        }
    }
    let plan = match planner.plan(task, calendar) {
        PlanDecision::Broken(why) => {
            tx.tasks().disable_task(task.id, now).await?;
            let why = format!("disabled: {why}");
            tx.tasks()
                .insert_task_event(task.id, &task.name, now, TaskEventKind::ScheduleBroken, scheduler_id, &why)
                .await?;
            return Ok(());
        }
        PlanDecision::Fire(plan) => plan,
    };
    let run = admit_fires(tx, rc, p, ti, task, &plan, waiting).await?;
    if run != task.coalesced {
        if let Some((_, count)) = run {
            let before = task.coalesced.map_or(0, |(_, c)| c);
            p.tally.add(crate::prometheus::FIRES_COALESCED, &task.config.app, None, count.saturating_sub(before));
        }
        p.coalesced.push((task.id, run));
    }
    p.next_fires.push((task.id, plan.next_fire_at));
    for planned in &plan.events {
        let (kind, message) = (planned.kind, &planned.message);
        let event = TaskEvent {
            task_id: task.id,
            at: now,
            kind,
            actor: scheduler_id.to_owned(),
            message: message.clone(),
            fires: Some(planned.fires),
        };
        tx.tasks().insert_event(&task.name, &event).await?;
        let action = match kind {
            TaskEventKind::MisfireCatchUp => "catch_up",
            TaskEventKind::MisfireSkipped => "skipped",
            _ => continue,
        };
        p.tally.add(crate::prometheus::MISFIRES, &task.config.app, Some(("action", action)), 1);
        p.alerts.push(AlertCause {
            event: AlertEvent::Misfire,
            app: task.config.app.clone(),
            task_name: task.name.clone(),
            instance_id: None,
            attempt: 0,
            at: now,
            message: message.clone(),
            occurrence: format!("t{}:{}", task.id, crate::model::to_micros(now)),
        });
    }
    Ok(())
}

/// Admits `plan`'s fires of `task` (index `ti`) one by one: the overlap policy decides PENDING,
/// SKIPPED or replacing (CANCEL_OTHER), and a PENDING fire past max-pending is coalesced (counted,
/// with a task event when a run of them begins and ends) instead of born. Returns the task's run of
/// coalesced fires after these.
async fn admit_fires(
    tx: &mut Tx,
    rc: &RoundCtx<'_>,
    p: &mut RoundPlan,
    ti: usize,
    task: &Task,
    plan: &FirePlan,
    waiting: &mut u64,
) -> StoreResult<Option<(Ts, u64)>> {
    let (now, scheduler_id) = (rc.now, rc.scheduler_id);
    let policy = task.config.concurrency;
    let active = if policy.decides_at_fire_time() && !plan.fires.is_empty() {
        tx.instances().active_instances_of(task.id, ACTIVE_READ).await?
    } else {
        Vec::new()
    };
    // CANCEL_OTHER cancels what waits, so its fires are never held back by max-pending.
    let max_pending = match policy {
        crate::model::ConcurrencyPolicy::CancelOther => u64::MAX,
        _ => u64::from(task.config.placement.max_pending.get()),
    };
    let mut run = task.coalesced;
    for (n, f) in plan.fires.iter().enumerate() {
        let run_at = window::run_time(&task.name, f.fire_at, task.config.timing.jitter);
        let admission = overlap::admit(task, &plan.fires, n, &active, run_at);
        let (status, reason) = (admission.status, admission.reason);
        p.cancels.extend(admission.cancel.iter().map(|id| (*id, f.fire_at)));
        if status == InstanceStatus::Pending && *waiting >= max_pending {
            if run.is_none() {
                let message = format!(
                    "fire at {} not run: {waiting} instances of this task are PENDING (max-pending {max_pending}); \
                     later fires are counted until one runs",
                    f.fire_at.to_rfc3339()
                );
                tx.tasks()
                    .insert_task_event(task.id, &task.name, now, TaskEventKind::Coalesced, scheduler_id, &message)
                    .await?;
            }
            run = Some(run.map_or((f.fire_at, 1), |(since, count)| (since, count + 1)));
            continue;
        }
        if status == InstanceStatus::Pending
            && let Some((since, count)) = run.take()
        {
            let message = format!(
                "{count} fire(s) from {} to the one before {} were not run: max-pending {max_pending} was reached",
                since.to_rfc3339(),
                f.fire_at.to_rfc3339()
            );
            tx.tasks()
                .insert_task_event(task.id, &task.name, now, TaskEventKind::Coalesced, scheduler_id, &message)
                .await?;
        }
        let new = NewInstance {
            fire_at: f.fire_at,
            available_at: run_at,
            key: fire_key(f.fire_at),
            source: f.source,
            status,
            params: task.config.params.clone(),
            reason,
            trace_parent: rc.traces.new_root(),
            route: shape::route_of(task, &task.config.params),
            tags: shape::fire_tags(task, f.schedule),
            lineage: Default::default(),
        };
        let born = birth::conceive(ti, task, new, rc.workers);
        if born.new.status == InstanceStatus::Pending {
            *waiting += 1;
        } else if let Some(plans) = born.children.as_ref().filter(|_| born.new.status == InstanceStatus::Waiting) {
            *waiting += plans.len() as u64;
        }
        p.births.push(born);
    }
    Ok(run)
}

/// One trigger transaction: claims up to `limit` tasks due by `horizon` (tasks with an overlap
/// policy other than ALLOW: due by `now`) with SKIP LOCKED where supported, creates their instances
/// as planned (PENDING, or SKIPPED by the overlap policy; CANCEL_OTHER cancels the active ones),
/// ends pauses whose time is up, records misfire decisions, and advances their next fire times.
pub async fn trigger_due(
    store: &Store,
    now: Ts,
    horizon: Ts,
    limit: u32,
    planner: &dyn Planner,
    scheduler_id: &str,
    traces: &Traces,
) -> StoreResult<TriggerRound> {
    let t0 = std::time::Instant::now();
    let span_start = std::time::SystemTime::now();
    let mut tx = store.begin().await?;
    let claimed = tx.tasks().claim_due_tasks(now, horizon, limit).await?;
    let mut round = TriggerRound { tasks: claimed.len(), ..TriggerRound::default() };
    let mut tasks = Vec::with_capacity(claimed.len());
    for c in claimed {
        match c {
            Ok(t) => tasks.push(t),
            Err((id, e)) => {
                // An unreadable row must not stall every other task: disable it, loudly.
                tracing::error!(task_id = id, error = %e, "disabling unreadable task");
                tx.tasks().disable_task(id, now).await?;
            }
        }
    }
    let t_select = t0.elapsed();
    let calendars =
        tx.calendars().calendar_dates(tasks.iter().filter_map(|t| t.config.timing.calendar.as_deref())).await?;
    let no_dates = BTreeSet::new();
    // Fires beyond a task's max_pending are coalesced: PENDING instances per task with fires.
    // A one-time task fires once: it cannot pile up, and 100,000 of them due together (the full
    // lifecycle benchmark) need no count.
    let firing: Vec<i64> = tasks
        .iter()
        .filter(|t| t.next_fire_at.is_some() && t.config.schedule.kind() != crate::model::ScheduleKind::OneTime)
        .map(|t| t.id)
        .collect();
    let mut pending = if firing.is_empty() {
        HashMap::new()
    } else {
        tx.instances().count_by_task(&firing, &[InstanceStatus::Pending]).await?
    };
    let workers =
        if tasks.iter().any(shape::needs_workers) { tx.cluster().list_workers(None).await? } else { Vec::new() };
    let rc = RoundCtx { now, scheduler_id, traces, workers: &workers };
    let mut p = RoundPlan::default();
    for (ti, task) in tasks.iter().enumerate() {
        let calendar = task.config.timing.calendar.as_ref().and_then(|c| calendars.get(c)).unwrap_or(&no_dates);
        let waiting = pending.entry(task.id).or_insert(0);
        plan_task(&mut tx, &rc, &mut p, ti, task, calendar, planner, waiting).await?;
    }
    let RoundPlan { births: planned, next_fires, coalesced, alerts, cancels, tally } = p;
    let t_plan = t0.elapsed();
    // Instances that CANCEL_OTHER fires replace, canceled before their successors exist (through
    // the state machine, like any cancel: a held attempt's worker is told to stop).
    let canceled = cancel_replaced(&mut tx, &cancels, now, scheduler_id).await?;
    round.canceled = canceled.as_ref().map_or(0, |(n, _)| *n);
    tx.tasks().set_next_fires(&next_fires).await?;
    tx.tasks().set_coalesced(&coalesced).await?;
    let t_next = t0.elapsed();
    // The fires are born, with their children, events and alerts (the misfires' among them).
    let task_refs: Vec<&Task> = tasks.iter().collect();
    let mut born = birth::bear(&mut tx, &task_refs, &planned, alerts, now, scheduler_id, traces.is_on()).await?;
    round.skipped = born.skipped;
    round.created = std::mem::take(&mut born.pending);
    let events = born.events;
    let t_born = t0.elapsed();
    tx.commit().await?;
    if let Some((_, persisted)) = canceled {
        persisted.after_commit(&crate::routing::RoutingState::default());
    }
    born.after_commit(traces, span_start);
    tally.record();
    tracing::debug!(
        tasks = round.tasks,
        instances = events,
        took_us = t0.elapsed().as_micros() as u64,
        select_us = t_select.as_micros() as u64,
        plan_us = (t_plan - t_select).as_micros() as u64,
        next_fires_us = (t_next - t_plan).as_micros() as u64,
        births_us = (t_born - t_next).as_micros() as u64,
        commit_us = (t0.elapsed() - t_born).as_micros() as u64,
        "trigger_due"
    );
    Ok(round)
}
