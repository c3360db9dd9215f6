//! What a task's configuration names outside itself, checked in the transaction that stores it: its
//! calendar must exist (and is locked, so it cannot be deleted meanwhile), and its chains and DAG
//! upstreams must name tasks that exist, in the caller's scope, without closing a cycle, and — for a
//! DAG task with several upstreams — that share an ancestor (or no run would ever contain them
//! all). The edges are then written, under the task-graph lock that every such change takes.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::{
    auth::Grant,
    error::{Error, Result},
    model::{EdgeKind, TaskConfig},
    store::{Edge, Tx},
    validate,
};

/// The TaskSpec field of an edge the task `id` declares.
fn field_of(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Success => "on_success",
        EdgeKind::Failure => "on_failure",
        EdgeKind::After => "after_all",
    }
}

/// Whether task `id`'s own configuration declares this edge.
fn owned_by(id: i64, (from, kind, to): &Edge) -> bool {
    match kind {
        EdgeKind::Success | EdgeKind::Failure => *from == id,
        EdgeKind::After => *to == id,
    }
}

/// A path from `start` back to `start` over `edges`, if there is one (task ids, `start` first).
fn cycle_through(start: i64, edges: &[Edge]) -> Option<Vec<i64>> {
    let mut next: HashMap<i64, Vec<i64>> = HashMap::new();
    for (f, _, t) in edges {
        next.entry(*f).or_default().push(*t);
    }
    // Depth-first, remembering how each task was reached.
    let mut came_from: HashMap<i64, i64> = HashMap::new();
    let mut stack = vec![start];
    let mut seen = HashSet::new();
    while let Some(at) = stack.pop() {
        for t in next.get(&at).into_iter().flatten() {
            if *t == start {
                let mut path = vec![start];
                let mut cur = at;
                while cur != start {
                    path.push(cur);
                    cur = came_from[&cur];
                }
                path.push(start);
                let last = path.len() - 1;
                path[1..last].reverse();
                return Some(path);
            }
            if seen.insert(*t) {
                came_from.insert(*t, at);
                stack.push(*t);
            }
        }
    }
    None
}

/// The tasks from which `of` is reachable over `edges`, `of` included.
fn ancestors(of: i64, edges: &[Edge]) -> BTreeSet<i64> {
    let mut out = BTreeSet::from([of]);
    let mut todo = vec![of];
    while let Some(t) = todo.pop() {
        for (f, _, to) in edges {
            if *to == t && out.insert(*f) {
                todo.push(*f);
            }
        }
    }
    out
}

/// Checks and writes what task `id` (named `name`) with configuration `c` names: its calendar and
/// its edges (see the module doc). `prefix` is the request path of the spec; `had_edges`: whether
/// the stored task declared edges (their removal takes the graph lock too).
pub(super) async fn link_task(
    tx: &mut Tx,
    grant: &Grant,
    id: i64,
    name: &str,
    c: &TaskConfig,
    prefix: &str,
    had_edges: bool,
) -> Result<()> {
    if let Some(cal) = &c.timing.calendar
        && tx.calendars().get_calendar(cal, true).await?.is_none()
    {
        return Err(Error::invalid(
            format!("{prefix}.calendar"),
            format!("no calendar named {}", validate::quote(cal)),
        ));
    }
    let names: Vec<&str> = c.flow.names().into_iter().collect();
    if names.is_empty() && !had_edges {
        return Ok(());
    }
    tx.flow().lock_graph().await?;
    let targets = tx.tasks().tasks_by_names(&names).await?;
    let ids: HashMap<&str, i64> = targets.iter().map(|t| (t.name.as_str(), t.id)).collect();
    // A task of an app outside the caller's scope is answered as one that does not exist: the
    // answer must not tell the caller which names exist in other apps.
    let visible: HashSet<&str> =
        targets.iter().filter(|t| grant.app(&t.config.app).is_ok()).map(|t| t.name.as_str()).collect();
    for (field, list) in
        [("on_success", &c.flow.on_success), ("on_failure", &c.flow.on_failure), ("after_all", &c.flow.after_all)]
    {
        for (i, n) in list.iter().enumerate() {
            if !visible.contains(n.as_str()) {
                return Err(Error::invalid(
                    format!("{prefix}.{field}[{i}]"),
                    format!("no task named {} in the apps you may manage", validate::quote(n)),
                ));
            }
        }
    }
    let mine: Vec<Edge> = c
        .flow
        .edges(name)
        .into_iter()
        .map(|(f, k, t)| {
            let id_of = |n: &str| if n == name { id } else { ids[n] };
            (id_of(f), k, id_of(t))
        })
        .collect();
    let mut graph: Vec<Edge> = tx.flow().all_edges().await?.into_iter().filter(|e| !owned_by(id, e)).collect();
    graph.extend(mine.iter().copied());
    if let Some(path) = cycle_through(id, &graph) {
        let on_path: HashSet<(i64, i64)> = path.windows(2).map(|w| (w[0], w[1])).collect();
        let field = mine.iter().find(|(f, _, t)| on_path.contains(&(*f, *t))).map_or("after_all", |e| field_of(e.1));
        let named = tx.tasks().tasks_by_ids(&path).await?;
        let names: HashMap<i64, &str> = named.iter().map(|t| (t.id, t.name.as_str())).collect();
        let shown: Vec<&str> =
            path.iter().map(|i| if *i == id { name } else { names.get(i).copied().unwrap_or("?") }).collect();
        return Err(Error::invalid(format!("{prefix}.{field}"), format!("would make a cycle: {}", shown.join(" -> "))));
    }
    if c.flow.after_all.len() > 1 {
        let mut common: Option<BTreeSet<i64>> = None;
        for u in &c.flow.after_all {
            let a = ancestors(ids[u.as_str()], &graph);
            common = Some(match common {
                None => a,
                Some(c) => c.intersection(&a).copied().collect(),
            });
        }
        if common.is_some_and(|c| c.is_empty()) {
            return Err(Error::invalid(
                format!("{prefix}.after_all"),
                format!(
                    "{} share no ancestor: a workflow run starts at one instance, so no run would contain an \
                     instance of each and the task would never run",
                    c.flow.after_all.join(", ")
                ),
            ));
        }
    }
    tx.flow().write_edges(id, &mine).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_found_with_its_path() {
        let edges = vec![
            (1, EdgeKind::Success, 2),
            (2, EdgeKind::After, 3),
            (3, EdgeKind::Failure, 1),
            (2, EdgeKind::Success, 4),
        ];
        assert_eq!(cycle_through(1, &edges), Some(vec![1, 2, 3, 1]));
        assert_eq!(cycle_through(4, &edges), None);
        assert_eq!(cycle_through(1, &edges[..2]), None);
    }

    #[test]
    fn ancestors_follow_edges_backwards() {
        let edges = vec![(1, EdgeKind::Success, 2), (1, EdgeKind::Success, 3), (5, EdgeKind::After, 3)];
        assert_eq!(ancestors(2, &edges), BTreeSet::from([1, 2]));
        assert_eq!(ancestors(3, &edges), BTreeSet::from([1, 3, 5]));
        assert!(owned_by(3, &(5, EdgeKind::After, 3)) && !owned_by(5, &(5, EdgeKind::After, 3)));
    }
}
