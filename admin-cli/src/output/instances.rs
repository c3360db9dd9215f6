//! Instances as axctl shows them: the JSON view (every proto field), the field list of
//! `instance get`, `task trigger`, `instance cancel` and `retry`, and the table of `instance list`.

use ax_proto::v1::{Instance, InstanceSource, InstanceStatus};
use serde::Serialize;
use serde_json::Value;

use super::{
    layout::{Fields, Table},
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
        }
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
    fields
        .add("id", i.id.to_string())
        .add("task", format!("{} (id {})", i.task_name, i.task_id))
        .add("app", or_dash(Some(i.app.as_str())))
        .add("handler", or_dash(Some(i.handler.as_str())))
        .add("status", &i.status)
        .add("source", &i.source)
        .add("attempt", format!("{} (failures {}, max retries {})", i.attempt, i.failures, i.max_retries))
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
        }
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
        assert_eq!(keys.len(), 28, "one key per Instance field: {keys:?}");
        assert_eq!(value["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
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
