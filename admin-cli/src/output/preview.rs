//! Schedule previews as axctl shows them: the next fires in UTC and on the schedule's wall clock,
//! when each runs with the task's jitter, the server's estimate of fires per day, and its warnings
//! (the typos that make a task fire far too often). Both numbers and warnings are the server's:
//! axctl computes none of them.

use ax_proto::v1::{Fire, SchedulePreview};
use serde::Serialize;

use super::{
    layout::{Table, indent},
    scalars::or_dash,
    terminal::escape_controls,
    time::{time_text, wall_clock_text},
};

/// JSON view of a SchedulePreview.
#[derive(Debug, Serialize)]
pub struct PreviewView {
    pub fires: Vec<FireView>,
    pub fires_per_day: f64,
    pub warnings: Vec<String>,
    pub description: String,
}

/// JSON view of a Fire. `local_time` is null for interval schedules, which have no wall clock;
/// `run_time` is the fire time plus the jitter offset (the fire time without jitter).
#[derive(Debug, Serialize, PartialEq)]
pub struct FireView {
    pub time: Option<String>,
    pub local_time: Option<String>,
    pub run_time: Option<String>,
}

impl From<&SchedulePreview> for PreviewView {
    fn from(preview: &SchedulePreview) -> Self {
        PreviewView {
            fires: preview.fires.iter().map(FireView::from).collect(),
            fires_per_day: preview.fires_per_day,
            warnings: preview.warnings.clone(),
            description: preview.description.clone(),
        }
    }
}

impl From<&Fire> for FireView {
    fn from(fire: &Fire) -> Self {
        FireView {
            time: time_text(fire.time.as_ref()),
            local_time: Some(fire.local_time.clone()).filter(|t| !t.is_empty()),
            run_time: time_text(fire.run_time.as_ref()),
        }
    }
}

/// The fires (UTC, and on the wall clock of `zone`, the schedule's IANA zone, empty for UTC),
/// fires per day and warnings.
pub fn preview_details(preview: &PreviewView, zone: &str) -> String {
    let mut text = String::new();
    if preview.description.is_empty() {
        text.push_str("next fires:\n");
    } else {
        text.push_str(&format!("next fires ({}):\n", escape_controls(&preview.description)));
    }
    if preview.fires.is_empty() {
        text.push_str("  none\n");
    } else {
        // With jitter the fires run later than scheduled: a column says when.
        let jittered = preview.fires.iter().any(|f| f.run_time.is_some() && f.run_time != f.time);
        if jittered {
            let mut table = Table::new(["UTC", "LOCAL", "RUNS AT (JITTER)"]);
            for fire in &preview.fires {
                let local = fire.local_time.as_deref().map(|local| wall_clock_text(local, zone));
                table.row([or_dash(fire.time.clone()), or_dash(local), or_dash(fire.run_time.clone())]);
            }
            text.push_str(&indent(&table.render()));
        } else {
            let mut table = Table::new(["UTC", "LOCAL"]);
            for fire in &preview.fires {
                let local = fire.local_time.as_deref().map(|local| wall_clock_text(local, zone));
                table.row([or_dash(fire.time.clone()), or_dash(local)]);
            }
            text.push_str(&indent(&table.render()));
        }
    }
    text.push_str(&format!("fires per day: {}\n", round_rate(preview.fires_per_day)));
    for warning in &preview.warnings {
        text.push_str(&format!("warning: {}\n", escape_controls(warning)));
    }
    text
}

/// A rate with at most two decimals and no trailing zeros (`1440`, `0.14`).
fn round_rate(rate: f64) -> String {
    let text = format!("{rate:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ts(seconds: i64) -> Option<prost_types::Timestamp> {
        Some(prost_types::Timestamp { seconds, nanos: 0 })
    }

    fn preview() -> SchedulePreview {
        SchedulePreview {
            fires: vec![
                Fire {
                    time: ts(1_772_953_200),
                    local_time: "2026-03-08T03:00:00-04:00".into(),
                    run_time: ts(1_772_953_200),
                },
                Fire { time: ts(1_773_039_600), local_time: String::new(), run_time: None },
            ],
            fires_per_day: 1.0,
            warnings: vec!["careful".into()],
            description: "cron (unix dialect) in America/New_York".into(),
        }
    }

    #[test]
    fn previews_have_null_local_times_for_interval_schedules() {
        assert_eq!(
            serde_json::to_value(PreviewView::from(&preview())).expect("json"),
            json!({
                "fires": [
                    {"time": "2026-03-08T07:00:00Z", "local_time": "2026-03-08T03:00:00-04:00", "run_time": "2026-03-08T07:00:00Z"},
                    {"time": "2026-03-09T07:00:00Z", "local_time": null, "run_time": null}
                ],
                "fires_per_day": 1.0,
                "warnings": ["careful"],
                "description": "cron (unix dialect) in America/New_York"
            })
        );
        let text = preview_details(&PreviewView::from(&preview()), "America/New_York");
        assert!(text.contains("2026-03-08T07:00:00Z  2026-03-08 03:00:00 EDT (-04:00)\n"), "{text}");
        assert!(text.contains("2026-03-09T07:00:00Z  -\n"), "{text}");
        assert!(text.contains("fires per day: 1\n"), "{text}");
        assert!(text.ends_with("warning: careful\n"), "{text}");
    }

    #[test]
    fn the_local_column_names_the_zone_instead_of_z() {
        let london = SchedulePreview {
            fires: vec![Fire {
                time: ts(1_796_115_600),
                local_time: "2026-12-01T09:00:00Z".into(),
                run_time: ts(1_796_115_600),
            }],
            ..SchedulePreview::default()
        };
        let text = preview_details(&PreviewView::from(&london), "Europe/London");
        assert_eq!(
            text,
            "next fires:\n  UTC                   LOCAL\n  2026-12-01T09:00:00Z  2026-12-01 09:00:00 GMT (+00:00)\n\
             fires per day: 0\n"
        );
    }

    #[test]
    fn jittered_fires_show_when_they_run() {
        let jittered = SchedulePreview {
            fires: vec![Fire {
                time: ts(1_796_115_600),
                local_time: String::new(),
                run_time: Some(prost_types::Timestamp { seconds: 1_796_115_643, nanos: 108_000_000 }),
            }],
            ..SchedulePreview::default()
        };
        let text = preview_details(&PreviewView::from(&jittered), "");
        assert!(
            text.contains(
                "UTC                   LOCAL  RUNS AT (JITTER)
"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "2026-12-01T09:00:00Z  -      2026-12-01T09:00:43.108Z
"
            ),
            "{text}"
        );
    }

    #[test]
    fn rates_are_short() {
        assert_eq!(round_rate(1440.0), "1440");
        assert_eq!(round_rate(1.0 / 7.0), "0.14");
        assert_eq!(round_rate(0.5), "0.5");
    }
}
