use std::{net::IpAddr, time::Duration};

use super::{
    AlertEvent, Target, backoff, check_url,
    outbox::step,
    refused_range,
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
fn urls_parse_into_host_port_and_path() {
    let u = Target::parse("https://hooks.example.com/ax?x=1#frag").expect("valid");
    assert_eq!((u.tls, u.host.as_str(), u.port, u.path.as_str()), (true, "hooks.example.com", 443, "/ax?x=1"));
    let u = Target::parse("http://[::1]:8080").expect("valid");
    assert_eq!((u.tls, u.host.as_str(), u.port, u.path.as_str()), (false, "::1", 8080, "/"));
    for bad in
        ["ftp://x/", "hooks.example.com", "http://", "http://u:p@x/", "http://x:0/", "http://x:99999/", "http://a b/"]
    {
        assert!(Target::parse(bad).is_err(), "{bad} must be refused");
    }
}

#[test]
fn private_loopback_link_local_unique_local_and_unspecified_ranges_are_refused() {
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "::1",
        "::",
        "fe80::1",
        "fd00::1",
        "::ffff:10.0.0.1",
        "100.64.0.1",
        // Ranges the filter missed before (issue 33): IPv4 embedded in IPv6, and reserved v4 ranges.
        "64:ff9b::7f00:1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b:1::a00:1",
        "::127.0.0.1",
        "::10.0.0.1",
        "2002:7f00:1::1",
        "2002:a9fe:a9fe::",
        "fec0::1",
        "192.0.0.8",
        "198.18.0.1",
        "198.19.255.255",
        "240.0.0.1",
    ] {
        let ip: IpAddr = ip.parse().expect("ip");
        assert!(refused_range(ip).is_some(), "{ip} must be refused");
    }
    for ip in [
        "93.184.216.34",
        "2606:2800:220:1:248:1893:25c8:1946",
        "172.32.0.1",
        "64:ff9b::5db8:d822",
        "2002:5db8:d822::1",
        "198.20.0.1",
    ] {
        let ip: IpAddr = ip.parse().expect("ip");
        assert_eq!(refused_range(ip), None, "{ip} is public");
    }
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

#[test]
fn redacted_urls_keep_scheme_host_and_port_only() {
    let cases = [
        ("https://hooks.example.com/services/T0/B0/xyz?token=1", "https://hooks.example.com/[redacted]"),
        ("http://10.0.0.1:8080/hook", "http://10.0.0.1:8080/[redacted]"),
        ("https://[::1]:9/?k=v", "https://[::1]:9/[redacted]"),
        ("https://hooks.example.com#frag", "https://hooks.example.com/[redacted]"),
        ("https://user:pw@hooks.example.com/", "https://hooks.example.com/"),
        ("https://hooks.example.com", "https://hooks.example.com"),
        ("not a url", "[redacted]"),
    ];
    for (url, shown) in cases {
        assert_eq!(super::redact_url(url), shown, "{url}");
    }
}
