//! AdminService.ApplyTasks: tasks as code. A task set (what `axctl apply` reads from files) is made
//! true in one transaction: missing tasks created, differing fields changed, and with prune the
//! scope's other tasks deleted. A dry run runs the same transaction and rolls it back, so that the
//! plan it answers is exactly what the apply would do, errors included.

use std::collections::{BTreeSet, HashMap};

use super::*;
use crate::{
    schedule::next_fire_from,
    transitions::{DeleteOutcome, delete_locked_task},
};

/// The most tasks one call may hold.
pub(super) const MAX_APPLY: usize = 1000;
/// The longest change note.
const MAX_NOTE: usize = 1000;
/// Tasks read per statement when prune lists the scope.
const PAGE: u32 = 1000;

/// Whether the field `field` (an update-mask name) is the same in `a` and `b`, as sent.
fn same_field(a: &pb::TaskSpec, b: &pb::TaskSpec, field: &str) -> bool {
    macro_rules! same {
        ($($f:ident),* $(,)?) => {
            match field {
                $(stringify!($f) => a.$f == b.$f,)*
                _ => false,
            }
        };
    }
    same!(
        app,
        handler,
        description,
        schedule,
        params,
        enabled,
        misfire_policy,
        misfire_threshold,
        max_catch_up,
        concurrency_policy,
        routing,
        timeout,
        retry_policy,
        labels,
        selector,
        retry_on,
        shards,
        hash_key,
        priority,
        max_running,
        max_pending,
        cooldown_after,
        cooldown,
        start_time,
        end_time,
        exclude_dates,
        calendar,
        jitter,
        on_success,
        on_failure,
        after_all,
        concurrency_key,
        concurrency_limit,
        unique_key,
        unique_for,
        must_finish_within,
        on_event,
        event_filter,
        search_params,
        extra_schedules,
    )
}

/// A fixed rate or fixed delay written without its anchor keeps the stored one while its kind and
/// interval are unchanged (otherwise each apply would move it to "now + interval").
fn keep_anchor(want: &mut pb::TaskSpec, have: &pb::TaskSpec) {
    keep_anchor_of(want.schedule.as_mut(), have.schedule.as_ref());
    for (i, w) in want.extra_schedules.iter_mut().enumerate() {
        keep_anchor_of(Some(w), have.extra_schedules.get(i));
    }
}

/// [`keep_anchor`] for one schedule and the stored one in its place.
fn keep_anchor_of(want: Option<&mut pb::Schedule>, have: Option<&pb::Schedule>) {
    use pb::schedule::Kind;
    let have = have.and_then(|s| s.kind.as_ref());
    let want = want.and_then(|s| s.kind.as_mut());
    let (w, h) = match (want, have) {
        (Some(Kind::FixedRate(w)), Some(Kind::FixedRate(h)))
        | (Some(Kind::FixedDelay(w)), Some(Kind::FixedDelay(h))) => (w, h),
        _ => return,
    };
    if w.start_at.is_none() && w.interval == h.interval {
        w.start_at = h.start_at;
    }
}

/// The fields of `want` that differ from the stored `task` (update-mask names, in the mask's
/// order) and the task's configuration with them. A field sent exactly as stored is not checked
/// again (an exported one-time schedule or end time in the past stays valid); one sent otherwise
/// is validated as UpdateTask would and counts as changed only if it changes the configuration
/// (a default left out equals the default stored).
fn diff(task: &Task, want: &pb::TaskSpec, prefix: &str, now: Ts) -> Result<(Vec<&'static str>, TaskConfig)> {
    let have = convert::spec_to_pb(&task.name, &task.config);
    let mut want = want.clone();
    keep_anchor(&mut want, &have);
    let mut c = task.config.clone();
    let mut changed = Vec::new();
    for field in convert::UPDATABLE_FIELDS {
        if same_field(&have, &want, field) {
            continue;
        }
        let before = c.clone();
        apply_field(&mut c, &want, field, prefix, now)?;
        if c != before {
            changed.push(*field);
        }
    }
    if !changed.is_empty() {
        convert::check_placement(&c, &task.name, prefix)?;
        convert::check_timing(&c, &task.name, prefix, now)?;
    }
    Ok((changed, c))
}

/// An error of [`convert::task_from_pb`] (whose fields read `task.…`) as one of `tasks[i]`.
fn at_index(e: Error, prefix: &str) -> Error {
    match e {
        Error::InvalidArgument { field, reason } => {
            let rest = field.strip_prefix("task").unwrap_or(&field);
            Error::InvalidArgument { field: format!("{prefix}{rest}"), reason }
        }
        other => other,
    }
}

/// The edges a task's configuration declares, as `a -on_success-> b`.
fn edges_of(name: &str, c: &TaskConfig) -> BTreeSet<String> {
    c.flow
        .edges(name)
        .into_iter()
        .map(|(from, kind, to)| {
            let field = match kind {
                crate::model::EdgeKind::Success => "on_success",
                crate::model::EdgeKind::Failure => "on_failure",
                crate::model::EdgeKind::After => "after_all",
            };
            format!("{from} -{field}-> {to}")
        })
        .collect()
}

/// A [`pb::TaskChange`] from the task before (`None`: created) and after (`None`: deleted).
fn change_of(
    kind: pb::TaskChangeKind,
    name: &str,
    before: Option<&Task>,
    after: Option<&Task>,
    fields: &[&str],
) -> pb::TaskChange {
    let edges = |t: Option<&Task>| t.map(|t| edges_of(name, &t.config)).unwrap_or_default();
    let (old, new) = (edges(before), edges(after));
    let calendar = |t: Option<&Task>| t.and_then(|t| t.config.timing.calendar.clone());
    let (old_cal, new_cal) = (calendar(before), calendar(after));
    let calendars = if old_cal == new_cal { Vec::new() } else { old_cal.into_iter().chain(new_cal).collect() };
    pb::TaskChange {
        name: name.to_owned(),
        app: after.or(before).map(|t| t.config.app.clone()).unwrap_or_default(),
        kind: kind.into(),
        changed_fields: fields.iter().map(|f| (*f).to_owned()).collect(),
        next_fire_before: before.and_then(|t| t.next_fire_at).map(convert::ts_to_pb),
        next_fire_after: after.and_then(|t| t.next_fire_at).map(convert::ts_to_pb),
        edges_removed: old.difference(&new).cloned().collect(),
        edges_added: new.difference(&old).cloned().collect(),
        calendars,
    }
}

impl AdminApi {
    pub(super) async fn apply_tasks_(
        &self,
        req: &Request<pb::ApplyTasksRequest>,
        n: &mut Note,
    ) -> Result<pb::ApplyTasksResponse> {
        let r = req.get_ref();
        // A dry run changes nothing: logged, not audited.
        n.mutating = !r.dry_run;
        let grant = self.caller(req, Access::Manage, n)?;
        if r.tasks.len() > MAX_APPLY {
            return Err(Error::invalid("tasks", format!("{} tasks; at most {MAX_APPLY} per call", r.tasks.len())));
        }
        validate::text("change_note", &r.change_note, MAX_NOTE)?;
        let mut scope: BTreeSet<String> = BTreeSet::new();
        for (i, app) in r.apps.iter().enumerate() {
            validate::app(&format!("apps[{i}]"), app)?;
            grant.app(app)?;
            scope.insert(app.clone());
        }
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, t) in r.tasks.iter().enumerate() {
            validate::task_name(&format!("tasks[{i}].name"), &t.name)?;
            if let Some(j) = seen.insert(t.name.as_str(), i) {
                return Err(Error::invalid(
                    format!("tasks[{i}].name"),
                    format!("{} is also the name of tasks[{j}]; each task appears once", validate::quote(&t.name)),
                ));
            }
            validate::app(&format!("tasks[{i}].app"), &t.app)?;
            if !r.apps.is_empty() && !scope.contains(&t.app) {
                return Err(Error::invalid(
                    format!("tasks[{i}].app"),
                    format!(
                        "{} is not one of the apps the call names ({})",
                        validate::quote(&t.app),
                        scope.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            grant.app(&t.app)?;
        }
        if r.apps.is_empty() {
            scope = r.tasks.iter().map(|t| t.app.clone()).collect();
        }
        if r.prune && scope.is_empty() {
            return Err(Error::invalid("apps", "is required with prune when tasks is empty: the apps to prune"));
        }
        n.target = "tasks".to_owned();
        n.app = if scope.len() == 1 { scope.iter().next().cloned().unwrap_or_default() } else { String::new() };

        let now = self.now();
        let actor = grant.identity.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        let mut tx = self.core.pools.admin.begin().await?;
        // Every change of chains and DAG edges takes this lock: concurrent applies, and tasks
        // created, changed or deleted meanwhile by other calls, wait for this one.
        tx.flow().lock_graph().await?;
        let names: Vec<&str> = r.tasks.iter().map(|t| t.name.as_str()).collect();
        let stored: HashMap<String, Task> =
            tx.tasks().tasks_by_names(&names).await?.into_iter().map(|t| (t.name.clone(), t)).collect();
        let mut changes = Vec::with_capacity(r.tasks.len());
        // Tasks whose calendar and edges are checked and written once every task of the set exists.
        let mut to_link: Vec<(String, Task, bool)> = Vec::new();
        for (i, spec) in r.tasks.iter().enumerate() {
            let prefix = format!("tasks[{i}]");
            let Some(task) = stored.get(&spec.name) else {
                let (name, config) = convert::task_from_pb(spec, now).map_err(|e| at_index(e, &prefix))?;
                let calendar = self.calendar_of(&mut tx, &config).await?;
                let next_fire_at = next_fire_from(&config, &calendar, None, now);
                let t = match tx.tasks().create_task(&NewTask { name, config, next_fire_at }, now, &a).await {
                    Ok(t) => t,
                    Err(StoreError::UniqueViolation(_)) => {
                        return Err(Error::AlreadyExists(format!("task {}", validate::quote(&spec.name))));
                    }
                    Err(e) => return Err(Error::from(e)),
                };
                changes.push(change_of(pb::TaskChangeKind::Create, &t.name, None, Some(&t), &[]));
                to_link.push((prefix, t, false));
                continue;
            };
            // Answered as CreateTask answers a name taken in an app outside the caller's scope.
            if grant.app(&task.config.app).is_err() {
                return Err(Error::AlreadyExists(format!("task {}", validate::quote(&spec.name))));
            }
            let (fields, config) = diff(task, spec, &prefix, now)?;
            if fields.is_empty() {
                changes.push(change_of(pb::TaskChangeKind::Unchanged, &task.name, Some(task), Some(task), &[]));
                continue;
            }
            let old = &task.config;
            let reschedule = reschedules(old, &config);
            let relink = config.timing.calendar != old.timing.calendar || config.flow != old.flow;
            let next_fire_at = if reschedule {
                let calendar = self.calendar_of(&mut tx, &config).await?;
                Some(next_fire_from(&config, &calendar, task.pause.as_ref(), now))
            } else {
                None
            };
            let update = TaskUpdate {
                id: task.id,
                expected_version: task.version,
                config,
                next_fire_at,
                event: (TaskEventKind::Updated, format!("applied; changed: {}", fields.join(", "))),
            };
            let Some(t) = tx.tasks().update_task(&update, Some(&task.config), now, &a).await? else {
                return Err(Error::Aborted(format!(
                    "task {} changed while the set was applied; nothing was changed, retry",
                    validate::quote(&task.name)
                )));
            };
            changes.push(change_of(pb::TaskChangeKind::Update, &t.name, Some(task), Some(&t), &fields));
            if relink {
                to_link.push((prefix, t, !old.flow.names().is_empty()));
            }
        }
        for (prefix, t, had_edges) in &to_link {
            graph::link_task(&mut tx, &grant, t.id, &t.name, &t.config, prefix, *had_edges).await?;
        }
        let mut deleted = Vec::new();
        if r.prune {
            let apps: Vec<String> = scope.iter().cloned().collect();
            let mut doomed = Vec::new();
            let mut after: Option<String> = None;
            loop {
                let page = tx.tasks().list_tasks(Some(&apps), after.as_deref(), PAGE).await?;
                after = page.last().map(|t| t.name.clone());
                let full = page.len() == PAGE as usize;
                doomed.extend(page.into_iter().filter(|t| !seen.contains_key(t.name.as_str())));
                if !full {
                    break;
                }
            }
            for task in doomed {
                let Some(id) = tx.tasks().lock_task(&task.name).await? else { continue };
                match delete_locked_task(&mut tx, id, &task.name, now, &a, &self.core.routing).await? {
                    (DeleteOutcome::Named(ids), _) => {
                        let naming = tx.tasks().tasks_by_ids(&ids).await?;
                        let names: Vec<&str> = naming.iter().map(|t| t.name.as_str()).collect();
                        return Err(Error::FailedPrecondition(format!(
                            "prune would delete task {}, which the chains or DAG edges of {} name; add it to the \
                             set or change those first. Nothing was changed",
                            validate::quote(&task.name),
                            names.join(", ")
                        )));
                    }
                    (_, persisted) => deleted.extend(persisted),
                }
                changes.push(change_of(pb::TaskChangeKind::Delete, &task.name, Some(&task), None, &[]));
            }
        }
        let count = |k: pb::TaskChangeKind| changes.iter().filter(|c| c.kind == k as i32).count();
        n.detail = format!(
            "{} created, {} updated, {} deleted, {} unchanged{}",
            count(pb::TaskChangeKind::Create),
            count(pb::TaskChangeKind::Update),
            count(pb::TaskChangeKind::Delete),
            count(pb::TaskChangeKind::Unchanged),
            if r.change_note.is_empty() { String::new() } else { format!("; note: {}", r.change_note) }
        );
        if r.dry_run {
            // Every change rolled back, and its locks released before the plan is answered.
            tx.rollback().await?;
        } else {
            tx.commit().await?;
            self.core.signals.trigger.notify_one();
            for p in deleted {
                p.after_commit(&self.core.routing);
            }
            n.after = Some(
                serde_json::json!({
                    "change_note": r.change_note,
                    "prune": r.prune,
                    "apps": scope,
                    "changes": changes
                        .iter()
                        .filter(|c| c.kind != pb::TaskChangeKind::Unchanged as i32)
                        .map(|c| serde_json::json!({
                            "name": c.name,
                            "kind": pb::TaskChangeKind::try_from(c.kind).map(|k| k.as_str_name()).unwrap_or("?"),
                            "fields": c.changed_fields,
                        }))
                        .collect::<Vec<_>>(),
                })
                .to_string(),
            );
        }
        Ok(pb::ApplyTasksResponse { changes, applied: !r.dry_run })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_updatable_field_is_compared() {
        let spec = pb::TaskSpec::default();
        for f in convert::UPDATABLE_FIELDS {
            assert!(same_field(&spec, &spec, f), "same_field does not know {f}");
        }
    }

    #[test]
    fn an_interval_without_anchor_keeps_the_stored_one() {
        use pb::schedule::Kind;
        let interval = Some(prost_types::Duration { seconds: 3, nanos: 0 });
        let anchor = Some(prost_types::Timestamp { seconds: 1_700_000_000, nanos: 0 });
        let spec = |kind| pb::TaskSpec { schedule: Some(pb::Schedule { kind: Some(kind) }), ..Default::default() };
        let have = spec(Kind::FixedRate(pb::IntervalSchedule { interval, start_at: anchor }));
        let mut want = spec(Kind::FixedRate(pb::IntervalSchedule { interval, start_at: None }));
        keep_anchor(&mut want, &have);
        assert_eq!(want, have);
        // Another interval or kind is a new schedule: its anchor is not kept.
        let other = Some(prost_types::Duration { seconds: 4, nanos: 0 });
        let mut want = spec(Kind::FixedRate(pb::IntervalSchedule { interval: other, start_at: None }));
        keep_anchor(&mut want, &have);
        assert!(matches!(&want.schedule.unwrap().kind, Some(Kind::FixedRate(i)) if i.start_at.is_none()));
        let mut want = spec(Kind::FixedDelay(pb::IntervalSchedule { interval, start_at: None }));
        keep_anchor(&mut want, &have);
        assert!(matches!(&want.schedule.unwrap().kind, Some(Kind::FixedDelay(i)) if i.start_at.is_none()));
    }
}
