//! What a new instance of a task looks like: the routing inputs it copies from its task (priority,
//! selector, retry target, hash key), a note on its first event when no connected worker matches
//! its selector, and — for broadcast and sharded tasks — the parent it becomes and its children.
//! Used by scheduled fires and manual triggers alike.

use crate::{
    alerts::{AlertCause, AlertEvent},
    model::{InstanceRoute, InstanceStatus, Routing, Task, Ts, WorkerRecord},
    routing::{
        fanout::{self, ChildPlan},
        hash,
        selector::Selector,
    },
    store::NewInstance,
};

/// How a fire of a task is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// One instance.
    Single,
    /// A parent (WAITING) and these children; none for a broadcast that found no worker.
    Fanout(Vec<ChildPlan>),
}

/// The selector of a task, parsed (a stored selector that no longer parses matches nothing, and
/// says so on the instance's trail).
fn selector_of(task: &Task) -> Result<Selector, String> {
    Selector::parse(&task.config.placement.selector)
}

/// The shape of a fire of `task` now, given the cluster's worker sessions.
pub fn shape(task: &Task, workers: &[WorkerRecord]) -> Shape {
    let c = &task.config;
    if c.routing == Routing::Broadcast {
        let sel = selector_of(task).unwrap_or(Selector { requirements: Vec::new() });
        return Shape::Fanout(fanout::broadcast(workers, &c.app, &c.handler, &sel));
    }
    match c.placement.shards {
        Some(n) => Shape::Fanout(fanout::shards(n.get())),
        None => Shape::Single,
    }
}

/// Whether the fire needs the cluster's worker sessions (a selector to check, or a broadcast).
pub fn needs_workers(task: &Task) -> bool {
    task.config.routing == Routing::Broadcast || !task.config.placement.selector.is_empty()
}

/// Whether `params` (a trigger's or an intake row's) have every field the task keys its instances
/// by — its HASH key, concurrency key and uniqueness key; `Err` says which is missing.
pub fn check_keys(task: &Task, params: &str) -> Result<(), String> {
    let p = &task.config.placement;
    if task.config.routing == Routing::Hash
        && let Some(field) = &p.hash_key
    {
        hash::key_of(params, Some(field), &task.name)?;
    }
    for path in [&p.concurrency_key, &p.unique_key].into_iter().flatten() {
        crate::routing::keypath::key_of(params, path)?;
    }
    Ok(())
}

/// The tags `params` give an instance of `task`: `params.PATH` = its value for each of the task's
/// search params found in them (a missing path gives none).
pub fn search_tags(task: &Task, params: &str) -> Vec<(String, String)> {
    let paths = &task.config.placement.search_params;
    if paths.is_empty() {
        return Vec::new();
    }
    paths
        .iter()
        .filter_map(|path| crate::routing::keypath::key_of(params, path).ok().map(|v| (path.clone(), v)))
        .collect()
}

/// The tags of a scheduled fire's instance: its search params', and for a task with several
/// schedules [`SCHEDULE_TAG`] naming the one that made it (`schedule`: its [`crate::schedule::schedule_path`] index).
pub fn fire_tags(task: &Task, schedule: Option<usize>) -> Vec<(String, String)> {
    let mut tags = search_tags(task, &task.config.params);
    if let Some(i) = schedule {
        tags.push((SCHEDULE_TAG.to_owned(), crate::schedule::schedule_path(i)));
    }
    tags
}

/// The tag naming which of a task's several schedules made an instance.
pub const SCHEDULE_TAG: &str = "ax.schedule";

/// For a task with a uniqueness window: the value of its uniqueness key in `params` (checked
/// before; a stored task changed behind axd's back keys by `(no <path>)`) and the window.
pub fn unique_of(task: &Task, params: &str) -> Option<(String, std::time::Duration)> {
    let p = &task.config.placement;
    let (path, window) = (p.unique_key.as_deref()?, p.unique_for?);
    let value = crate::routing::keypath::key_of(params, path).unwrap_or_else(|_| format!("(no {path})"));
    Some((value, window))
}

/// The routing inputs an instance of `task` with `params` copies. A HASH key that cannot be taken
/// from the params (checked before, so only a stored task changed behind axd's back) falls back to
/// the task name; a concurrency key's value to `(no <path>)`.
pub fn route_of(task: &Task, params: &str) -> InstanceRoute {
    let p = &task.config.placement;
    let hash_key = (task.config.routing == Routing::Hash)
        .then(|| hash::key_of(params, p.hash_key.as_deref(), &task.name).unwrap_or_else(|_| task.name.clone()));
    // Checked like the hash key; a stored task changed behind axd's back keys by the path itself.
    let concurrency_value = p
        .concurrency_key
        .as_deref()
        .map(|path| crate::routing::keypath::key_of(params, path).unwrap_or_else(|_| format!("(no {path})")));
    InstanceRoute {
        priority: p.priority,
        selector: p.selector.clone(),
        retry_on: Some(p.retry_on),
        hash_key,
        concurrency_value,
        ..InstanceRoute::default()
    }
}

/// For a task with a selector: why no connected worker can run its instance now, for the trail of
/// its creation (`None` when one matches, or when it has no selector).
pub fn selector_note(task: &Task, workers: &[WorkerRecord]) -> Option<String> {
    let c = &task.config;
    if c.placement.selector.is_empty() {
        return None;
    }
    let sel = match selector_of(task) {
        Ok(s) => s,
        Err(e) => {
            return Some(format!("its selector {:?} cannot be read ({e}); no worker matches", c.placement.selector));
        }
    };
    let serving: Vec<&WorkerRecord> =
        workers.iter().filter(|w| w.app == c.app && w.handlers.contains(&c.handler)).collect();
    if serving.iter().any(|w| sel.matches(&w.labels)) {
        return None;
    }
    Some(if serving.is_empty() {
        format!(
            "no connected worker matches selector {}: no worker of app {} serving handler {} is connected",
            c.placement.selector, c.app, c.handler
        )
    } else {
        let seen: Vec<String> = serving
            .iter()
            .take(5)
            .map(|w| {
                let labels: Vec<String> = w.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{}{{{}}}", w.worker_id, labels.join(","))
            })
            .collect();
        format!(
            "no connected worker matches selector {} (workers serving {}: {}); it waits for one",
            c.placement.selector,
            c.handler,
            seen.join(" ")
        )
    })
}

/// The children of a parent just created as `parent_id` for `parent` (its key and params are
/// theirs too, the key suffixed per child).
pub fn children(task: &Task, parent_id: i64, parent: &NewInstance, plans: &[ChildPlan]) -> Vec<NewInstance> {
    plans
        .iter()
        .map(|p| {
            let mut route = parent.route.clone();
            route.children = None;
            route.parent_id = Some(parent_id);
            route.shard = Some((p.index, p.total));
            route.target_worker = p.target_worker.clone();
            let reason = match &p.target_worker {
                Some(w) => format!(
                    "child {}/{} of broadcast {parent_id} (task {}), for worker {w}",
                    p.index + 1,
                    p.total,
                    task.name
                ),
                None => format!("shard {}/{} of sharded fire {parent_id} (task {})", p.index, p.total, task.name),
            };
            NewInstance {
                fire_at: parent.fire_at,
                available_at: parent.available_at,
                key: fanout::child_key(parent_id, p.index),
                source: parent.source,
                status: InstanceStatus::Pending,
                params: parent.params.clone(),
                reason,
                trace_parent: parent.trace_parent.clone(),
                route,
                // Found through their parent.
                tags: Vec::new(),
                lineage: parent.lineage,
            }
        })
        .collect()
}

/// Turns a planned single instance into the parent of `plans` (WAITING; FAILED at once when a
/// broadcast found no worker, with the reason).
pub fn make_parent(task: &Task, new: &mut NewInstance, plans: &[ChildPlan]) {
    new.route.children = Some(u32::try_from(plans.len()).unwrap_or(u32::MAX));
    if new.status != InstanceStatus::Pending {
        return;
    }
    if plans.is_empty() {
        let c = &task.config;
        let selector = if c.placement.selector.is_empty() {
            String::new()
        } else {
            format!(" matching selector {}", c.placement.selector)
        };
        new.status = InstanceStatus::Failed;
        new.reason = format!(
            "broadcast reached no worker: no live worker of app {} serving handler {}{selector} at fire time",
            c.app, c.handler
        );
    } else {
        new.status = InstanceStatus::Waiting;
        let what = if task.config.routing == Routing::Broadcast { "broadcast to" } else { "sharded into" };
        new.reason = format!("{}; {what} {} children", new.reason, plans.len());
    }
}

/// Whether an instance is a parent that found no worker at all (created FAILED, see
/// [`make_parent`]).
pub fn empty_broadcast(new: &NewInstance) -> bool {
    new.route.children == Some(0) && new.status == InstanceStatus::Failed
}

/// What alert rules hear of an instance created SKIPPED, or FAILED (a broadcast that found no
/// worker): its reason, once per instance (and attempt 0, for a failure).
pub fn created_alert(event: AlertEvent, task: &Task, id: i64, n: &NewInstance, now: Ts) -> AlertCause {
    let occurrence = if event == AlertEvent::Skipped { format!("i{id}") } else { format!("i{id}:a0") };
    AlertCause {
        event,
        app: task.config.app.clone(),
        task_name: task.name.clone(),
        instance_id: Some(id),
        attempt: 0,
        at: now,
        message: n.reason.clone(),
        occurrence,
    }
}
