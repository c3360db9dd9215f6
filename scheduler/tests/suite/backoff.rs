//! Retry backoff: the default exponential policy (10 s doubling up to 5 min, ±10 % jitter), custom
//! exponential policies, and a retry policy without a backoff getting that default.

use std::time::Duration;

use ax_proto::v1 as pb;
use ax_scheduler::{grpc::convert::task_from_pb, model::Backoff};
use chrono::Utc;

/// The random draw at which jitter adds nothing (`unit_random` is in [0, 1)).
const NO_SPREAD: f64 = 0.5;
/// The largest draw below 1.
const TOP: f64 = 1.0 - f64::EPSILON;

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

#[test]
fn the_default_backoff_doubles_from_ten_seconds() {
    let b = Backoff::default();
    let delays: Vec<f64> = (1..=5).map(|n| secs(b.delay(n, NO_SPREAD))).collect();
    assert_eq!(delays, vec![10.0, 20.0, 40.0, 80.0, 160.0]);
    assert_eq!(b.delay(0, NO_SPREAD), Duration::from_secs(10), "retry 0 is read as the first");
}

#[test]
fn the_default_backoff_stops_growing_at_five_minutes() {
    let b = Backoff::default();
    for n in [6, 7, 10, 100, 5000, u32::MAX] {
        assert_eq!(b.delay(n, NO_SPREAD), Duration::from_secs(300), "retry {n}");
    }
}

#[test]
fn jitter_spreads_each_delay_by_up_to_ten_percent_either_way() {
    let b = Backoff::default();
    // The ends of the spread, before and at the cap.
    assert_eq!(b.delay(1, 0.0), Duration::from_secs(9));
    assert!((secs(b.delay(1, TOP)) - 11.0).abs() < 1e-3, "{:?}", b.delay(1, TOP));
    assert_eq!(b.delay(3, 0.0), Duration::from_secs(36));
    assert_eq!(b.delay(9, 0.0), Duration::from_secs(270), "jitter applies to the capped delay");
    assert!((secs(b.delay(9, TOP)) - 330.0).abs() < 1e-3, "{:?}", b.delay(9, TOP));
    // Across the draws: always within the band, and spread over it, not a fixed value.
    for n in [1, 4, 9] {
        let base = secs(b.delay(n, NO_SPREAD));
        let delays: Vec<f64> = (0..1000).map(|i| secs(b.delay(n, f64::from(i) / 1000.0))).collect();
        assert!(delays.iter().all(|d| (base * 0.9 - 1e-6..=base * 1.1 + 1e-6).contains(d)), "retry {n}: {delays:?}");
        let (lo, hi) = delays.iter().fold((f64::MAX, f64::MIN), |(lo, hi), d| (lo.min(*d), hi.max(*d)));
        assert!(hi - lo > base * 0.19, "retry {n}: spread {lo}..{hi} around {base}");
        assert!(delays.windows(2).all(|w| w[0] < w[1]), "a larger draw waits longer");
    }
}

#[test]
fn an_exponential_backoff_grows_by_its_multiplier_up_to_its_cap() {
    let b = Backoff::Exponential { initial_us: 1_000_000, multiplier: 3.0, max_us: 20_000_000, jitter: 0.0 };
    let delays: Vec<f64> = (1..=6).map(|n| secs(b.delay(n, 0.0))).collect();
    assert_eq!(delays, vec![1.0, 3.0, 9.0, 20.0, 20.0, 20.0]);
    assert_eq!(b.delay(2, TOP), Duration::from_secs(3), "no jitter: every draw waits the same");
    let half = Backoff::Exponential { initial_us: 4_000_000, multiplier: 1.0, max_us: 4_000_000, jitter: 0.5 };
    assert_eq!(half.delay(7, 0.0), Duration::from_secs(2));
    assert_eq!(half.delay(7, 0.75), Duration::from_secs(5));
}

#[test]
fn a_retry_policy_without_a_backoff_gets_the_default_exponential_one() {
    let spec = pb::TaskSpec {
        name: "t".into(),
        app: "app".into(),
        handler: "h".into(),
        schedule: Some(pb::Schedule { kind: Some(pb::schedule::Kind::Manual(pb::ManualSchedule {})) }),
        retry_policy: Some(pb::RetryPolicy { max_retries: 3, backoff: None }),
        ..Default::default()
    };
    let (_, config) = task_from_pb(&spec, Utc::now()).expect("valid spec");
    assert_eq!(config.retry.max_retries, 3);
    assert_eq!(
        config.retry.backoff,
        Backoff::Exponential { initial_us: 10_000_000, multiplier: 2.0, max_us: 300_000_000, jitter: 0.1 }
    );
    // An exponential backoff with only its initial delay set keeps the other defaults, except the
    // jitter, which is off unless asked for.
    let mut spec = spec;
    spec.retry_policy = Some(pb::RetryPolicy {
        max_retries: 1,
        backoff: Some(pb::Backoff {
            kind: Some(pb::backoff::Kind::Exponential(pb::ExponentialBackoff {
                initial: Some(prost_types::Duration { seconds: 2, nanos: 0 }),
                ..Default::default()
            })),
        }),
    });
    let (_, config) = task_from_pb(&spec, Utc::now()).expect("valid spec");
    assert_eq!(
        config.retry.backoff,
        Backoff::Exponential { initial_us: 2_000_000, multiplier: 2.0, max_us: 300_000_000, jitter: 0.0 }
    );
}
