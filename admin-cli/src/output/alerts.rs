//! Alert rules and deliveries as axctl shows them.

use ax_proto::v1::{AlertDelivery, AlertRule};
use serde::Serialize;
use serde_json::Value;

use super::{
    layout::Table,
    scalars::{embedded_json, or_dash},
    time::{duration_text, time_text},
};

/// JSON view of an AlertRule.
#[derive(Debug, Serialize)]
pub struct AlertRuleView {
    pub name: String,
    pub app: String,
    pub task: Option<String>,
    pub events: Vec<String>,
    pub url: String,
    pub no_worker_for: Option<String>,
    pub backlog_over: Option<u64>,
    pub created_by: String,
    pub create_time: Option<String>,
}

impl From<&AlertRule> for AlertRuleView {
    fn from(r: &AlertRule) -> Self {
        AlertRuleView {
            name: r.name.clone(),
            app: r.app.clone(),
            task: (!r.task.is_empty()).then(|| r.task.clone()),
            events: r.events.clone(),
            url: r.url.clone(),
            no_worker_for: duration_text(r.no_worker_for.as_ref()),
            backlog_over: r.backlog_over,
            created_by: r.created_by.clone(),
            create_time: time_text(r.create_time.as_ref()),
        }
    }
}

/// JSON view of an AlertDelivery; the body is embedded as JSON.
#[derive(Debug, Serialize)]
pub struct DeliveryView {
    pub id: i64,
    pub rule: String,
    pub app: String,
    pub task: Option<String>,
    pub event: String,
    pub status: String,
    pub attempts: u32,
    pub next_attempt_time: Option<String>,
    pub last_error: String,
    pub create_time: Option<String>,
    pub finish_time: Option<String>,
    pub url: String,
    pub body: Value,
}

impl From<&AlertDelivery> for DeliveryView {
    fn from(d: &AlertDelivery) -> Self {
        DeliveryView {
            id: d.id,
            rule: d.rule.clone(),
            app: d.app.clone(),
            task: (!d.task.is_empty()).then(|| d.task.clone()),
            event: d.event.clone(),
            status: d.status.clone(),
            attempts: d.attempts,
            next_attempt_time: time_text(d.next_attempt_time.as_ref()),
            last_error: d.last_error.clone(),
            create_time: time_text(d.create_time.as_ref()),
            finish_time: time_text(d.finish_time.as_ref()),
            url: d.url.clone(),
            body: embedded_json(&d.body),
        }
    }
}

/// The table of `alert list`.
pub fn alert_rule_table(rules: &[AlertRuleView]) -> Table<6> {
    let mut table = Table::new(["NAME", "APP", "TASK", "EVENTS", "URL", "CONDITION"]);
    for r in rules {
        let condition = match (&r.no_worker_for, r.backlog_over) {
            (Some(d), _) => format!("no worker for {d}"),
            (None, Some(n)) => format!("backlog over {n}"),
            (None, None) => "-".to_owned(),
        };
        table.row([
            r.name.clone(),
            r.app.clone(),
            or_dash(r.task.clone()),
            r.events.join(","),
            r.url.clone(),
            condition,
        ]);
    }
    table
}

/// The table of `alert deliveries` (the body only in `-o json`).
pub fn delivery_table(deliveries: &[DeliveryView]) -> Table<8> {
    let mut table = Table::new(["ID", "CREATED", "RULE", "EVENT", "TASK", "STATUS", "ATTEMPTS", "LAST ERROR"]);
    for d in deliveries {
        table.row([
            d.id.to_string(),
            or_dash(d.create_time.clone()),
            d.rule.clone(),
            d.event.clone(),
            or_dash(d.task.clone()),
            d.status.clone(),
            d.attempts.to_string(),
            or_dash((!d.last_error.is_empty()).then(|| d.last_error.clone())),
        ]);
    }
    table
}
