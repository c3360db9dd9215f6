//! The intake table: instances that applications create inside their own transactions, on the
//! database axd uses (README "Delayed enqueue from code"). An application INSERTs a row into
//! `ax_intake`; once its transaction commits, the trigger loop of some axd turns the row into one
//! instance and deletes it, in one transaction — so a rolled-back application transaction creates
//! nothing, and a committed row creates exactly one instance (one per idempotency key: a row
//! without a key gets `intake:<row id>`). A row axd cannot accept (no such task, bad params, a
//! reserved key, a task of another app than the row names) keeps the reason in its `error` column
//! and is not read again. A row of a task with a uniqueness window whose value an instance holds
//! creates nothing (like a row whose key has an instance). An event row (`event_name` set,
//! `task_name` empty) creates the instances of the app's subscribed tasks, as PublishEvent does
//! (`birth::events`). Every row read is audited (rpc `Intake`, actor `intake:<the role that
//! inserted it>`): the instance it created, the instance its key already had, or why it was refused.

use std::collections::{HashMap, HashSet};

use crate::{
    birth::{
        Spawn, Spawned,
        events::{Event, intake_event},
        shape, spawn,
    },
    error::StoreResult,
    model::{InstanceSource, InstanceStatus, Task, Ts, add},
    store::{AuditEntry, IntakeRow, NewInstance, Store, UniqueHold},
    traces::Traces,
    validate,
};

/// Rows read per transaction.
pub const INTAKE_BATCH: u32 = 500;

/// Latest an intake row may ask to run (like TriggerTask's `run_at`).
const MAX_AHEAD: std::time::Duration = std::time::Duration::from_secs(366 * 86_400);

/// What one intake transaction did.
#[derive(Debug, Default)]
pub struct IntakeRound {
    /// Rows read.
    pub rows: usize,
    /// Instances created PENDING: (id, app, available at).
    pub created: Vec<(i64, String, Ts)>,
    /// Rows refused (kept with their error).
    pub refused: usize,
}

/// When a row's instances run: its `run_at_us`, or `delay_us` after its insertion, or now; a time
/// that has passed (the row waited for an axd) is now.
fn run_at_of(row: &IntakeRow, now: Ts) -> Result<Ts, String> {
    let run_at = match (row.run_at, row.delay) {
        (Some(at), _) => at,
        (None, Some(d)) => add(row.created_at, d),
        (None, None) => now,
    };
    if run_at > add(now, MAX_AHEAD) {
        return Err(format!("run_at_us: {} is more than 366 days ahead", run_at.to_rfc3339()));
    }
    Ok(run_at.max(now))
}

/// An event row's app, payload and id, or why it is refused.
fn accept_event<'r>(
    row: &'r IntakeRow,
    name: &str,
) -> Result<(&'r str, serde_json::Map<String, serde_json::Value>, String), String> {
    if !row.task_name.is_empty() {
        return Err("task_name: must be empty in an event row (event_name is set)".to_owned());
    }
    let app = row.app.as_deref().ok_or_else(|| "app: required in an event row".to_owned())?;
    validate::event_name("event_name", name).map_err(|e| e.to_string())?;
    if let Some(bytes) = row.params_bytes {
        return Err(format!("params: is {bytes} bytes, at most {} allowed", validate::MAX_PARAMS_BYTES));
    }
    let payload = validate::params("params", row.params.as_deref().unwrap_or("{}")).map_err(|e| e.to_string())?;
    let Ok(serde_json::Value::Object(payload)) = serde_json::from_str(&payload) else {
        return Err("params: an event's payload must be a JSON object".to_owned());
    };
    let id = match &row.key {
        Some(k) => {
            validate::idempotency_key("idempotency_key", k).map_err(|e| e.to_string())?;
            k.clone()
        }
        None => format!("intake:{}", row.id),
    };
    Ok((app, payload, id))
}

/// Why a row cannot become an instance, or the instance it becomes.
fn accept(row: &IntakeRow, task: Option<&&Task>, now: Ts, traces: &Traces) -> Result<NewInstance, String> {
    // A row bound to an app names only that app's tasks; whether a task of that name exists in
    // another app is not said.
    let task =
        task.filter(|t| row.app.as_deref().is_none_or(|app| app == t.config.app)).ok_or_else(|| match &row.app {
            Some(app) => {
                format!("task_name: no task named {} in app {}", validate::quote(&row.task_name), validate::quote(app))
            }
            None => format!("task_name: no task named {}", validate::quote(&row.task_name)),
        })?;
    if let Some(bytes) = row.params_bytes {
        return Err(format!("params: is {bytes} bytes, at most {} allowed", validate::MAX_PARAMS_BYTES));
    }
    let params = match &row.params {
        Some(p) => validate::params("params", p).map_err(|e| e.to_string())?,
        None => task.config.params.clone(),
    };
    shape::check_keys(task, &params).map_err(|why| format!("params: {why}"))?;
    let key = match &row.key {
        Some(k) => {
            validate::idempotency_key("idempotency_key", k).map_err(|e| e.to_string())?;
            k.clone()
        }
        None => format!("intake:{}", row.id),
    };
    let run_at = run_at_of(row, now)?;
    let reason = if run_at > now {
        format!(
            "from ax_intake row {}, to run at {}",
            row.id,
            run_at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
        )
    } else {
        format!("from ax_intake row {}", row.id)
    };
    Ok(NewInstance {
        fire_at: run_at,
        available_at: run_at,
        key,
        source: InstanceSource::Intake,
        status: InstanceStatus::Pending,
        route: shape::route_of(task, &params),
        tags: shape::search_tags(task, &params),
        params,
        reason,
        trace_parent: traces.new_root(),
        lineage: Default::default(),
    })
}

/// One intake transaction: reads up to `limit` committed rows, creates their instances, deletes
/// them (or marks them refused).
pub async fn consume_intake(
    store: &Store,
    now: Ts,
    limit: u32,
    scheduler_id: &str,
    traces: &Traces,
) -> StoreResult<IntakeRound> {
    let started = std::time::SystemTime::now();
    let mut tx = store.begin().await?;
    let rows = tx.intake().claim_intake(limit).await?;
    let mut round = IntakeRound { rows: rows.len(), ..IntakeRound::default() };
    if rows.is_empty() {
        return Ok(round);
    }
    let mut names: Vec<&str> = rows.iter().map(|r| r.task_name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let tasks = tx.tasks().tasks_by_names(&names).await?;
    let task_refs: Vec<&Task> = tasks.iter().collect();
    let by_name: HashMap<&str, (usize, &&Task)> =
        task_refs.iter().enumerate().map(|(n, t)| (t.name.as_str(), (n, t))).collect();
    let mut spawns = Vec::new();
    // The row of each spawn, in order.
    let mut born: Vec<&IntakeRow> = Vec::new();
    let mut audits = Vec::new();
    let mut seen: HashSet<(i64, String)> = HashSet::new();
    let mut consumed = Vec::new();
    // (index into born, task, value) of the rows that took a uniqueness value.
    let mut uniques: Vec<(usize, i64, String)> = Vec::new();
    // What event rows created, logged and traced after the commit with the rest.
    let mut by_events = Spawned::default();
    for row in &rows {
        if let Some(name) = &row.event_name {
            let refused = match accept_event(row, name)
                .and_then(|(app, payload, id)| Ok((app, payload, id, run_at_of(row, now)?)))
            {
                Err(why) => Some(why),
                Ok((app, payload, id, run_at)) => {
                    let actor = audit(row, now, app, "ok", String::new()).actor;
                    let event = Event { name, id: &id, payload: &payload, actor: &actor };
                    match intake_event(&mut tx, app, &event, run_at, now, scheduler_id, traces).await? {
                        Err(why) => Some(why),
                        Ok((spawned, filtered_out)) => {
                            consumed.push(row.id);
                            let ids: Vec<String> = spawned.created.iter().map(|(id, _)| id.to_string()).collect();
                            let mut detail = if ids.is_empty() {
                                format!("event {name} id {}: no new instance", validate::quote(&id))
                            } else {
                                format!("event {name} id {}: instances {}", validate::quote(&id), ids.join(", "))
                            };
                            if !filtered_out.is_empty() {
                                detail.push_str(&format!("; filtered out: {}", filtered_out.join(", ")));
                            }
                            round.created.extend(spawned.pending.iter().cloned());
                            by_events.merge(spawned);
                            audits.push(audit(row, now, app, "ok", detail));
                            None
                        }
                    }
                }
            };
            if let Some(why) = refused {
                tracing::warn!(intake_row = row.id, event = %name, error = %why, "refused an ax_intake event row");
                tx.intake().refuse_intake(row.id, &why).await?;
                audits.push(audit(row, now, row.app.as_deref().unwrap_or(""), "invalid_argument", why));
                round.refused += 1;
            }
            continue;
        }
        let found = by_name.get(row.task_name.as_str());
        match accept(row, found.map(|(_, t)| *t), now, traces) {
            Ok(new) => {
                consumed.push(row.id);
                let (n, t) = found.copied().expect("accepted rows name a task");
                // Two rows of one batch with one key: the first makes the instance.
                if !seen.insert((t.id, new.key.clone())) {
                    let detail = format!("no new instance: row {} has key {} too", row.id, validate::quote(&new.key));
                    audits.push(audit(row, now, &t.config.app, "ok", detail));
                    continue;
                }
                // A task with a uniqueness window: a value held (by an earlier row of this batch,
                // or by an instance triggered less than the window ago) makes no instance.
                if let Some((value, window)) = shape::unique_of(t, &new.params) {
                    let path = t.config.placement.unique_key.as_deref().unwrap_or_default();
                    let held = if uniques.iter().any(|(_, task, v)| *task == t.id && *v == value) {
                        Some(format!("an earlier row of this batch has {path} = {} too", validate::quote(&value)))
                    } else {
                        match tx.limits().take_unique(t.id, &value, now, add(now, window)).await? {
                            UniqueHold::Taken => None,
                            UniqueHold::HeldBy(id, until) => Some(format!(
                                "{path} = {} is held by instance {id} until {}",
                                validate::quote(&value),
                                until.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                            )),
                        }
                    };
                    if let Some(why) = held {
                        audits.push(audit(row, now, &t.config.app, "ok", format!("no new instance: {why}")));
                        continue;
                    }
                    uniques.push((born.len(), t.id, value));
                }
                born.push(row);
                spawns.push(Spawn { task: n, new });
            }
            Err(why) => {
                tracing::warn!(intake_row = row.id, task = %row.task_name, error = %why, "refused an ax_intake row");
                tx.intake().refuse_intake(row.id, &why).await?;
                audits.push(audit(row, now, row.app.as_deref().unwrap_or(""), "invalid_argument", why));
                round.refused += 1;
            }
        }
    }
    let births: Vec<(&str, String)> =
        spawns.iter().map(|s| (task_refs[s.task].config.app.as_str(), s.new.key.clone())).collect();
    let spawned: Spawned = spawn(&mut tx, &task_refs, spawns, now, scheduler_id).await?;
    let mut made = vec![None; born.len()];
    for &(id, n) in &spawned.created {
        made[n] = Some(id);
    }
    for (n, task, value) in &uniques {
        tx.limits().hold_unique(*task, value, made[*n]).await?;
    }
    for ((row, (app, key)), made) in born.iter().zip(&births).zip(made) {
        let mut e = audit(row, now, app, "ok", format!("from ax_intake row {} (key {})", row.id, validate::quote(key)));
        match made {
            Some(id) => e.target = format!("instance/{id}"),
            None => e.detail = format!("no new instance: key {} has one already", validate::quote(key)),
        }
        audits.push(e);
    }
    tx.audit().insert_audits(&audits).await?;
    tx.intake().delete_intake(&consumed).await?;
    tx.commit().await?;
    round.created.extend(spawned.pending.iter().cloned());
    spawned.after_commit(traces, started);
    by_events.after_commit(traces, started);
    Ok(round)
}

/// The audit entry of an intake row (target `intake/<row id>` until it names an instance).
fn audit(row: &IntakeRow, now: Ts, app: &str, outcome: &str, detail: String) -> AuditEntry {
    AuditEntry {
        id: 0,
        at: now,
        // ax_audit.actor holds 255 characters; a MariaDB account (user@host) may be as long.
        actor: if row.inserted_by.is_empty() {
            "intake".into()
        } else {
            format!("intake:{}", row.inserted_by).chars().take(255).collect()
        },
        rpc: "Intake".into(),
        target: format!("intake/{}", row.id),
        app: app.into(),
        outcome: outcome.into(),
        detail,
        before: None,
        after: None,
    }
}
