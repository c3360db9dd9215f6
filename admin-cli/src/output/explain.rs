//! `task explain` as axctl shows it: the findings first (the answer), then the next fires, the
//! recent instances with what each waited for, and the workers that could run the task now.

use ax_proto::v1::{
    ExplainFinding, ExplainFindingKind, ExplainTaskResponse, ExplainedAttempt, ExplainedFire, InstanceStatus,
};
use serde::Serialize;

use super::{
    instances::InstanceView,
    layout::{Table, indent},
    preview::FireView,
    scalars::{enum_name, or_dash},
    tasks::{TaskEventView, TaskView},
    terminal::escape_controls,
    time::{duration_text, time_text, wall_clock_text},
};

/// JSON view of an ExplainTaskResponse.
#[derive(Debug, Serialize)]
pub struct ExplainView {
    pub task: Option<TaskView>,
    pub at: Option<String>,
    pub findings: Vec<FindingView>,
    pub next_fires: Vec<FireView>,
    pub recent: Vec<ExplainedFireView>,
    pub events: Vec<TaskEventView>,
    pub workers: Option<WorkersView>,
}

/// JSON view of an ExplainFinding.
#[derive(Debug, Serialize)]
pub struct FindingView {
    pub kind: String,
    pub time: Option<String>,
    pub message: String,
    pub instance_id: i64,
    /// The fires a misfire finding's decision skipped or caught up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fires: Option<super::tasks::FireSpanView>,
}

/// JSON view of an ExplainedFire.
#[derive(Debug, Serialize)]
pub struct ExplainedFireView {
    pub instance: Option<InstanceView>,
    pub dispatch_delay: Option<String>,
    pub waited_for: String,
    pub attempts: Vec<AttemptView>,
}

/// JSON view of an ExplainedAttempt.
#[derive(Debug, Serialize)]
pub struct AttemptView {
    pub attempt: u32,
    pub worker_id: String,
    pub dispatch_time: Option<String>,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub outcome: Option<String>,
    pub reason: String,
}

/// JSON view of ExplainWorkers.
#[derive(Debug, Serialize)]
pub struct WorkersView {
    pub sessions: u32,
    pub serving: u32,
    pub capacity: u32,
    pub free_credits: u32,
}

impl From<&ExplainFinding> for FindingView {
    fn from(f: &ExplainFinding) -> Self {
        FindingView {
            kind: enum_name::<ExplainFindingKind>(f.kind),
            time: time_text(f.time.as_ref()),
            message: f.message.clone(),
            instance_id: f.instance_id,
            fires: f.fires.as_ref().map(super::tasks::FireSpanView::from),
        }
    }
}

impl From<&ExplainedAttempt> for AttemptView {
    fn from(a: &ExplainedAttempt) -> Self {
        AttemptView {
            attempt: a.attempt,
            worker_id: a.worker_id.clone(),
            dispatch_time: time_text(a.dispatch_time.as_ref()),
            start_time: time_text(a.start_time.as_ref()),
            end_time: time_text(a.end_time.as_ref()),
            outcome: (a.outcome != 0).then(|| enum_name::<InstanceStatus>(a.outcome)),
            reason: a.reason.clone(),
        }
    }
}

impl From<&ExplainedFire> for ExplainedFireView {
    fn from(f: &ExplainedFire) -> Self {
        ExplainedFireView {
            instance: f.instance.as_ref().map(InstanceView::from),
            dispatch_delay: duration_text(f.dispatch_delay.as_ref()),
            waited_for: f.waited_for.clone(),
            attempts: f.attempts.iter().map(AttemptView::from).collect(),
        }
    }
}

impl From<&ExplainTaskResponse> for ExplainView {
    fn from(r: &ExplainTaskResponse) -> Self {
        ExplainView {
            task: r.task.as_ref().map(TaskView::from),
            at: time_text(r.at.as_ref()),
            findings: r.findings.iter().map(FindingView::from).collect(),
            next_fires: r.next_fires.iter().map(FireView::from).collect(),
            recent: r.recent.iter().map(ExplainedFireView::from).collect(),
            events: r.events.iter().map(TaskEventView::from).collect(),
            workers: r.workers.as_ref().map(|w| WorkersView {
                sessions: w.sessions,
                serving: w.serving,
                capacity: w.capacity,
                free_credits: w.free_credits,
            }),
        }
    }
}

/// The report people read.
pub fn explain_report(v: &ExplainView) -> String {
    let mut text = String::new();
    let (name, app, handler, zone) = match &v.task {
        Some(t) => (t.name.as_str(), t.app.as_str(), t.handler.as_str(), t.time_zone()),
        None => ("?", "?", "?", ""),
    };
    text.push_str(&escape_controls(&format!(
        "task {name} (app {app}, handler {handler}) at {}",
        or_dash(v.at.clone())
    )));
    text.push('\n');
    text.push_str("\nfindings:\n");
    for f in &v.findings {
        let when = f.time.as_deref().map(|t| format!(" [{t}]")).unwrap_or_default();
        let fires = f.fires.as_ref().map(|s| format!(" ({})", s.text())).unwrap_or_default();
        text.push_str(&indent(&escape_controls(&format!("{}{when}: {}{fires}", f.kind, f.message))));
    }
    text.push_str("\nnext fires:\n");
    if v.next_fires.is_empty() {
        text.push_str("  none\n");
    } else {
        let mut t = Table::new(["UTC", "LOCAL"]);
        for f in &v.next_fires {
            let local = f.local_time.as_deref().map(|l| wall_clock_text(l, zone));
            t.row([or_dash(f.time.clone()), or_dash(local)]);
        }
        text.push_str(&indent(&t.render()));
    }
    text.push_str("\nrecent instances:\n");
    if v.recent.is_empty() {
        text.push_str("  none\n");
    } else {
        let mut t = Table::new([
            "ID",
            "SOURCE",
            "TRIGGER TIME",
            "STATUS",
            "ATTEMPTS",
            "DISPATCH DELAY",
            "WORKERS",
            "WAITED FOR",
        ]);
        for f in &v.recent {
            let Some(i) = &f.instance else { continue };
            let mut workers: Vec<&str> = f.attempts.iter().map(|a| a.worker_id.as_str()).collect();
            workers.dedup();
            t.row([
                i.id.to_string(),
                i.source.clone(),
                or_dash(i.trigger_time.clone()),
                i.status.clone(),
                i.attempt.to_string(),
                or_dash(f.dispatch_delay.clone()),
                if workers.is_empty() { "-".to_owned() } else { workers.join(",") },
                if f.waited_for.is_empty() { "-".to_owned() } else { f.waited_for.clone() },
            ]);
        }
        text.push_str(&indent(&t.render()));
    }
    if let Some(w) = &v.workers {
        text.push('\n');
        text.push_str(&escape_controls(&format!(
            "workers now: {} session(s) of app {app}, {} serving {handler}, capacity {}, {} free credit(s)",
            w.sessions, w.serving, w.capacity, w.free_credits
        )));
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The finding kinds added with routing and limits, as the README names them.
    const NEW_KINDS: [(ExplainFindingKind, &str); 5] = [
        (ExplainFindingKind::SelectorUnmatched, "SELECTOR_UNMATCHED"),
        (ExplainFindingKind::Cooldown, "COOLDOWN"),
        (ExplainFindingKind::MaxRunning, "MAX_RUNNING"),
        (ExplainFindingKind::RateLimited, "RATE_LIMITED"),
        (ExplainFindingKind::Coalesced, "COALESCED"),
    ];

    fn response() -> ExplainTaskResponse {
        let findings = NEW_KINDS
            .iter()
            .map(|(kind, name)| ExplainFinding {
                kind: *kind as i32,
                time: Some(prost_types::Timestamp { seconds: 1_767_261_600, nanos: 0 }),
                message: format!("why {name}"),
                instance_id: 9,
                fires: None,
            })
            .collect();
        ExplainTaskResponse { findings, ..ExplainTaskResponse::default() }
    }

    #[test]
    fn the_routing_and_limits_findings_print_by_their_short_names() {
        let view = ExplainView::from(&response());
        let report = explain_report(&view);
        for (_, name) in NEW_KINDS {
            assert!(report.contains(&format!("\n  {name} [2026-01-01T10:00:00Z]: why {name}\n")), "{name}: {report}");
        }
        let json = serde_json::to_value(&view).expect("json");
        let kinds: Vec<&str> =
            json["findings"].as_array().expect("findings").iter().filter_map(|f| f["kind"].as_str()).collect();
        assert_eq!(kinds, NEW_KINDS.map(|(_, name)| name));
    }

    #[test]
    fn a_kind_this_axctl_does_not_know_is_printed_as_its_number() {
        let mut response = response();
        response.findings.truncate(1);
        response.findings[0].kind = 99;
        assert!(explain_report(&ExplainView::from(&response)).contains("\n  99 [2026-01-01T10:00:00Z]: why"));
    }
}
