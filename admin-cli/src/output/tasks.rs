//! Tasks as axctl shows them: the JSON view (the spec flattened next to the stored fields), the
//! field list of `task get`/`create`/`update`, the table of `task list` and the task-level events
//! (created, changed, misfires) under `task get`.

use std::collections::BTreeMap;

use ax_proto::v1::{ConcurrencyPolicy, MisfirePolicy, RoutingStrategy, Task, TaskEvent};
use serde::Serialize;
use serde_json::Value;

use super::{
    layout::{Fields, Table},
    scalars::{embedded_json, enum_name, json_text, or_dash, sorted},
    task_spec::{RetryPolicyView, ScheduleView},
    time::{duration_text, time_text},
};

/// JSON view of a Task (its spec flattened next to the stored fields).
#[derive(Debug, Serialize)]
pub struct TaskView {
    pub id: i64,
    pub name: String,
    pub app: String,
    pub handler: String,
    pub description: String,
    pub schedule: Option<ScheduleView>,
    pub params: Value,
    pub enabled: Option<bool>,
    pub misfire_policy: String,
    pub misfire_threshold: Option<String>,
    pub max_catch_up: u32,
    pub concurrency_policy: String,
    pub routing: String,
    pub timeout: Option<String>,
    pub retry_policy: Option<RetryPolicyView>,
    pub labels: BTreeMap<String, String>,
    pub next_fire_time: Option<String>,
    pub create_time: Option<String>,
    pub update_time: Option<String>,
    pub version: i64,
}

impl From<&Task> for TaskView {
    fn from(task: &Task) -> Self {
        let spec = task.spec.clone().unwrap_or_default();
        TaskView {
            id: task.id,
            name: spec.name,
            app: spec.app,
            handler: spec.handler,
            description: spec.description,
            schedule: spec.schedule.as_ref().and_then(ScheduleView::from_proto),
            params: embedded_json(&spec.params),
            enabled: spec.enabled,
            misfire_policy: enum_name::<MisfirePolicy>(spec.misfire_policy),
            misfire_threshold: duration_text(spec.misfire_threshold.as_ref()),
            max_catch_up: spec.max_catch_up,
            concurrency_policy: enum_name::<ConcurrencyPolicy>(spec.concurrency_policy),
            routing: enum_name::<RoutingStrategy>(spec.routing),
            timeout: duration_text(spec.timeout.as_ref()),
            retry_policy: spec.retry_policy.as_ref().map(RetryPolicyView::from),
            labels: sorted(&spec.labels),
            next_fire_time: time_text(task.next_fire_time.as_ref()),
            create_time: time_text(task.create_time.as_ref()),
            update_time: time_text(task.update_time.as_ref()),
            version: task.version,
        }
    }
}

impl TaskView {
    /// The IANA zone of the task's cron schedule (empty: UTC, or no wall clock).
    pub fn time_zone(&self) -> &str {
        self.schedule.as_ref().map_or("", ScheduleView::time_zone)
    }
}

/// The fields of a task, one per line.
pub fn task_details(task: &TaskView) -> String {
    let labels: Vec<String> = task.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut fields = Fields::new();
    fields
        .add("name", &task.name)
        .add("id", task.id.to_string())
        .add("app", &task.app)
        .add("handler", &task.handler)
        .add("description", or_dash(Some(task.description.as_str())))
        .add("schedule", task.schedule.as_ref().map_or_else(|| "-".to_owned(), ScheduleView::summary))
        .add("enabled", task.enabled.map_or_else(|| "-".to_owned(), |e| e.to_string()))
        .add("next fire", or_dash(task.next_fire_time.clone()))
        .add("params", json_text(&task.params))
        .add(
            "misfire",
            format!(
                "{} (threshold {}, max catch-up {})",
                task.misfire_policy,
                or_dash(task.misfire_threshold.clone()),
                task.max_catch_up
            ),
        )
        .add("concurrency", &task.concurrency_policy)
        .add("routing", &task.routing)
        .add("timeout", task.timeout.clone().unwrap_or_else(|| "none".to_owned()))
        .add("retries", task.retry_policy.as_ref().map_or_else(|| "none".to_owned(), RetryPolicyView::summary))
        .add("labels", or_dash(Some(labels.join(", "))))
        .add("version", task.version.to_string())
        .add("created", or_dash(task.create_time.clone()))
        .add("updated", or_dash(task.update_time.clone()));
    fields.render()
}

/// The table of `task list`.
pub fn task_table(tasks: &[TaskView]) -> Table<6> {
    let mut table = Table::new(["NAME", "APP", "HANDLER", "ENABLED", "SCHEDULE", "NEXT FIRE"]);
    for task in tasks {
        table.row([
            task.name.clone(),
            task.app.clone(),
            task.handler.clone(),
            task.enabled.map_or_else(|| "-".to_owned(), |e| e.to_string()),
            task.schedule.as_ref().map_or_else(|| "-".to_owned(), ScheduleView::summary),
            or_dash(task.next_fire_time.clone()),
        ]);
    }
    table
}

/// JSON view of a TaskEvent.
#[derive(Debug, Serialize)]
pub struct TaskEventView {
    pub time: Option<String>,
    pub kind: String,
    pub actor: String,
    pub message: String,
}

impl From<&TaskEvent> for TaskEventView {
    fn from(event: &TaskEvent) -> Self {
        TaskEventView {
            time: time_text(event.time.as_ref()),
            kind: event.kind.clone(),
            actor: event.actor.clone(),
            message: event.message.clone(),
        }
    }
}

/// The task's recent events, one row each.
pub fn task_event_table(events: &[TaskEventView]) -> Table<4> {
    let mut table = Table::new(["TIME", "KIND", "ACTOR", "MESSAGE"]);
    for event in events {
        table.row([
            or_dash(event.time.clone()),
            event.kind.clone(),
            or_dash(Some(event.actor.as_str())),
            event.message.clone(),
        ]);
    }
    table
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::HashMap;

    use ax_proto::v1::{
        Backoff, CronDialect, CronSchedule, ExponentialBackoff, RetryPolicy, Schedule, TaskSpec, backoff, schedule,
    };
    use serde_json::json;

    use super::*;

    fn ts(seconds: i64) -> Option<prost_types::Timestamp> {
        Some(prost_types::Timestamp { seconds, nanos: 0 })
    }

    fn dur(seconds: i64) -> Option<prost_types::Duration> {
        Some(prost_types::Duration { seconds, nanos: 0 })
    }

    /// A task with every field set; shared with the terminal safety tests.
    pub(in crate::output) fn cron_task() -> Task {
        Task {
            id: 7,
            spec: Some(TaskSpec {
                name: "nightly".into(),
                app: "billing".into(),
                handler: "report".into(),
                description: "the nightly report".into(),
                schedule: Some(Schedule {
                    kind: Some(schedule::Kind::Cron(CronSchedule {
                        expression: "0 2 * * *".into(),
                        time_zone: "Europe/London".into(),
                        dialect: CronDialect::Unix as i32,
                    })),
                }),
                params: r#"{"full":true}"#.into(),
                enabled: Some(true),
                misfire_policy: MisfirePolicy::FireOnce as i32,
                misfire_threshold: dur(60),
                max_catch_up: 10,
                concurrency_policy: ConcurrencyPolicy::Forbid as i32,
                routing: RoutingStrategy::LeastLoaded as i32,
                timeout: dur(5400),
                retry_policy: Some(RetryPolicy {
                    max_retries: 3,
                    backoff: Some(Backoff {
                        kind: Some(backoff::Kind::Exponential(ExponentialBackoff {
                            initial: dur(10),
                            multiplier: 2.0,
                            max: dur(300),
                            jitter: 0.1,
                        })),
                    }),
                }),
                labels: HashMap::from([("team".to_owned(), "ops".to_owned()), ("env".to_owned(), "prod".to_owned())]),
            }),
            next_fire_time: ts(1_767_232_800),
            create_time: ts(1_767_225_600),
            update_time: None,
            version: 2,
        }
    }

    #[test]
    fn tasks_serialize_to_the_documented_json_shape() {
        let value = serde_json::to_value(TaskView::from(&cron_task())).expect("json");
        assert_eq!(
            value,
            json!({
                "id": 7,
                "name": "nightly",
                "app": "billing",
                "handler": "report",
                "description": "the nightly report",
                "schedule": {"kind": "CRON", "expression": "0 2 * * *", "time_zone": "Europe/London", "dialect": "UNIX"},
                "params": {"full": true},
                "enabled": true,
                "misfire_policy": "FIRE_ONCE",
                "misfire_threshold": "1m",
                "max_catch_up": 10,
                "concurrency_policy": "FORBID",
                "routing": "LEAST_LOADED",
                "timeout": "1h30m",
                "retry_policy": {
                    "max_retries": 3,
                    "backoff": {"kind": "EXPONENTIAL", "initial": "10s", "multiplier": 2.0, "max": "5m", "jitter": 0.1}
                },
                "labels": {"env": "prod", "team": "ops"},
                "next_fire_time": "2026-01-01T02:00:00Z",
                "create_time": "2026-01-01T00:00:00Z",
                "update_time": null,
                "version": 2
            })
        );
    }

    #[test]
    fn task_json_keeps_the_proto_field_order() {
        let text = serde_json::to_string(&TaskView::from(&cron_task())).expect("json");
        let id = text.find("\"id\"").expect("id");
        let name = text.find("\"name\"").expect("name");
        let version = text.find("\"version\"").expect("version");
        assert!(id < name && name < version, "{text}");
    }

    #[test]
    fn an_empty_task_has_no_schedule_or_policy() {
        let empty = TaskView::from(&Task::default());
        assert_eq!(empty.schedule, None);
        assert_eq!(empty.retry_policy, None);
        assert_eq!(empty.misfire_policy, "UNSPECIFIED");
        assert_eq!(empty.time_zone(), "");
    }

    #[test]
    fn task_details_and_the_list_read_as_before() {
        let view = TaskView::from(&cron_task());
        let details = task_details(&view);
        assert!(details.starts_with("name:         nightly\nid:           7\n"), "{details}");
        assert!(details.contains("\nschedule:     cron `0 2 * * *` in Europe/London (UNIX)\n"), "{details}");
        assert!(details.contains("\nretries:      3 retries, exponential 10s x2 up to 5m, jitter 0.1\n"), "{details}");
        assert!(details.ends_with("\nupdated:      -\n"), "{details}");
        assert_eq!(
            task_table(std::slice::from_ref(&view)).render(),
            "NAME     APP      HANDLER  ENABLED  SCHEDULE                                  NEXT FIRE\n\
             nightly  billing  report   true     cron `0 2 * * *` in Europe/London (UNIX)  2026-01-01T02:00:00Z\n"
        );
    }
}
