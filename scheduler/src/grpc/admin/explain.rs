//! AdminService.ExplainTask: gathers what ax recorded about a task around an instant and hands it
//! to [`crate::explain::explain`].

use super::*;
use crate::{
    explain::{Inputs, expected_fires, explain},
    model::InstanceStatus,
};

/// Task events read for the analysis (the response returns at most `limit` of them).
const EVENTS_READ: u32 = 200;

impl AdminApi {
    pub(super) async fn explain_task_(
        &self,
        req: &Request<pb::ExplainTaskRequest>,
        n: &mut Note,
    ) -> Result<pb::ExplainTaskResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let limit = match r.limit {
            0 => 10,
            1..=100 => r.limit,
            v => return Err(Error::invalid("limit", format!("{v} is out of range 1-100"))),
        };
        let task = self.task(&r.name).await?;
        grant.app(&task.config.app)?;
        let now = self.now();
        let at = match &r.at {
            Some(t) => {
                let at = convert::ts_from_pb("at", t)?;
                if at > now {
                    return Err(Error::invalid(
                        "at",
                        format!(
                            "{} is in the future (now is {}); `schedule preview` shows what will happen",
                            at.to_rfc3339(),
                            now.to_rfc3339()
                        ),
                    ));
                }
                at
            }
            None => now,
        };
        let mut c = self.core.pools.admin.conn().await?;
        let calendar = self.calendar_of(&mut c, &task.config).await?;
        let events = c.tasks().task_events_before(task.id, Some(at), EVENTS_READ).await?;
        let mut instances = Vec::new();
        for i in c.instances().instances_triggered_before(&task.name, at, limit).await? {
            let trail = c.instances().instance_events(i.id).await?;
            instances.push((i, trail));
        }
        // Fires of the window whose instance is not among the recent ones (created later, e.g. a
        // catch-up) still count as fired.
        let mut fired = Vec::new();
        for f in expected_fires(&task, &calendar, &events, &instances, at, now, limit as usize) {
            let key = crate::schedule::fire_key(f);
            if !instances.iter().any(|(i, _)| i.idempotency_key == key)
                && c.instances().instance_by_key(task.id, &key).await?.is_some()
            {
                fired.push(f);
            }
        }
        let since = instances.iter().map(|(i, _)| i.fire_at.min(i.created_at)).min().unwrap_or(at);
        let sessions = c.cluster().session_spans(&task.config.app, since, now).await?;
        let apps = [task.config.app.clone()];
        let streaks = c.limits().list_streaks(Some(&apps)).await?;
        let app_limit = c.limits().list_app_limits(Some(&apps)).await?.pop();
        let active = c
            .instances()
            .count_by_task(&[task.id], &[InstanceStatus::Dispatched, InstanceStatus::Running])
            .await?
            .get(&task.id)
            .copied()
            .unwrap_or(0);
        let values: Vec<String> = instances
            .iter()
            .filter(|(i, _)| i.status == InstanceStatus::Pending)
            .filter_map(|(i, _)| i.route.concurrency_value.clone())
            .collect();
        let active_by_key: Vec<(String, u32)> = c
            .limits()
            .count_by_key(task.id, &values)
            .await?
            .into_iter()
            .map(|(v, n)| (v, u32::try_from(n).unwrap_or(u32::MAX)))
            .collect();
        drop(c);
        let live = self.live_workers(&grant, Some(&task.config.app)).await?;
        let explanation = explain(&Inputs {
            task: &task,
            at,
            now,
            limit: limit as usize,
            events: &events,
            instances: &instances,
            sessions: &sessions,
            live: &live,
            fired: &fired,
            limits: crate::explain::Limits {
                streaks: &streaks,
                app_limit: app_limit.as_ref(),
                active: u32::try_from(active).unwrap_or(u32::MAX),
                active_by_key: &active_by_key,
                cooldown_max_share: self.core.routing.cooldown.max_share,
            },
            calendar: &calendar,
        });
        let shown = &events[..events.len().min(limit as usize)];
        Ok(convert::explanation_to_pb(&task, at, shown, &explanation))
    }
}
