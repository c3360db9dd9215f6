//! Who is calling: the identity in the client certificate, and what it may do.
//!
//! With mTLS every caller presents a certificate signed by the configured CA, carrying exactly one
//! URI SAN: `spiffe://ax/worker/<app>` (may connect as a worker of that app),
//! `spiffe://ax/admin/<name>` (every AdminService call) or `spiffe://ax/viewer/<name>` (read-only
//! AdminService calls). Anything else gets nothing (deny by default). Without TLS (loopback only)
//! every caller is [`Identity::Anonymous`] and may do everything.

use tonic::Request;
use x509_parser::prelude::{FromDer, GeneralName, ParsedExtension, X509Certificate};

use crate::error::{Error, Result};

/// A caller's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// No TLS: loopback quick start.
    Anonymous,
    /// `spiffe://ax/worker/<app>`.
    Worker(String),
    /// `spiffe://ax/admin/<name>`.
    Admin(String),
    /// `spiffe://ax/viewer/<name>`.
    Viewer(String),
}

impl Identity {
    /// How the identity is written in event trails.
    pub fn actor(&self) -> String {
        match self {
            Identity::Anonymous => "anonymous".to_owned(),
            Identity::Worker(app) => format!("spiffe://ax/worker/{app}"),
            Identity::Admin(n) => format!("spiffe://ax/admin/{n}"),
            Identity::Viewer(n) => format!("spiffe://ax/viewer/{n}"),
        }
    }
}

/// What an AdminService call needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only.
    Read,
    /// Changes something.
    Write,
}

/// Whether axd runs with mTLS (identities come from certificates) or plaintext on loopback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// mTLS: the certificate decides.
    Mtls,
    /// Plaintext on loopback: everyone is anonymous and trusted.
    Open,
}

/// Parses a SPIFFE id of ax.
pub fn parse_spiffe(uri: &str) -> Option<Identity> {
    let rest = uri.strip_prefix("spiffe://ax/")?;
    let (role, name) = rest.split_once('/')?;
    if name.is_empty() || name.contains('/') {
        return None;
    }
    match role {
        "worker" => Some(Identity::Worker(name.to_owned())),
        "admin" => Some(Identity::Admin(name.to_owned())),
        "viewer" => Some(Identity::Viewer(name.to_owned())),
        _ => None,
    }
}

/// The URI SANs of a DER certificate.
pub fn uri_sans(der: &[u8]) -> Result<Vec<String>> {
    let (_, cert) = X509Certificate::from_der(der)
        .map_err(|e| Error::Unauthenticated(format!("client certificate cannot be parsed: {e}")))?;
    let mut out = Vec::new();
    for ext in cert.extensions() {
        if let ParsedExtension::SubjectAlternativeName(san) = ext.parsed_extension() {
            for name in &san.general_names {
                if let GeneralName::URI(u) = name {
                    out.push((*u).to_owned());
                }
            }
        }
    }
    Ok(out)
}

/// The identity of a request's peer.
pub fn identity<T>(mode: AuthMode, req: &Request<T>) -> Result<Identity> {
    match mode {
        AuthMode::Open => Ok(Identity::Anonymous),
        AuthMode::Mtls => {
            let certs = req
                .peer_certs()
                .ok_or_else(|| Error::Unauthenticated("a client certificate is required".to_owned()))?;
            let leaf =
                certs.first().ok_or_else(|| Error::Unauthenticated("a client certificate is required".to_owned()))?;
            let uris = uri_sans(leaf.as_ref())?;
            match uris.as_slice() {
                [one] => parse_spiffe(one).ok_or_else(|| {
                    Error::PermissionDenied(format!("certificate identity {one:?} is not an ax identity"))
                }),
                [] => Err(Error::PermissionDenied("certificate has no URI SAN identity".to_owned())),
                many => Err(Error::PermissionDenied(format!(
                    "certificate has {} URI SANs; exactly one is allowed",
                    many.len()
                ))),
            }
        }
    }
}

/// Checks that `id` may make an AdminService call needing `access`.
pub fn authorize_admin(id: &Identity, access: Access) -> Result<()> {
    match (id, access) {
        (Identity::Anonymous | Identity::Admin(_), _) | (Identity::Viewer(_), Access::Read) => Ok(()),
        (Identity::Viewer(_), Access::Write) => {
            Err(Error::PermissionDenied(format!("{} may only read; this call changes state", id.actor())))
        }
        (Identity::Worker(_), _) => Err(Error::PermissionDenied(format!("{} may not use the admin API", id.actor()))),
    }
}

/// Checks that `id` may connect as a worker of `app`.
pub fn authorize_worker(id: &Identity, app: &str) -> Result<()> {
    match id {
        Identity::Anonymous => Ok(()),
        Identity::Worker(a) if a == app => Ok(()),
        Identity::Worker(a) => {
            Err(Error::PermissionDenied(format!("certificate is for app {a:?} but hello.app is {app:?}")))
        }
        other => Err(Error::PermissionDenied(format!("{} may not connect as a worker", other.actor()))),
    }
}

/// An interceptor for services every known identity may use (health, reflection).
pub fn any_identity(mode: AuthMode) -> impl Fn(Request<()>) -> std::result::Result<Request<()>, tonic::Status> + Clone {
    move |req: Request<()>| {
        identity(mode, &req)?;
        Ok(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spiffe_ids_map_to_roles_and_anything_else_is_refused() {
        assert_eq!(parse_spiffe("spiffe://ax/worker/billing"), Some(Identity::Worker("billing".into())));
        assert_eq!(parse_spiffe("spiffe://ax/admin/alice"), Some(Identity::Admin("alice".into())));
        assert_eq!(parse_spiffe("spiffe://ax/viewer/bob"), Some(Identity::Viewer("bob".into())));
        assert_eq!(parse_spiffe("spiffe://ax/root/x"), None);
        assert_eq!(parse_spiffe("spiffe://other/admin/x"), None);
        assert_eq!(parse_spiffe("spiffe://ax/admin/"), None);
        assert_eq!(parse_spiffe("spiffe://ax/admin/a/b"), None);
    }

    #[test]
    fn viewers_read_admins_write_workers_neither() {
        assert!(authorize_admin(&Identity::Viewer("v".into()), Access::Read).is_ok());
        assert!(authorize_admin(&Identity::Viewer("v".into()), Access::Write).is_err());
        assert!(authorize_admin(&Identity::Admin("a".into()), Access::Write).is_ok());
        assert!(authorize_admin(&Identity::Worker("w".into()), Access::Read).is_err());
        assert!(authorize_worker(&Identity::Worker("a".into()), "a").is_ok());
        let e = authorize_worker(&Identity::Worker("a".into()), "b").expect_err("other app");
        assert!(e.to_string().contains("hello.app"));
        assert!(authorize_worker(&Identity::Admin("x".into()), "a").is_err());
    }
}
