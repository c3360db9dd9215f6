//! The cluster as axctl shows it: connected worker sessions with their failure cooldowns, the axd
//! processes sharing the database, and cluster-wide counts (every instance status listed, 0 when
//! the server omitted it).

use std::collections::BTreeMap;

use ax_proto::v1::{GetClusterStatsResponse, InstanceStatus, SchedulerNode, WorkerCooldown, WorkerSession};
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Serialize, Serializer};

use super::{
    layout::{Fields, Table, indent},
    scalars::{enum_name, or_dash, sorted},
    time::{duration_text, time_text, utc},
};

/// JSON view of a WorkerSession.
#[derive(Debug, Serialize)]
pub struct WorkerView {
    pub session_id: String,
    pub worker_id: String,
    pub app: String,
    pub handlers: Vec<String>,
    pub capacity: u32,
    pub credits: u32,
    pub in_flight: u32,
    pub labels: BTreeMap<String, String>,
    pub scheduler_id: String,
    pub client: String,
    pub connect_time: Option<String>,
    pub last_seen_time: Option<String>,
    pub cooldowns: Vec<CooldownView>,
}

/// JSON view of a WorkerCooldown.
#[derive(Debug, Serialize)]
pub struct CooldownView {
    pub handler: String,
    pub consecutive_failures: u32,
    /// Null when the handler is not cooling down (only failures counted so far).
    pub until: Option<String>,
    /// `until` as a time, for comparing with now.
    #[serde(skip)]
    until_utc: Option<DateTime<Utc>>,
}

impl From<&WorkerCooldown> for CooldownView {
    fn from(c: &WorkerCooldown) -> Self {
        CooldownView {
            handler: c.handler.clone(),
            consecutive_failures: c.consecutive_failures,
            until: time_text(c.until.as_ref()),
            until_utc: utc(c.until.as_ref()),
        }
    }
}

impl CooldownView {
    /// For people: `send-invoice until 12:00:31Z (5 failures)` while cooling down, else
    /// `send-invoice: 2 failures`; None without failures or cooldown. A cooldown that has ended
    /// by `now` (the server may still hold its time) is not shown as one. The time of day is
    /// enough for a cooldown ending within a day; a longer one (axd's --cooldown-max allows up to
    /// 7 days) gets its date too.
    fn text(&self, now: DateTime<Utc>) -> Option<String> {
        let failures = match self.consecutive_failures {
            1 => "1 failure".to_owned(),
            n => format!("{n} failures"),
        };
        match self.until_utc.filter(|until| *until > now) {
            Some(until) => {
                let when = if until - now < TimeDelta::days(1) {
                    until.format("%H:%M:%SZ").to_string()
                } else {
                    self.until.clone().unwrap_or_default()
                };
                Some(format!("{} until {when} ({failures})", self.handler))
            }
            None if self.consecutive_failures > 0 => Some(format!("{}: {failures}", self.handler)),
            None => None,
        }
    }
}

impl From<&WorkerSession> for WorkerView {
    fn from(w: &WorkerSession) -> Self {
        WorkerView {
            session_id: w.session_id.clone(),
            worker_id: w.worker_id.clone(),
            app: w.app.clone(),
            handlers: w.handlers.clone(),
            capacity: w.capacity,
            credits: w.credits,
            in_flight: w.in_flight,
            labels: sorted(&w.labels),
            scheduler_id: w.scheduler_id.clone(),
            client: w.client.clone(),
            connect_time: time_text(w.connect_time.as_ref()),
            last_seen_time: time_text(w.last_seen_time.as_ref()),
            cooldowns: w.cooldowns.iter().map(CooldownView::from).collect(),
        }
    }
}

/// The COOLING cell of a worker: its handlers' cooldowns and failure counts, `-` when none.
fn cooling_text(cooldowns: &[CooldownView], now: DateTime<Utc>) -> String {
    let parts: Vec<String> = cooldowns.iter().filter_map(|c| c.text(now)).collect();
    // `;` because handler names may not contain it (they are letters, digits and . _ : / -) and `,` reads as a
    // list inside one handler's part.
    if parts.is_empty() { "-".to_owned() } else { parts.join("; ") }
}

/// The table of `worker list`; `now` decides which cooldowns are still in force.
pub fn worker_table(workers: &[WorkerView], now: DateTime<Utc>) -> Table<10> {
    let mut table = Table::new([
        "APP",
        "WORKER",
        "SESSION",
        "SCHEDULER",
        "CAPACITY",
        "CREDITS",
        "IN FLIGHT",
        "HANDLERS",
        "LAST SEEN",
        "COOLING",
    ]);
    for w in workers {
        table.row([
            w.app.clone(),
            w.worker_id.clone(),
            w.session_id.clone(),
            w.scheduler_id.clone(),
            w.capacity.to_string(),
            w.credits.to_string(),
            w.in_flight.to_string(),
            w.handlers.join(","),
            or_dash(w.last_seen_time.clone()),
            cooling_text(&w.cooldowns, now),
        ]);
    }
    table
}

/// JSON view of a SchedulerNode.
#[derive(Debug, Serialize)]
pub struct SchedulerView {
    pub scheduler_id: String,
    pub host: String,
    pub address: String,
    pub version: String,
    pub start_time: Option<String>,
    pub heartbeat_time: Option<String>,
    pub workers: u32,
    pub worker_ids: Vec<String>,
    pub alive: bool,
}

impl From<&SchedulerNode> for SchedulerView {
    fn from(s: &SchedulerNode) -> Self {
        SchedulerView {
            scheduler_id: s.scheduler_id.clone(),
            host: s.host.clone(),
            address: s.address.clone(),
            version: s.version.clone(),
            start_time: time_text(s.start_time.as_ref()),
            heartbeat_time: time_text(s.heartbeat_time.as_ref()),
            workers: s.workers,
            worker_ids: s.worker_ids.clone(),
            alive: s.alive,
        }
    }
}

/// The table of `scheduler list`: a dead axd says NO in capitals, and each axd lists the workers
/// whose streams it holds.
pub fn scheduler_table(schedulers: &[SchedulerView]) -> Table<8> {
    let mut table = Table::new(["ID", "HOST", "ADDRESS", "VERSION", "ALIVE", "WORKERS", "STARTED", "HEARTBEAT"]);
    for s in schedulers {
        table.row([
            s.scheduler_id.clone(),
            s.host.clone(),
            s.address.clone(),
            s.version.clone(),
            if s.alive { "yes" } else { "NO" }.to_owned(),
            if s.worker_ids.is_empty() {
                "0".to_owned()
            } else {
                format!("{} ({})", s.workers, s.worker_ids.join(","))
            },
            or_dash(s.start_time.clone()),
            or_dash(s.heartbeat_time.clone()),
        ]);
    }
    table
}

/// Instance counts by status name, in status order, serialized as a JSON object. Every known status
/// is present (0 when the server omitted it), so scripts can read any key without a default.
#[derive(Debug, PartialEq)]
pub struct StatusCounts(pub Vec<(String, u64)>);

impl StatusCounts {
    /// From the server's (status, count) pairs.
    pub fn new(counts: impl IntoIterator<Item = (i32, u64)>) -> Self {
        // Status values are numbered 1, 2, 3, ... after UNSPECIFIED, so this lists every known one.
        let mut all: Vec<(i32, u64)> =
            (1..).map_while(|n| InstanceStatus::try_from(n).ok()).map(|status| (status as i32, 0)).collect();
        for (status, count) in counts {
            match all.iter_mut().find(|(s, _)| *s == status) {
                Some(slot) => slot.1 += count,
                None => all.push((status, count)),
            }
        }
        StatusCounts(all.into_iter().map(|(s, n)| (enum_name::<InstanceStatus>(s), n)).collect())
    }
}

impl Serialize for StatusCounts {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, count)| (name, count)))
    }
}

/// JSON view of the cluster stats.
#[derive(Debug, Serialize)]
pub struct StatsView {
    pub tasks: u64,
    pub enabled_tasks: u64,
    pub instances: StatusCounts,
    pub workers: u64,
    pub schedulers: u64,
    /// The axd that answered: its loops and clock (absent from an older axd).
    pub answered_by: Option<HealthView>,
}

/// JSON view of the answering axd's SchedulerHealth; durations in the flag syntax (`1s200ms`).
#[derive(Debug, Serialize)]
pub struct HealthView {
    pub scheduler_id: String,
    pub serving: bool,
    pub clock_offset: Option<String>,
    pub stall_after: Option<String>,
    /// By loop name.
    pub loops: BTreeMap<String, LoopView>,
}

/// JSON view of a LoopHealth.
#[derive(Debug, Serialize)]
pub struct LoopView {
    pub since_last_round: String,
    pub stalled: bool,
}

impl From<&GetClusterStatsResponse> for StatsView {
    fn from(response: &GetClusterStatsResponse) -> Self {
        StatsView {
            tasks: response.tasks,
            enabled_tasks: response.enabled_tasks,
            instances: StatusCounts::new(response.instances.iter().map(|c| (c.status, c.count))),
            workers: response.workers,
            schedulers: response.schedulers,
            answered_by: response.answered_by.as_ref().map(|h| HealthView {
                scheduler_id: h.scheduler_id.clone(),
                serving: h.serving,
                clock_offset: duration_text(h.clock_offset.as_ref()),
                stall_after: duration_text(h.stall_after.as_ref()),
                loops: h
                    .loops
                    .iter()
                    .map(|l| {
                        let since_last_round =
                            duration_text(l.since_last_round.as_ref()).unwrap_or_else(|| "-".to_owned());
                        (l.name.clone(), LoopView { since_last_round, stalled: l.stalled })
                    })
                    .collect(),
            }),
        }
    }
}

/// The counts, with one indented line per instance status.
pub fn stats_details(stats: &StatsView) -> String {
    let mut fields = Fields::new();
    fields
        .add("tasks", format!("{} ({} enabled)", stats.tasks, stats.enabled_tasks))
        .add("workers", stats.workers.to_string())
        .add("schedulers", stats.schedulers.to_string());
    let mut text = fields.render();
    text.push_str("instances:\n");
    let mut counts = Fields::new();
    for (status, count) in &stats.instances.0 {
        counts.add(status, count.to_string());
    }
    text.push_str(&indent(&counts.render()));
    if let Some(h) = &stats.answered_by {
        let serving = if h.serving { "SERVING" } else { "NOT_SERVING" };
        text.push_str(&format!("answered by: {} ({serving})\n", h.scheduler_id));
        let mut health = Fields::new();
        health.add("clock offset", h.clock_offset.clone().unwrap_or_else(|| "-".to_owned()));
        for (name, l) in &h.loops {
            let stalled = if l.stalled { " (stalled)" } else { "" };
            health.add(&format!("{name} loop"), format!("last round {} ago{stalled}", l.since_last_round));
        }
        text.push_str(&indent(&health.render()));
    }
    text
}

#[cfg(test)]
mod tests {
    use ax_proto::v1::StatusCount;

    use super::*;

    #[test]
    fn status_counts_list_every_status_in_order() {
        let counts = StatusCounts::new([(InstanceStatus::Running as i32, 2), (InstanceStatus::Pending as i32, 5)]);
        assert_eq!(
            serde_json::to_string(&counts).expect("json"),
            r#"{"PENDING":5,"DISPATCHED":0,"RUNNING":2,"SUCCESS":0,"FAILED":0,"TIMEOUT":0,"CANCELED":0,"SKIPPED":0,"WAITING":0}"#
        );
        let unknown = StatusCounts::new([(42, 1)]);
        assert_eq!(unknown.0.last(), Some(&("42".to_owned(), 1)));
    }

    #[test]
    fn stats_read_as_aligned_counts() {
        let response = GetClusterStatsResponse {
            tasks: 3,
            enabled_tasks: 2,
            instances: vec![StatusCount { status: InstanceStatus::Pending as i32, count: 5 }],
            workers: 1,
            schedulers: 1,
            answered_by: None,
        };
        let text = stats_details(&StatsView::from(&response));
        assert!(text.starts_with("tasks:       3 (2 enabled)\nworkers:     1\nschedulers:  1\ninstances:\n"), "{text}");
        assert!(text.contains("\n  PENDING:     5\n  DISPATCHED:  0\n"), "{text}");
    }

    fn at(seconds: i64) -> Option<prost_types::Timestamp> {
        Some(prost_types::Timestamp { seconds, nanos: 0 })
    }

    /// 2026-01-01T12:00:00Z.
    const NOON: i64 = 1_767_268_800;

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(NOON, 0).expect("valid")
    }

    fn cooldown(handler: &str, failures: u32, until: Option<i64>) -> WorkerCooldown {
        WorkerCooldown { handler: handler.into(), consecutive_failures: failures, until: until.and_then(at) }
    }

    fn worker(cooldowns: Vec<WorkerCooldown>) -> WorkerView {
        WorkerView::from(&WorkerSession {
            session_id: "s1".into(),
            worker_id: "w1".into(),
            app: "billing".into(),
            handlers: vec!["send-invoice".into(), "report".into()],
            capacity: 4,
            credits: 3,
            in_flight: 1,
            last_seen_time: at(NOON - 2),
            cooldowns,
            ..WorkerSession::default()
        })
    }

    #[test]
    fn workers_show_their_cooldowns_and_failures() {
        let w = worker(vec![cooldown("report", 2, None), cooldown("send-invoice", 5, Some(NOON + 31))]);
        assert_eq!(
            worker_table(&[w], now()).render(),
            "APP      WORKER  SESSION  SCHEDULER  CAPACITY  CREDITS  IN FLIGHT  HANDLERS             LAST SEEN             COOLING\n\
             billing  w1      s1                  4         3        1          send-invoice,report  2026-01-01T11:59:58Z  report: 2 failures; send-invoice until 12:00:31Z (5 failures)\n"
        );
    }

    #[test]
    fn ended_cooldowns_and_empty_streaks_are_not_shown_as_cooling() {
        let cell = |cooldowns| worker_table(&[worker(cooldowns)], now()).render().lines().nth(1).map(str::to_owned);
        let last = |line: Option<String>| line.and_then(|l| l.rsplit("  ").next().map(str::to_owned));
        assert_eq!(last(cell(vec![])).as_deref(), Some("-"));
        assert_eq!(last(cell(vec![cooldown("report", 0, None)])).as_deref(), Some("-"));
        assert_eq!(last(cell(vec![cooldown("report", 1, None)])).as_deref(), Some("report: 1 failure"));
        assert_eq!(last(cell(vec![cooldown("report", 6, Some(NOON - 1))])).as_deref(), Some("report: 6 failures"));
        assert_eq!(last(cell(vec![cooldown("report", 6, Some(NOON))])).as_deref(), Some("report: 6 failures"));
        // Ending more than a day from now: the date is part of the answer.
        assert_eq!(
            last(cell(vec![cooldown("report", 9, Some(NOON + 2 * 86_400))])).as_deref(),
            Some("report until 2026-01-03T12:00:00Z (9 failures)")
        );
    }

    #[test]
    fn worker_json_carries_the_raw_cooldown_fields() {
        let w = worker(vec![cooldown("report", 2, None), cooldown("send-invoice", 5, Some(NOON + 31))]);
        let value = serde_json::to_value(&w).expect("json");
        assert_eq!(
            value["cooldowns"],
            serde_json::json!([
                {"handler": "report", "consecutive_failures": 2, "until": null},
                {"handler": "send-invoice", "consecutive_failures": 5, "until": "2026-01-01T12:00:31Z"}
            ])
        );
    }

    #[test]
    fn the_answering_axd_shows_its_loops_and_clock_offset() {
        use ax_proto::v1::{LoopHealth, SchedulerHealth};
        let ms = |ms: i64| Some(prost_types::Duration { seconds: ms / 1000, nanos: (ms % 1000) as i32 * 1_000_000 });
        let response = GetClusterStatsResponse {
            answered_by: Some(SchedulerHealth {
                scheduler_id: "axd-1".into(),
                serving: false,
                loops: vec![
                    LoopHealth { name: "trigger".into(), since_last_round: ms(250), stalled: false },
                    LoopHealth { name: "sweeper".into(), since_last_round: ms(12_000), stalled: true },
                ],
                stall_after: ms(10_000),
                clock_offset: ms(-1500),
            }),
            ..GetClusterStatsResponse::default()
        };
        let view = StatsView::from(&response);
        let text = stats_details(&view);
        assert!(text.contains("answered by: axd-1 (NOT_SERVING)\n"), "{text}");
        assert!(text.contains("  clock offset:  -1s500ms\n"), "{text}");
        assert!(text.contains("  sweeper loop:  last round 12s ago (stalled)\n"), "{text}");
        assert!(text.contains("  trigger loop:  last round 250ms ago\n"), "{text}");
        let json = serde_json::to_value(&view).expect("json");
        assert_eq!(json["answered_by"]["loops"]["trigger"]["since_last_round"], "250ms");
        assert_eq!(json["answered_by"]["loops"]["sweeper"]["stalled"], true);
        assert_eq!(json["answered_by"]["clock_offset"], "-1s500ms");
    }

    #[test]
    fn schedulers_show_liveness_and_their_workers() {
        let node = SchedulerNode {
            scheduler_id: "axd-1".into(),
            alive: false,
            workers: 2,
            worker_ids: vec!["w1".into(), "w2".into()],
            ..SchedulerNode::default()
        };
        let text = scheduler_table(&[SchedulerView::from(&node)]).render();
        assert_eq!(
            text,
            "ID     HOST  ADDRESS  VERSION  ALIVE  WORKERS    STARTED  HEARTBEAT\n\
             axd-1                          NO     2 (w1,w2)  -        -\n"
        );
    }
}
