//! The proto form of an explanation.

use ax_proto::v1 as pb;

use super::{fire_span_to_pb, instance_to_pb, status_to_pb, task_event_to_pb, task_to_pb, ts_to_pb};
use crate::{
    explain::{Attempt, ExplainedFire, Explanation, Finding, FindingKind},
    model::{Task, TaskEvent, Ts},
};

/// The proto form of a finding kind.
pub fn finding_kind_to_pb(k: FindingKind) -> pb::ExplainFindingKind {
    use pb::ExplainFindingKind as P;
    match k {
        FindingKind::Disabled => P::Disabled,
        FindingKind::Manual => P::Manual,
        FindingKind::NoMoreFires => P::NoMoreFires,
        FindingKind::MisfireSkipped => P::MisfireSkipped,
        FindingKind::MisfireCaughtUp => P::MisfireCaughtUp,
        FindingKind::SkippedOverlap => P::SkippedOverlap,
        FindingKind::NoWorker => P::NoWorker,
        FindingKind::AtCapacity => P::AtCapacity,
        FindingKind::AttemptFailed => P::AttemptFailed,
        FindingKind::Failed => P::Failed,
        FindingKind::Canceled => P::Canceled,
        FindingKind::ScheduleBroken => P::ScheduleBroken,
        FindingKind::Running => P::Running,
        FindingKind::Waiting => P::Waiting,
        FindingKind::NoInstance => P::NoInstance,
        FindingKind::Ok => P::Ok,
        FindingKind::SelectorUnmatched => P::SelectorUnmatched,
        FindingKind::Cooldown => P::Cooldown,
        FindingKind::MaxRunning => P::MaxRunning,
        FindingKind::RateLimited => P::RateLimited,
        FindingKind::Coalesced => P::Coalesced,
        FindingKind::Paused => P::Paused,
        FindingKind::OutsideWindow => P::OutsideWindow,
        FindingKind::ExcludedDate => P::ExcludedDate,
        FindingKind::Buffered => P::Buffered,
        FindingKind::CanceledByFire => P::CanceledByFire,
        FindingKind::ConcurrencyKey => P::ConcurrencyKey,
        FindingKind::DeadlineMissed => P::DeadlineMissed,
    }
}

fn finding_to_pb(f: &Finding) -> pb::ExplainFinding {
    pb::ExplainFinding {
        kind: finding_kind_to_pb(f.kind).into(),
        time: f.at.map(ts_to_pb),
        message: f.message.clone(),
        instance_id: f.instance_id,
        fires: f.fires.as_ref().map(fire_span_to_pb),
    }
}

fn attempt_to_pb(a: &Attempt) -> pb::ExplainedAttempt {
    pb::ExplainedAttempt {
        attempt: a.attempt,
        worker_id: a.worker_id.clone(),
        dispatch_time: Some(ts_to_pb(a.dispatched_at)),
        start_time: a.started_at.map(ts_to_pb),
        end_time: a.ended_at.map(ts_to_pb),
        outcome: a.outcome.map(|s| status_to_pb(s).into()).unwrap_or(0),
        reason: a.reason.clone(),
    }
}

/// A signed span as a proto duration (seconds and nanos of the same sign).
fn signed_to_pb(d: chrono::Duration) -> prost_types::Duration {
    let us = d.num_microseconds().unwrap_or(i64::MAX);
    prost_types::Duration { seconds: us / 1_000_000, nanos: i32::try_from((us % 1_000_000) * 1000).unwrap_or(0) }
}

fn fire_to_pb(f: &ExplainedFire) -> pb::ExplainedFire {
    pb::ExplainedFire {
        instance: Some(instance_to_pb(&f.instance)),
        dispatch_delay: f.dispatch_delay.map(signed_to_pb),
        waited_for: f.waited_for.clone(),
        attempts: f.attempts.iter().map(attempt_to_pb).collect(),
    }
}

/// The ExplainTask response.
pub fn explanation_to_pb(task: &Task, at: Ts, events: &[TaskEvent], e: &Explanation) -> pb::ExplainTaskResponse {
    pb::ExplainTaskResponse {
        task: Some(task_to_pb(task)),
        at: Some(ts_to_pb(at)),
        findings: e.findings.iter().map(finding_to_pb).collect(),
        next_fires: e
            .next_fires
            .iter()
            .map(|f| {
                let run = crate::window::run_time(&task.name, f.at, task.config.timing.jitter);
                pb::Fire { time: Some(ts_to_pb(f.at)), local_time: f.local.clone(), run_time: Some(ts_to_pb(run)) }
            })
            .collect(),
        recent: e.recent.iter().map(fire_to_pb).collect(),
        events: events.iter().map(task_event_to_pb).collect(),
        workers: Some(pb::ExplainWorkers {
            sessions: e.workers.sessions,
            serving: e.workers.serving,
            capacity: e.workers.capacity,
            free_credits: e.workers.free_credits,
        }),
    }
}
