//! Events (`PublishEvent`): an event published to an app creates one instance of each task of the
//! app subscribed to its name (`--on-event`) whose filter holds for the payload, with the payload
//! merged into the task's params, keyed `event:<id>` so the same event id creates nothing twice.

use serde_json::Value;

use crate::{
    birth::{Spawn, Spawned, shape, spawn, spawn_new},
    error::StoreResult,
    model::{Instance, InstanceSource, InstanceStatus, Task, Ts},
    routing::{hash, keypath},
    store::{NewInstance, Store, Tx},
    traces::Traces,
    validate::MAX_PARAMS_BYTES,
};

/// Most conditions in a filter.
const MAX_CONDITIONS: usize = 16;
/// Longest filter text.
const MAX_FILTER: usize = 1024;

/// An event filter: every condition must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter(Vec<(String, Option<String>)>);

impl Filter {
    /// Parses `payload.PATH=VALUE,payload.PATH,…`; `Err` says what is wrong.
    pub fn parse(text: &str) -> Result<Filter, String> {
        if text.len() > MAX_FILTER {
            return Err(format!("is {} bytes, at most {MAX_FILTER}", text.len()));
        }
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > MAX_CONDITIONS {
            return Err(format!("has {} conditions, at most {MAX_CONDITIONS}", parts.len()));
        }
        let mut out = Vec::new();
        for part in parts {
            let (path, value) = match part.split_once('=') {
                Some((p, v)) => (p.trim(), Some(v.trim().to_owned())),
                None => (part.trim(), None),
            };
            let rest = path
                .strip_prefix("payload.")
                .ok_or_else(|| format!("condition {part:?}: the path must start with \"payload.\""))?;
            keypath::parse(&format!("params.{rest}")).map_err(|why| format!("condition {part:?}: {why}"))?;
            out.push((rest.to_owned(), value));
        }
        Ok(Filter(out))
    }

    /// Whether every condition holds for `payload` (a JSON object).
    pub fn holds(&self, payload: &Value) -> bool {
        self.0.iter().all(|(path, want)| {
            let mut at = payload;
            for name in path.split('.') {
                match at.get(name) {
                    Some(v) => at = v,
                    None => return false,
                }
            }
            want.as_ref().is_none_or(|w| hash::key_text(at) == *w)
        })
    }
}

/// The params of an event's instance: the payload's top-level fields over the task's params (the
/// payload alone when the task's params are not an object). `Err` with their size when they are
/// over the params limit ([`check`] refuses such an event first).
fn merged(task_params: &str, payload: &serde_json::Map<String, Value>) -> Result<String, usize> {
    let Ok(Value::Object(mut base)) = serde_json::from_str::<Value>(task_params) else {
        return Ok(Value::Object(payload.clone()).to_string());
    };
    for (k, v) in payload {
        base.insert(k.clone(), v.clone());
    }
    let merged = Value::Object(base).to_string();
    if merged.len() > MAX_PARAMS_BYTES { Err(merged.len()) } else { Ok(merged) }
}

/// The params of an event's instance (the payload over the task's params), for an event [`check`] accepted.
pub fn event_params(task_params: &str, payload: &serde_json::Map<String, Value>) -> String {
    merged(task_params, payload).unwrap_or_else(|_| Value::Object(payload.clone()).to_string())
}

/// Whether `task` can take an event with `payload`: the merged params fit the params limit and
/// have every field the task keys its instances by; `Err` says why not, naming the task.
pub fn check(task: &Task, payload: &serde_json::Map<String, Value>) -> Result<(), String> {
    let name = crate::validate::quote(&task.name);
    let params = merged(&task.config.params, payload).map_err(|n| {
        format!("merged into task {name}'s params it makes {n} bytes, at most {MAX_PARAMS_BYTES} allowed")
    })?;
    shape::check_keys(task, &params).map_err(|why| format!("task {name}: {why}"))
}

/// An event to publish.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    pub name: &'a str,
    pub id: &'a str,
    pub payload: &'a serde_json::Map<String, Value>,
    /// Who published it (for the creation event's reason).
    pub actor: &'a str,
}

/// Of the tasks subscribed to an event, those whose filter holds for `payload`, and the names of
/// the others. A stored filter that no longer parses holds for nothing.
pub fn subscribers<'a>(tasks: &'a [Task], payload: &serde_json::Map<String, Value>) -> (Vec<&'a Task>, Vec<String>) {
    let doc = Value::Object(payload.clone());
    let (mut chosen, mut filtered_out) = (Vec::new(), Vec::new());
    for t in tasks {
        if t.config.flow.event_filter.as_deref().is_none_or(|f| Filter::parse(f).is_ok_and(|f| f.holds(&doc))) {
            chosen.push(t);
        } else {
            filtered_out.push(t.name.clone());
        }
    }
    (chosen, filtered_out)
}

/// The instances `event` makes of `tasks`, available from `run_at`, keyed `event:<id>`.
fn event_spawns(tasks: &[&Task], event: &Event<'_>, run_at: Ts, traces: &Traces) -> Vec<Spawn> {
    tasks
        .iter()
        .enumerate()
        .map(|(n, task)| {
            let params = event_params(&task.config.params, event.payload);
            Spawn {
                task: n,
                new: NewInstance {
                    fire_at: run_at,
                    available_at: run_at,
                    key: format!("event:{}", event.id),
                    source: InstanceSource::Manual,
                    status: InstanceStatus::Pending,
                    route: shape::route_of(task, &params),
                    tags: shape::search_tags(task, &params),
                    params,
                    reason: format!("event {} (id {}) published by {}", event.name, event.id, event.actor),
                    trace_parent: traces.new_root(),
                    lineage: Default::default(),
                },
            }
        })
        .collect()
}

/// The instances of an event row of `ax_intake` (its payload checked by the caller), created in
/// the intake loop's transaction: the ids made (empty when its id had made them before) and the
/// subscribed tasks filtered out; `Err(reason)` refuses the row (a task whose params would miss
/// a key field).
pub async fn intake_event(
    tx: &mut Tx,
    app: &str,
    event: &Event<'_>,
    run_at: Ts,
    now: Ts,
    scheduler_id: &str,
    traces: &Traces,
) -> StoreResult<Result<(Spawned, Vec<String>), String>> {
    let subscribed = tx.tasks().subscribed_tasks(app, event.name).await?;
    let (chosen, filtered_out) = subscribers(&subscribed, event.payload);
    for t in &chosen {
        if let Err(why) = check(t, event.payload) {
            return Ok(Err(format!("params: {why}")));
        }
    }
    let spawned = spawn(tx, &chosen, event_spawns(&chosen, event, run_at, traces), now, scheduler_id).await?;
    Ok(Ok((spawned, filtered_out)))
}

/// Creates the instances of `event` for `tasks` (the subscribed tasks whose filter holds), in one
/// transaction; returns them in the order of `tasks` and whether any was created.
pub async fn publish(
    store: &Store,
    tasks: &[&Task],
    event: &Event<'_>,
    now: Ts,
    scheduler_id: &str,
    traces: &Traces,
) -> StoreResult<(Vec<Instance>, bool)> {
    let started = std::time::SystemTime::now();
    let key = format!("event:{}", event.id);
    let spawns = event_spawns(tasks, event, now, traces);
    let mut tx = store.begin().await?;
    // None: an earlier publish of the id made the instances (or one racing this committed first).
    let created = match spawn_new(&mut tx, tasks, spawns, now, scheduler_id).await? {
        Some(s) => {
            tx.commit().await?;
            s.after_commit(traces, started);
            true
        }
        None => {
            drop(tx);
            false
        }
    };
    let mut out = Vec::with_capacity(tasks.len());
    let mut c = store.conn().await?;
    for task in tasks {
        if let Some(i) = c.instances().instance_by_key(task.id, &key).await? {
            out.push(i);
        }
    }
    Ok((out, created))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_and_hold_on_the_payload() {
        let f = Filter::parse("payload.type=paid, payload.order.region=eu,payload.vip").expect("filter");
        let yes = serde_json::json!({"type": "paid", "order": {"region": "eu"}, "vip": false});
        assert!(f.holds(&yes));
        for no in [
            serde_json::json!({"type": "refund", "order": {"region": "eu"}, "vip": 1}),
            serde_json::json!({"type": "paid", "order": {"region": "us"}, "vip": 1}),
            serde_json::json!({"type": "paid", "order": {"region": "eu"}}),
        ] {
            assert!(!f.holds(&no), "{no}");
        }
        assert!(Filter::parse("payload.n=42").expect("n").holds(&serde_json::json!({"n": 42})));
        for bad in ["type=paid", "payload.", "payload.a b=1", &"payload.a,".repeat(17)] {
            assert!(Filter::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_payload_goes_over_the_task_params() {
        let payload = serde_json::json!({"a": 2, "c": 3}).as_object().cloned().expect("object");
        assert_eq!(event_params(r#"{"a":1,"b":1}"#, &payload), r#"{"a":2,"b":1,"c":3}"#);
        assert_eq!(event_params("[1]", &payload), r#"{"a":2,"c":3}"#);
    }
}
