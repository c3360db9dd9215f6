//! Operations on `ax_alert_rule`, `ax_alert_delivery` (the outbox) and `ax_alert_condition`.

use std::time::Duration;

use super::{
    Alerts, BATCH, Cluster, Instances,
    tables::{AlertRuleRaw, DeliveryRaw},
    value::{Stmt, Value},
};
use crate::{
    error::{StoreError, StoreResult},
    model::alerts::{AlertEvent, AlertRule, Delivery, DeliveryStatus, NewDelivery},
    model::{Ts, duration_micros, from_micros, to_micros},
};

/// Filter of [`Alerts::list_deliveries`](super::Alerts::list_deliveries); every field narrows.
#[derive(Debug, Clone, Default)]
pub struct DeliveryFilter {
    /// Only deliveries of this rule (by name).
    pub rule_name: Option<String>,
    /// Only this status.
    pub status: Option<DeliveryStatus>,
    /// Only these apps (`None`: every app).
    pub apps: Option<Vec<String>>,
    /// Only ids below this (pagination, newest first).
    pub before_id: Option<i64>,
    /// Most rows.
    pub limit: u32,
}

/// The state of a condition rule: since when its condition has held (`None`: it does not), whether
/// the current episode has alerted, and the number of the last episode that did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConditionState {
    pub since: Option<Ts>,
    pub firing: bool,
    pub episode: i64,
}

/// How a claimed delivery ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryEnd {
    /// Delivered (2xx).
    Delivered,
    /// Failed; try again at this time.
    Retry { error: String, at: Ts },
    /// Failed for good.
    Failed { error: String },
}

impl AlertRuleRaw {
    fn into_rule(self) -> StoreResult<AlertRule> {
        let corrupt = |reason: String| StoreError::Corrupt { table: AlertRuleRaw::TABLE, reason };
        let mut events = Vec::new();
        for e in self.events.split(',').filter(|e| !e.is_empty()) {
            events.push(AlertEvent::parse(e).ok_or_else(|| corrupt(format!("unknown event {e:?}")))?);
        }
        Ok(AlertRule {
            id: self.id,
            name: self.name,
            app: self.app,
            task_name: self.task_name,
            events,
            url: self.url,
            secret: self.secret,
            no_worker_for: self.no_worker_for_us.map(|us| Duration::from_micros(us.max(0) as u64)),
            backlog_over: self.backlog_over.map(|n| n.max(0) as u64),
            created_by: self.created_by,
            created_at: from_micros(self.created_at),
        })
    }
}

impl DeliveryRaw {
    fn into_delivery(self) -> StoreResult<Delivery> {
        let corrupt = |reason: String| StoreError::Corrupt { table: DeliveryRaw::TABLE, reason };
        Ok(Delivery {
            id: self.id,
            rule_id: self.rule_id,
            rule_name: self.rule_name,
            app: self.app,
            task_name: self.task_name,
            event: AlertEvent::parse(&self.event).ok_or_else(|| corrupt(format!("unknown event {:?}", self.event)))?,
            dedupe_key: self.dedupe_key,
            url: self.url,
            payload: self.body,
            status: DeliveryStatus::parse(&self.status)
                .ok_or_else(|| corrupt(format!("unknown status {:?}", self.status)))?,
            attempts: u32::try_from(self.attempts).unwrap_or(0),
            next_attempt_at: from_micros(self.next_attempt_at),
            last_error: self.last_error,
            created_at: from_micros(self.created_at),
            finished_at: self.finished_at.map(from_micros),
        })
    }
}

fn select_rules(filter: &str) -> Stmt<'static> {
    Stmt::new(format!("SELECT {} FROM ax_alert_rule{filter}", AlertRuleRaw::columns()))
}

fn select_deliveries(filter: &str) -> Stmt<'static> {
    Stmt::new(format!("SELECT {} FROM ax_alert_delivery{filter}", DeliveryRaw::columns()))
}

impl Alerts<'_> {
    /// Inserts a rule; its id. [`StoreError::UniqueViolation`] if the name exists.
    pub async fn insert_alert_rule(&mut self, r: &AlertRule) -> StoreResult<i64> {
        let events: Vec<&str> = r.events.iter().map(|e| e.as_str()).collect();
        let raw = AlertRuleRaw {
            id: 0,
            name: r.name.clone(),
            app: r.app.clone(),
            task_name: r.task_name.clone(),
            events: events.join(","),
            url: r.url.clone(),
            secret: r.secret.clone(),
            no_worker_for_us: r.no_worker_for.map(duration_micros),
            backlog_over: r.backlog_over.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
            created_by: r.created_by.clone(),
            created_at: to_micros(r.created_at),
        };
        let mut s = Stmt::new(format!("INSERT INTO ax_alert_rule ({}) VALUES ", AlertRuleRaw::NAMES[1..].join(", ")));
        s.push_list(raw.into_values().into_iter().skip(1));
        self.tx.insert_id(s).await
    }

    /// The rule with this name.
    pub async fn get_alert_rule(&mut self, name: &str) -> StoreResult<Option<AlertRule>> {
        let s = select_rules(" WHERE name = ?").bind(name);
        Ok(self.read_rules(s).await?.pop())
    }

    async fn read_rules(&mut self, s: Stmt<'_>) -> StoreResult<Vec<AlertRule>> {
        self.tx.fetch(s, AlertRuleRaw::TABLE, |r| AlertRuleRaw::read(r)?.into_rule()).await
    }

    /// Rules ordered by name, optionally only of some apps.
    pub async fn list_alert_rules(&mut self, apps: Option<&[String]>) -> StoreResult<Vec<AlertRule>> {
        let mut s = select_rules(" WHERE 1 = 1");
        if let Some(apps) = apps {
            if apps.is_empty() {
                return Ok(Vec::new());
            }
            s.push(" AND app IN ").push_list(apps.iter().map(String::as_str));
        }
        s.push(" ORDER BY name");
        self.read_rules(s).await
    }

    /// How many alert rules `app` has.
    pub async fn count_alert_rules(&mut self, app: &str) -> StoreResult<u64> {
        let s = Stmt::new("SELECT COUNT(*) FROM ax_alert_rule WHERE app = ?").bind(app);
        let n: i64 = self.tx.fetch_one(s, "ax_alert_rule", |r| r.take()).await?;
        Ok(n.max(0) as u64)
    }

    /// Deletes a rule and its condition state (its deliveries stay, as history; pending ones fail
    /// when they are next due); whether it existed.
    pub async fn delete_alert_rule(&mut self, id: i64) -> StoreResult<bool> {
        self.tx.execute(Stmt::new("DELETE FROM ax_alert_condition WHERE rule_id = ?").bind(id)).await?;
        Ok(self.tx.execute(Stmt::new("DELETE FROM ax_alert_rule WHERE id = ?").bind(id)).await? > 0)
    }

    /// Inserts deliveries, leaving out those whose `dedupe_key` exists already (a condition episode
    /// another axd recorded first); how many it inserted.
    pub async fn insert_deliveries(&mut self, rows: &[NewDelivery], now: Ts) -> StoreResult<u64> {
        let mut n = 0;
        let names = &DeliveryRaw::NAMES[1..];
        for chunk in rows.chunks(BATCH) {
            let mut s = Stmt::new(format!("INSERT INTO ax_alert_delivery ({}) VALUES ", names.join(", ")));
            s.push_rows(chunk.iter().map(|d| {
                vec![
                    Value::from(d.rule_id),
                    Value::from(d.rule_name.as_str()),
                    Value::from(d.app.as_str()),
                    Value::from(d.task_name.as_deref()),
                    Value::from(d.event.as_str()),
                    Value::from(d.dedupe_key.as_str()),
                    Value::from(d.url.as_str()),
                    Value::from(d.payload.as_str()),
                    Value::from(DeliveryStatus::Pending.as_str()),
                    Value::from(0i32),
                    Value::from(to_micros(d.due_at)),
                    Value::from(""),
                    Value::from(to_micros(now)),
                    Value::from(None::<i64>),
                ]
            }));
            s.push(self.tx.dialect().ignore_duplicate);
            n += self.tx.execute(s).await?;
        }
        Ok(n)
    }

    /// Claims up to `limit` due deliveries, fairly: apps take turns, and within an app its rules
    /// take turns (each rule's deliveries in due order), with at most `per_rule` of a rule and
    /// none of `full_rules` (rules whose sends fill their share already). A claim counts an
    /// attempt and moves the row's due time to `lease_until`, so an axd that dies while sending
    /// leaves it to be sent again by any axd once the claim lapses. Returns the claimed rows (with
    /// their new attempt count), each with its rule's secret (`None` if the rule was deleted).
    pub async fn claim_deliveries(
        &mut self,
        now: Ts,
        lease_until: Ts,
        limit: u32,
        per_rule: u32,
        full_rules: &[i64],
    ) -> StoreResult<Vec<(Delivery, Option<String>)>> {
        // The turns are read without locks (a window function cannot lock), then locked, skipping
        // rows another axd is claiming; when some were, the next turns are read past them (a few
        // times at most), so that two axd claiming at once both get rows.
        let mut order: Vec<i64> = Vec::new();
        let mut rows: Vec<Delivery> = Vec::new();
        let mut taken: Vec<i64> = Vec::new();
        for _ in 0..4 {
            let want = i64::from(limit) - i64::try_from(rows.len()).unwrap_or(i64::MAX);
            if want <= 0 {
                break;
            }
            let mut s = Stmt::new(
                "SELECT id FROM (SELECT id, rn, next_attempt_at, \
                 ROW_NUMBER() OVER (PARTITION BY app ORDER BY rn, next_attempt_at, id) AS turn FROM \
                 (SELECT id, app, next_attempt_at, \
                 ROW_NUMBER() OVER (PARTITION BY rule_id ORDER BY next_attempt_at, id) AS rn \
                 FROM ax_alert_delivery WHERE status = 'pending' AND next_attempt_at <= ",
            );
            s.push_bind(to_micros(now));
            if !full_rules.is_empty() {
                s.push(" AND rule_id NOT IN ").push_list(full_rules.iter().copied());
            }
            if !taken.is_empty() {
                s.push(" AND id NOT IN ").push_list(taken.iter().copied());
            }
            s.push(") by_rule WHERE rn <= ").push_bind(i64::from(per_rule));
            s.push(") by_app ORDER BY turn, rn, next_attempt_at, id LIMIT ").push_bind(want);
            let turns: Vec<i64> = self.tx.fetch(s, DeliveryRaw::TABLE, |r| r.take()).await?;
            if turns.is_empty() {
                break;
            }
            let mut s = select_deliveries(" WHERE id IN ");
            s.push_list(turns.iter().copied()).push(" AND status = 'pending' AND next_attempt_at <= ");
            s.push_bind(to_micros(now)).push(&format!(" ORDER BY id{}", self.tx.dialect().skip_locked));
            let locked: Vec<Delivery> =
                self.tx.fetch(s, DeliveryRaw::TABLE, |r| DeliveryRaw::read(r)?.into_delivery()).await?;
            let all = locked.len() == turns.len();
            taken.extend(&turns);
            order.extend(&turns);
            rows.extend(locked);
            if all {
                break;
            }
        }
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let place: std::collections::HashMap<i64, usize> = order.iter().enumerate().map(|(n, id)| (*id, n)).collect();
        rows.sort_by_key(|d| place.get(&d.id).copied().unwrap_or(usize::MAX));
        let mut s = Stmt::new("UPDATE ax_alert_delivery SET attempts = attempts + 1, next_attempt_at = ");
        s.push_bind(to_micros(lease_until)).push(" WHERE id IN ").push_list(rows.iter().map(|d| d.id));
        self.tx.execute(s).await?;
        let mut rule_ids: Vec<i64> = rows.iter().map(|d| d.rule_id).collect();
        rule_ids.sort_unstable();
        rule_ids.dedup();
        let mut s = Stmt::new("SELECT id, secret FROM ax_alert_rule WHERE id IN ");
        s.push_list(rule_ids);
        let secrets: std::collections::HashMap<i64, String> =
            self.tx.fetch(s, AlertRuleRaw::TABLE, |r| Ok((r.take()?, r.take()?))).await?.into_iter().collect();
        Ok(rows
            .drain(..)
            .map(|mut d| {
                d.attempts += 1;
                d.next_attempt_at = lease_until;
                let secret = secrets.get(&d.rule_id).cloned();
                (d, secret)
            })
            .collect())
    }

    /// Records how the `attempts`-th attempt of a delivery ended, if that attempt is still the
    /// current one and the delivery still pending (an axd whose claim lapsed while it was sending
    /// changes nothing); whether it did.
    pub async fn finish_delivery(&mut self, id: i64, attempts: u32, end: &DeliveryEnd, now: Ts) -> StoreResult<bool> {
        let (status, error, next, finished) = match end {
            DeliveryEnd::Delivered => (DeliveryStatus::Delivered, "", to_micros(now), Some(to_micros(now))),
            DeliveryEnd::Retry { error, at } => (DeliveryStatus::Pending, error.as_str(), to_micros(*at), None),
            DeliveryEnd::Failed { error } => {
                (DeliveryStatus::Failed, error.as_str(), to_micros(now), Some(to_micros(now)))
            }
        };
        let s = Stmt::new(
            "UPDATE ax_alert_delivery SET status = ?, last_error = ?, next_attempt_at = ?, finished_at = ? \
             WHERE id = ? AND attempts = ? AND status = 'pending'",
        )
        .bind(status.as_str())
        .bind(error)
        .bind(next)
        .bind(finished)
        .bind(id)
        .bind(i32::try_from(attempts).unwrap_or(i32::MAX));
        Ok(self.tx.execute(s).await? > 0)
    }

    /// Deletes up to `limit` deliveries that were delivered or failed before `before` (pending ones
    /// stay however old); how many.
    pub async fn purge_deliveries(&mut self, before: Ts, limit: u32) -> StoreResult<u64> {
        // MySQL refuses LIMIT in a subquery of IN; the ids are read first.
        let s = Stmt::new(
            "SELECT id FROM ax_alert_delivery WHERE status <> 'pending' AND finished_at < ? ORDER BY id LIMIT ?",
        )
        .bind(to_micros(before))
        .bind(i64::from(limit));
        let ids: Vec<i64> = self.tx.fetch(s, DeliveryRaw::TABLE, |r| r.take()).await?;
        for chunk in ids.chunks(BATCH) {
            let mut s = Stmt::new("DELETE FROM ax_alert_delivery WHERE id IN ");
            s.push_list(chunk.iter().copied());
            self.tx.execute(s).await?;
        }
        Ok(ids.len() as u64)
    }

    /// One delivery.
    pub async fn get_delivery(&mut self, id: i64) -> StoreResult<Option<Delivery>> {
        let s = select_deliveries(" WHERE id = ?").bind(id);
        Ok(self.tx.fetch(s, DeliveryRaw::TABLE, |r| DeliveryRaw::read(r)?.into_delivery()).await?.pop())
    }

    /// Deliveries newest first.
    pub async fn list_deliveries(&mut self, f: &DeliveryFilter) -> StoreResult<Vec<Delivery>> {
        let mut s = select_deliveries(" WHERE 1 = 1");
        if let Some(r) = &f.rule_name {
            s.push(" AND rule_name = ").push_bind(r.as_str());
        }
        if let Some(st) = f.status {
            s.push(" AND status = ").push_bind(st.as_str());
        }
        if let Some(apps) = &f.apps {
            if apps.is_empty() {
                return Ok(Vec::new());
            }
            s.push(" AND app IN ").push_list(apps.iter().map(String::as_str));
        }
        if let Some(b) = f.before_id {
            s.push(" AND id < ").push_bind(b);
        }
        s.push(" ORDER BY id DESC LIMIT ").push_bind(i64::from(f.limit));
        self.tx.fetch(s, DeliveryRaw::TABLE, |r| DeliveryRaw::read(r)?.into_delivery()).await
    }

    /// Locks (creating it if needed) the condition state of a rule, so that axd evaluating the
    /// same rule take turns.
    pub async fn lock_condition(&mut self, rule_id: i64) -> StoreResult<ConditionState> {
        let mut s =
            Stmt::new("INSERT INTO ax_alert_condition (rule_id, since_at, firing, episode) VALUES (?, NULL, ?, 0)")
                .bind(rule_id)
                .bind(false);
        s.push(match self.tx.dialect().backend {
            super::Backend::MySql => " ON DUPLICATE KEY UPDATE rule_id = rule_id",
            _ => " ON CONFLICT DO NOTHING",
        });
        self.tx.execute(s).await?;
        let s = Stmt::new(format!(
            "SELECT since_at, firing, episode FROM ax_alert_condition WHERE rule_id = ?{}",
            self.tx.dialect().for_update
        ))
        .bind(rule_id);
        self.tx
            .fetch_one(s, "ax_alert_condition", |r| {
                let since: Option<i64> = r.take()?;
                Ok(ConditionState { since: since.map(from_micros), firing: r.take()?, episode: r.take()? })
            })
            .await
    }

    /// Writes the condition state of a rule.
    pub async fn write_condition(&mut self, rule_id: i64, c: ConditionState) -> StoreResult<()> {
        let s = Stmt::new("UPDATE ax_alert_condition SET since_at = ?, firing = ?, episode = ? WHERE rule_id = ?")
            .bind(c.since.map(to_micros))
            .bind(c.firing)
            .bind(c.episode)
            .bind(rule_id);
        self.tx.execute(s).await?;
        Ok(())
    }
}

impl Cluster<'_> {
    /// How many worker sessions of `app` are registered by an axd that heartbeated at or after
    /// `alive_since` (sessions of a dead axd are gone, even before their rows are purged).
    pub async fn count_workers(&mut self, app: &str, alive_since: Ts) -> StoreResult<u64> {
        let s = Stmt::new(
            "SELECT COUNT(*) FROM ax_worker w JOIN ax_scheduler s ON s.scheduler_id = w.scheduler_id \
             WHERE w.app = ? AND s.heartbeat_at >= ?",
        )
        .bind(app)
        .bind(to_micros(alive_since));
        let n: i64 = self.tx.fetch_one(s, "ax_worker", |r| r.take()).await?;
        Ok(n.max(0) as u64)
    }
}

impl Instances<'_> {
    /// How many instances of `app` (or of one of its tasks) are PENDING.
    pub async fn count_pending(&mut self, app: &str, task_name: Option<&str>) -> StoreResult<u64> {
        let pending = self.tx.dialect().pending;
        let mut s = Stmt::new(format!("SELECT COUNT(*) FROM ax_instance WHERE {pending} AND app = ?")).bind(app);
        if let Some(t) = task_name {
            s.push(" AND task_name = ").push_bind(t);
        }
        let n: i64 = self.tx.fetch_one(s, "ax_instance", |r| r.take()).await?;
        Ok(n.max(0) as u64)
    }
}
