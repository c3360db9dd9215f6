//! The audit trail as axctl shows it.

use ax_proto::v1::AuditEntry;
use serde::Serialize;
use serde_json::Value;

use super::{
    layout::Table,
    scalars::{embedded_json, or_dash},
    time::time_text,
};

/// JSON view of an AuditEntry; before and after are embedded as JSON (null when empty).
#[derive(Debug, Serialize)]
pub struct AuditEntryView {
    pub id: i64,
    pub time: Option<String>,
    pub actor: String,
    pub rpc: String,
    pub target: String,
    pub app: String,
    pub outcome: String,
    pub detail: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

impl From<&AuditEntry> for AuditEntryView {
    fn from(e: &AuditEntry) -> Self {
        let json = |s: &str| (!s.is_empty()).then(|| embedded_json(s));
        AuditEntryView {
            id: e.id,
            time: time_text(e.time.as_ref()),
            actor: e.actor.clone(),
            rpc: e.rpc.clone(),
            target: e.target.clone(),
            app: e.app.clone(),
            outcome: e.outcome.clone(),
            detail: e.detail.clone(),
            before: json(&e.before_json),
            after: json(&e.after_json),
        }
    }
}

/// The table of `audit list` (before and after only in `-o json`).
pub fn audit_table(entries: &[AuditEntryView]) -> Table<7> {
    let mut table = Table::new(["ID", "TIME", "IDENTITY", "RPC", "TARGET", "OUTCOME", "DETAIL"]);
    for e in entries {
        table.row([
            e.id.to_string(),
            or_dash(e.time.clone()),
            e.actor.clone(),
            e.rpc.clone(),
            e.target.clone(),
            e.outcome.clone(),
            or_dash((!e.detail.is_empty()).then(|| e.detail.clone())),
        ]);
    }
    table
}
