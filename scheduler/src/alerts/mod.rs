//! Failure alerts: rules, the events they watch, and the outbox rows they become.
//!
//! A rule names an app (and optionally one task of it), the events it watches and one webhook
//! (URL and secret). What happens to instances — a final failure, a timeout, a lost worker, a skip,
//! a misfire — is decided by the lifecycle and the trigger, which hand an [`AlertCause`] to
//! [`outbox::enqueue`] inside the transaction that writes the change: the delivery row commits with
//! the change or not at all. Conditions (no worker connected for T, PENDING backlog over N) are
//! evaluated periodically by [`outbox::evaluate_conditions`]; each episode has a number, and its
//! delivery a unique key, so it alerts once however many axd evaluate it. The delivery loop
//! (`loops::alerts`) sends due rows with [`http`], signed by [`sign`].

use std::{net::IpAddr, time::Duration};

pub mod deadlines;
pub mod http;
pub mod outbox;
pub mod sign;
#[cfg(test)]
mod tests;

pub use crate::model::alerts::{AlertCause, AlertEvent, AlertRule, Delivery, DeliveryStatus, NewDelivery};

/// The payload of a cause (see the README's "Alerts" section for every field).
pub fn payload(rule: &AlertRule, c: &AlertCause) -> String {
    serde_json::json!({
        "event": c.event.as_str(),
        "rule": rule.name,
        "app": c.app,
        "task": c.task_name,
        "instance_id": c.instance_id,
        "attempt": c.attempt,
        "at": c.at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "message": c.message,
    })
    .to_string()
}

/// The outbox row of `rule` for `cause`, due at once.
pub fn delivery_for(rule: &AlertRule, c: &AlertCause) -> NewDelivery {
    NewDelivery {
        rule_id: rule.id,
        rule_name: rule.name.clone(),
        app: c.app.clone(),
        task_name: (!c.task_name.is_empty()).then(|| c.task_name.clone()),
        event: c.event,
        dedupe_key: format!("r{}:{}:{}", rule.id, c.event.as_str(), c.occurrence),
        url: rule.url.clone(),
        payload: payload(rule, c),
        due_at: c.at,
    }
}

/// The shortest secret accepted (bytes).
pub const MIN_SECRET: usize = 16;
/// The longest secret accepted (bytes).
pub const MAX_SECRET: usize = 255;
/// The longest URL accepted (bytes).
pub const MAX_URL: usize = 2048;

/// A webhook URL's parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `https` or not.
    pub tls: bool,
    /// The host as written (without brackets for IPv6).
    pub host: String,
    /// The port (80 or 443 if not written).
    pub port: u16,
    /// Path and query, at least `/`.
    pub path: String,
}

impl Target {
    /// Parses an `http://` or `https://` URL; the reason if it is not one.
    pub fn parse(url: &str) -> Result<Target, String> {
        if url.len() > MAX_URL {
            return Err(format!("is {} bytes, more than {MAX_URL}", url.len()));
        }
        let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = url.strip_prefix("http://") {
            (false, r)
        } else {
            return Err("must start with http:// or https://".to_owned());
        };
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("must not contain spaces or control characters".to_owned());
        }
        let (authority, tail) = split_authority(rest);
        let path = tail.split('#').next().unwrap_or_default();
        let path = if path.is_empty() {
            "/".to_owned()
        } else if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_owned()
        };
        if authority.contains('@') {
            return Err("must not hold a user name or password".to_owned());
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or("has an unclosed '[' in its host")?;
            (h, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err("has no host".to_owned());
        }
        let port = match port {
            None => {
                if tls {
                    443
                } else {
                    80
                }
            }
            Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| format!("port {p:?} is not 1-65535"))?,
        };
        Ok(Target { tls, host: host.to_ascii_lowercase(), port, path })
    }

    /// The host as an IP address, if it is written as one.
    pub fn literal_ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }
}

/// Why an address is refused as a webhook target unless axd allows private targets
/// (`--alert-allow-private-targets`): loopback, private, link-local, unique-local, unspecified,
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
fn embedded_ipv4(v6: std::net::Ipv6Addr) -> Option<std::net::Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = v6.segments();
    let last32 = std::net::Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..6] == [0; 6] && !(s[6] == 0 && s[7] <= 1) {
        return Some(last32);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) {
        return Some(last32);
    }
    if s[0] == 0x2002 {
        return Some(std::net::Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    None
}

/// Checks a webhook URL at create time: its form, and its host if that is a literal IP address
/// (names are checked when they are resolved, at every send).
pub fn check_url(url: &str, allow_private: bool) -> Result<Target, String> {
    let t = Target::parse(url)?;
    if !allow_private
        && let Some(ip) = t.literal_ip()
        && let Some(range) = refused_range(ip)
    {
        return Err(format!("{ip} is a {range} address: refused unless axd runs with --alert-allow-private-targets"));
    }
    if !allow_private && t.host == "localhost" {
        return Err(
            "localhost is a loopback address: refused unless axd runs with --alert-allow-private-targets".to_owned()
        );
    }
    Ok(t)
}

/// What follows `scheme://`, cut into the authority and the rest (path, query, fragment).
fn split_authority(rest: &str) -> (&str, &str) {
    rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()))
}

/// A webhook URL as shown to callers who may not manage alert rules, and in the audit: scheme,
/// host and port only, since the path and query often hold the receiver's token.
/// `https://hooks.example.com/services/T0/B0/xyz?k=1` → `https://hooks.example.com/[redacted]`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return "[redacted]".to_owned() };
    let (authority, tail) = split_authority(rest);
    // A stored URL has no user information (refused on create); one is never shown all the same.
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    if tail.is_empty() || tail == "/" {
        format!("{scheme}://{authority}{tail}")
    } else {
        format!("{scheme}://{authority}/[redacted]")
    }
}

/// The wait after the `attempts`-th failed attempt: `base`, doubling with each failure, at most 10 min.
pub fn backoff(base: Duration, attempts: u32) -> Duration {
    let factor = 1u32.checked_shl(attempts.saturating_sub(1).min(20)).unwrap_or(u32::MAX);
    base.saturating_mul(factor).min(Duration::from_secs(600))
}
