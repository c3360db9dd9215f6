//! Unit tests of the registry and routing: credits, demand, and the choice among this axd's streams.
use std::{collections::HashMap, sync::Arc};

use ax_proto::v1 as pb;
use tokio::sync::mpsc;

use super::{RouteCtx, route as pick};
use crate::{
    model::{RetryOn, Routing},
    routing::RoutingState,
    routing::registry::{ReadyInstance, Registry, Session},
};

fn session(id: &str, handlers: &[&str], capacity: u32) -> Arc<Session> {
    session_early(id, handlers, capacity, false)
}

fn session_early(id: &str, handlers: &[&str], capacity: u32, early: bool) -> Arc<Session> {
    session_labeled(id, handlers, capacity, early, &[])
}

fn session_labeled(id: &str, handlers: &[&str], capacity: u32, early: bool, labels: &[(&str, &str)]) -> Arc<Session> {
    let (tx, _rx) = mpsc::channel(4);
    let hello = pb::Hello {
        app: "app".into(),
        worker_id: format!("w-{id}"),
        handlers: handlers.iter().map(|h| h.to_string()).collect(),
        capacity,
        start_after_supported: early,
        labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    Arc::new(Session::new(id.into(), &hello, tx, chrono::Utc::now()))
}

fn ready(id: i64, handler: &str, routing: Routing) -> ReadyInstance {
    ReadyInstance {
        id,
        app: "app".into(),
        handler: handler.into(),
        routing,
        attempt: 0,
        early: false,
        available_at: chrono::Utc::now(),
        selector: String::new(),
        target_worker: None,
        hash_key: None,
        retry_on: RetryOn::Other,
        failed_on: None,
        shard: None,
    }
}

/// Routes with no cooldowns and no other axd's workers.
fn route(reg: &Registry, r: &ReadyInstance, attempt: u32) -> Option<String> {
    route_with(reg, r, attempt, &RoutingState::default(), &[])
}

fn route_with(
    reg: &Registry,
    r: &ReadyInstance,
    attempt: u32,
    routing: &RoutingState,
    cluster: &[crate::model::WorkerRecord],
) -> Option<String> {
    let mut selectors = HashMap::new();
    let mut ctx = RouteCtx { now: chrono::Utc::now(), routing, cluster, selectors: &mut selectors };
    pick(reg.all(), r, attempt, &mut ctx, reg.round_robin()).ok().map(|x| x.r.session_id)
}

#[test]
fn credits_never_exceed_capacity_minus_outstanding() {
    let s = session("a", &["h"], 2);
    s.grant(10, false);
    assert_eq!(s.credits(), 2);
    assert!(s.reserve((1, 1)));
    s.grant(5, false);
    assert_eq!(s.credits(), 1, "one slot is outstanding");
    assert!(s.reserve((2, 1)));
    assert!(!s.reserve((3, 1)), "no credit left");
    s.finish((1, 1));
    assert_eq!(s.credits(), 0, "a finished slot returns no credit by itself");
    s.grant(1, false);
    assert_eq!(s.credits(), 1);
    s.grant(0, true);
    assert_eq!(s.credits(), 0, "reset withdraws credits");
}

#[test]
fn routing_respects_handlers_and_strategy() {
    let reg = Registry::default();
    let a = session("a", &["h1"], 10);
    let b = session("b", &["h1", "h2"], 10);
    a.grant(5, false);
    b.grant(2, false);
    reg.insert(a.clone());
    reg.insert(b.clone());
    let now = chrono::Utc::now();
    let d = reg.demand(now, std::time::Duration::from_millis(200), &RoutingState::default());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].until, now, "no stream takes early assignments: claim only what is due");
    assert_eq!(d[0].handlers, vec!["h1".to_owned(), "h2".to_owned()]);
    assert_eq!(d[0].limit, 7);
    // Only b serves h2.
    assert_eq!(route(&reg, &ready(1, "h2", Routing::LeastLoaded), 1).expect("b"), "b");
    // Least loaded: a has more free credits.
    assert_eq!(route(&reg, &ready(2, "h1", Routing::LeastLoaded), 1).expect("a"), "a");
    // Round robin alternates.
    let x = route(&reg, &ready(3, "h1", Routing::RoundRobin), 1).expect("x");
    let y = route(&reg, &ready(4, "h1", Routing::RoundRobin), 1).expect("y");
    assert_ne!(x, y);
    assert!(route(&reg, &ready(5, "nope", Routing::Random), 1).is_none());
}

#[test]
fn early_instances_go_only_to_streams_that_hold_them() {
    let reg = Registry::default();
    let plain = session_early("a", &["h"], 10, false);
    let holding = session_early("b", &["h"], 10, true);
    plain.grant(10, false);
    reg.insert(plain.clone());
    let now = chrono::Utc::now();
    let ahead = std::time::Duration::from_millis(200);
    let none = RoutingState::default();
    assert_eq!(reg.demand(now, ahead, &none)[0].until, now);
    let mut early = ready(1, "h", Routing::LeastLoaded);
    early.early = true;
    assert!(route(&reg, &early, 1).is_none(), "a plain stream never gets an instance before its time");
    holding.grant(1, false);
    reg.insert(holding.clone());
    assert_eq!(reg.demand(now, ahead, &none)[0].until, crate::model::add(now, ahead));
    assert_eq!(route(&reg, &early, 1).expect("the holding stream"), "b");
    assert!(route(&reg, &early, 2).is_none(), "its one credit is used");
    assert_eq!(route(&reg, &ready(2, "h", Routing::LeastLoaded), 1).expect("due work"), "a");
}

#[test]
fn selectors_and_pinned_workers_narrow_the_streams() {
    let reg = Registry::default();
    let cn = session_labeled("a", &["h"], 10, false, &[("region", "cn"), ("gpu", "true")]);
    let us = session_labeled("b", &["h"], 10, false, &[("region", "us")]);
    cn.grant(10, false);
    us.grant(10, false);
    reg.insert(cn);
    reg.insert(us);
    let mut r = ready(1, "h", Routing::LeastLoaded);
    r.selector = "region=us".into();
    assert_eq!(route(&reg, &r, 1).as_deref(), Some("b"));
    r.selector = "gpu=true,region in (cn,jp)".into();
    assert_eq!(route(&reg, &r, 1).as_deref(), Some("a"));
    r.selector = "gpu=false".into();
    assert_eq!(route(&reg, &r, 1), None, "no stream matches");
    let mut pinned = ready(2, "h", Routing::Broadcast);
    pinned.target_worker = Some("w-b".into());
    assert_eq!(route(&reg, &pinned, 1).as_deref(), Some("b"));
    pinned.target_worker = Some("w-zz".into());
    assert_eq!(route(&reg, &pinned, 1), None);
}

#[test]
fn a_cooling_worker_is_passed_over_and_a_retry_prefers_another_worker() {
    let reg = Registry::default();
    let a = session("a", &["h"], 10);
    let b = session("b", &["h"], 10);
    a.grant(10, false);
    b.grant(1, false);
    reg.insert(a);
    reg.insert(b);
    let routing = RoutingState::default();
    let until = crate::model::add(chrono::Utc::now(), std::time::Duration::from_secs(60));
    routing.note_streaks(&[(
        crate::routing::state::key("app", "w-a", "h"),
        Some(crate::model::WorkerStreak {
            app: "app".into(),
            worker_id: "w-a".into(),
            handler: "h".into(),
            failures: 5,
            cooldown_until: Some(until),
            cooldown: Some(std::time::Duration::from_secs(60)),
        }),
    )]);
    assert_eq!(route_with(&reg, &ready(1, "h", Routing::LeastLoaded), 1, &routing, &[]).as_deref(), Some("b"));
    assert_eq!(route_with(&reg, &ready(2, "h", Routing::LeastLoaded), 1, &routing, &[]), None, "b is full");
    let d = reg.demand(chrono::Utc::now(), std::time::Duration::ZERO, &routing);
    assert!(d.is_empty(), "a cools down for its only handler and b has no credit left: {d:?}");

    // A retry of an attempt that failed on w-a goes elsewhere when it can.
    let reg = Registry::default();
    for id in ["a", "c"] {
        let s = session(id, &["h"], 10);
        s.grant(10, false);
        reg.insert(s);
    }
    let mut retry = ready(3, "h", Routing::LeastLoaded);
    retry.failed_on = Some("w-a".into());
    assert_eq!(route(&reg, &retry, 2).as_deref(), Some("c"));
    retry.retry_on = RetryOn::Same;
    assert_eq!(route(&reg, &retry, 2).as_deref(), Some("a"));
}

#[test]
fn shards_spread_over_the_streams_by_index() {
    let reg = Registry::default();
    for id in ["a", "b", "c"] {
        let s = session(id, &["h"], 10);
        s.grant(10, false);
        reg.insert(s);
    }
    let got: Vec<String> = (0..3)
        .map(|i| {
            let mut r = ready(i64::from(i), "h", Routing::LeastLoaded);
            r.shard = Some((i, 3));
            route(&reg, &r, 1).expect("routed")
        })
        .collect();
    assert_eq!(got, vec!["a", "b", "c"]);
}
