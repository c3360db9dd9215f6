//! Chains and DAG joins: the instances an instance's final state creates, written in the
//! transaction that records that state — so a successor exists exactly when its upstream's final
//! state does, whatever axd dies when — and keyed by the upstream (`chain:<instance id>`, or
//! `run:<run id>` for a DAG task) in the successor task's key space, so it exists once.
//!
//! - `--on-success T`: an instance that ends SUCCESS creates one instance of T, its params the
//!   target's with the upstream's output merged over them (see [`chained_params`]).
//! - `--on-failure T`: one that ends FAILED or TIMEOUT creates one instance of T, with a `failure`
//!   field (instance id, task, status, message) added to the target's params.
//! - `--after-all A,B` on task C: when an instance of A or B succeeds in workflow run R, and every
//!   upstream of C has an instance that succeeded in R, one instance of C is created in R. The
//!   transactions that end C's upstreams in R take the join row (R, C) in turn, so the last of them
//!   sees the others' results.
//!
//! Only instances that are not children of a broadcast or sharded fire count: such a fire follows
//! its parent's final state. CANCELED and SKIPPED create nothing.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::{
    birth::{Spawn, Spawned, shape, spawn},
    error::StoreResult,
    model::{EdgeKind, Instance, InstanceSource, InstanceStatus, Lineage, Task, Ts},
    store::{NewInstance, Tx},
    validate::MAX_PARAMS_BYTES,
};

/// Params of an instance created by `upstream`'s final state, from the target's `params`: for a
/// success, the upstream's output merged over them when both are JSON objects (the output's
/// top-level fields win), or added as field `output` when the output is another JSON value or
/// text; for a failure, a `failure` field describing it. Params that would grow past the limit of
/// TaskSpec.params stay the target's, and the second value says so.
pub fn chained_params(params: &str, upstream: &Instance) -> (String, Option<String>) {
    let Ok(Value::Object(mut base)) = serde_json::from_str::<Value>(params) else {
        return (params.to_owned(), Some("the target's params are not a JSON object: kept as they are".to_owned()));
    };
    match upstream.status {
        InstanceStatus::Success => {
            if upstream.output.trim().is_empty() {
                return (params.to_owned(), None);
            }
            match serde_json::from_str::<Value>(&upstream.output) {
                Ok(Value::Object(out)) => base.extend(out),
                Ok(other) => {
                    base.insert("output".to_owned(), other);
                }
                Err(_) => {
                    base.insert("output".to_owned(), Value::String(upstream.output.clone()));
                }
            }
        }
        _ => {
            let mut f = Map::new();
            f.insert("instance_id".to_owned(), Value::from(upstream.id));
            f.insert("task".to_owned(), Value::from(upstream.task_name.clone()));
            f.insert("status".to_owned(), Value::from(upstream.status.as_str()));
            f.insert("message".to_owned(), Value::from(upstream.message.clone()));
            base.insert("failure".to_owned(), Value::Object(f));
        }
    }
    let merged = Value::Object(base).to_string();
    if merged.len() > MAX_PARAMS_BYTES {
        return (params.to_owned(), Some(format!("the upstream's output was not merged: {} bytes", merged.len())));
    }
    (merged, None)
}

/// A DAG task's params in a run: its own, with each upstream's output object merged over them in
/// the order of its `after_all`.
fn joined_params(params: &str, upstreams: &[&Instance]) -> String {
    let Ok(Value::Object(mut base)) = serde_json::from_str::<Value>(params) else { return params.to_owned() };
    for u in upstreams {
        if let Ok(Value::Object(out)) = serde_json::from_str::<Value>(&u.output) {
            base.extend(out);
        }
    }
    let merged = Value::Object(base).to_string();
    if merged.len() > MAX_PARAMS_BYTES { params.to_owned() } else { merged }
}

/// What [`create_successors`] created, and the links to record once they have ids.
struct Plan {
    spawns: Vec<Spawn>,
    /// Per spawn: the upstream instances it links from.
    links: Vec<Vec<(i64, EdgeKind)>>,
}

/// Creates, in `tx`, the successors of the instances of `finalized` that just reached a final
/// state (see the module doc). `None` when there are none.
pub async fn create_successors(
    tx: &mut Tx,
    finalized: &[&Instance],
    now: Ts,
    scheduler_id: &str,
) -> StoreResult<Option<Spawned>> {
    let ends: Vec<&Instance> = finalized
        .iter()
        .copied()
        .filter(|i| i.route.parent_id.is_none())
        .filter(|i| matches!(i.status, InstanceStatus::Success | InstanceStatus::Failed | InstanceStatus::Timeout))
        .collect();
    if ends.is_empty() {
        return Ok(None);
    }
    let mut from: Vec<i64> = ends.iter().map(|i| i.task_id).collect();
    from.sort_unstable();
    from.dedup();
    let edges = tx.flow().edges_from(&from).await?;
    if edges.is_empty() {
        return Ok(None);
    }
    let mut targets: Vec<i64> = edges.iter().map(|(_, _, to)| *to).collect();
    targets.sort_unstable();
    targets.dedup();
    let tasks = tx.tasks().tasks_by_ids(&targets).await?;
    let task_refs: Vec<&Task> = tasks.iter().collect();
    let index: HashMap<i64, usize> = task_refs.iter().enumerate().map(|(n, t)| (t.id, n)).collect();
    let mut plan = Plan { spawns: Vec::new(), links: Vec::new() };
    // (run, DAG task) -> the upstream instance that ended here (the first, if several).
    let mut joins: BTreeMap<(i64, i64), &Instance> = BTreeMap::new();
    for u in &ends {
        for (_, kind, to) in edges.iter().filter(|(f, _, _)| *f == u.task_id) {
            let Some(&n) = index.get(to) else {
                tracing::warn!(instance_id = u.id, target_task = to, "a chain's target task is gone; nothing created");
                continue;
            };
            let target = task_refs[n];
            let fires = match kind {
                EdgeKind::Success => u.status == InstanceStatus::Success,
                EdgeKind::Failure => matches!(u.status, InstanceStatus::Failed | InstanceStatus::Timeout),
                EdgeKind::After => {
                    if u.status == InstanceStatus::Success {
                        joins.entry((u.run(), *to)).or_insert(u);
                    }
                    false
                }
            };
            if !fires {
                continue;
            }
            let (params, note) = chained_params(&target.config.params, u);
            let flag = if *kind == EdgeKind::Success { "on-success" } else { "on-failure" };
            let mut reason =
                format!("chained ({flag}) from instance {} of task {}, which ended {}", u.id, u.task_name, u.status);
            if let Some(note) = note {
                reason = format!("{reason}; {note}");
            }
            plan.spawns.push(Spawn {
                task: n,
                new: NewInstance {
                    fire_at: now,
                    available_at: now,
                    key: format!("chain:{}", u.id),
                    source: InstanceSource::Chain,
                    status: InstanceStatus::Pending,
                    route: shape::route_of(target, &params),
                    tags: shape::search_tags(target, &params),
                    params,
                    reason,
                    trace_parent: u.trace_parent.clone(),
                    lineage: Lineage { run_id: Some(u.run()), chained_from: Some(u.id) },
                },
            });
            plan.links.push(vec![(u.id, *kind)]);
        }
    }
    if !joins.is_empty() {
        join(tx, &joins, &task_refs, &index, now, &mut plan).await?;
    }
    let mut spawned = spawn(tx, &task_refs, plan.spawns, now, scheduler_id).await?;
    let links: Vec<(i64, i64, EdgeKind)> = spawned
        .created
        .iter()
        .flat_map(|(id, n)| plan.links[*n].iter().map(move |(from, kind)| (*from, *id, *kind)))
        .collect();
    tx.flow().insert_links(&links).await?;
    spawned.created.sort_unstable();
    Ok(Some(spawned))
}

/// The DAG joins this batch completes: for each (run, DAG task) an upstream of which ended here,
/// takes the join lock and, when every upstream of the task succeeded in the run, plans its
/// instance.
async fn join(
    tx: &mut Tx,
    joins: &BTreeMap<(i64, i64), &Instance>,
    tasks: &[&Task],
    index: &HashMap<i64, usize>,
    now: Ts,
    plan: &mut Plan,
) -> StoreResult<()> {
    let mut dag: Vec<i64> = joins.keys().map(|(_, task)| *task).collect();
    dag.sort_unstable();
    dag.dedup();
    let upstreams = tx.flow().dag_upstreams(&dag).await?;
    // In (run, task) order: every transaction takes join locks in one order, so none deadlock.
    for (&(run, task_id), u) in joins {
        let Some(&n) = index.get(&task_id) else { continue };
        let target = tasks[n];
        let Some(ups) = upstreams.get(&task_id) else { continue };
        tx.flow().lock_join(run, task_id, now).await?;
        let succeeded = tx.flow().succeeded_in_run(run, ups).await?;
        if succeeded.len() < ups.len() {
            continue;
        }
        let ids: Vec<i64> = succeeded.iter().map(|(_, i)| *i).collect();
        let instances = tx.instances().instances_by_ids(&ids).await?;
        // The upstreams in the order of the task's --after-all.
        let by_task: HashMap<&str, &Instance> = instances.iter().map(|i| (i.task_name.as_str(), i)).collect();
        let ordered: Vec<&Instance> =
            target.config.flow.after_all.iter().filter_map(|name| by_task.get(name.as_str()).copied()).collect();
        let params = joined_params(&target.config.params, &ordered);
        let names: Vec<String> = instances.iter().map(|i| format!("{} ({})", i.id, i.task_name)).collect();
        plan.spawns.push(Spawn {
            task: n,
            new: NewInstance {
                fire_at: now,
                available_at: now,
                key: format!("run:{run}"),
                source: InstanceSource::Dag,
                status: InstanceStatus::Pending,
                route: shape::route_of(target, &params),
                tags: shape::search_tags(target, &params),
                params,
                reason: format!(
                    "every upstream succeeded in run {run} (after-all): instances {}; the last was {}",
                    names.join(", "),
                    u.id
                ),
                trace_parent: u.trace_parent.clone(),
                lineage: Lineage { run_id: Some(run), chained_from: Some(u.id) },
            },
        });
        plan.links.push(instances.iter().map(|i| (i.id, EdgeKind::After)).collect());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(status: InstanceStatus, output: &str) -> Instance {
        let mut i = crate::lifecycle::tests::held(status);
        i.output = output.to_owned();
        i.message = "boom".to_owned();
        i
    }

    #[test]
    fn a_success_merges_its_output_object_over_the_target_params() {
        let u = upstream(InstanceStatus::Success, r#"{"rows":3,"mode":"fast"}"#);
        let (p, note) = chained_params(r#"{"mode":"slow","dest":"s3"}"#, &u);
        assert_eq!(p, r#"{"dest":"s3","mode":"fast","rows":3}"#);
        assert_eq!(note, None);
        let (p, _) = chained_params(r#"{"a":1}"#, &upstream(InstanceStatus::Success, "done"));
        assert_eq!(p, r#"{"a":1,"output":"done"}"#);
        let (p, _) = chained_params(r#"{"a":1}"#, &upstream(InstanceStatus::Success, "[1,2]"));
        assert_eq!(p, r#"{"a":1,"output":[1,2]}"#);
        let (p, _) = chained_params(r#"{"a":1}"#, &upstream(InstanceStatus::Success, ""));
        assert_eq!(p, r#"{"a":1}"#);
    }

    #[test]
    fn a_failure_adds_what_failed() {
        let u = upstream(InstanceStatus::Timeout, "");
        let (p, _) = chained_params("{}", &u);
        let v: Value = serde_json::from_str(&p).expect("json");
        assert_eq!(v["failure"]["status"], "TIMEOUT");
        assert_eq!(v["failure"]["message"], "boom");
        assert_eq!(v["failure"]["instance_id"], u.id);
    }

    #[test]
    fn params_that_would_grow_too_large_stay_the_target_s() {
        let big = format!(r#"{{"blob":"{}"}}"#, "x".repeat(MAX_PARAMS_BYTES));
        let (p, note) = chained_params("{}", &upstream(InstanceStatus::Success, &big));
        assert_eq!(p, "{}");
        assert!(note.expect("note").contains("not merged"));
        let (p, note) = chained_params("[1]", &upstream(InstanceStatus::Success, "{}"));
        assert_eq!(p, "[1]");
        assert!(note.is_some());
    }
}
