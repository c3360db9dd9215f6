//! Operations on `ax_audit`: the trail of AdminService calls that change something.

use super::{
    Audit,
    tables::AuditRaw,
    value::{Stmt, Value},
};
use crate::{
    error::StoreResult,
    model::{Ts, from_micros, to_micros},
};

/// One audited call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// Assigned by the database (0 before it is inserted); increases with time of insertion.
    pub id: i64,
    /// When (database clock).
    pub at: Ts,
    /// Who: the caller's SPIFFE id, or `anonymous`.
    pub actor: String,
    /// The RPC, e.g. `UpdateTask`.
    pub rpc: String,
    /// What it acted on: `task/<name>` or `instance/<id>`.
    pub target: String,
    /// The target's app, empty if unknown (e.g. a task that does not exist).
    pub app: String,
    /// `ok`, `denied`, or the gRPC code of the failure (`not_found`, `invalid_argument`, …).
    pub outcome: String,
    /// The reason of a denial or failure, or what changed.
    pub detail: String,
    /// The task before the change (JSON), for updates, enables, disables and deletes.
    pub before: Option<String>,
    /// The task after the change (JSON), for creates, updates, enables and disables.
    pub after: Option<String>,
}

/// Filter of [`Audit::list_audit`](super::Audit::list_audit); every field narrows.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    /// Only this actor.
    pub actor: Option<String>,
    /// Only this target.
    pub target: Option<String>,
    /// Only this RPC.
    pub rpc: Option<String>,
    /// Only at or after this time.
    pub since: Option<Ts>,
    /// Only before this time.
    pub until: Option<Ts>,
    /// Only these apps (`None`: every app, and entries without one).
    pub apps: Option<Vec<String>>,
    /// Only ids below this (pagination, newest first).
    pub before_id: Option<i64>,
    /// Most rows.
    pub limit: u32,
}

impl Audit<'_> {
    /// Records one audited call.
    pub async fn insert_audit(&mut self, e: &AuditEntry) -> StoreResult<()> {
        self.insert_audits(std::slice::from_ref(e)).await
    }

    /// Records audited calls, up to 500 per statement.
    pub async fn insert_audits(&mut self, entries: &[AuditEntry]) -> StoreResult<()> {
        for chunk in entries.chunks(super::BATCH) {
            let mut s = Stmt::new(format!("INSERT INTO ax_audit ({}) VALUES ", &AuditRaw::NAMES[1..].join(", ")));
            s.push_rows(chunk.iter().map(|e| -> Vec<Value> {
                vec![
                    to_micros(e.at).into(),
                    e.actor.as_str().into(),
                    e.rpc.as_str().into(),
                    e.target.as_str().into(),
                    e.app.as_str().into(),
                    e.outcome.as_str().into(),
                    e.detail.as_str().into(),
                    e.before.clone().into(),
                    e.after.clone().into(),
                ]
            }));
            self.tx.execute(s).await?;
        }
        Ok(())
    }

    /// Audit entries newest first.
    pub async fn list_audit(&mut self, f: &AuditFilter) -> StoreResult<Vec<AuditEntry>> {
        let mut s = Stmt::new(format!("SELECT {} FROM ax_audit WHERE 1 = 1", AuditRaw::columns()));
        if let Some(a) = &f.actor {
            s.push(" AND actor = ").push_bind(a.as_str());
        }
        if let Some(t) = &f.target {
            s.push(" AND target = ").push_bind(t.as_str());
        }
        if let Some(r) = &f.rpc {
            s.push(" AND rpc = ").push_bind(r.as_str());
        }
        if let Some(t) = f.since {
            s.push(" AND at >= ").push_bind(to_micros(t));
        }
        if let Some(t) = f.until {
            s.push(" AND at < ").push_bind(to_micros(t));
        }
        if let Some(apps) = &f.apps {
            if apps.is_empty() {
                s.push(" AND 1 = 0");
            } else {
                s.push(" AND app IN ").push_list(apps.iter().map(String::as_str));
            }
        }
        if let Some(b) = f.before_id {
            s.push(" AND id < ").push_bind(b);
        }
        s.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(f.limit));
        self.tx
            .fetch(s, AuditRaw::TABLE, |r| {
                let a = AuditRaw::read(r)?;
                Ok(AuditEntry {
                    id: a.id,
                    at: from_micros(a.at),
                    actor: a.actor,
                    rpc: a.rpc,
                    target: a.target,
                    app: a.app,
                    outcome: a.outcome,
                    detail: a.detail,
                    before: a.before_json,
                    after: a.after_json,
                })
            })
            .await
    }

    /// Deletes up to `limit` audit entries older than `before`; how many.
    pub async fn purge_audit(&mut self, before: Ts, limit: u32) -> StoreResult<u64> {
        // MySQL refuses LIMIT in a subquery of IN; the ids are read first.
        let s = Stmt::new("SELECT id FROM ax_audit WHERE at < ? ORDER BY id LIMIT ?")
            .bind(to_micros(before))
            .bind(i64::from(limit));
        let ids: Vec<i64> = self.tx.fetch(s, AuditRaw::TABLE, |r| r.take()).await?;
        for chunk in ids.chunks(super::BATCH) {
            let mut s = Stmt::new("DELETE FROM ax_audit WHERE id IN ");
            s.push_list(chunk.iter().copied());
            self.tx.execute(s).await?;
        }
        Ok(ids.len() as u64)
    }
}
