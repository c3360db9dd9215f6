//! URL parts and refused ranges (moved with the code from axd's alerts).

use std::net::IpAddr;

use crate::{Target, redact_url, refused_range};

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
        assert_eq!(redact_url(url), shown, "{url}");
    }
}
