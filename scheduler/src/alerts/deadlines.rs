//! `deadline_missed` alerts: every axd looks, each poll, at the fires whose deadline passed since
//! it last looked (`crate::explain::deadline` judges them) and writes a delivery per missed fire
//! for each rule watching it. The delivery's key is the fire, so axd that look at the same fire
//! write it once. On start an axd looks back [`LOOKBACK`]: a fire whose deadline passed while no axd
//! ran for longer is not alerted (explain still reports it).

use std::{collections::HashMap, time::Duration};

use super::{AlertCause, AlertEvent, outbox};
use crate::{
    error::StoreResult,
    explain::deadline,
    model::{Ts, add, sub, to_micros},
    store::{InstanceFilter, Store},
};

/// How far back an axd that has not looked yet looks.
pub const LOOKBACK: Duration = Duration::from_secs(3600);
/// Most instances of one task read per look.
const MAX_INSTANCES: u32 = 10_000;

/// Per task id, the fire time up to which this axd has judged deadlines.
pub type Judged = HashMap<i64, Ts>;

/// Judges the fires whose deadline passed since the last look, for the tasks of apps some rule
/// watches `deadline_missed` in, and writes their deliveries; how many fires missed.
pub async fn evaluate_deadlines(store: &Store, now: Ts, judged: &mut Judged) -> StoreResult<usize> {
    let rules = store.list_alert_rules(None).await?;
    let mut apps: Vec<String> =
        rules.iter().filter(|r| r.events.contains(&AlertEvent::DeadlineMissed)).map(|r| r.app.clone()).collect();
    apps.sort_unstable();
    apps.dedup();
    if apps.is_empty() {
        judged.clear();
        return Ok(0);
    }
    let mut c = store.conn().await?;
    let tasks = c.tasks().tasks_with_deadlines(&apps).await?;
    let calendars =
        c.calendars().calendar_dates(tasks.iter().filter_map(|t| t.config.timing.calendar.as_deref())).await?;
    drop(c);
    judged.retain(|id, _| tasks.iter().any(|t| t.id == *id));
    let mut missed = 0;
    for task in &tasks {
        let Some(within) = task.config.flow.must_finish_within else { continue };
        let until = sub(now, within);
        let after = *judged.entry(task.id).or_insert_with(|| sub(until, LOOKBACK));
        if until <= after {
            continue;
        }
        let mut c = store.conn().await?;
        let events = c.tasks().task_events(task.id, 50).await?;
        let filter = InstanceFilter {
            task_name: Some(task.name.clone()),
            triggered_since: Some(after),
            triggered_before: Some(add(until, Duration::from_micros(1))),
            limit: MAX_INSTANCES,
            ..InstanceFilter::default()
        };
        let instances: Vec<_> =
            c.instances().list_instances(&filter).await?.into_iter().filter(|i| i.task_id == task.id).collect();
        drop(c);
        let empty = Default::default();
        let calendar = task.config.timing.calendar.as_ref().and_then(|n| calendars.get(n)).unwrap_or(&empty);
        let since = deadline::owed_since(task, &events);
        let misses = deadline::missed(task, calendar, since, &instances, after, until, now);
        let causes: Vec<AlertCause> = misses
            .iter()
            .map(|m| AlertCause {
                event: AlertEvent::DeadlineMissed,
                app: task.config.app.clone(),
                task_name: task.name.clone(),
                instance_id: m.instance,
                attempt: 0,
                at: m.deadline,
                message: format!(
                    "the fire at {} of task {} missed its deadline ({}): {}",
                    m.fire.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    task.name,
                    m.deadline.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    m.what
                ),
                occurrence: format!("deadline:{}", to_micros(m.fire)),
            })
            .collect();
        if !causes.is_empty() {
            let mut tx = store.begin().await?;
            outbox::enqueue(&mut tx, &causes, now).await?;
            tx.commit().await?;
            missed += causes.len();
        }
        judged.insert(task.id, until);
    }
    Ok(missed)
}
