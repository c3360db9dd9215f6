//! Unit tests of the state machine.
use super::*;
use crate::model::Backoff;
use chrono::TimeZone;

fn now() -> Ts {
    chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).single().expect("t")
}

/// A held instance (attempt 1 on worker w, session s) of task 1, for tests of this module's parts.
pub(crate) fn held(status: InstanceStatus) -> Instance {
    Instance {
        id: 7,
        task_name: "t".into(),
        app: "a".into(),
        handler: "h".into(),
        idempotency_key: "k".into(),
        attempt: 1,
        timeout: Some(Duration::from_secs(5)),
        backoff: Backoff::List { delays_us: vec![2_000_000] },
        worker_id: Some("w".into()),
        session_id: Some("s".into()),
        scheduler_id: Some("axd".into()),
        lease_expires_at: Some(now()),
        ..crate::model::testing::instance(7, now(), status)
    }
}

const CTX: fn() -> Ctx<'static> = || Ctx { now: now(), scheduler_id: "axd" };

#[test]
fn accept_starts_the_deadline_and_is_fenced() {
    let mut i = held(InstanceStatus::Dispatched);
    let (o, fx) = accept(&mut i, 1, "s", add(now(), Duration::from_secs(30)), CTX());
    assert_eq!(o, AcceptOutcome::Started { wake_at: add(now(), Duration::from_secs(5)) });
    assert_eq!(i.deadline_at, Some(add(now(), Duration::from_secs(5))));
    assert_eq!(fx.events.len(), 1);
    assert_eq!(accept(&mut i, 1, "s", now(), CTX()).0, AcceptOutcome::AlreadyRunning);
    assert!(matches!(accept(&mut i, 1, "other", now(), CTX()).0, AcceptOutcome::NotCurrent(_)));
    assert!(matches!(accept(&mut i, 2, "s", now(), CTX()).0, AcceptOutcome::NotCurrent(_)));
}

#[test]
fn a_failure_with_budget_left_is_retried_after_the_backoff_then_final() {
    let mut i = held(InstanceStatus::Running);
    let c = Completion {
        instance_id: 7,
        attempt: 1,
        session_id: "s".into(),
        worker_id: "w".into(),
        end: AttemptEnd::Failed { message: "boom".into(), retryable: true },
        finished_at: None,
    };
    let (o, fx) = complete(&mut i, &c, CTX(), 0.5);
    assert_eq!(o, CompleteOutcome::Applied(InstanceStatus::Pending));
    assert_eq!(i.available_at, add(now(), Duration::from_secs(2)));
    assert_eq!(
        fx.events.iter().map(|e| e.to).collect::<Vec<_>>(),
        vec![InstanceStatus::Failed, InstanceStatus::Pending]
    );
    assert!(!fx.finalized);
    // Second attempt fails: the budget is spent.
    i.status = InstanceStatus::Running;
    i.attempt = 2;
    let c2 = Completion { attempt: 2, ..c.clone() };
    let (o, fx) = complete(&mut i, &c2, CTX(), 0.5);
    assert_eq!(o, CompleteOutcome::Applied(InstanceStatus::Failed));
    assert!(fx.finalized);
    assert!(i.message.contains("all 1 retries used"));
    // The old attempt's result is ignored and recorded as a late result.
    let (o, fx) = complete(&mut i, &c, CTX(), 0.5);
    assert!(matches!(o, CompleteOutcome::Ignored(_)));
    assert_eq!(fx.events.len(), 1);
    assert!(fx.changed && i.updated_at == fx.at, "only the update time moves, so later events come after it");
    assert_eq!(i.status, InstanceStatus::Failed);
    assert!(fx.events[0].reason.starts_with("ignored FAILED result (late)"), "{}", fx.events[0].reason);
    // A repeat of the result that ended attempt 2 writes nothing.
    let (o, fx) = complete(&mut i, &c2, CTX(), 0.5);
    assert!(matches!(o, CompleteOutcome::Ignored(_)));
    assert!(!fx.changed && fx.events.is_empty());
}

#[test]
fn a_result_from_the_same_worker_on_its_older_session_is_applied() {
    let mut i = held(InstanceStatus::Running);
    i.session_id = Some("s2".into());
    let c = Completion {
        instance_id: 7,
        attempt: 1,
        session_id: "s".into(),
        worker_id: "w".into(),
        end: AttemptEnd::Success { message: String::new(), output: String::new() },
        finished_at: None,
    };
    assert_eq!(complete(&mut i, &c, CTX(), 0.5).0, CompleteOutcome::Applied(InstanceStatus::Success));
    let mut j = held(InstanceStatus::Running);
    j.session_id = Some("s2".into());
    let other = Completion { worker_id: "x".into(), ..c };
    assert!(matches!(complete(&mut j, &other, CTX(), 0.5).0, CompleteOutcome::Ignored(_)));
}

#[test]
fn timeout_queues_a_cancel_for_the_holding_session() {
    let mut i = held(InstanceStatus::Running);
    let fx = time_out(&mut i, CTX(), 0.0);
    assert_eq!(i.status, InstanceStatus::Pending);
    let c = fx.cancel.expect("cancel");
    assert_eq!((c.session_id.as_str(), c.attempt), ("s", 1));
    assert_eq!(fx.events[0].to, InstanceStatus::Timeout);
}

#[test]
fn a_retry_after_a_timeout_waits_until_the_attempt_is_known_to_have_stopped() {
    let lease = add(now(), Duration::from_secs(16));
    let mut i = held(InstanceStatus::Running);
    i.lease_expires_at = Some(lease);
    let fx = time_out(&mut i, CTX(), 0.0);
    // PENDING with its backoff, but the timed-out attempt may still run until its lease ends.
    assert_eq!(i.status, InstanceStatus::Pending);
    assert_eq!(i.available_at, add(now(), Duration::from_secs(2)));
    assert_eq!(stopped_by(&i, now()), Some(lease));
    assert_eq!(stopped_by(&i, lease), None, "once the lease has ended the worker has fenced the attempt");
    let pending = fx.events.iter().find(|e| e.to == InstanceStatus::Pending).expect("the retry's event");
    assert!(
        pending.reason.contains("it starts once attempt 1 has stopped: worker w confirms it, or its lease ends at"),
        "{}",
        pending.reason
    );
    // Another worker's result for attempt 1 confirms nothing.
    let c = Completion {
        instance_id: 7,
        attempt: 1,
        session_id: "s".into(),
        worker_id: "x".into(),
        end: AttemptEnd::Failed { message: "canceled".into(), retryable: true },
        finished_at: None,
    };
    let (_, fx) = complete(&mut i, &c, CTX(), 0.5);
    assert_eq!(stopped_by(&i, now()), Some(lease));
    assert_eq!(fx.requeued_at, None);
    // The worker's own (late) result says it stopped: the retry may start, dispatchers are woken.
    let c = Completion { worker_id: "w".into(), ..c };
    let (o, fx) = complete(&mut i, &c, CTX(), 0.5);
    assert!(matches!(o, CompleteOutcome::Ignored(_)));
    assert_eq!(stopped_by(&i, now()), None);
    assert_eq!(fx.requeued_at, Some(i.available_at));
    assert!(fx.events[0].reason.ends_with("; attempt 1 has stopped, its retry may start"), "{}", fx.events[0].reason);
    // A failure the worker reported itself ended its attempt: nothing to wait for.
    let mut j = held(InstanceStatus::Running);
    j.lease_expires_at = Some(lease);
    complete(&mut j, &Completion { worker_id: "w".into(), ..c }, CTX(), 0.5);
    assert_eq!((j.status, stopped_by(&j, now())), (InstanceStatus::Pending, None));
}

#[test]
fn an_operator_s_retry_of_a_canceled_attempt_waits_for_it_to_stop() {
    let lease = add(now(), Duration::from_secs(16));
    let mut i = held(InstanceStatus::Running);
    i.lease_expires_at = Some(lease);
    cancel(&mut i, "", "alice", CTX()).expect("canceled");
    assert_eq!((i.status, stopped_by(&i, now())), (InstanceStatus::Canceled, Some(lease)));
    let fx = retry(&mut i, "alice", CTX()).expect("retried");
    assert_eq!((i.status, stopped_by(&i, now())), (InstanceStatus::Pending, Some(lease)));
    assert!(
        fx.events[0].reason.starts_with("retried by alice; it starts once attempt 1 has stopped"),
        "{}",
        fx.events[0].reason
    );
    // Canceling the waiting retry and retrying it again keeps waiting for attempt 1.
    cancel(&mut i, "", "alice", CTX()).expect("canceled again");
    retry(&mut i, "alice", CTX()).expect("retried again");
    assert_eq!(stopped_by(&i, now()), Some(lease));
    // A PENDING instance that was never held has nothing to wait for.
    let mut p = held(InstanceStatus::Pending);
    p.lease_expires_at = None;
    assert_eq!(stopped_by(&p, now()), None);
}

#[test]
fn readoption_needs_the_same_worker_and_attempt() {
    let mut i = held(InstanceStatus::Running);
    assert!(!readopt(&mut i, 1, "other", "a", "s2", now(), CTX()).0);
    assert!(!readopt(&mut i, 2, "w", "a", "s2", now(), CTX()).0);
    assert!(readopt(&mut i, 1, "w", "a", "s2", now(), CTX()).0);
    assert_eq!(i.session_id.as_deref(), Some("s2"));
}

#[test]
fn an_attempt_whose_session_ended_on_an_unreadable_message_is_not_readopted_and_fails_with_its_lease() {
    let mut i = held(InstanceStatus::Running);
    let fx = session_ended_unreadable(&mut i, "s", "message too large: 10485765 bytes", CTX());
    assert!(fx.changed && fx.events[0].reason.contains("could not read"), "{:?}", fx.events);
    assert_eq!(i.lease_expires_at, Some(now()), "the lease is kept as it was");
    assert!(!readopt(&mut i, 1, "w", "a", "s2", now(), CTX()).0, "not kept for the worker");
    i.max_retries = 0;
    lose(&mut i, CTX(), 0.5);
    assert_eq!(i.status, InstanceStatus::Failed);
    assert!(
        i.message.starts_with("worker lost: worker w's session s ended on a message axd could not read"),
        "{}",
        i.message
    );
    assert!(i.message.contains("message too large"), "{}", i.message);
    // The mark belongs to its attempt: a later attempt of the instance is re-adopted as usual.
    let mut i = held(InstanceStatus::Running);
    session_ended_unreadable(&mut i, "s", "x", CTX());
    i.attempt = 2;
    assert!(readopt(&mut i, 2, "w", "a", "s2", now(), CTX()).0);
}

/// The table of legal moves, spelled out pair by pair: a change to [`TRANSITIONS`] must change
/// this list too.
#[test]
fn the_table_of_transitions_allows_exactly_these_moves() {
    use InstanceStatus as S;
    let allowed: &[(S, &[S])] = &[
        (S::Pending, &[S::Dispatched, S::Canceled, S::Failed]),
        (S::Dispatched, &[S::Running, S::Pending, S::Success, S::Failed, S::Canceled]),
        (S::Running, &[S::Success, S::Failed, S::Timeout, S::Canceled]),
        (S::Success, &[S::Pending, S::Waiting]),
        (S::Failed, &[S::Pending, S::Waiting]),
        (S::Timeout, &[S::Pending]),
        (S::Canceled, &[S::Pending, S::Waiting]),
        (S::Skipped, &[S::Pending]),
        (S::Waiting, &[S::Success, S::Failed, S::Canceled]),
    ];
    for &from in S::ALL {
        let to_list = allowed.iter().find(|(f, _)| *f == from).map_or(&[][..], |(_, t)| *t);
        for &to in S::ALL {
            let expected = from == to || to_list.contains(&to);
            assert_eq!(from.can_move_to(to), expected, "{from} -> {to}");
        }
    }
    let created: Vec<S> = S::ALL.iter().copied().filter(|s| s.can_start_as()).collect();
    assert_eq!(created, [S::Pending, S::Skipped, S::Waiting]);
    // Only an operator brings a succeeded, canceled or skipped instance back.
    for from in [S::Success, S::Canceled, S::Skipped] {
        assert_eq!(from.causes(S::Pending), [crate::model::Cause::OperatorRetry]);
    }
    // A PENDING instance fails without running only when its pinned worker is gone; a parent
    // ends only by its children or a cancel.
    assert_eq!(S::Pending.causes(S::Failed), [crate::model::Cause::Unreachable]);
    assert_eq!(S::Waiting.causes(S::Success), [crate::model::Cause::Children]);
}

/// One transition function applied to an instance.
type Transition<'a> = Box<dyn Fn(&mut Instance) -> Effects + 'a>;

/// Every transition function, applied to an instance in every state, records only moves the
/// table allows (the same check runs as a debug assertion where events are written).
#[test]
fn every_transition_function_makes_only_legal_moves() {
    use InstanceStatus as S;
    let c = |end| Completion {
        instance_id: 7,
        attempt: 1,
        session_id: "s".into(),
        worker_id: "w".into(),
        end,
        finished_at: None,
    };
    let success = AttemptEnd::Success { message: String::new(), output: String::new() };
    let failure = AttemptEnd::Failed { message: "boom".into(), retryable: true };
    let mut seen = 0;
    for &status in S::ALL {
        for retries in [0, 1] {
            let runs: Vec<Transition<'_>> = vec![
                Box::new(|i| accept(i, 1, "s", now(), CTX()).1),
                Box::new(|i| reject(i, 1, "s", "no", CTX()).1),
                Box::new(|i| complete(i, &c(success.clone()), CTX(), 0.5).1),
                Box::new(|i| complete(i, &c(failure.clone()), CTX(), 0.5).1),
                Box::new(|i| expire_ack(i, CTX())),
                Box::new(|i| time_out(i, CTX(), 0.5)),
                Box::new(|i| lose(i, CTX(), 0.5)),
                Box::new(|i| cancel(i, "", "op", CTX()).unwrap_or_else(|| Effects::new(now()))),
                Box::new(|i| retry(i, "op", CTX()).unwrap_or_else(|| Effects::new(now()))),
                Box::new(|i| readopt(i, 1, "w", "a", "s2", now(), CTX()).1),
                Box::new(|i| session_ended(i, "s", "gone", now(), CTX())),
                Box::new(|i| session_ended_unreadable(i, "s", "too large", CTX())),
            ];
            for run in &runs {
                let mut i = held(status);
                i.max_retries = retries;
                let fx = run(&mut i);
                let mut state = status;
                for e in &fx.events {
                    let from = e.from.expect("transitions start from a state");
                    assert_eq!(from, state, "events chain: {:?}", fx.events);
                    assert!(from.can_move_to(e.to), "{from} -> {} is not in the table: {}", e.to, e.reason);
                    state = e.to;
                    seen += 1;
                }
                if fx.changed {
                    assert_eq!(state, i.status, "the last event ends in the row's state");
                }
            }
        }
    }
    assert!(seen > 30, "the functions were exercised ({seen} events)");
}
