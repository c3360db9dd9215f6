//! AdminService calls on alert rules and their deliveries: create, list, delete, test, deliveries.

use std::collections::BTreeSet;

use super::*;
use crate::{
    alerts::{AlertEvent, AlertRule, Delivery, DeliveryStatus, MAX_SECRET, MIN_SECRET, check_url, outbox, redact_url},
    store::DeliveryFilter,
};

/// The most alert rules one app may have: every rule of every app is evaluated and sent by the same
/// alert loops, so one app's admin cannot make them the whole cluster's bottleneck.
pub const MAX_RULES_PER_APP: u64 = 1000;

/// The longest `no_worker_for`.
const MAX_NO_WORKER_FOR: Duration = Duration::from_secs(7 * 86_400);

pub(super) fn alert_target(name: &str) -> String {
    format!("alert/{}", clip(name))
}

/// A rule name: 1-128 of `[A-Za-z0-9._-]`, starting with a letter or digit.
fn rule_name(field: &str, v: &str) -> Result<()> {
    validate::task_name(field, v)?;
    if v.contains(':') {
        return Err(Error::invalid(field, format!("{} may hold letters, digits, . _ - only", validate::quote(v))));
    }
    Ok(())
}

/// A rule as JSON for the audit trail, which viewers read: without its secret, its URL redacted.
fn rule_json(r: &AlertRule) -> String {
    serde_json::json!({
        "name": r.name,
        "app": r.app,
        "task": r.task_name,
        "events": r.events.iter().map(|e| e.as_str()).collect::<Vec<_>>(),
        "url": redact_url(&r.url),
        "no_worker_for_ms": r.no_worker_for.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        "backlog_over": r.backlog_over,
    })
    .to_string()
}

/// Whether the caller sees webhook URLs whole: only those who may manage alert rules (admins, and
/// the anonymous loopback caller); viewers and operators see them redacted ([`redact_url`]).
fn sees_urls(grant: &Grant) -> bool {
    grant.identity.role >= crate::auth::Role::Admin
}

fn shown_url(url: &str, whole: bool) -> String {
    if whole { url.to_owned() } else { redact_url(url) }
}

fn rule_to_pb(r: &AlertRule, whole_url: bool) -> pb::AlertRule {
    pb::AlertRule {
        name: r.name.clone(),
        app: r.app.clone(),
        task: r.task_name.clone().unwrap_or_default(),
        events: r.events.iter().map(|e| e.as_str().to_owned()).collect(),
        url: shown_url(&r.url, whole_url),
        no_worker_for: r.no_worker_for.map(convert::duration_to_pb),
        backlog_over: r.backlog_over,
        created_by: r.created_by.clone(),
        create_time: Some(convert::ts_to_pb(r.created_at)),
    }
}

fn delivery_to_pb(d: &Delivery, whole_url: bool) -> pb::AlertDelivery {
    let pending = d.status == DeliveryStatus::Pending;
    pb::AlertDelivery {
        id: d.id,
        rule: d.rule_name.clone(),
        app: d.app.clone(),
        task: d.task_name.clone().unwrap_or_default(),
        event: d.event.as_str().to_owned(),
        status: d.status.as_str().to_owned(),
        attempts: d.attempts,
        next_attempt_time: pending.then(|| convert::ts_to_pb(d.next_attempt_at)),
        last_error: d.last_error.clone(),
        create_time: Some(convert::ts_to_pb(d.created_at)),
        finish_time: d.finished_at.map(convert::ts_to_pb),
        body: crate::alerts::sign::body(d),
        url: shown_url(&d.url, whole_url),
    }
}

/// Checks a spec's fields (all but the task's existence); the rule to store.
pub fn rule_from_pb(s: &pb::AlertRuleSpec, allow_private: bool, actor: &str, now: Ts) -> Result<AlertRule> {
    rule_name("rule.name", &s.name)?;
    validate::app("rule.app", &s.app)?;
    if !s.task.is_empty() {
        validate::task_name("rule.task", &s.task)?;
    }
    if s.events.is_empty() {
        return Err(Error::invalid("rule.events", "at least one event is required"));
    }
    let mut events = BTreeSet::new();
    for (i, e) in s.events.iter().enumerate() {
        let known: Vec<&str> = AlertEvent::WATCHABLE.iter().map(|e| e.as_str()).collect();
        match AlertEvent::parse(e).filter(|e| *e != AlertEvent::Test) {
            Some(ev) => {
                events.insert(ev);
            }
            None => {
                return Err(Error::invalid(
                    format!("rule.events[{i}]"),
                    format!("unknown event {}; known: {}", validate::quote(e), known.join(", ")),
                ));
            }
        }
    }
    if events.iter().filter(|e| e.is_condition()).count() > 1 {
        return Err(Error::invalid("rule.events", "at most one of no_worker, backlog and handler_failing per rule"));
    }
    check_url(&s.url, allow_private).map_err(|why| Error::invalid("rule.url", why))?;
    if s.secret.is_empty() {
        return Err(Error::invalid("rule.secret", "is required (the key that signs every delivery)"));
    }
    if !(MIN_SECRET..=MAX_SECRET).contains(&s.secret.len()) {
        return Err(Error::invalid(
            "rule.secret",
            format!("is {} bytes long; {MIN_SECRET}-{MAX_SECRET} required", s.secret.len()),
        ));
    }
    let no_worker_for = match (&s.no_worker_for, events.contains(&AlertEvent::NoWorker)) {
        (Some(d), true) => {
            let d = convert::duration_from_pb("rule.no_worker_for", d)?;
            validate::duration_between("rule.no_worker_for", d, Duration::from_secs(1), MAX_NO_WORKER_FOR)?;
            Some(d)
        }
        (None, true) => return Err(Error::invalid("rule.no_worker_for", "is required with event no_worker")),
        (Some(_), false) => return Err(Error::invalid("rule.no_worker_for", "is only for event no_worker")),
        (None, false) => None,
    };
    let backlog_over = match (s.backlog_over, events.contains(&AlertEvent::Backlog)) {
        (Some(0), true) => return Err(Error::invalid("rule.backlog_over", "must be 1 or more")),
        (Some(n), true) => Some(n),
        (None, true) => return Err(Error::invalid("rule.backlog_over", "is required with event backlog")),
        (Some(_), false) => return Err(Error::invalid("rule.backlog_over", "is only for event backlog")),
        (None, false) => None,
    };
    Ok(AlertRule {
        id: 0,
        name: s.name.clone(),
        app: s.app.clone(),
        task_name: (!s.task.is_empty()).then(|| s.task.clone()),
        events: events.into_iter().collect(),
        url: s.url.clone(),
        secret: s.secret.clone(),
        no_worker_for,
        backlog_over,
        created_by: actor.to_owned(),
        created_at: now,
    })
}

impl AdminApi {
    async fn alert_rule(&self, name: &str) -> Result<AlertRule> {
        rule_name("name", name)?;
        self.core
            .pools
            .admin
            .get_alert_rule(name)
            .await?
            .ok_or_else(|| Error::NotFound(format!("alert rule {}", validate::quote(name))))
    }

    pub(super) async fn create_alert_rule_(
        &self,
        req: &Request<pb::CreateAlertRuleRequest>,
        n: &mut Note,
    ) -> Result<pb::CreateAlertRuleResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        let spec = req.get_ref().rule.as_ref().ok_or_else(|| Error::invalid("rule", "is required"))?;
        n.app = spec.app.clone();
        let actor = grant.identity.actor();
        let mut rule = rule_from_pb(spec, self.core.alerts.allow_private_targets, &actor, self.now())?;
        grant.app(&rule.app)?;
        let mut tx = self.core.pools.admin.begin().await?;
        let rules = tx.alerts().count_alert_rules(&rule.app).await?;
        if rules >= MAX_RULES_PER_APP {
            return Err(Error::invalid(
                "rule.app",
                format!(
                    "app {} has {rules} alert rules, the most allowed is {MAX_RULES_PER_APP}: delete one first",
                    rule.app
                ),
            ));
        }
        if let Some(task) = &rule.task_name {
            // A task of an app outside the caller's scope is answered as one that does not exist.
            match tx.tasks().get_task(task).await?.filter(|t| grant.app(&t.config.app).is_ok()) {
                Some(t) if t.config.app == rule.app => {}
                Some(t) => {
                    return Err(Error::invalid(
                        "rule.task",
                        format!("task {} is of app {}, not {}", validate::quote(task), t.config.app, rule.app),
                    ));
                }
                None => {
                    return Err(Error::invalid(
                        "rule.task",
                        format!("no task {} in the apps you may manage", validate::quote(task)),
                    ));
                }
            }
        }
        rule.id = match tx.alerts().insert_alert_rule(&rule).await {
            Ok(id) => id,
            Err(StoreError::UniqueViolation(_)) => {
                return Err(Error::AlreadyExists(format!("alert rule {}", validate::quote(&rule.name))));
            }
            Err(e) => return Err(e.into()),
        };
        tx.commit().await?;
        n.after = Some(rule_json(&rule));
        Ok(pb::CreateAlertRuleResponse { rule: Some(rule_to_pb(&rule, true)) })
    }

    pub(super) async fn list_alert_rules_(
        &self,
        req: &Request<pb::ListAlertRulesRequest>,
        n: &mut Note,
    ) -> Result<pb::ListAlertRulesResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let app = &req.get_ref().app;
        let apps = if app.is_empty() {
            grant.apps()
        } else {
            validate::app("app", app)?;
            grant.app(app)?;
            Some(vec![app.clone()])
        };
        let rules = self.core.pools.admin.list_alert_rules(apps.as_deref()).await?;
        let whole = sees_urls(&grant);
        Ok(pb::ListAlertRulesResponse { rules: rules.iter().map(|r| rule_to_pb(r, whole)).collect() })
    }

    pub(super) async fn delete_alert_rule_(
        &self,
        req: &Request<pb::DeleteAlertRuleRequest>,
        n: &mut Note,
    ) -> Result<pb::DeleteAlertRuleResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        let rule = self.alert_rule(&req.get_ref().name).await?;
        n.app = rule.app.clone();
        grant.app(&rule.app)?;
        let mut tx = self.core.pools.admin.begin().await?;
        tx.alerts().delete_alert_rule(rule.id).await?;
        tx.commit().await?;
        n.before = Some(rule_json(&rule));
        Ok(pb::DeleteAlertRuleResponse {})
    }

    pub(super) async fn test_alert_rule_(
        &self,
        req: &Request<pb::TestAlertRuleRequest>,
        n: &mut Note,
    ) -> Result<pb::TestAlertRuleResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let rule = self.alert_rule(&req.get_ref().name).await?;
        n.app = rule.app.clone();
        grant.app(&rule.app)?;
        let mut tx = self.core.pools.admin.begin().await?;
        let id = outbox::enqueue_test(&mut tx, &rule, &grant.identity.actor(), self.now()).await?;
        tx.commit().await?;
        let id = id.ok_or_else(|| Error::Aborted("the test delivery was not recorded; retry".to_owned()))?;
        self.core.signals.alerts.notify_one();
        n.detail = format!("queued test delivery {id}");
        Ok(pb::TestAlertRuleResponse { delivery_id: id })
    }

    pub(super) async fn list_alert_deliveries_(
        &self,
        req: &Request<pb::ListAlertDeliveriesRequest>,
        n: &mut Note,
    ) -> Result<pb::ListAlertDeliveriesResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let limit = page_size("page_size", r.page_size, 100)?;
        if !r.rule.is_empty() {
            rule_name("rule", &r.rule)?;
        }
        let status = match r.status.as_str() {
            "" => None,
            s => Some(DeliveryStatus::parse(s).ok_or_else(|| {
                Error::invalid("status", format!("{} is not pending, delivered or failed", validate::quote(s)))
            })?),
        };
        let before_id = before_id(&r.page_token)?;
        let filter = DeliveryFilter {
            rule_name: (!r.rule.is_empty()).then(|| r.rule.clone()),
            status,
            apps: grant.apps(),
            before_id,
            limit,
        };
        let list = self.core.pools.admin.list_deliveries(&filter).await?;
        let whole = sees_urls(&grant);
        Ok(pb::ListAlertDeliveriesResponse {
            next_page_token: next_page_token(&list, limit, |d| d.id),
            deliveries: list.iter().map(|d| delivery_to_pb(d, whole)).collect(),
        })
    }
}
