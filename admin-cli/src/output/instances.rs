//! Instances as axctl shows them: the JSON view (every proto field), the field list of
//! `instance get`, `task trigger`, `instance cancel` and `retry`, the table of `instance list`, and
//! the children of a broadcast or sharded fire's parent under `instance get`.
//!
//! Shards are shown as `index/total` with the 0-based index workers receive (Assign.shard_index),
//! so that what axctl says matches a worker's own logs.

use ax_proto::v1::{Instance, InstanceSource, InstanceStatus, RetryTarget};
use serde::Serialize;
use serde_json::Value;

use super::{
    layout::{Fields, Table, indent},
    scalars::{embedded_json, enum_name, json_text, or_dash},
    time::time_text,
};

/// JSON view of an Instance: every proto field.
#[derive(Debug, Serialize)]
pub struct InstanceView {
    pub id: i64,
    pub task_id: i64,
    pub task_name: String,
    pub app: String,
    pub handler: String,
    pub params: Value,
    pub idempotency_key: String,
    pub source: String,
    pub trigger_time: Option<String>,
    pub available_time: Option<String>,
    pub status: String,
    pub attempt: u32,
    pub max_retries: u32,
    pub failures: u32,
    pub worker_id: String,
    pub session_id: String,
    pub scheduler_id: String,
    pub start_time: Option<String>,
    pub finish_time: Option<String>,
    pub deadline: Option<String>,
    pub lease_expire_time: Option<String>,
    pub message: String,
    pub output: Value,
    pub progress_percent: u32,
    pub progress_message: String,
    pub create_time: Option<String>,
    pub update_time: Option<String>,
    pub trace_id: String,
    pub parent_id: i64,
    pub shard_index: u32,
    pub shard_total: u32,
    pub priority: u32,
    pub selector: String,
    pub target_worker: String,
    pub hash_key: String,
    pub retry_on: String,
    pub run_id: i64,
    pub chained_from: i64,
    /// Empty: its task had no concurrency key.
    pub concurrency_value: String,
    /// Its trigger's tags and its task's search params (`params.PATH`), by name.
    pub tags: std::collections::BTreeMap<String, String>,
}

impl From<&Instance> for InstanceView {
    fn from(i: &Instance) -> Self {
        InstanceView {
            id: i.id,
            task_id: i.task_id,
            task_name: i.task_name.clone(),
            app: i.app.clone(),
            handler: i.handler.clone(),
            params: embedded_json(&i.params),
            idempotency_key: i.idempotency_key.clone(),
            source: enum_name::<InstanceSource>(i.source),
            trigger_time: time_text(i.trigger_time.as_ref()),
            available_time: time_text(i.available_time.as_ref()),
            status: enum_name::<InstanceStatus>(i.status),
            attempt: i.attempt,
            max_retries: i.max_retries,
            failures: i.failures,
            worker_id: i.worker_id.clone(),
            session_id: i.session_id.clone(),
            scheduler_id: i.scheduler_id.clone(),
            start_time: time_text(i.start_time.as_ref()),
            finish_time: time_text(i.finish_time.as_ref()),
            deadline: time_text(i.deadline.as_ref()),
            lease_expire_time: time_text(i.lease_expire_time.as_ref()),
            message: i.message.clone(),
            output: embedded_json(&i.output),
            progress_percent: i.progress_percent,
            progress_message: i.progress_message.clone(),
            create_time: time_text(i.create_time.as_ref()),
            update_time: time_text(i.update_time.as_ref()),
            trace_id: i.trace_id.clone(),
            parent_id: i.parent_id,
            shard_index: i.shard_index,
            shard_total: i.shard_total,
            priority: i.priority,
            selector: i.selector.clone(),
            target_worker: i.target_worker.clone(),
            hash_key: i.hash_key.clone(),
            concurrency_value: i.concurrency_value.clone(),
            tags: i.tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            retry_on: enum_name::<RetryTarget>(i.retry_on),
            run_id: i.run_id,
            chained_from: i.chained_from,
        }
    }
}

impl InstanceView {
    /// `2/8` for a child of a fan-out, None otherwise.
    fn shard(&self) -> Option<String> {
        (self.shard_total > 0).then(|| format!("{}/{}", self.shard_index, self.shard_total))
    }

    /// Whether this is the parent of a broadcast or sharded fire: WAITING for its children, or
    /// final with children listed.
    pub fn is_parent(&self, children: &[InstanceView]) -> bool {
        self.status == "WAITING" || !children.is_empty()
    }
}

/// The fields of an instance, one per line.
pub fn instance_details(i: &InstanceView) -> String {
    let progress = if i.progress_percent == 0 && i.progress_message.is_empty() {
        "-".to_owned()
    } else {
        format!("{}% {}", i.progress_percent, i.progress_message).trim_end().to_owned()
    };
    let mut fields = Fields::new();
    fields.add("id", i.id.to_string()).add("task", format!("{} (id {})", i.task_name, i.task_id));
    if i.parent_id != 0 {
        let shard = i.shard().map(|s| format!(" (shard {s})")).unwrap_or_default();
        fields.add("parent", format!("{}{shard}", i.parent_id));
    }
    fields
        .add("app", or_dash(Some(i.app.as_str())))
        .add("handler", or_dash(Some(i.handler.as_str())))
        .add("status", &i.status)
        .add("source", &i.source)
        .add("attempt", format!("{} (failures {}, max retries {})", i.attempt, i.failures, i.max_retries));
    // Routing copies: shown when set, so that an ordinary instance reads as it always did.
    if i.priority != 0 {
        fields.add("priority", i.priority.to_string());
    }
    if !i.selector.is_empty() {
        fields.add("selector", &i.selector);
    }
    if !i.target_worker.is_empty() {
        fields.add("pinned worker", &i.target_worker);
    }
    if !i.concurrency_value.is_empty() {
        fields.add("concurrency key", &i.concurrency_value);
    }
    if !i.tags.is_empty() {
        let tags: Vec<String> = i.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        fields.add("tags", tags.join(", "));
    }
    if !i.hash_key.is_empty() {
        fields.add("hash key", &i.hash_key);
    }
    if i.retry_on != "UNSPECIFIED" {
        fields.add("retry on", &i.retry_on);
    }
    // Chains and DAGs: shown for an instance a chain or DAG edge created (its run is another's).
    if i.chained_from != 0 {
        fields.add("chained from", i.chained_from.to_string());
    }
    if i.run_id != 0 && i.run_id != i.id {
        fields.add("run", format!("{} (axctl run get {})", i.run_id, i.run_id));
    }
    fields
        .add("idempotency key", or_dash(Some(i.idempotency_key.as_str())))
        .add("params", json_text(&i.params))
        .add("trigger time", or_dash(i.trigger_time.clone()))
        .add("available", or_dash(i.available_time.clone()))
        .add("started", or_dash(i.start_time.clone()))
        .add("finished", or_dash(i.finish_time.clone()))
        .add("deadline", or_dash(i.deadline.clone()))
        .add("lease until", or_dash(i.lease_expire_time.clone()))
        .add("worker", or_dash(Some(i.worker_id.as_str())))
        .add("session", or_dash(Some(i.session_id.as_str())))
        .add("scheduler", or_dash(Some(i.scheduler_id.as_str())))
        .add("progress", progress)
        .add("message", or_dash(Some(i.message.as_str())))
        .add("output", json_text(&i.output))
        .add("created", or_dash(i.create_time.clone()))
        .add("updated", or_dash(i.update_time.clone()))
        .add("trace", or_dash(Some(i.trace_id.as_str())));
    fields.render()
}

/// The children of a parent, one row each (by shard index, as the server sends them). WORKER is
/// the worker an attempt ran on, else the worker a broadcast child is pinned to.
pub fn children_table(children: &[InstanceView]) -> Table<6> {
    let mut table = Table::new(["ID", "SHARD", "WORKER", "STATUS", "ATTEMPT", "MESSAGE"]);
    for c in children {
        let worker = match (c.worker_id.is_empty(), c.target_worker.is_empty()) {
            (false, _) => c.worker_id.clone(),
            (true, false) => format!("{} (pinned)", c.target_worker),
            (true, true) => "-".to_owned(),
        };
        table.row([
            c.id.to_string(),
            or_dash(c.shard()),
            worker,
            c.status.clone(),
            c.attempt.to_string(),
            c.message.clone(),
        ]);
    }
    table
}

/// The children block under a parent: how many in each status, then the table; the server sends
/// at most 1000, so a larger fan-out says how many are not shown.
pub fn children_report(children: &[InstanceView]) -> String {
    if children.is_empty() {
        return "children:\n  none\n".to_owned();
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for c in children {
        match counts.iter_mut().find(|(status, _)| *status == c.status) {
            Some((_, n)) => *n += 1,
            None => counts.push((&c.status, 1)),
        }
    }
    let counts: Vec<String> = counts.iter().map(|(status, n)| format!("{n} {status}")).collect();
    let mut text = format!("children: {} ({})\n", children.len(), counts.join(", "));
    let total = children.iter().map(|c| c.shard_total).max().unwrap_or(0);
    if usize::try_from(total).is_ok_and(|total| total > children.len()) {
        text.push_str(&format!("  the first {} of {total} are shown\n", children.len()));
    }
    text.push_str(&indent(&children_table(children).render()));
    text
}

/// The table of `instance list`.
pub fn instance_table(instances: &[InstanceView]) -> Table<8> {
    let mut table = Table::new(["ID", "TASK", "STATUS", "ATTEMPT", "SOURCE", "TRIGGER TIME", "WORKER", "MESSAGE"]);
    for i in instances {
        table.row([
            i.id.to_string(),
            i.task_name.clone(),
            i.status.clone(),
            i.attempt.to_string(),
            i.source.clone(),
            or_dash(i.trigger_time.clone()),
            or_dash(Some(i.worker_id.as_str())),
            i.message.clone(),
        ]);
    }
    table
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn ts(seconds: i64, nanos: i32) -> Option<prost_types::Timestamp> {
        Some(prost_types::Timestamp { seconds, nanos })
    }

    /// An instance with every field set; shared with the terminal safety tests.
    pub(in crate::output) fn finished_instance() -> Instance {
        Instance {
            id: 42,
            task_id: 7,
            task_name: "nightly".into(),
            app: "billing".into(),
            handler: "report".into(),
            params: r#"{"full":true}"#.into(),
            idempotency_key: "fire:2026-01-01T02:00:00Z".into(),
            source: InstanceSource::Schedule as i32,
            trigger_time: ts(1_767_232_800, 0),
            available_time: ts(1_767_232_800, 0),
            status: InstanceStatus::Success as i32,
            attempt: 1,
            max_retries: 3,
            failures: 0,
            worker_id: "w1".into(),
            session_id: "s1".into(),
            scheduler_id: "axd-1".into(),
            start_time: ts(1_767_232_801, 0),
            finish_time: ts(1_767_232_802, 500_000_000),
            deadline: None,
            lease_expire_time: None,
            message: "done".into(),
            output: "plain text".into(),
            progress_percent: 100,
            progress_message: "all".into(),
            create_time: ts(1_767_232_800, 0),
            update_time: ts(1_767_232_802, 500_000_000),
            trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
            parent_id: 40,
            shard_index: 2,
            shard_total: 8,
            priority: 3,
            selector: "gpu=true".into(),
            target_worker: "w1".into(),
            hash_key: "acme".into(),
            retry_on: RetryTarget::Same as i32,
            run_id: 30,
            chained_from: 31,
            concurrency_value: "acme".into(),
            tags: [("batch".to_owned(), "7".to_owned()), ("params.customer_id".to_owned(), "42".to_owned())].into(),
        }
    }

    /// A child of parent 40: shard `index` of 3, pinned to `target`, in `status`.
    fn child(id: i64, index: u32, target: &str, worker: &str, status: InstanceStatus) -> InstanceView {
        InstanceView::from(&Instance {
            id,
            parent_id: 40,
            shard_index: index,
            shard_total: 3,
            target_worker: target.into(),
            worker_id: worker.into(),
            status: status as i32,
            attempt: u32::from(!worker.is_empty()),
            ..Instance::default()
        })
    }

    #[test]
    fn instances_serialize_every_field() {
        let value = serde_json::to_value(InstanceView::from(&finished_instance())).expect("json");
        assert_eq!(value["status"], "SUCCESS");
        assert_eq!(value["source"], "SCHEDULE");
        assert_eq!(value["params"], serde_json::json!({"full": true}));
        assert_eq!(value["output"], "plain text");
        assert_eq!(value["deadline"], Value::Null);
        assert_eq!(value["finish_time"], "2026-01-01T02:00:02.500Z");
        let keys: Vec<&str> = value.as_object().expect("object").keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 40, "one key per Instance field: {keys:?}");
        assert_eq!(value["concurrency_value"], "acme");
        assert_eq!(value["tags"], serde_json::json!({"batch": "7", "params.customer_id": "42"}));
        assert_eq!((&value["run_id"], &value["chained_from"]), (&serde_json::json!(30), &serde_json::json!(31)));
        assert_eq!(value["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(value["parent_id"], 40);
        assert_eq!((&value["shard_index"], &value["shard_total"]), (&serde_json::json!(2), &serde_json::json!(8)));
        assert_eq!(value["priority"], 3);
        assert_eq!(value["selector"], "gpu=true");
        assert_eq!(value["target_worker"], "w1");
        assert_eq!(value["hash_key"], "acme");
        assert_eq!(value["retry_on"], "SAME");
        let text = serde_json::to_string(&InstanceView::from(&finished_instance())).expect("json");
        let at = |key: &str| text.find(&format!("\"{key}\"")).unwrap_or_else(|| panic!("{key}: {text}"));
        assert!(at("trace_id") < at("parent_id") && at("parent_id") < at("retry_on"), "proto field order: {text}");
    }

    #[test]
    fn a_child_shows_its_parent_shard_and_routing() {
        let text = instance_details(&InstanceView::from(&finished_instance()));
        assert!(text.contains("\ntask:             nightly (id 7)\nparent:           40 (shard 2/8)\n"), "{text}");
        let routing = "\
priority:         3
selector:         gpu=true
pinned worker:    w1
concurrency key:  acme
tags:             batch=7, params.customer_id=42
hash key:         acme
retry on:         SAME
chained from:     31
run:              30 (axctl run get 30)
idempotency key:";
        assert!(text.contains(routing), "{text}");
    }

    #[test]
    fn an_ordinary_instance_has_no_routing_lines() {
        let plain = Instance { id: 1, task_name: "t".into(), ..Instance::default() };
        let text = instance_details(&InstanceView::from(&plain));
        for name in
            ["parent:", "priority:", "selector:", "pinned worker:", "hash key:", "retry on:", "chained from:", "run:"]
        {
            assert!(!text.contains(name), "{name} {text}");
        }
        let parent = InstanceView::from(&Instance { id: 1, parent_id: 9, ..Instance::default() });
        let text = instance_details(&parent);
        assert!(text.lines().any(|l| l.split_whitespace().eq(["parent:", "9"])), "no shard without a total: {text}");
    }

    #[test]
    fn a_parent_lists_its_children_with_their_workers() {
        let children = [
            child(41, 0, "w1", "w1", InstanceStatus::Success),
            child(42, 1, "w2", "", InstanceStatus::Pending),
            child(43, 2, "", "w3", InstanceStatus::Success),
        ];
        assert_eq!(
            children_report(&children),
            "children: 3 (2 SUCCESS, 1 PENDING)\n  \
             ID  SHARD  WORKER       STATUS   ATTEMPT  MESSAGE\n  \
             41  0/3    w1           SUCCESS  1\n  \
             42  1/3    w2 (pinned)  PENDING  0\n  \
             43  2/3    w3           SUCCESS  1\n"
        );
        let waiting = InstanceView::from(&Instance { status: InstanceStatus::Waiting as i32, ..Instance::default() });
        assert!(waiting.is_parent(&[]));
        assert_eq!(children_report(&[]), "children:\n  none\n");
        let done = InstanceView::from(&Instance { status: InstanceStatus::Success as i32, ..Instance::default() });
        assert!(done.is_parent(&children), "a final parent still has children");
        assert!(!done.is_parent(&[]));
    }

    #[test]
    fn more_children_than_the_server_sends_are_said_to_be_missing() {
        let mut first = child(41, 0, "", "", InstanceStatus::Pending);
        first.shard_total = 2000;
        let text = children_report(&[first]);
        assert!(text.starts_with("children: 1 (1 PENDING)\n  the first 1 of 2000 are shown\n  ID"), "{text}");
    }

    #[test]
    fn instance_details_and_the_list_read_as_before() {
        let view = InstanceView::from(&finished_instance());
        let text = instance_details(&view);
        assert!(text.starts_with("id:               42\ntask:             nightly (id 7)\n"), "{text}");
        assert!(text.contains("\nstatus:           SUCCESS\n"), "{text}");
        assert!(text.contains("\nprogress:         100% all\n"), "{text}");
        assert!(text.ends_with("\ntrace:            4bf92f3577b34da6a3ce929d0e0e4736\n"), "{text}");
        assert_eq!(
            instance_table(std::slice::from_ref(&view)).render(),
            "ID  TASK     STATUS   ATTEMPT  SOURCE    TRIGGER TIME          WORKER  MESSAGE\n\
             42  nightly  SUCCESS  1        SCHEDULE  2026-01-01T02:00:00Z  w1      done\n"
        );
    }
}
