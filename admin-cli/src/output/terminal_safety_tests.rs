//! Every renderer that shows server text, fed values that try to take over the terminal: set its
//! title (OSC 0), move the cursor up and erase a line (CSI), start a C1 control sequence, return
//! the carriage or add a line of their own. None of it may reach the output raw. A new renderer of
//! server text belongs in `render_all`.

use std::collections::HashMap;

use ax_proto::v1::{
    BackfilledFire, Fire, GetClusterStatsResponse, InstanceEvent, InstanceLink, InstanceStatus, LinkKind, LogLine,
    SchedulePreview, SchedulerNode, TaskEvent, WorkerCooldown, WorkerSession, schedule,
};
use chrono::DateTime;

use super::{
    cluster::{SchedulerView, StatsView, WorkerView, scheduler_table, stats_details, worker_table},
    flow::{
        BackfilledFireView, CalendarView, LinkView, RunView, backfill_report, calendar_details, calendar_table,
        links_report, run_tree,
        tests::{holidays, run},
    },
    instances::{InstanceView, children_report, instance_details, instance_table, tests::finished_instance},
    limits::{AppLimitView, app_limit_summary, app_limit_table, tests::billing_limit},
    preview::{PreviewView, preview_details},
    tasks::{TaskEventView, TaskView, task_details, task_event_table, task_table, tests::cron_task},
    trail::{LogLineView, event_trail, log_table},
};

/// OSC 0 (window title), CSI cursor up and erase line, a C1 CSI, CR, LF, TAB, DEL and NUL.
const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[1A\x1b[2K\u{9b}31m\rfake\nwarning: injected\t\x7f\0";

/// What each renderer prints when every text the server sends is `text`.
fn render_all(text: &str) -> Vec<(&'static str, String)> {
    let s = || text.to_owned();
    let mut task = cron_task();
    let spec = task.spec.as_mut().expect("spec");
    (spec.name, spec.app, spec.handler, spec.description, spec.params) = (s(), s(), s(), s(), s());
    spec.labels = HashMap::from([(s(), s())]);
    (spec.selector, spec.hash_key) = (s(), s());
    (spec.concurrency_key, spec.concurrency_limit, spec.unique_key) = (s(), Some(1), s());
    spec.unique_for = Some(prost_types::Duration { seconds: 60, nanos: 0 });
    spec.search_params = vec![s()];
    (spec.exclude_dates, spec.calendar) = (vec![s()], s());
    (spec.on_success, spec.on_failure, spec.after_all) = (vec![s()], vec![s()], vec![s()]);
    if let Some(schedule::Kind::Cron(cron)) = spec.schedule.as_mut().and_then(|x| x.kind.as_mut()) {
        (cron.expression, cron.time_zone) = (s(), s());
    }
    if let Some(pause) = task.pause.as_mut() {
        (pause.actor, pause.note) = (s(), s());
    }
    let task = TaskView::from(&task);
    let event = TaskEventView::from(&TaskEvent { time: None, kind: s(), actor: s(), message: s(), fires: None });

    let preview = PreviewView::from(&SchedulePreview {
        fires: vec![Fire {
            time: None,
            local_time: s(),
            run_time: Some(prost_types::Timestamp { seconds: 1_767_268_800, nanos: 0 }),
        }],
        fires_per_day: 1.0,
        warnings: vec![s()],
        description: s(),
    });

    let mut instance = finished_instance();
    (instance.task_name, instance.app, instance.handler, instance.params, instance.idempotency_key) =
        (s(), s(), s(), s(), s());
    (instance.worker_id, instance.session_id, instance.scheduler_id) = (s(), s(), s());
    (instance.message, instance.output, instance.progress_message) = (s(), s(), s());
    (instance.selector, instance.target_worker, instance.hash_key) = (s(), s(), s());
    instance.concurrency_value = s();
    let instance = InstanceView::from(&instance);
    // A child not yet dispatched shows its pinned worker; a dispatched one the worker it ran on.
    let mut pinned = finished_instance();
    (pinned.worker_id, pinned.target_worker, pinned.message) = (String::new(), s(), s());
    let children = [InstanceView::from(&pinned), instance_with_worker(s())];
    let trail = [InstanceEvent {
        time: None,
        from_status: InstanceStatus::Pending as i32,
        to_status: InstanceStatus::Failed as i32,
        attempt: 1,
        scheduler_id: s(),
        worker_id: s(),
        reason: s(),
    }];
    let log = LogLineView::from(&LogLine { seq: 1, attempt: 1, level: 3, time: None, message: s() });

    let worker = WorkerView::from(&WorkerSession {
        session_id: s(),
        worker_id: s(),
        app: s(),
        handlers: vec![s(), s()],
        labels: HashMap::from([(s(), s())]),
        scheduler_id: s(),
        client: s(),
        // One cooling down (until the far future) and one only failing: both forms of the cell.
        cooldowns: vec![
            WorkerCooldown {
                handler: s(),
                consecutive_failures: 5,
                until: Some(prost_types::Timestamp { seconds: 4_102_444_800, nanos: 0 }),
            },
            WorkerCooldown { handler: s(), consecutive_failures: 2, until: None },
        ],
        ..WorkerSession::default()
    });
    let now = DateTime::from_timestamp(1_767_268_800, 0).expect("valid");
    let scheduler = SchedulerView::from(&SchedulerNode {
        scheduler_id: s(),
        host: s(),
        address: s(),
        version: s(),
        workers: 1,
        worker_ids: vec![s()],
        ..SchedulerNode::default()
    });
    let mut limit = billing_limit();
    (limit.app, limit.updated_by) = (s(), s());
    let limit = AppLimitView::from(&limit);
    // Statuses are numbers; a number this axctl does not know is shown as it is.
    let stats = StatsView::from(&GetClusterStatsResponse::default());
    let mut linked = finished_instance();
    (linked.task_name, linked.message) = (s(), s());
    let link = LinkView::from(&InstanceLink { instance: Some(linked), kind: LinkKind::OnSuccess as i32 });
    let mut run = run();
    for i in &mut run.instances {
        (i.task_name, i.message) = (s(), s());
    }
    let run = RunView::from(&run);
    let mut calendar = holidays();
    (calendar.name, calendar.description, calendar.dates) = (s(), s(), vec![s()]);
    (calendar.created_by, calendar.updated_by) = (s(), s());
    let calendar = CalendarView::from(&calendar);
    let fire = BackfilledFireView::from(&BackfilledFire { time: None, instance_id: 5, created: true });

    vec![
        ("task_details", task_details(&task)),
        ("task_table", task_table(std::slice::from_ref(&task)).render()),
        ("task_event_table", task_event_table(&[event]).render()),
        ("preview_details", preview_details(&preview, text)),
        ("instance_details", instance_details(&instance)),
        ("instance_table", instance_table(std::slice::from_ref(&instance)).render()),
        ("children_report", children_report(&children)),
        ("event_trail", event_trail(&trail).render()),
        ("log_table", log_table(&[log]).render()),
        ("worker_table", worker_table(&[worker], now).render()),
        ("scheduler_table", scheduler_table(&[scheduler]).render()),
        ("stats_details", stats_details(&stats)),
        ("app_limit_table", app_limit_table(std::slice::from_ref(&limit)).render()),
        ("app_limit_summary", app_limit_summary(&limit)),
        ("links_report", links_report(std::slice::from_ref(&link), std::slice::from_ref(&link))),
        ("run_tree", run_tree(&run)),
        ("calendar_details", calendar_details(&calendar, Some(&[s()]))),
        ("calendar_table", calendar_table(std::slice::from_ref(&calendar)).render()),
        ("backfill_report", backfill_report(text, false, &[fire])),
    ]
}

/// An instance with every field set that ran on `worker`.
fn instance_with_worker(worker: String) -> InstanceView {
    let mut instance = finished_instance();
    instance.worker_id = worker;
    InstanceView::from(&instance)
}

#[test]
fn no_renderer_lets_a_control_character_reach_the_terminal() {
    for ((name, hostile), (_, benign)) in render_all(HOSTILE).into_iter().zip(render_all("benign")) {
        let raw: Vec<char> = hostile.chars().filter(|c| c.is_control() && *c != '\n').collect();
        assert!(raw.is_empty(), "{name}: raw control characters {raw:?} reached the output:\n{hostile}");
        assert_eq!(hostile.lines().count(), benign.lines().count(), "{name}: a value added a line:\n{hostile}");
        assert!(!hostile.lines().any(|line| line.starts_with("warning: injected")), "{name}: {hostile}");
    }
}

#[test]
fn server_text_is_shown_escaped_not_dropped() {
    let escaped = r"\x1b]0;pwned\x07\x1b[1A\x1b[2K\u{9b}31m\rfake\nwarning: injected\t\x7f\x00";
    for (name, text) in render_all(HOSTILE) {
        if name != "stats_details" {
            assert!(text.contains(escaped), "{name}: the value is shown with visible escapes:\n{text}");
        }
    }
}

#[test]
fn json_views_keep_server_text_exact() {
    let mut task = cron_task();
    let spec = task.spec.as_mut().expect("spec");
    (spec.description, spec.selector, spec.hash_key) = (HOSTILE.to_owned(), HOSTILE.to_owned(), HOSTILE.to_owned());
    spec.calendar = HOSTILE.to_owned();
    spec.on_success = vec![HOSTILE.to_owned()];
    if let Some(pause) = task.pause.as_mut() {
        pause.note = HOSTILE.to_owned();
    }
    let json = serde_json::to_string(&TaskView::from(&task)).expect("json");
    let back: serde_json::Value = serde_json::from_str(&json).expect("parse");
    for key in ["description", "selector", "hash_key", "calendar"] {
        assert_eq!(back[key], HOSTILE, "{key}");
    }
    assert_eq!(
        (&back["on_success"][0], &back["pause"]["note"]),
        (&serde_json::json!(HOSTILE), &serde_json::json!(HOSTILE))
    );
    let mut c = holidays();
    c.description = HOSTILE.to_owned();
    assert_eq!(serde_json::to_value(CalendarView::from(&c)).expect("json")["description"], HOSTILE);

    let mut instance = finished_instance();
    (instance.selector, instance.target_worker, instance.hash_key) =
        (HOSTILE.to_owned(), HOSTILE.to_owned(), HOSTILE.to_owned());
    let back = serde_json::to_value(InstanceView::from(&instance)).expect("json");
    for key in ["selector", "target_worker", "hash_key"] {
        assert_eq!(back[key], HOSTILE, "{key}");
    }

    let worker = WorkerView::from(&WorkerSession {
        cooldowns: vec![WorkerCooldown { handler: HOSTILE.to_owned(), consecutive_failures: 1, until: None }],
        ..WorkerSession::default()
    });
    assert_eq!(serde_json::to_value(&worker).expect("json")["cooldowns"][0]["handler"], HOSTILE);

    let mut limit = billing_limit();
    limit.updated_by = HOSTILE.to_owned();
    assert_eq!(serde_json::to_value(AppLimitView::from(&limit)).expect("json")["updated_by"], HOSTILE);
}
