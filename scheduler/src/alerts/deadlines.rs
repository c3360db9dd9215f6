//! `deadline_missed` alerts: every axd looks, each poll, at the fires whose deadline passed since
//! it last looked (`crate::explain::deadline` judges them) and writes a delivery per missed fire
//! for each rule watching it (one read of the instances and one of the schedule changes for every
//! task due a look). The delivery's key is the fire, so axd that look at the same fire
//! write it once. On start an axd looks back [`LOOKBACK`]: a fire whose deadline passed while no axd
//! ran for longer is not alerted (explain still reports it).

use std::{collections::HashMap, time::Duration};

use super::{AlertCause, AlertEvent, outbox};
use crate::{
    error::StoreResult,
    explain::deadline,
    model::{Instance, Task, Ts, sub, to_micros},
    store::Store,
};

/// How far back an axd that has not looked yet looks.
pub const LOOKBACK: Duration = Duration::from_secs(3600);

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
    // The tasks whose fires' deadlines passed since the last look, with the span of fire times.
    let due: Vec<(&Task, Ts, Ts)> = tasks
        .iter()
        .filter_map(|t| {
            let until = sub(now, t.config.flow.must_finish_within?);
            let after = *judged.get(&t.id).unwrap_or(&sub(until, LOOKBACK));
            (until > after).then_some((t, after, until))
        })
        .collect();
    let (Some(from), Some(to)) = (due.iter().map(|d| d.1).min(), due.iter().map(|d| d.2).max()) else {
        return Ok(0);
    };
    // One read of the instances and one of the schedule changes for every task due a look.
    let ids: Vec<i64> = due.iter().map(|(t, ..)| t.id).collect();
    let mut c = store.conn().await?;
    let changed = c.tasks().last_owed_changes(&ids).await?;
    let mut fired: HashMap<i64, Vec<Instance>> = HashMap::new();
    for i in c.instances().fired_between(&ids, from, to).await? {
        fired.entry(i.task_id).or_default().push(i);
    }
    drop(c);
    let empty = Default::default();
    let mut causes = Vec::new();
    for (task, after, until) in &due {
        let calendar = task.config.timing.calendar.as_ref().and_then(|n| calendars.get(n)).unwrap_or(&empty);
        let since = changed.get(&task.id).copied().unwrap_or(task.created_at).max(task.created_at);
        let instances = fired.get(&task.id).map_or(&[][..], Vec::as_slice);
        for m in deadline::missed(task, calendar, since, instances, *after, *until, now) {
            causes.push(AlertCause {
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
            });
        }
    }
    if !causes.is_empty() {
        let mut tx = store.begin().await?;
        outbox::enqueue(&mut tx, &causes, now).await?;
        tx.commit().await?;
    }
    // Judged only once their deliveries are written: a failed write is looked at again.
    for (task, _, until) in &due {
        judged.insert(task.id, *until);
    }
    let missed = causes.len();
    Ok(missed)
}
