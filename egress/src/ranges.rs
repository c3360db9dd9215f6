//! The address ranges a request from ax must not reach unless its operator allows them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused as a destination unless the operator allows it (axd:
/// `--alert-allow-private-targets`; ax-runner: `http.allow` in its configuration): loopback, private, link-local, unique-local, unspecified,
/// shared (100.64/10), IETF protocol assignments (192.0.0/24), benchmarking (198.18/15), reserved
/// (240/4), multicast and broadcast ranges, site-local (fec0::/10); and an IPv4 address embedded
/// in IPv6 — mapped (`::ffff:0:0/96`), compatible (`::/96`), NAT64 (`64:ff9b::/96`,
/// `64:ff9b:1::/48`) or 6to4 (`2002::/16`) — is checked as the IPv4 address it reaches. `None` for a
/// public address.
pub fn refused_range(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private() {
                Some("private")
            } else if v4.is_link_local() {
                Some("link-local")
            } else if v4.is_unspecified() || o[0] == 0 {
                Some("unspecified")
            } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
                Some("shared (carrier-grade NAT)")
            } else if o[0] == 192 && o[1] == 0 && o[2] == 0 {
                Some("IETF protocol assignment")
            } else if o[0] == 198 && (o[1] & 0xfe) == 18 {
                Some("benchmarking")
            } else if v4.is_multicast() || v4.is_broadcast() {
                Some("multicast or broadcast")
            } else if o[0] >= 240 {
                Some("reserved")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_ipv4(v6) {
                return refused_range(IpAddr::V4(v4));
            }
            let s = v6.segments();
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if (s[0] & 0xffc0) == 0xfe80 {
                Some("link-local")
            } else if (s[0] & 0xfe00) == 0xfc00 {
                Some("unique-local")
            } else if (s[0] & 0xffc0) == 0xfec0 {
                Some("site-local")
            } else if v6.is_multicast() {
                Some("multicast or broadcast")
            } else {
                None
            }
        }
    }
}

/// The IPv4 address an IPv6 address reaches, if it embeds one: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`, not `::` or `::1`), NAT64 (`64:ff9b::a.b.c.d`, and the local-use
/// `64:ff9b:1::/48` with the address in its last 32 bits) or 6to4 (`2002:AABB:CCDD::/48`).
fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = v6.segments();
    let last32 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..6] == [0; 6] && !(s[6] == 0 && s[7] <= 1) {
        return Some(last32);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) {
        return Some(last32);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    None
}
