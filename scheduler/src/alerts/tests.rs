use std::time::Duration;

use super::{
    AlertEvent, backoff, check_url,
    outbox::step,
    sign::{signature, verify},
};
use crate::{model::Ts, store::ConditionState};

fn t(secs: i64) -> Ts {
    chrono::DateTime::from_timestamp(1_800_000_000 + secs, 0).expect("valid")
}

#[test]
fn event_names_round_trip_and_unknown_names_do_not_parse() {
    for e in AlertEvent::WATCHABLE {
        assert_eq!(AlertEvent::parse(e.as_str()), Some(e));
    }
    assert_eq!(AlertEvent::parse("final-failure"), None);
    assert_eq!(AlertEvent::parse("FINAL_FAILURE"), None);
}

#[test]
fn a_literal_refused_address_is_refused_at_create_unless_allowed() {
    let err = check_url("http://127.0.0.1:9000/hook", false).unwrap_err();
    assert!(err.contains("loopback") && err.contains("--alert-allow-private-targets"), "{err}");
    assert!(check_url("http://localhost:9000/hook", false).is_err());
    assert!(check_url("http://[fd12::1]/hook", false).unwrap_err().contains("unique-local"));
    assert!(check_url("http://127.0.0.1:9000/hook", true).is_ok());
    // A name is checked when it is resolved, at send time.
    assert!(check_url("https://hooks.example.com/", false).is_ok());
}

#[test]
fn signatures_verify_and_any_change_breaks_them() {
    let secret = b"0123456789abcdef";
    let body = br#"{"event":"test"}"#;
    let sig = signature(secret, 1_800_000_000, body);
    assert!(sig.starts_with("v1=") && sig.len() == 67, "{sig}");
    assert!(verify(secret, 1_800_000_000, body, &sig));
    assert!(!verify(secret, 1_800_000_001, body, &sig), "another timestamp");
    assert!(!verify(secret, 1_800_000_000, br#"{"event":"tesT"}"#, &sig), "another body");
    assert!(!verify(b"0123456789abcdeF", 1_800_000_000, body, &sig), "another secret");
}

#[test]
fn the_signature_is_hmac_sha256_of_timestamp_dot_body() {
    // HMAC-SHA256(key "key", message "1.x"), computed independently with Python's hmac module.
    assert_eq!(signature(b"key", 1, b"x"), "v1=fc4913c41a7bf793267e2a384f3261c9436ec2cd097bd745e7b0d99113f510ec");
}

#[test]
fn backoff_doubles_from_the_base_and_is_capped() {
    let base = Duration::from_secs(1);
    assert_eq!(backoff(base, 1), Duration::from_secs(1));
    assert_eq!(backoff(base, 2), Duration::from_secs(2));
    assert_eq!(backoff(base, 4), Duration::from_secs(8));
    assert_eq!(backoff(base, 40), Duration::from_secs(600));
}

#[test]
fn a_condition_alerts_once_per_episode_after_holding_long_enough() {
    let hold = Duration::from_secs(30);
    let s0 = ConditionState { since: None, firing: false, episode: 0 };
    let (s1, alert) = step(s0, true, hold, t(0));
    assert!(!alert, "not held for 30 s yet");
    assert_eq!(s1.since, Some(t(0)));
    let (s2, alert) = step(s1, true, hold, t(29));
    assert!(!alert);
    let (s3, alert) = step(s2, true, hold, t(30));
    assert!(alert, "held for 30 s: episode 1 alerts");
    assert_eq!((s3.firing, s3.episode), (true, 1));
    let (s4, alert) = step(s3, true, hold, t(90));
    assert!(!alert, "the same episode alerts once");
    let (s5, alert) = step(s4, false, hold, t(91));
    assert!(!alert);
    assert_eq!((s5.since, s5.firing, s5.episode), (None, false, 1), "the episode ended");
    let (s6, _) = step(s5, true, Duration::ZERO, t(92));
    assert_eq!((s6.firing, s6.episode), (true, 2), "a new episode has a new number");
}
