//! Tasks as axctl shows them: the JSON view (the spec flattened next to the stored fields), the
//! field list of `task get`/`create`/`update`, the table of `task list` and the task-level events
//! (created, changed, misfires) under `task get`.
//!
//! Routing and limits settings left unset take a default the server applies; the text says which
//! ("no limit", "axd default") rather than `-`, so that an operator can tell "off" from "default".
//! A paused task says who paused it, why and until when, in `task get` and `task list` alike.

use std::collections::BTreeMap;

use ax_proto::v1::{ConcurrencyPolicy, MisfirePolicy, RetryTarget, RoutingStrategy, Task, TaskEvent, TaskPause};
use serde::Serialize;
use serde_json::Value;

use super::{
    layout::{Fields, Table},
    scalars::{embedded_json, enum_name, json_text, or_dash, sorted},
    task_spec::{RetryPolicyView, ScheduleView},
    terminal::escape_controls,
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
    /// More schedules whose fires are merged with `schedule`'s.
    pub extra_schedules: Vec<ScheduleView>,
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
    pub selector: String,
    pub retry_on: String,
    pub shards: u32,
    pub hash_key: String,
    pub priority: u32,
    /// Null: no limit.
    pub max_running: Option<u32>,
    /// Null: the server's default (100).
    pub max_pending: Option<u32>,
    /// Null: axd's default; 0: off.
    pub cooldown_after: Option<u32>,
    /// Null: axd's default; `0s`: off.
    pub cooldown: Option<String>,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub exclude_dates: Vec<String>,
    pub calendar: String,
    pub jitter: Option<String>,
    pub on_success: Vec<String>,
    pub on_failure: Vec<String>,
    pub after_all: Vec<String>,
    /// Empty: none.
    pub concurrency_key: String,
    pub concurrency_limit: Option<u32>,
    /// Empty: none.
    pub unique_key: String,
    /// Params paths its instances are found by.
    pub search_params: Vec<String>,
    pub unique_for: Option<String>,
    /// Null: no deadline.
    pub must_finish_within: Option<String>,
    /// Empty: none.
    pub on_event: String,
    /// Empty: none.
    pub event_filter: String,
    pub next_fire_time: Option<String>,
    pub create_time: Option<String>,
    pub update_time: Option<String>,
    pub version: i64,
    pub coalesced_fires: u64,
    pub coalesce_start_time: Option<String>,
    /// Null unless paused.
    pub pause: Option<PauseView>,
}

/// JSON view of a TaskPause.
#[derive(Debug, Serialize)]
pub struct PauseView {
    pub actor: String,
    pub note: String,
    pub pause_time: Option<String>,
    /// Null: until resumed.
    pub until: Option<String>,
}

impl From<&TaskPause> for PauseView {
    fn from(p: &TaskPause) -> Self {
        PauseView {
            actor: p.actor.clone(),
            note: p.note.clone(),
            pause_time: time_text(p.pause_time.as_ref()),
            until: time_text(p.until.as_ref()),
        }
    }
}

impl PauseView {
    /// One line for people: who, until when, why.
    pub fn summary(&self) -> String {
        let until = self.until.as_ref().map_or_else(|| "until resumed".to_owned(), |u| format!("until {u}"));
        format!("by {} {until}: {}", or_dash(Some(self.actor.as_str())), self.note)
    }
}

/// What the server applies when `max_pending` is unset.
const DEFAULT_MAX_PENDING: u32 = 100;

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
            extra_schedules: spec.extra_schedules.iter().filter_map(ScheduleView::from_proto).collect(),
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
            selector: spec.selector,
            retry_on: enum_name::<RetryTarget>(spec.retry_on),
            shards: spec.shards,
            hash_key: spec.hash_key,
            priority: spec.priority,
            max_running: spec.max_running,
            max_pending: spec.max_pending,
            cooldown_after: spec.cooldown_after,
            cooldown: duration_text(spec.cooldown.as_ref()),
            concurrency_key: spec.concurrency_key,
            concurrency_limit: spec.concurrency_limit,
            unique_key: spec.unique_key,
            search_params: spec.search_params,
            unique_for: duration_text(spec.unique_for.as_ref()),
            must_finish_within: duration_text(spec.must_finish_within.as_ref()),
            on_event: spec.on_event,
            event_filter: spec.event_filter,
            start_time: time_text(spec.start_time.as_ref()),
            end_time: time_text(spec.end_time.as_ref()),
            exclude_dates: spec.exclude_dates,
            calendar: spec.calendar,
            jitter: duration_text(spec.jitter.as_ref()),
            on_success: spec.on_success,
            on_failure: spec.on_failure,
            after_all: spec.after_all,
            next_fire_time: time_text(task.next_fire_time.as_ref()),
            create_time: time_text(task.create_time.as_ref()),
            update_time: time_text(task.update_time.as_ref()),
            version: task.version,
            coalesced_fires: task.coalesced_fires,
            coalesce_start_time: time_text(task.coalesce_start_time.as_ref()),
            pause: task.pause.as_ref().map(PauseView::from),
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
        .add("schedule", task.schedule.as_ref().map_or_else(|| "-".to_owned(), ScheduleView::summary));
    if !task.extra_schedules.is_empty() {
        let also: Vec<String> = task.extra_schedules.iter().map(ScheduleView::summary).collect();
        fields.add("also", also.join("; "));
    }
    fields
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
        .add("concurrency", concurrency_text(&task.concurrency_policy))
        .add("routing", &task.routing)
        .add("hash key", hash_key_text(task))
        .add("shards", if task.shards == 0 { "not sharded".to_owned() } else { format!("{} per fire", task.shards) })
        .add("selector", if task.selector.is_empty() { "any worker" } else { &task.selector })
        .add("priority", task.priority.to_string())
        .add("max running", task.max_running.map_or_else(|| "no limit".to_owned(), |n| n.to_string()))
        .add(
            "per-key limit",
            match task.concurrency_limit.filter(|_| !task.concurrency_key.is_empty()) {
                Some(n) => format!("at most {n} running per value of {}", task.concurrency_key),
                None => "none".to_owned(),
            },
        )
        .add(
            "unique",
            match task.unique_for.as_ref().filter(|_| !task.unique_key.is_empty()) {
                Some(window) => format!("{} for {window} after each trigger", task.unique_key),
                None => "none".to_owned(),
            },
        )
        .add(
            "search params",
            if task.search_params.is_empty() { "none".to_owned() } else { task.search_params.join(", ") },
        )
        .add(
            "max pending",
            task.max_pending.map_or_else(|| format!("{DEFAULT_MAX_PENDING} (default)"), |n| n.to_string()),
        )
        .add("timeout", task.timeout.clone().unwrap_or_else(|| "none".to_owned()))
        .add("retries", task.retry_policy.as_ref().map_or_else(|| "none".to_owned(), RetryPolicyView::summary))
        .add("retry on", retry_on_text(&task.retry_on))
        .add(
            "cooldown after",
            match task.cooldown_after {
                None => "axd default".to_owned(),
                Some(0) => "off".to_owned(),
                Some(1) => "1 failure in a row".to_owned(),
                Some(n) => format!("{n} failures in a row"),
            },
        )
        .add(
            "cooldown",
            match task.cooldown.as_deref() {
                None => "axd default",
                Some("0s") => "off",
                Some(first) => first,
            },
        )
        .add("active window", window_text(task))
        .add("excluded dates", or_dash(Some(task.exclude_dates.join(", "))))
        .add("calendar", or_dash(Some(task.calendar.as_str())))
        .add("jitter", task.jitter.clone().unwrap_or_else(|| "none".to_owned()))
        .add(
            "deadline",
            task.must_finish_within.as_ref().map_or_else(|| "none".to_owned(), |d| format!("{d} after each fire")),
        )
        .add(
            "on event",
            match (task.on_event.is_empty(), task.event_filter.is_empty()) {
                (true, _) => "none".to_owned(),
                (false, true) => task.on_event.clone(),
                (false, false) => format!("{} where {}", task.on_event, task.event_filter),
            },
        )
        .add("on success", or_dash(Some(task.on_success.join(", "))))
        .add("on failure", or_dash(Some(task.on_failure.join(", "))))
        .add("after all", or_dash(Some(task.after_all.join(", "))))
        .add("labels", or_dash(Some(labels.join(", "))))
        .add("version", task.version.to_string())
        .add("created", or_dash(task.create_time.clone()))
        .add("updated", or_dash(task.update_time.clone()));
    let mut text = fields.render();
    if let Some(p) = &task.pause {
        // The schedule does not fire: a line of its own, like coalescing.
        // Outside the escaping field list: the actor and note are server text.
        let line = format!("paused {} (since {})", p.summary(), or_dash(p.pause_time.clone()));
        text.push_str(&format!("{}\n", escape_controls(&line)));
    }
    if task.coalesced_fires > 0 {
        // Fires are being dropped right now: a line of its own, not one field among many.
        let fires = if task.coalesced_fires == 1 { "fire" } else { "fires" };
        text.push_str(&format!(
            "coalescing since {}: {} {fires} not created (max-pending {})\n",
            or_dash(task.coalesce_start_time.clone()),
            task.coalesced_fires,
            task.max_pending.unwrap_or(DEFAULT_MAX_PENDING)
        ));
    }
    text
}

/// The overlap policy for people: FORBID is what axctl and the README call SKIP.
fn concurrency_text(name: &str) -> String {
    match name {
        "FORBID" => "SKIP".to_owned(),
        "UNSPECIFIED" => "ALLOW".to_owned(),
        other => other.to_owned(),
    }
}

/// The active window for people.
fn window_text(task: &TaskView) -> String {
    match (&task.start_time, &task.end_time) {
        (Some(s), Some(e)) => format!("from {s} to {e}"),
        (Some(s), None) => format!("from {s}"),
        (None, Some(e)) => format!("until {e}"),
        (None, None) => "always".to_owned(),
    }
}

/// The hash key for people: the params field, or what HASH routing uses without one.
fn hash_key_text(task: &TaskView) -> String {
    match (task.hash_key.is_empty(), task.routing == "HASH") {
        (false, _) => task.hash_key.clone(),
        (true, true) => "- (the task name is the key)".to_owned(),
        (true, false) => "-".to_owned(),
    }
}

/// The retry target for people: unset is OTHER, the proto's documented default.
fn retry_on_text(name: &str) -> String {
    if name == "UNSPECIFIED" { "OTHER" } else { name }.to_owned()
}

/// The routing column of `task list`: the strategy, and the shards of a sharded task.
fn routing_summary(task: &TaskView) -> String {
    match task.shards {
        0 => task.routing.clone(),
        n => format!("{}, {n} shards", task.routing),
    }
}

/// The table of `task list`.
pub fn task_table(tasks: &[TaskView]) -> Table<9> {
    let mut table =
        Table::new(["NAME", "APP", "HANDLER", "ENABLED", "PRIORITY", "ROUTING", "SCHEDULE", "NEXT FIRE", "PAUSED"]);
    for task in tasks {
        table.row([
            task.name.clone(),
            task.app.clone(),
            task.handler.clone(),
            task.enabled.map_or_else(|| "-".to_owned(), |e| e.to_string()),
            task.priority.to_string(),
            routing_summary(task),
            task.schedule.as_ref().map_or_else(|| "-".to_owned(), ScheduleView::summary),
            or_dash(task.next_fire_time.clone()),
            task.pause.as_ref().map_or_else(|| "-".to_owned(), PauseView::summary),
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
    /// The fires a misfire decision skipped or caught up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fires: Option<FireSpanView>,
}

/// JSON view of a FireSpan: the first and last fire time and how many.
#[derive(Debug, Serialize)]
pub struct FireSpanView {
    pub first: Option<String>,
    pub last: Option<String>,
    pub count: u32,
}

impl From<&ax_proto::v1::FireSpan> for FireSpanView {
    fn from(f: &ax_proto::v1::FireSpan) -> Self {
        FireSpanView { first: time_text(f.first_time.as_ref()), last: time_text(f.last_time.as_ref()), count: f.count }
    }
}

impl FireSpanView {
    /// "9 fires, 2026-01-01T10:01:00Z to 2026-01-01T10:09:00Z" (one fire: "1 fire, at …").
    pub fn text(&self) -> String {
        let (first, last) = (or_dash(self.first.clone()), or_dash(self.last.clone()));
        if self.count == 1 || first == last {
            format!("{} fire{}, at {first}", self.count, if self.count == 1 { "" } else { "s" })
        } else {
            format!("{} fires, {first} to {last}", self.count)
        }
    }
}

impl From<&TaskEvent> for TaskEventView {
    fn from(event: &TaskEvent) -> Self {
        TaskEventView {
            time: time_text(event.time.as_ref()),
            kind: event.kind.clone(),
            actor: event.actor.clone(),
            message: event.message.clone(),
            fires: event.fires.as_ref().map(FireSpanView::from),
        }
    }
}

/// The task's recent events, one row each.
pub fn task_event_table(events: &[TaskEventView]) -> Table<5> {
    let mut table = Table::new(["TIME", "KIND", "ACTOR", "FIRES", "MESSAGE"]);
    for event in events {
        table.row([
            or_dash(event.time.clone()),
            event.kind.clone(),
            or_dash(Some(event.actor.as_str())),
            or_dash(event.fires.as_ref().map(FireSpanView::text)),
            event.message.clone(),
        ]);
    }
    table
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::HashMap;

    use ax_proto::v1::{
        Backoff, CronDialect, CronSchedule, ExponentialBackoff, IntervalSchedule, RetryPolicy, Schedule, TaskSpec,
        backoff, schedule,
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
                routing: RoutingStrategy::Hash as i32,
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
                selector: "gpu=true,zone in (a,b)".into(),
                retry_on: RetryTarget::Same as i32,
                shards: 4,
                hash_key: "tenant".into(),
                priority: 3,
                max_running: Some(5),
                max_pending: Some(20),
                cooldown_after: Some(3),
                cooldown: dur(45),
                start_time: ts(1_767_225_600),
                end_time: ts(1_798_761_600),
                exclude_dates: vec!["2026-12-25".into(), "2027-01-01".into()],
                calendar: "holidays".into(),
                jitter: dur(30),
                on_success: vec!["load".into(), "notify".into()],
                on_failure: vec!["page".into()],
                after_all: vec!["extract".into()],
                concurrency_key: "params.customer".into(),
                concurrency_limit: Some(2),
                unique_key: "params.report".into(),
                search_params: vec!["params.customer".into()],
                unique_for: dur(600),
                must_finish_within: dur(3600),
                on_event: "order.paid".into(),
                event_filter: "payload.vip".into(),
                extra_schedules: vec![Schedule {
                    kind: Some(schedule::Kind::FixedRate(IntervalSchedule {
                        interval: dur(14_400),
                        start_at: ts(1_767_225_600),
                    })),
                }],
            }),
            next_fire_time: ts(1_767_232_800),
            create_time: ts(1_767_225_600),
            update_time: None,
            version: 2,
            coalesced_fires: 12,
            coalesce_start_time: ts(1_767_229_200),
            pause: Some(TaskPause {
                actor: "spiffe://ax/admin/alice".into(),
                note: "db migration".into(),
                pause_time: ts(1_767_229_200),
                until: ts(1_767_240_000),
            }),
        }
    }

    /// A task that sets none of the routing and limits fields, as an older axd would send it.
    fn plain_task() -> Task {
        let mut task = cron_task();
        let spec = task.spec.as_mut().expect("spec");
        (spec.selector, spec.retry_on, spec.shards, spec.hash_key, spec.priority) =
            (String::new(), 0, 0, String::new(), 0);
        (spec.max_running, spec.max_pending, spec.cooldown_after, spec.cooldown) = (None, None, None, None);
        spec.routing = RoutingStrategy::LeastLoaded as i32;
        (task.coalesced_fires, task.coalesce_start_time) = (0, None);
        let spec = task.spec.as_mut().expect("spec");
        (spec.start_time, spec.end_time, spec.exclude_dates, spec.calendar, spec.jitter) =
            (None, None, Vec::new(), String::new(), None);
        (spec.on_success, spec.on_failure, spec.after_all) = (Vec::new(), Vec::new(), Vec::new());
        spec.extra_schedules = Vec::new();
        (spec.concurrency_key, spec.concurrency_limit, spec.unique_key, spec.unique_for) =
            (String::new(), None, String::new(), None);
        (spec.must_finish_within, spec.search_params) = (None, Vec::new());
        (spec.on_event, spec.event_filter) = (String::new(), String::new());
        task.pause = None;
        task
    }

    #[test]
    fn a_misfire_event_shows_the_fires_it_decided() {
        let at = |seconds| Some(prost_types::Timestamp { seconds, nanos: 0 });
        let fires = ax_proto::v1::FireSpan { first_time: at(1_767_261_660), last_time: at(1_767_262_140), count: 9 };
        let event = TaskEvent { kind: "MISFIRE_SKIPPED".into(), fires: Some(fires), ..TaskEvent::default() };
        let view = TaskEventView::from(&event);
        let table = task_event_table(&[view]).render();
        assert!(table.contains("9 fires, 2026-01-01T10:01:00Z to 2026-01-01T10:09:00Z"), "{table}");
        let json = serde_json::to_value(TaskEventView::from(&event)).expect("json");
        assert_eq!(json["fires"]["count"], 9);
        assert_eq!(json["fires"]["first"], "2026-01-01T10:01:00Z");
        let one = ax_proto::v1::FireSpan { first_time: at(1_767_261_660), last_time: at(1_767_261_660), count: 1 };
        assert_eq!(FireSpanView::from(&one).text(), "1 fire, at 2026-01-01T10:01:00Z");
        // Other events have no fires: no field in JSON, a dash in the table.
        let plain = TaskEventView::from(&TaskEvent { kind: "UPDATED".into(), ..TaskEvent::default() });
        assert!(serde_json::to_value(&plain).expect("json").get("fires").is_none());
    }

    #[test]
    fn tasks_serialize_to_the_documented_json_shape() {
        let value = serde_json::to_value(TaskView::from(&cron_task())).expect("json");
        // In two parts: one json! of every field passes serde_json's macro recursion limit.
        let mut expected = json!({
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
            "routing": "HASH",
            "timeout": "1h30m",
            "retry_policy": {
                "max_retries": 3,
                "backoff": {"kind": "EXPONENTIAL", "initial": "10s", "multiplier": 2.0, "max": "5m", "jitter": 0.1}
            },
            "labels": {"env": "prod", "team": "ops"},
            "selector": "gpu=true,zone in (a,b)",
            "retry_on": "SAME",
            "shards": 4,
            "hash_key": "tenant",
            "priority": 3,
            "max_running": 5,
            "max_pending": 20,
            "cooldown_after": 3,
            "cooldown": "45s"
        });
        let rest = json!({
                "extra_schedules": [{"kind": "FIXED_RATE", "interval": "4h", "start_at": "2026-01-01T00:00:00Z"}],
                "start_time": "2026-01-01T00:00:00Z",
                "end_time": "2027-01-01T00:00:00Z",
                "exclude_dates": ["2026-12-25", "2027-01-01"],
                "calendar": "holidays",
                "jitter": "30s",
                "on_success": ["load", "notify"],
                "on_failure": ["page"],
                "after_all": ["extract"],
                "concurrency_key": "params.customer",
                "concurrency_limit": 2,
                "unique_key": "params.report",
                "search_params": ["params.customer"],
                "unique_for": "10m",
                "must_finish_within": "1h",
                "on_event": "order.paid",
                "event_filter": "payload.vip",
                "next_fire_time": "2026-01-01T02:00:00Z",
                "create_time": "2026-01-01T00:00:00Z",
                "update_time": null,
                "version": 2,
                "coalesced_fires": 12,
                "coalesce_start_time": "2026-01-01T01:00:00Z",
                "pause": {
                    "actor": "spiffe://ax/admin/alice",
                    "note": "db migration",
                    "pause_time": "2026-01-01T01:00:00Z",
                    "until": "2026-01-01T04:00:00Z"
                }
        });
        expected.as_object_mut().expect("object").extend(rest.as_object().expect("object").clone());
        assert_eq!(value, expected);
    }

    #[test]
    fn unset_limits_are_null_in_json_and_zero_is_kept() {
        let value = serde_json::to_value(TaskView::from(&plain_task())).expect("json");
        for key in [
            "max_running",
            "max_pending",
            "cooldown_after",
            "cooldown",
            "coalesce_start_time",
            "pause",
            "jitter",
            "unique_for",
        ] {
            assert_eq!(value[key], Value::Null, "{key}");
        }
        assert_eq!(value["retry_on"], "UNSPECIFIED", "JSON has the value as sent");
        let mut off = plain_task();
        let spec = off.spec.as_mut().expect("spec");
        (spec.cooldown_after, spec.cooldown) = (Some(0), Some(prost_types::Duration { seconds: 0, nanos: 0 }));
        let value = serde_json::to_value(TaskView::from(&off)).expect("json");
        assert_eq!((&value["cooldown_after"], &value["cooldown"]), (&json!(0), &json!("0s")));
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
        assert!(details.starts_with("name:            nightly\nid:              7\n"), "{details}");
        assert!(
            details.contains(
                "\nschedule:        cron `0 2 * * *` in Europe/London (UNIX)\nalso:            every 4h from \
                 2026-01-01T00:00:00Z\n"
            ),
            "{details}"
        );
        assert!(
            details.contains("\nretries:         3 retries, exponential 10s x2 up to 5m, jitter 0.1\n"),
            "{details}"
        );
        assert!(details.contains("\nupdated:         -\n"), "{details}");
        assert_eq!(
            task_table(std::slice::from_ref(&view)).render(),
            "NAME     APP      HANDLER  ENABLED  PRIORITY  ROUTING         SCHEDULE                                  NEXT FIRE             PAUSED\n\
             nightly  billing  report   true     3         HASH, 4 shards  cron `0 2 * * *` in Europe/London (UNIX)  2026-01-01T02:00:00Z  by spiffe://ax/admin/alice until 2026-01-01T04:00:00Z: db migration\n"
        );
        let plain = TaskView::from(&plain_task());
        let table = task_table(&[plain]).render();
        assert!(table.contains("  true     0         LEAST_LOADED  cron"), "{table}");
        assert!(table.ends_with("  2026-01-01T02:00:00Z  -\n"), "{table}");
    }

    #[test]
    fn task_details_show_every_routing_and_limits_setting() {
        let details = task_details(&TaskView::from(&cron_task()));
        let expected = "\
concurrency:     SKIP
routing:         HASH
hash key:        tenant
shards:          4 per fire
selector:        gpu=true,zone in (a,b)
priority:        3
max running:     5
per-key limit:   at most 2 running per value of params.customer
unique:          params.report for 10m after each trigger
search params:   params.customer
max pending:     20
timeout:         1h30m
retries:         3 retries, exponential 10s x2 up to 5m, jitter 0.1
retry on:        SAME
cooldown after:  3 failures in a row
cooldown:        45s
active window:   from 2026-01-01T00:00:00Z to 2027-01-01T00:00:00Z
excluded dates:  2026-12-25, 2027-01-01
calendar:        holidays
jitter:          30s
deadline:        1h after each fire
on event:        order.paid where payload.vip
on success:      load, notify
on failure:      page
after all:       extract
labels:";
        assert!(details.contains(expected), "{details}");
        assert!(
            details.contains(
                "\npaused by spiffe://ax/admin/alice until 2026-01-01T04:00:00Z: db migration (since 2026-01-01T01:00:00Z)\n"
            ),
            "{details}"
        );
    }

    #[test]
    fn unset_settings_read_as_the_default_they_get() {
        let details = task_details(&TaskView::from(&plain_task()));
        let expected = "\
routing:         LEAST_LOADED
hash key:        -
shards:          not sharded
selector:        any worker
priority:        0
max running:     no limit
per-key limit:   none
unique:          none
search params:   none
max pending:     100 (default)
timeout:         1h30m
retries:         3 retries, exponential 10s x2 up to 5m, jitter 0.1
retry on:        OTHER
cooldown after:  axd default
cooldown:        axd default
active window:   always
excluded dates:  -
calendar:        -
jitter:          none
deadline:        none
on event:        none
on success:      -
on failure:      -
after all:       -
";
        assert!(details.contains(expected), "{details}");
        assert!(!details.contains("coalescing"), "no fires are coalesced: {details}");
        assert!(details.ends_with("\nupdated:         -\n"), "{details}");

        let mut task = plain_task();
        let spec = task.spec.as_mut().expect("spec");
        (spec.cooldown_after, spec.cooldown) = (Some(0), Some(prost_types::Duration { seconds: 0, nanos: 0 }));
        (spec.routing, spec.max_pending) = (RoutingStrategy::Hash as i32, Some(100));
        let details = task_details(&TaskView::from(&task));
        assert!(details.contains("\ncooldown after:  off\ncooldown:        off\n"), "{details}");
        assert!(details.contains("\nhash key:        - (the task name is the key)\n"), "{details}");
        assert!(details.contains("\nmax pending:     100\n"), "{details}");
    }

    #[test]
    fn coalesced_fires_get_a_line_of_their_own() {
        let details = task_details(&TaskView::from(&cron_task()));
        assert!(
            details.ends_with("\ncoalescing since 2026-01-01T01:00:00Z: 12 fires not created (max-pending 20)\n"),
            "{details}"
        );
        let mut one = plain_task();
        (one.coalesced_fires, one.coalesce_start_time) = (1, ts(1_767_229_200));
        let details = task_details(&TaskView::from(&one));
        assert!(
            details.ends_with("\ncoalescing since 2026-01-01T01:00:00Z: 1 fire not created (max-pending 100)\n"),
            "{details}"
        );
    }
}
