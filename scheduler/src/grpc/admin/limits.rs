//! AdminService calls on app rate limits: set, list, delete.

use super::*;
use crate::{model::AppLimit, routing::bucket::Bucket};

/// Fastest rate and largest burst an app limit may have.
const MAX_RATE: f64 = 100_000.0;
const MIN_RATE: f64 = 0.001;
const MAX_BURST: u32 = 100_000;

fn limit_target(app: &str) -> String {
    format!("app-limit/{}", clip(app))
}

fn limit_json(l: &AppLimit) -> String {
    serde_json::json!({ "app": l.app, "per_second": l.per_second, "burst": l.burst }).to_string()
}

/// The proto form of a limit, with the tokens available at `now`.
fn limit_to_pb(l: &AppLimit, now: Ts) -> pb::AppLimit {
    let mut b = Bucket { per_second: l.per_second, burst: l.burst, tokens: l.tokens, refilled_at: l.refilled_at };
    b.refill(now);
    pb::AppLimit {
        app: l.app.clone(),
        per_second: l.per_second,
        burst: l.burst,
        tokens: b.tokens,
        updated_by: l.updated_by.clone(),
        update_time: Some(convert::ts_to_pb(l.updated_at)),
    }
}

/// Checks a limit's fields; the limit to store (a full bucket).
pub fn limit_from_pb(l: &pb::AppLimit, actor: &str, now: Ts) -> Result<AppLimit> {
    validate::app("limit.app", &l.app)?;
    if !l.per_second.is_finite() || !(MIN_RATE..=MAX_RATE).contains(&l.per_second) {
        return Err(Error::invalid(
            "limit.per_second",
            format!("{} is out of range {MIN_RATE}-{MAX_RATE}", l.per_second),
        ));
    }
    let burst = if l.burst == 0 {
        // per_second is at most 100000, so the cast is exact.
        (l.per_second.ceil() as u32).max(1)
    } else if l.burst > MAX_BURST {
        return Err(Error::invalid("limit.burst", format!("{} is out of range 1-{MAX_BURST}", l.burst)));
    } else {
        l.burst
    };
    Ok(AppLimit {
        app: l.app.clone(),
        per_second: l.per_second,
        burst,
        tokens: f64::from(burst),
        refilled_at: now,
        updated_by: actor.to_owned(),
        updated_at: now,
    })
}

impl AdminApi {
    pub(super) async fn set_app_limit_(
        &self,
        req: &Request<pb::SetAppLimitRequest>,
        n: &mut Note,
    ) -> Result<pb::SetAppLimitResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        let l = req.get_ref().limit.as_ref().ok_or_else(|| Error::invalid("limit", "is required"))?;
        let now = self.now();
        let limit = limit_from_pb(l, &grant.identity.actor(), now)?;
        n.app = limit.app.clone();
        grant.app(&limit.app)?;
        let store = &self.core.pools.admin;
        let mut tx = store.begin().await?;
        let before = tx.limits().lock_app_limits(&[limit.app.as_str()]).await?.pop();
        tx.limits().set_app_limit(&limit).await?;
        tx.commit().await?;
        n.before = before.as_ref().map(limit_json);
        n.after = Some(limit_json(&limit));
        self.core.signals.dispatch.notify_one();
        Ok(pb::SetAppLimitResponse { limit: Some(limit_to_pb(&limit, now)) })
    }

    pub(super) async fn list_app_limits_(
        &self,
        req: &Request<pb::ListAppLimitsRequest>,
        n: &mut Note,
    ) -> Result<pb::ListAppLimitsResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let limits = self.core.pools.admin.list_app_limits(grant.apps().as_deref()).await.map_err(Error::from)?;
        let now = self.now();
        Ok(pb::ListAppLimitsResponse { limits: limits.iter().map(|l| limit_to_pb(l, now)).collect() })
    }

    pub(super) async fn delete_app_limit_(
        &self,
        req: &Request<pb::DeleteAppLimitRequest>,
        n: &mut Note,
    ) -> Result<pb::DeleteAppLimitResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        let app = &req.get_ref().app;
        validate::app("app", app)?;
        n.app = app.clone();
        grant.app(app)?;
        let mut tx = self.core.pools.admin.begin().await?;
        let before = tx.limits().lock_app_limits(&[app.as_str()]).await?.pop();
        if !tx.limits().delete_app_limit(app).await? {
            return Err(Error::NotFound(format!("rate limit of app {}", validate::quote(app))));
        }
        tx.commit().await?;
        n.before = before.as_ref().map(limit_json);
        self.core.signals.dispatch.notify_one();
        Ok(pb::DeleteAppLimitResponse {})
    }
}

pub(super) fn set_target(req: &pb::SetAppLimitRequest) -> String {
    limit_target(req.limit.as_ref().map(|l| l.app.as_str()).unwrap_or_default())
}

pub(super) fn app_target(app: &str) -> String {
    limit_target(app)
}
