//! Unit tests of which events instance rows hold (see [`crate::model::trail`]).
use std::collections::{BTreeSet, HashMap};

use super::{recorded, trails::hold_trails};
use crate::{
    lifecycle::{AttemptEnd, Completion, Ctx, accept, complete, tests::held},
    model::{Instance, InstanceEvent, InstanceStatus, trail},
};

/// A DISPATCHED row of axd "axd" that holds its DISPATCHED event, as read.
fn dispatched() -> Instance {
    let mut i = held(InstanceStatus::Dispatched);
    i.trail.dispatched_at = Some(i.updated_at);
    i.trail.bits = trail::DISPATCHED;
    i.trail.held = trail::implied(&i, trail::DISPATCHED);
    i
}

/// Accepted and a successful Result, applied by `axd`: the row and the events to record.
fn run(mut i: Instance, axd: &str) -> (Instance, Vec<InstanceEvent>) {
    let now = i.updated_at;
    let ctx = Ctx { now, scheduler_id: axd };
    let (_, a) = accept(&mut i, 1, "s", now, ctx);
    let done = Completion {
        instance_id: i.id,
        attempt: 1,
        session_id: "s".into(),
        worker_id: "w".into(),
        end: AttemptEnd::Success { message: String::new(), output: String::new() },
        finished_at: None,
    };
    let (_, c) = complete(&mut i, &done, ctx, 0.5);
    let events = a.events.iter().chain(&c.events).map(|e| recorded(e, axd)).collect();
    (i, events)
}

#[test]
fn the_axd_that_dispatched_an_attempt_holds_its_start_and_success_in_the_row() {
    let (i, events) = run(dispatched(), "axd");
    let mut rows = HashMap::from([(i.id, i)]);
    let mut changed = BTreeSet::from([7]);
    let written = hold_trails(&mut rows, events, &mut changed, true);
    assert!(written.is_empty(), "{written:?}");
    assert_eq!(rows[&7].trail.bits, trail::DISPATCHED | trail::RUNNING | trail::SUCCESS);
}

#[test]
fn another_axd_s_result_writes_the_held_event_first_then_its_own() {
    // The worker reconnected to another axd, which applies its result: the row cannot say that
    // axd's events (it names the one that dispatched), so all three are written, in order.
    let (i, events) = run(dispatched(), "axd-2");
    let mut rows = HashMap::from([(i.id, i)]);
    let mut changed = BTreeSet::new();
    let written = hold_trails(&mut rows, events, &mut changed, true);
    let steps: Vec<(InstanceStatus, &str)> = written.iter().map(|e| (e.to, e.scheduler_id.as_str())).collect();
    use InstanceStatus as S;
    assert_eq!(steps, [(S::Dispatched, "axd"), (S::Running, "axd-2"), (S::Success, "axd-2")]);
    assert_eq!(rows[&7].trail.bits, 0);
    assert!(changed.contains(&7), "the cleared bits are written");
}

#[test]
fn with_the_trail_in_the_row_off_every_event_is_written() {
    let (i, events) = run(dispatched(), "axd");
    let mut rows = HashMap::from([(i.id, i)]);
    let written = hold_trails(&mut rows, events, &mut BTreeSet::new(), false);
    assert_eq!(written.len(), 3);
}

#[test]
fn a_changed_row_that_no_longer_says_its_held_event_writes_it() {
    // Say a change rewrote the session without an event: the held DISPATCHED event (which names
    // the old session) is written before the row forgets it.
    let mut i = dispatched();
    i.session_id = Some("s-new".into());
    let mut rows = HashMap::from([(i.id, i)]);
    let mut changed = BTreeSet::from([7]);
    let written = hold_trails(&mut rows, Vec::new(), &mut changed, true);
    assert_eq!(written.len(), 1);
    assert!(written[0].reason.contains("(session s)"), "{:?}", written[0].reason);
    assert_eq!(rows[&7].trail.bits, 0);
}
