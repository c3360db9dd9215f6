//! Overlap policies: what a scheduled fire does while earlier instances of its task are not final
//! (PENDING, DISPATCHED or RUNNING), decided at the fire time by the trigger round that creates it.
//!
//! - ALLOW: it runs.
//! - SKIP (FORBID on the wire): it is recorded SKIPPED.
//! - BUFFER_ONE: it waits behind the active instance, unless one waits already (then SKIPPED).
//! - BUFFER_ALL: it waits its turn (bounded by `--max-pending`, beyond which fires are coalesced).
//! - CANCEL_OTHER: the active instances are canceled and it runs.
//!
//! Waiting is not a state: a buffered instance is PENDING, and the claim starts only the oldest
//! unfinished instance of a BUFFER task (`loops::dispatch::claim`). Every decision is written on
//! the trail of the instance it concerns.

use crate::{
    model::{ConcurrencyPolicy, InstanceSource, InstanceStatus, Task, Ts},
    schedule::PlannedFire,
};

/// The decision for one planned fire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    /// PENDING, or SKIPPED.
    pub status: InstanceStatus,
    /// The creation event's reason.
    pub reason: String,
    /// Active instances of the task to cancel first (CANCEL_OTHER).
    pub cancel: Vec<i64>,
}

/// How the fire came about, for its trail.
fn why(task: &Task, fire: &PlannedFire) -> String {
    match fire.source {
        InstanceSource::CatchUp => {
            let by = fire.schedule.map(|i| format!(" of {}", crate::schedule::schedule_path(i))).unwrap_or_default();
            format!(
                "misfire catch-up ({}) for the fire{by} at {}",
                task.config.misfire_policy,
                fire.fire_at.to_rfc3339()
            )
        }
        _ => match fire.schedule {
            Some(i) => format!("fired by {} for {}", crate::schedule::schedule_path(i), fire.fire_at.to_rfc3339()),
            None => crate::model::trail::scheduled_reason(fire.fire_at),
        },
    }
}

fn list(ids: &[i64]) -> String {
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}

/// Decides fire `n` (0-based) of the `fires` one round plans for `task`, whose unfinished instances
/// before the round are `active` (ids, oldest first). `run_at` is when it runs (with jitter).
pub fn admit(task: &Task, fires: &[PlannedFire], n: usize, active: &[i64], run_at: Ts) -> Admission {
    let fire = &fires[n];
    let base = why(task, fire);
    let base = if run_at > fire.fire_at {
        format!("{base}; runs at {} (jitter)", run_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    } else {
        base
    };
    let run = |reason: String| Admission { status: InstanceStatus::Pending, reason, cancel: Vec::new() };
    let skip = |reason: String| Admission { status: InstanceStatus::Skipped, reason, cancel: Vec::new() };
    match task.config.concurrency {
        ConcurrencyPolicy::Allow => run(base),
        ConcurrencyPolicy::Forbid => match (active.first(), n) {
            (Some(id), _) => skip(format!("not run: instance {id} of this task is still active (concurrency SKIP)")),
            (None, 0) => run(base),
            (None, _) => skip("not run: an earlier fire of this round is still active (concurrency SKIP)".to_owned()),
        },
        ConcurrencyPolicy::BufferOne => {
            // Unfinished instances ahead of this fire: those before the round, and the earlier fires
            // of the round that were admitted (all of them, as each is at most the second).
            let ahead = active.len() + n;
            match ahead {
                0 => run(base),
                1 => run(match active.first() {
                    Some(id) => format!("{base}; buffered (BUFFER_ONE): starts when instance {id} ends"),
                    None => format!("{base}; buffered (BUFFER_ONE): starts when the earlier fire of this round ends"),
                }),
                _ => skip(match active.get(1).or(active.first()) {
                    Some(id) => format!(
                        "not run: instance {id} already waits behind the active one (concurrency BUFFER_ONE keeps one)"
                    ),
                    None => "not run: an earlier fire of this round already waits (concurrency BUFFER_ONE keeps one)"
                        .to_owned(),
                }),
            }
        }
        ConcurrencyPolicy::BufferAll => {
            let ahead = active.len() + n;
            if ahead == 0 {
                run(base)
            } else {
                run(format!(
                    "{base}; buffered (BUFFER_ALL): starts after the {ahead} unfinished instance(s) ahead of it"
                ))
            }
        }
        ConcurrencyPolicy::CancelOther => {
            if n + 1 < fires.len() {
                // Each fire would cancel the one before: only the round's last fire runs.
                return skip(format!(
                    "not run: the fire at {} of this round replaces it (concurrency CANCEL_OTHER)",
                    fires[fires.len() - 1].fire_at.to_rfc3339()
                ));
            }
            if active.is_empty() {
                run(base)
            } else {
                Admission {
                    status: InstanceStatus::Pending,
                    reason: format!(
                        "{base}; canceled instance(s) {} that were still active (CANCEL_OTHER)",
                        list(active)
                    ),
                    cancel: active.to_vec(),
                }
            }
        }
    }
}

/// The reason on the trail of an instance a CANCEL_OTHER fire cancels.
pub fn canceled_by(fire_at: Ts) -> String {
    format!("the fire at {} of the same task replaces it", fire_at.to_rfc3339())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Schedule, TaskConfig};

    fn task(policy: ConcurrencyPolicy) -> Task {
        let mut config = TaskConfig {
            app: "a".into(),
            handler: "h".into(),
            description: String::new(),
            schedule: Schedule::Manual,
            params: "{}".into(),
            enabled: true,
            misfire_policy: crate::model::MisfirePolicy::FireAll,
            misfire_threshold: std::time::Duration::from_secs(60),
            max_catch_up: crate::model::DEFAULT_MAX_CATCH_UP,
            concurrency: policy,
            routing: crate::model::Routing::LeastLoaded,
            timeout: None,
            retry: Default::default(),
            labels: Default::default(),
            placement: Default::default(),
            timing: Default::default(),
            flow: Default::default(),
        };
        config.concurrency = policy;
        Task {
            id: 1,
            name: "t".into(),
            config,
            next_fire_at: None,
            created_at: chrono::DateTime::UNIX_EPOCH,
            updated_at: chrono::DateTime::UNIX_EPOCH,
            version: 1,
            coalesced: None,
            pause: None,
        }
    }

    fn fires(n: i64) -> Vec<PlannedFire> {
        (0..n)
            .map(|k| PlannedFire {
                fire_at: chrono::DateTime::from_timestamp(1_800_000_000 + 60 * k, 0).expect("t"),
                source: InstanceSource::Schedule,
                schedule: None,
            })
            .collect()
    }

    fn decide(policy: ConcurrencyPolicy, round: i64, active: &[i64]) -> Vec<(InstanceStatus, Vec<i64>)> {
        let t = task(policy);
        let f = fires(round);
        (0..f.len()).map(|n| admit(&t, &f, n, active, f[n].fire_at)).map(|a| (a.status, a.cancel)).collect()
    }

    use InstanceStatus::{Pending as P, Skipped as S};

    #[test]
    fn skip_runs_only_when_nothing_is_active() {
        assert_eq!(decide(ConcurrencyPolicy::Forbid, 2, &[]), [(P, vec![]), (S, vec![])]);
        assert_eq!(decide(ConcurrencyPolicy::Forbid, 1, &[7]), [(S, vec![])]);
    }

    #[test]
    fn buffer_one_keeps_one_waiting_and_skips_the_rest() {
        assert_eq!(decide(ConcurrencyPolicy::BufferOne, 3, &[]), [(P, vec![]), (P, vec![]), (S, vec![])]);
        assert_eq!(decide(ConcurrencyPolicy::BufferOne, 2, &[7]), [(P, vec![]), (S, vec![])]);
        assert_eq!(decide(ConcurrencyPolicy::BufferOne, 1, &[7, 8]), [(S, vec![])]);
        let t = task(ConcurrencyPolicy::BufferOne);
        let f = fires(1);
        assert!(admit(&t, &f, 0, &[7], f[0].fire_at).reason.contains("starts when instance 7 ends"));
    }

    #[test]
    fn buffer_all_runs_every_fire_in_turn() {
        assert_eq!(decide(ConcurrencyPolicy::BufferAll, 3, &[7, 8]), [(P, vec![]), (P, vec![]), (P, vec![])]);
    }

    #[test]
    fn cancel_other_cancels_the_active_and_only_the_last_fire_of_a_round_runs() {
        assert_eq!(decide(ConcurrencyPolicy::CancelOther, 1, &[7, 8]), [(P, vec![7, 8])]);
        assert_eq!(decide(ConcurrencyPolicy::CancelOther, 2, &[]), [(S, vec![]), (P, vec![])]);
        assert_eq!(decide(ConcurrencyPolicy::Allow, 2, &[7]), [(P, vec![]), (P, vec![])]);
    }
}
