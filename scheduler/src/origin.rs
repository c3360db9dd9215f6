//! Which `Host` a plaintext loopback port answers: a defense against DNS rebinding. A page on
//! `http://rebind.example:PORT` whose name an attacker points at 127.0.0.1 is same-origin with
//! itself, so `Origin` and `Host` agree and say nothing; only the name tells it apart. A loopback
//! port therefore answers only the names that are this machine's own: `localhost`, `127.0.0.1`,
//! `[::1]` and the address it is bound to, with its port.

use std::net::{IpAddr, SocketAddr};

/// Whether `authority` (a `Host` header, an HTTP/2 `:authority`, or the host of an `Origin`) names
/// the port bound at `bound`. Without a port it names port 80.
pub fn is_own_host(authority: &str, bound: SocketAddr) -> bool {
    let authority = authority.trim();
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else { return false };
        let port = match after.strip_prefix(':') {
            Some(p) => p,
            None if after.is_empty() => "80",
            None => return false,
        };
        (v6, port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, p),
            None => (authority, "80"),
        }
    };
    if port.parse::<u16>().ok() != Some(bound.port()) {
        return false;
    }
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(ip) => {
            ip == IpAddr::from([127, 0, 0, 1]) || ip == IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]) || ip == bound.ip()
        }
        Err(_) => false,
    }
}

/// The answer's words when [`is_own_host`] refuses.
pub fn refusal(bound: SocketAddr) -> String {
    format!(
        "this port answers requests for localhost, 127.0.0.1, [::1] or {bound} only (port {}): other host \
         names are refused (DNS rebinding)\n",
        bound.port()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_machine_s_own_names_with_the_bound_port_pass() {
        let bound: SocketAddr = "127.0.0.1:7080".parse().expect("addr");
        for ok in ["localhost:7080", "LOCALHOST:7080", "127.0.0.1:7080", "[::1]:7080"] {
            assert!(is_own_host(ok, bound), "{ok}");
        }
        for no in [
            "rebind.evil:7080",
            "localhost.evil:7080",
            "127.0.0.1:7081",
            "127.0.0.1",
            "10.0.0.1:7080",
            "[::1]",
            "[::1:7080",
            "",
            "localhost:x",
        ] {
            assert!(!is_own_host(no, bound), "{no}");
        }
        let v6: SocketAddr = "[::1]:80".parse().expect("addr");
        assert!(is_own_host("[::1]", v6) && is_own_host("localhost", v6));
        let other: SocketAddr = "127.0.0.2:9100".parse().expect("addr");
        assert!(is_own_host("127.0.0.2:9100", other), "the bound address itself");
    }
}
