//! Who is calling: the identity in the client certificate, and what it may do.
//!
//! With mTLS every caller presents a certificate signed by the configured CA, carrying exactly one
//! URI SAN `spiffe://<trust domain>/<role>/<name>` (the trust domain is `--trust-domain`, default
//! `ax`):
//!
//! | role | may |
//! | --- | --- |
//! | `worker/<app>` | connect as a worker of that app, nothing on AdminService |
//! | `viewer/<name>` | read (tasks, instances with params, outputs and logs, workers, audit) |
//! | `operator/<name>` | read, and trigger, cancel, retry, enable, disable |
//! | `admin/<name>` | everything: also create, update and delete tasks |
//!
//! Viewers, operators and admins act only on the apps of their scope (`--scope NAME=APP,APP` or
//! `NAME=*`); a name without a scope has none (deny by default). Anything else gets nothing.
//! Without TLS (loopback only) every caller is [`Identity::anonymous`] and may do everything.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use tonic::Request;

use crate::error::{Error, Result};

/// Longest name segment of an identity.
pub const MAX_IDENTITY_NAME: usize = 64;
/// Longest trust domain (SPIFFE allows 255 bytes).
pub const MAX_TRUST_DOMAIN: usize = 255;

/// What a certificate lets its holder be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// `worker/<app>`: the WorkerService of one app.
    Worker,
    /// `viewer/<name>`: reads.
    Viewer,
    /// `operator/<name>`: reads and runs (trigger, cancel, retry, enable, disable).
    Operator,
    /// `admin/<name>`: also creates, updates and deletes tasks.
    Admin,
    /// No TLS: loopback quick start, everything on every app.
    Anonymous,
}

impl Role {
    /// The path segment of the role in a SPIFFE id.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Worker => "worker",
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
            Role::Anonymous => "anonymous",
        }
    }
}

/// A caller's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The role.
    pub role: Role,
    /// The name (for a worker: its app); empty when anonymous.
    pub name: String,
    /// The SPIFFE id as presented, or `anonymous`.
    uri: String,
}

impl Identity {
    /// The caller of plaintext loopback mode.
    pub fn anonymous() -> Identity {
        Identity { role: Role::Anonymous, name: String::new(), uri: "anonymous".to_owned() }
    }

    /// How the identity is written in event trails, logs and the audit table: its SPIFFE id.
    pub fn actor(&self) -> String {
        self.uri.clone()
    }
}

/// What an AdminService call needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Reads only (viewer, operator, admin).
    Read,
    /// Runs what exists: trigger, cancel, retry, enable, disable, test an alert rule (operator,
    /// admin).
    Operate,
    /// Creates, updates or deletes tasks and alert rules (admin).
    Manage,
}

impl Access {
    fn least_role(self) -> Role {
        match self {
            Access::Read => Role::Viewer,
            Access::Operate => Role::Operator,
            Access::Manage => Role::Admin,
        }
    }
}

/// The apps one identity name may act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppScope {
    /// `*`: every app, and cluster-wide views.
    All,
    /// Only these apps.
    Apps(BTreeSet<String>),
}

impl AppScope {
    /// Whether `app` is in the scope.
    pub fn contains(&self, app: &str) -> bool {
        match self {
            AppScope::All => true,
            AppScope::Apps(a) => a.contains(app),
        }
    }
}

/// Trust domain and scopes: what identities mean under mTLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The SPIFFE trust domain of every accepted identity.
    pub trust_domain: String,
    /// App scope per identity name (viewer, operator and admin certificates alike).
    pub scopes: BTreeMap<String, AppScope>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy { trust_domain: "ax".to_owned(), scopes: BTreeMap::new() }
    }
}

/// Checks a trust domain: 1-255 of `[a-z0-9._-]` (SPIFFE), not starting or ending with `.`.
pub fn check_trust_domain(td: &str) -> std::result::Result<(), String> {
    if td.is_empty() || td.len() > MAX_TRUST_DOMAIN {
        return Err(format!("must be 1-{MAX_TRUST_DOMAIN} characters"));
    }
    if let Some(c) = td.chars().find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(*c))) {
        return Err(format!("contains {c:?}; allowed: lower-case letters, digits, . _ -"));
    }
    if td.starts_with('.') || td.ends_with('.') || td.contains("..") {
        return Err("has an empty label".to_owned());
    }
    Ok(())
}

/// Parses one `--scope` entry: `NAME=APP[,APP…]` or `NAME=*`.
pub fn parse_scope(entry: &str) -> std::result::Result<(String, AppScope), String> {
    let (name, apps) = entry.split_once('=').ok_or_else(|| format!("{entry:?} is not NAME=APP[,APP...] or NAME=*"))?;
    let name = name.trim();
    if !name_ok(name) {
        return Err(format!("{name:?} is not an identity name (1-{MAX_IDENTITY_NAME} of letters, digits, . _ -)"));
    }
    let apps = apps.trim();
    if apps == "*" {
        return Ok((name.to_owned(), AppScope::All));
    }
    let mut set = BTreeSet::new();
    for app in apps.split(',').map(str::trim) {
        crate::validate::app("scope", app).map_err(|e| format!("{name}: app {e}"))?;
        set.insert(app.to_owned());
    }
    Ok((name.to_owned(), AppScope::Apps(set)))
}

/// A SPIFFE path segment of ax: 1-64 of `[A-Za-z0-9._-]`, not `.` or `..`.
fn name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_IDENTITY_NAME
        && s != "."
        && s != ".."
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// Parses a SPIFFE id of ax in `trust_domain`: exactly `spiffe://<td>/<role>/<name>`, lower-case
/// scheme and trust domain, ASCII only, no query, fragment, port, user info, percent-encoding or
/// empty segment. A worker's name must be a valid app name.
pub fn parse_spiffe(trust_domain: &str, uri: &str) -> Option<Identity> {
    let rest = uri.strip_prefix("spiffe://")?.strip_prefix(trust_domain)?.strip_prefix('/')?;
    let mut segments = rest.split('/');
    let (role, name) = (segments.next()?, segments.next()?);
    if segments.next().is_some() || !name_ok(name) {
        return None;
    }
    let role = match role {
        "worker" if crate::validate::app("app", name).is_ok() => Role::Worker,
        "admin" => Role::Admin,
        "operator" => Role::Operator,
        "viewer" => Role::Viewer,
        _ => return None,
    };
    Some(Identity { role, name: name.to_owned(), uri: uri.to_owned() })
}

/// The URI SANs of a DER certificate, read with rustls' own certificate parser (rustls-webpki,
/// which the handshake already used on it) rather than a second X.509 library.
pub fn uri_sans(der: &[u8]) -> Result<Vec<String>> {
    let der = rustls::pki_types::CertificateDer::from(der);
    let cert = webpki::EndEntityCert::try_from(&der)
        .map_err(|e| Error::Unauthenticated(format!("client certificate cannot be parsed: {e}")))?;
    Ok(cert.valid_uri_names().map(str::to_owned).collect())
}

/// Whether axd runs with mTLS (identities come from certificates) or plaintext on loopback.
#[derive(Debug, Clone)]
pub enum AuthMode {
    /// mTLS: the certificate decides, under this policy.
    Mtls(Arc<Policy>),
    /// Plaintext on loopback: everyone is anonymous and trusted.
    Open,
}

/// Quotes at most 100 bytes of a value from the wire.
fn quote(s: &str) -> String {
    let mut end = s.len().min(100);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    if end < s.len() { format!("{:?}…", &s[..end]) } else { format!("{s:?}") }
}

/// The identity of a request's peer.
pub fn identity<T>(mode: &AuthMode, req: &Request<T>) -> Result<Identity> {
    match mode {
        AuthMode::Open => Ok(Identity::anonymous()),
        AuthMode::Mtls(policy) => {
            let certs = req
                .peer_certs()
                .ok_or_else(|| Error::Unauthenticated("a client certificate is required".to_owned()))?;
            let leaf =
                certs.first().ok_or_else(|| Error::Unauthenticated("a client certificate is required".to_owned()))?;
            let uris = uri_sans(leaf.as_ref())?;
            match uris.as_slice() {
                [one] => parse_spiffe(&policy.trust_domain, one).ok_or_else(|| {
                    Error::PermissionDenied(format!(
                        "certificate identity {} is not an ax identity (spiffe://{}/{{worker,viewer,operator,admin}}/NAME)",
                        quote(one),
                        policy.trust_domain
                    ))
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

/// What a caller may see and do on AdminService after [`authorize_admin`].
#[derive(Debug, Clone)]
pub struct Grant {
    /// Who.
    pub identity: Identity,
    /// On which apps.
    pub scope: AppScope,
}

impl Grant {
    /// Checks that `app` is in the caller's scope.
    pub fn app(&self, app: &str) -> Result<()> {
        if self.scope.contains(app) {
            Ok(())
        } else {
            Err(Error::PermissionDenied(format!("{} has no scope on app {app:?}", self.identity.actor())))
        }
    }

    /// Checks that the scope covers every app (cluster-wide views).
    pub fn all_apps(&self, what: &str) -> Result<()> {
        match self.scope {
            AppScope::All => Ok(()),
            AppScope::Apps(_) => Err(Error::PermissionDenied(format!(
                "{} covers every app and needs scope \"*\"; {} has a scope of some apps only",
                what,
                self.identity.actor()
            ))),
        }
    }

    /// The apps a list is restricted to: `None` for every app.
    pub fn apps(&self) -> Option<Vec<String>> {
        match &self.scope {
            AppScope::All => None,
            AppScope::Apps(a) => Some(a.iter().cloned().collect()),
        }
    }
}

/// Checks that `id` may make an AdminService call needing `access`, and returns its app scope.
pub fn authorize_admin(mode: &AuthMode, id: &Identity, access: Access) -> Result<Grant> {
    let policy = match mode {
        AuthMode::Open => return Ok(Grant { identity: id.clone(), scope: AppScope::All }),
        AuthMode::Mtls(p) => p,
    };
    match id.role {
        Role::Anonymous => Ok(Grant { identity: id.clone(), scope: AppScope::All }),
        Role::Worker => Err(Error::PermissionDenied(format!("{} may not use the admin API", id.actor()))),
        role if role < access.least_role() => Err(Error::PermissionDenied(format!(
            "{} has role {}; this call needs role {} or higher",
            id.actor(),
            role.as_str(),
            access.least_role().as_str()
        ))),
        _ => Ok(Grant {
            identity: id.clone(),
            scope: policy.scopes.get(&id.name).cloned().unwrap_or_else(|| AppScope::Apps(BTreeSet::new())),
        }),
    }
}

/// Checks that `id` may connect as a worker of `app`.
pub fn authorize_worker(id: &Identity, app: &str) -> Result<()> {
    match id.role {
        Role::Anonymous => Ok(()),
        Role::Worker if id.name == app => Ok(()),
        Role::Worker => Err(Error::PermissionDenied(format!(
            "certificate is for app {:?} but hello.app is {}",
            id.name,
            quote(app)
        ))),
        _ => Err(Error::PermissionDenied(format!("{} may not connect as a worker", id.actor()))),
    }
}

/// An interceptor for services every known identity may use (health, reflection).
pub fn any_identity(mode: AuthMode) -> impl Fn(Request<()>) -> std::result::Result<Request<()>, tonic::Status> + Clone {
    move |req: Request<()>| {
        identity(&mode, &req)?;
        Ok(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(uri: &str) -> Option<(Role, String)> {
        parse_spiffe("ax", uri).map(|i| (i.role, i.name))
    }

    #[test]
    fn spiffe_ids_map_to_roles_and_anything_else_is_refused() {
        assert_eq!(role("spiffe://ax/worker/billing"), Some((Role::Worker, "billing".into())));
        assert_eq!(role("spiffe://ax/admin/alice"), Some((Role::Admin, "alice".into())));
        assert_eq!(role("spiffe://ax/operator/olga"), Some((Role::Operator, "olga".into())));
        assert_eq!(role("spiffe://ax/viewer/bob"), Some((Role::Viewer, "bob".into())));
        assert_eq!(role("spiffe://ax/root/x"), None);
        assert_eq!(role("spiffe://other/admin/x"), None);
        assert_eq!(role("spiffe://ax/admin/"), None);
        assert_eq!(role("spiffe://ax/admin/a/b"), None);
    }

    #[test]
    fn malformed_spiffe_ids_are_refused() {
        for uri in [
            "spiffe://ax/admin/x?y=1#z",
            "spiffe://ax/admin/x?y=1",
            "spiffe://ax/admin/x#z",
            "spiffe://ax/admin/x?",
            "spiffe://ax/admin/x#",
            "spiffe://ax/admin?x/y",
            "spiffe://ax//admin/x",
            "spiffe://ax/admin//x",
            "spiffe://ax/admin/x/",
            "spiffe://ax/admin/.",
            "spiffe://ax/admin/..",
            "spiffe://ax/admin/%61lice",
            "spiffe://ax/%61dmin/alice",
            "spiffe://ax/admin/al%2Fice",
            "spiffe://ax/admin/al ice",
            "spiffe://ax/admin/álice",
            "spiffe://ax/admin/alice\u{0}",
            "spiffe://ax/admin/alice\n",
            "spiffe://ax:443/admin/alice",
            "spiffe://user@ax/admin/alice",
            "spiffe://AX/admin/alice",
            "SPIFFE://ax/admin/alice",
            "spiffe://ax/Admin/alice",
            "spiffe://axe/admin/alice",
            "spiffe://ax.evil/admin/alice",
            "spiffe://ax/worker/Billing",
            "spiffe:ax/admin/alice",
            "https://ax/admin/alice",
            "",
        ] {
            assert_eq!(parse_spiffe("ax", uri), None, "{uri:?} must be refused");
        }
        let long = format!("spiffe://ax/admin/{}", "a".repeat(MAX_IDENTITY_NAME + 1));
        assert_eq!(parse_spiffe("ax", &long), None);
    }

    #[test]
    fn the_trust_domain_is_the_configured_one() {
        assert!(parse_spiffe("corp.example", "spiffe://corp.example/admin/alice").is_some());
        assert!(parse_spiffe("corp.example", "spiffe://ax/admin/alice").is_none());
        assert!(check_trust_domain("corp.example").is_ok());
        assert!(check_trust_domain("Corp").is_err());
        assert!(check_trust_domain("a/b").is_err());
        assert!(check_trust_domain("").is_err());
        assert!(check_trust_domain("a..b").is_err());
    }

    #[test]
    fn scopes_parse_and_refuse_nonsense() {
        assert_eq!(parse_scope("alice=*"), Ok(("alice".into(), AppScope::All)));
        let (n, s) = parse_scope("bob=billing,demo").expect("apps");
        assert_eq!(n, "bob");
        assert!(s.contains("billing") && s.contains("demo") && !s.contains("reports"));
        assert!(parse_scope("bob").is_err());
        assert!(parse_scope("=billing").is_err());
        assert!(parse_scope("bob=").is_err());
        assert!(parse_scope("bob=Billing").is_err());
        assert!(parse_scope("b/ob=billing").is_err());
    }

    fn mtls(scopes: &[&str]) -> AuthMode {
        AuthMode::Mtls(Arc::new(Policy {
            trust_domain: "ax".into(),
            scopes: scopes.iter().map(|s| parse_scope(s).expect("scope")).collect(),
        }))
    }

    fn id(uri: &str) -> Identity {
        parse_spiffe("ax", uri).expect("identity")
    }

    #[test]
    fn roles_are_ordered_viewer_operator_admin_and_workers_get_nothing() {
        let m = mtls(&["v=*", "o=*", "a=*"]);
        let v = id("spiffe://ax/viewer/v");
        let o = id("spiffe://ax/operator/o");
        let a = id("spiffe://ax/admin/a");
        assert!(authorize_admin(&m, &v, Access::Read).is_ok());
        let e = authorize_admin(&m, &v, Access::Operate).expect_err("viewer runs").to_string();
        assert!(e.contains("needs role operator"), "{e}");
        assert!(authorize_admin(&m, &o, Access::Operate).is_ok());
        let e = authorize_admin(&m, &o, Access::Manage).expect_err("operator creates").to_string();
        assert!(e.contains("needs role admin"), "{e}");
        assert!(authorize_admin(&m, &a, Access::Manage).is_ok());
        assert!(authorize_admin(&m, &id("spiffe://ax/worker/w"), Access::Read).is_err());
        assert!(authorize_worker(&id("spiffe://ax/worker/a"), "a").is_ok());
        let e = authorize_worker(&id("spiffe://ax/worker/a"), "b").expect_err("other app");
        assert!(e.to_string().contains("hello.app"));
        assert!(authorize_worker(&a, "a").is_err());
    }

    #[test]
    fn scopes_deny_by_default_and_open_mode_allows_everything() {
        let m = mtls(&["a=billing"]);
        let g = authorize_admin(&m, &id("spiffe://ax/admin/a"), Access::Manage).expect("admin");
        assert!(g.app("billing").is_ok());
        let e = g.app("reports").expect_err("out of scope").to_string();
        assert!(e.contains("\"reports\""), "{e}");
        assert!(g.all_apps("GetClusterStats").is_err());
        let none = authorize_admin(&m, &id("spiffe://ax/admin/nobody"), Access::Read).expect("role ok");
        assert!(none.app("billing").is_err(), "no scope configured: no app");
        assert_eq!(none.apps(), Some(vec![]));
        let open = authorize_admin(&AuthMode::Open, &Identity::anonymous(), Access::Manage).expect("open");
        assert!(open.app("anything").is_ok() && open.apps().is_none());
    }
}
