//! AdminService.BulkInstances: cancel, retry or delete every instance a selector matches, with a
//! dry run, a cap per call and one audit entry with the counts.

use super::*;
use crate::{
    store::Selector,
    transitions::bulk::{BulkAction, apply_bulk},
};

/// The most instances one call may match (`max_instances`).
pub(super) const MAX_BULK: u32 = 100_000;
/// The most ids a selector may list.
const MAX_IDS: usize = 1000;
/// Ids of the matched set the response shows.
const SAMPLE: usize = 20;

impl AdminApi {
    pub(super) async fn bulk_instances_(
        &self,
        req: &Request<pb::BulkInstancesRequest>,
        n: &mut Note,
    ) -> Result<pb::BulkInstancesResponse> {
        let r = req.get_ref();
        // A dry run changes nothing: logged, not audited.
        n.mutating = !r.dry_run;
        let grant = self.caller(req, Access::Operate, n)?;
        let action = match pb::BulkAction::try_from(r.action) {
            Ok(pb::BulkAction::Cancel) => BulkAction::Cancel,
            Ok(pb::BulkAction::Retry) => BulkAction::Retry,
            Ok(pb::BulkAction::Delete) => BulkAction::Delete,
            Ok(pb::BulkAction::Unspecified) => return Err(Error::invalid("action", "is required")),
            Err(_) => return Err(Error::invalid("action", format!("unknown action {}", r.action))),
        };
        if r.max_instances == 0 || r.max_instances > MAX_BULK {
            return Err(Error::invalid(
                "max_instances",
                format!(
                    "{} is out of range 1-{MAX_BULK} (it is required: the most instances the call may match)",
                    r.max_instances
                ),
            ));
        }
        validate::text("reason", &r.reason, validate::MAX_REASON)?;
        if !r.reason.is_empty() && action != BulkAction::Cancel {
            return Err(Error::invalid("reason", "is for BULK_ACTION_CANCEL only"));
        }
        let mut sel = selector(r.selector.as_ref(), &grant)?;
        if let Some(s) = &r.selector {
            sel.tags = self.tag_filters("selector.", &s.tags, &s.params).await?;
        }
        if !sel.narrowed() {
            return Err(Error::invalid(
                "selector",
                "matches every instance: set at least one of task_name, app, status, start_time, end_time, ids, tags \
                 and params",
            ));
        }
        n.app = sel.app.clone().unwrap_or_default();
        n.target = format!("instances/{}", action.as_str());
        let matched =
            self.core.pools.admin.conn().await?.instances().select_for_bulk(&sel, r.max_instances + 1).await?;
        if matched.len() > r.max_instances as usize {
            return Err(Error::FailedPrecondition(format!(
                "more than {} instances match (max_instances): nothing was changed; narrow the selector or raise \
                 max_instances",
                r.max_instances
            )));
        }
        let ids: Vec<i64> = matched.iter().map(|m| m.id).collect();
        let changed = if r.dry_run {
            matched.iter().filter(|m| action.applies(m)).count() as u64
        } else {
            let applicable: Vec<i64> = matched.iter().filter(|m| action.applies(m)).map(|m| m.id).collect();
            let actor = grant.identity.actor();
            let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
            let changed =
                apply_bulk(&self.core.pools.admin, action, &applicable, &r.reason, self.now(), &a, &self.core.routing)
                    .await?;
            match action {
                BulkAction::Cancel => self.core.signals.commands.notify_one(),
                BulkAction::Retry => self.core.signals.dispatch.notify_one(),
                BulkAction::Delete => {}
            }
            changed
        };
        let response = pb::BulkInstancesResponse {
            matched: matched.len() as u64,
            changed,
            skipped: matched.len() as u64 - changed,
            max_id: ids.first().copied().unwrap_or(0),
            sample_ids: ids.iter().take(SAMPLE).copied().collect(),
        };
        n.detail = format!(
            "{}: matched {}, changed {}, skipped {}",
            action.as_str(),
            response.matched,
            response.changed,
            response.skipped
        );
        n.after = Some(
            serde_json::json!({
                "action": action.as_str(),
                "selector": selector_json(&sel),
                "max_instances": r.max_instances,
                "reason": r.reason,
                "matched": response.matched,
                "changed": response.changed,
                "skipped": response.skipped,
                "max_id": response.max_id,
            })
            .to_string(),
        );
        Ok(response)
    }
}

/// The selector of a request, checked, within the caller's scope.
fn selector(s: Option<&pb::InstanceSelector>, grant: &Grant) -> Result<Selector> {
    let s = s.ok_or_else(|| Error::invalid("selector", "is required"))?;
    if !s.task_name.is_empty() {
        validate::task_name("selector.task_name", &s.task_name)?;
    }
    if !s.app.is_empty() {
        validate::app("selector.app", &s.app)?;
        grant.app(&s.app)?;
    }
    let since = s.start_time.as_ref().map(|t| convert::ts_from_pb("selector.start_time", t)).transpose()?;
    let until = s.end_time.as_ref().map(|t| convert::ts_from_pb("selector.end_time", t)).transpose()?;
    if let (Some(a), Some(b)) = (since, until)
        && a > b
    {
        return Err(Error::invalid("selector.end_time", "is before start_time"));
    }
    if s.max_id < 0 {
        return Err(Error::invalid("selector.max_id", format!("{} is negative", s.max_id)));
    }
    if s.ids.len() > MAX_IDS {
        return Err(Error::invalid("selector.ids", format!("{} ids; at most {MAX_IDS}", s.ids.len())));
    }
    if let Some(bad) = s.ids.iter().find(|id| **id <= 0) {
        return Err(Error::invalid("selector.ids", format!("{bad} is not an instance id")));
    }
    let sel = Selector {
        task_name: (!s.task_name.is_empty()).then(|| s.task_name.clone()),
        app: (!s.app.is_empty()).then(|| s.app.clone()),
        apps: grant.apps(),
        status: convert::status_from_pb("selector.status", s.status)?,
        triggered_since: since,
        triggered_before: until,
        max_id: (s.max_id > 0).then_some(s.max_id),
        ids: s.ids.clone(),
        tags: Vec::new(),
    };
    Ok(sel)
}

fn selector_json(s: &Selector) -> serde_json::Value {
    serde_json::json!({
        "task_name": s.task_name,
        "app": s.app,
        "status": s.status.map(|st| st.as_str()),
        "start_time": s.triggered_since.map(|t| t.to_rfc3339()),
        "end_time": s.triggered_before.map(|t| t.to_rfc3339()),
        "max_id": s.max_id,
        "ids": s.ids,
        "tags": s.tags.iter().map(|t| format!("{}={}", t.name, t.value)).collect::<Vec<_>>(),
    })
}
