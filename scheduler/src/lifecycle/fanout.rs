//! Transitions that involve more than one instance or worker: a parent settling when its children
//! end (or waiting again when one is retried), a broadcast child whose worker is gone, and the
//! failure streaks that attempts' ends add to or reset.

use super::{Ctx, Effects, EventDraft};
use crate::{
    model::{Instance, InstanceStatus, alerts::AlertEvent},
    routing::fanout::{ChildCounts, verdict},
};

/// The parent after its children changed: final with their verdict once none is active, or
/// WAITING again when a child of a final parent was retried. `None` when nothing changes.
pub fn settle(parent: &mut Instance, counts: &ChildCounts, ctx: Ctx<'_>) -> Option<Effects> {
    let ctx = ctx.after(parent);
    let mut fx = Effects::new(ctx.now);
    match (parent.status, verdict(counts)) {
        (InstanceStatus::Waiting, Some((to, message))) => {
            parent.status = to;
            parent.finished_at = Some(ctx.now);
            parent.message = message.clone();
            parent.updated_at = ctx.now;
            fx.changed = true;
            fx.finalized = true;
            if to == InstanceStatus::Failed {
                fx.alert(parent, AlertEvent::FinalFailure, &message);
            }
            fx.event(parent, InstanceStatus::Waiting, to, message);
            Some(fx)
        }
        (from, None) if from.is_terminal() && from.can_move_to(InstanceStatus::Waiting) => {
            parent.status = InstanceStatus::Waiting;
            parent.finished_at = None;
            parent.message = String::new();
            parent.updated_at = ctx.now;
            fx.changed = true;
            fx.event(
                parent,
                from,
                InstanceStatus::Waiting,
                format!("a child was retried: waiting for its {} active child(ren) again", counts.active),
            );
            Some(fx)
        }
        _ => None,
    }
}

/// A broadcast child still PENDING whose worker has had no session for the grace period: it can
/// run nowhere else, so it fails at once (without retries, which would only wait for the same
/// worker).
pub fn unreachable(i: &mut Instance, ctx: Ctx<'_>) -> Effects {
    let ctx = ctx.after(i);
    let mut fx = Effects::new(ctx.now);
    if i.status != InstanceStatus::Pending {
        return fx;
    }
    let worker = i.route.target_worker.clone().unwrap_or_default();
    let message = format!(
        "not run: worker {worker}, which this broadcast child is for, is not connected (it left after the fire, \
         and did not come back within the lost-worker grace)"
    );
    i.status = InstanceStatus::Failed;
    i.finished_at = Some(ctx.now);
    i.message = message.clone();
    i.updated_at = ctx.now;
    fx.changed = true;
    fx.finalized = true;
    fx.alert(i, AlertEvent::FinalFailure, &message);
    fx.events.push(EventDraft {
        instance_id: i.id,
        at: ctx.now,
        from: Some(InstanceStatus::Pending),
        to: InstanceStatus::Failed,
        attempt: i.attempt,
        worker_id: worker,
        reason: message,
    });
    fx
}

/// How one attempt ended, for its worker's failure streak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptOutcome {
    pub app: String,
    pub worker_id: String,
    pub handler: String,
    pub task_id: i64,
    /// FAILED or TIMEOUT (a lost worker included); false for SUCCESS.
    pub failed: bool,
}

/// The attempts a batch of events ended, in order: a worker's SUCCESS, or its FAILED or TIMEOUT
/// (CANCELED and requeues do not count).
pub fn attempt_outcomes<'a>(
    events: &[EventDraft],
    instance: impl Fn(i64) -> Option<&'a Instance>,
) -> Vec<AttemptOutcome> {
    let mut out = Vec::new();
    for e in events {
        let held = matches!(e.from, Some(InstanceStatus::Dispatched | InstanceStatus::Running));
        let failed = match e.to {
            InstanceStatus::Success => false,
            InstanceStatus::Failed | InstanceStatus::Timeout => true,
            _ => continue,
        };
        if !held || e.worker_id.is_empty() {
            continue;
        }
        let Some(i) = instance(e.instance_id) else { continue };
        out.push(AttemptOutcome {
            app: i.app.clone(),
            worker_id: e.worker_id.clone(),
            handler: i.handler.clone(),
            task_id: i.task_id,
            failed,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::InstanceRoute;

    fn now() -> crate::model::Ts {
        chrono::DateTime::from_timestamp(1_800_000_000, 0).expect("valid")
    }

    fn parent(status: InstanceStatus) -> Instance {
        Instance {
            task_name: "t".into(),
            app: "a".into(),
            handler: "h".into(),
            idempotency_key: "fire:x".into(),
            max_retries: 0,
            backoff: Default::default(),
            routing: crate::model::Routing::Broadcast,
            finished_at: status.is_terminal().then(now),
            route: InstanceRoute { children: Some(3), ..Default::default() },
            ..crate::model::testing::instance(10, now(), status)
        }
    }

    const CTX: Ctx<'static> = Ctx { now: chrono::DateTime::UNIX_EPOCH, scheduler_id: "axd" };

    #[test]
    fn a_waiting_parent_ends_when_its_last_child_does() {
        let mut p = parent(InstanceStatus::Waiting);
        let mut c = ChildCounts { success: 2, active: 1, ..Default::default() };
        assert!(settle(&mut p, &c, CTX).is_none(), "one child still runs");
        c.active = 0;
        c.failed = 1;
        let fx = settle(&mut p, &c, CTX).expect("settled");
        assert_eq!(p.status, InstanceStatus::Failed);
        assert!(fx.finalized && p.finished_at.is_some());
        assert_eq!(p.message, "2 of 3 children succeeded; 1 failed");
        assert!(InstanceStatus::Waiting.can_move_to(InstanceStatus::Failed));
        assert!(settle(&mut p, &c, CTX).is_none(), "a final parent stays final");
    }

    #[test]
    fn a_final_parent_waits_again_when_a_child_is_retried() {
        let mut p = parent(InstanceStatus::Failed);
        let c = ChildCounts { success: 2, active: 1, ..Default::default() };
        let fx = settle(&mut p, &c, CTX).expect("waiting again");
        assert_eq!(p.status, InstanceStatus::Waiting);
        assert_eq!(p.finished_at, None);
        assert_eq!(fx.events[0].from, Some(InstanceStatus::Failed));
    }

    #[test]
    fn only_attempt_ends_count_for_streaks() {
        let i = parent(InstanceStatus::Running);
        let ev = |from, to, worker: &str| EventDraft {
            instance_id: 10,
            at: now(),
            from: Some(from),
            to,
            attempt: 1,
            worker_id: worker.into(),
            reason: String::new(),
        };
        use InstanceStatus as S;
        let events = vec![
            ev(S::Running, S::Failed, "w1"),
            ev(S::Failed, S::Pending, "w1"),
            ev(S::Running, S::Canceled, "w1"),
            ev(S::Running, S::Timeout, "w2"),
            ev(S::Dispatched, S::Success, "w3"),
            ev(S::Pending, S::Failed, "w4"),
        ];
        let got: Vec<(String, bool)> =
            attempt_outcomes(&events, |_| Some(&i)).into_iter().map(|o| (o.worker_id, o.failed)).collect();
        assert_eq!(got, vec![("w1".into(), true), ("w2".into(), true), ("w3".into(), false)]);
    }
}
