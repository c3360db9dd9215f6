//! An instance's history as axctl shows it: its event trail (every state change, who made it,
//! why, and the time since the previous one, which answers "where did the time go") and the log
//! lines its workers sent.

use ax_proto::v1::{InstanceEvent, InstanceStatus, LogLevel, LogLine};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::{
    layout::Table,
    scalars::{enum_name, or_dash},
    time::{format_millis, gap_text, time_text, utc},
};

/// The time from the previous event to each event, in milliseconds; None for the first event and
/// wherever a time is missing.
pub fn gaps_millis(events: &[InstanceEvent]) -> Vec<Option<i64>> {
    let mut previous: Option<DateTime<Utc>> = None;
    let mut first = true;
    events
        .iter()
        .map(|event| {
            let time = utc(event.time.as_ref());
            let gap = if first { None } else { previous.zip(time).map(|(a, b)| (b - a).num_milliseconds()) };
            first = false;
            previous = time;
            gap
        })
        .collect()
}

/// JSON view of an InstanceEvent, with the time since the previous event of the trail.
#[derive(Debug, Serialize, PartialEq)]
pub struct InstanceEventView {
    pub time: Option<String>,
    /// Null for the creation event (UNSPECIFIED).
    pub from_status: Option<String>,
    pub to_status: String,
    pub attempt: u32,
    pub scheduler_id: String,
    pub worker_id: String,
    pub reason: String,
    pub since_previous: Option<String>,
}

/// The JSON views of an event trail (oldest first, as the server sends it).
pub fn instance_event_views(events: &[InstanceEvent]) -> Vec<InstanceEventView> {
    events
        .iter()
        .zip(gaps_millis(events))
        .map(|(event, gap)| InstanceEventView {
            time: time_text(event.time.as_ref()),
            from_status: (event.from_status != InstanceStatus::Unspecified as i32)
                .then(|| enum_name::<InstanceStatus>(event.from_status)),
            to_status: enum_name::<InstanceStatus>(event.to_status),
            attempt: event.attempt,
            scheduler_id: event.scheduler_id.clone(),
            worker_id: event.worker_id.clone(),
            reason: event.reason.clone(),
            since_previous: gap.map(format_millis),
        })
        .collect()
}

/// The event trail, one row per event, with millisecond times so that short gaps are visible.
pub fn event_trail(events: &[InstanceEvent]) -> Table<7> {
    let mut table = Table::new(["TIME", "TRANSITION", "ATTEMPT", "SCHEDULER", "WORKER", "REASON", "SINCE PREV"]);
    let rows = events.iter().zip(instance_event_views(events)).zip(gaps_millis(events));
    for ((event, view), gap) in rows {
        let time = utc(event.time.as_ref()).map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true));
        table.row([
            or_dash(time),
            format!("{} -> {}", view.from_status.as_deref().unwrap_or("-"), view.to_status),
            view.attempt.to_string(),
            or_dash(Some(view.scheduler_id)),
            or_dash(Some(view.worker_id)),
            view.reason,
            gap.map_or_else(String::new, gap_text),
        ]);
    }
    table
}

/// JSON view of a LogLine.
#[derive(Debug, Serialize)]
pub struct LogLineView {
    pub seq: i64,
    pub attempt: u32,
    pub level: String,
    pub time: Option<String>,
    pub message: String,
}

impl From<&LogLine> for LogLineView {
    fn from(line: &LogLine) -> Self {
        LogLineView {
            seq: line.seq,
            attempt: line.attempt,
            level: enum_name::<LogLevel>(line.level),
            time: time_text(line.time.as_ref()),
            message: line.message.clone(),
        }
    }
}

/// The table of `instance logs`.
pub fn log_table(lines: &[LogLineView]) -> Table<4> {
    let mut table = Table::new(["TIME", "ATTEMPT", "LEVEL", "MESSAGE"]);
    for line in lines {
        table.row([or_dash(line.time.clone()), line.attempt.to_string(), line.level.clone(), line.message.clone()]);
    }
    table
}

/// One line of `instance logs --follow`: `TIME  attempt N  LEVEL  MESSAGE`, the message escaped
/// like any server text (a line cannot be aligned with lines not yet received, so no table).
pub fn log_line_text(line: &LogLineView) -> String {
    let time = or_dash(line.time.clone());
    let message = super::terminal::escape_controls(&line.message);
    format!("{time}  attempt {}  {:<5}  {message}", line.attempt, line.level)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(seconds: i64, nanos: i32, from: InstanceStatus, to: InstanceStatus) -> InstanceEvent {
        InstanceEvent {
            time: Some(prost_types::Timestamp { seconds, nanos }),
            from_status: from as i32,
            to_status: to as i32,
            attempt: 1,
            scheduler_id: "axd-1".into(),
            worker_id: String::new(),
            reason: String::new(),
        }
    }

    #[test]
    fn event_trails_carry_the_time_since_the_previous_event() {
        let events = [
            event(1_767_261_600, 0, InstanceStatus::Unspecified, InstanceStatus::Pending),
            event(1_767_261_601, 204_000_000, InstanceStatus::Pending, InstanceStatus::Dispatched),
            event(1_767_261_601, 254_000_000, InstanceStatus::Dispatched, InstanceStatus::Running),
            event(1_767_261_691, 254_000_000, InstanceStatus::Running, InstanceStatus::Success),
        ];
        assert_eq!(gaps_millis(&events), vec![None, Some(1_204), Some(50), Some(90_000)]);
        let views = instance_event_views(&events);
        let gaps: Vec<Option<&str>> = views.iter().map(|v| v.since_previous.as_deref()).collect();
        assert_eq!(gaps, vec![None, Some("1s204ms"), Some("50ms"), Some("1m30s")]);
        assert_eq!(
            serde_json::to_value(&views[0]).expect("json"),
            json!({
                "time": "2026-01-01T10:00:00Z",
                "from_status": null,
                "to_status": "PENDING",
                "attempt": 1,
                "scheduler_id": "axd-1",
                "worker_id": "",
                "reason": "",
                "since_previous": null
            })
        );
        assert_eq!(views[1].from_status.as_deref(), Some("PENDING"));
        assert_eq!(views[1].to_status, "DISPATCHED");
    }

    #[test]
    fn an_event_without_a_time_breaks_only_its_own_gaps() {
        let mut events = vec![
            event(100, 0, InstanceStatus::Unspecified, InstanceStatus::Pending),
            event(101, 0, InstanceStatus::Pending, InstanceStatus::Dispatched),
            event(103, 0, InstanceStatus::Dispatched, InstanceStatus::Running),
        ];
        events[1].time = None;
        assert_eq!(gaps_millis(&events), vec![None, None, None]);
        assert_eq!(gaps_millis(&events[..1]), vec![None]);
        assert_eq!(gaps_millis(&[]), Vec::<Option<i64>>::new());
    }

    #[test]
    fn the_trail_shows_transitions_and_the_time_between_events() {
        let mut first = event(1_767_261_600, 0, InstanceStatus::Unspecified, InstanceStatus::Pending);
        first.attempt = 0;
        first.reason = "fire".into();
        let mut second = event(1_767_261_601, 204_000_000, InstanceStatus::Pending, InstanceStatus::Dispatched);
        second.worker_id = "w1".into();
        second.reason = "assigned".into();
        let text = event_trail(&[first, second]).render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[1].starts_with("2026-01-01T10:00:00.000Z  - -> PENDING"), "{text}");
        assert!(lines[1].ends_with("fire"), "the first event has no gap: {text}");
        assert!(lines[2].contains("PENDING -> DISPATCHED"), "{text}");
        assert!(lines[2].contains("w1"), "{text}");
        assert!(lines[2].ends_with("assigned  +1.204s"), "{text}");
    }

    #[test]
    fn log_lines_read_one_per_row() {
        let line = LogLine {
            seq: 1,
            attempt: 2,
            level: LogLevel::Warn as i32,
            time: Some(prost_types::Timestamp { seconds: 1_767_261_600, nanos: 0 }),
            message: "disk almost full".into(),
        };
        assert_eq!(
            log_table(&[LogLineView::from(&line)]).render(),
            "TIME                  ATTEMPT  LEVEL  MESSAGE\n2026-01-01T10:00:00Z  2        WARN   disk almost full\n"
        );
    }

    #[test]
    fn a_followed_log_line_is_one_line_with_its_controls_escaped() {
        let line = LogLine {
            seq: 7,
            attempt: 1,
            level: LogLevel::Info as i32,
            time: Some(prost_types::Timestamp { seconds: 1_767_261_600, nanos: 0 }),
            message: "two\nlines\x1b[2J".into(),
        };
        assert_eq!(
            log_line_text(&LogLineView::from(&line)),
            "2026-01-01T10:00:00Z  attempt 1  INFO   two\\nlines\\x1b[2J"
        );
    }
}
