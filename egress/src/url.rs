//! An `http://` or `https://` URL cut into the parts a sender needs, and its redacted form.

use std::net::IpAddr;

/// The longest URL accepted (bytes).
pub const MAX_URL: usize = 2048;

/// A URL's parts (an alert webhook's, an http task's).
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
