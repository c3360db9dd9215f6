//! `axctl certs init DIR`: development CAs and the certificates an mTLS cluster needs: axd's
//! server certificate from a server CA whose key is not kept, and client certificates from a client
//! CA, each carrying exactly one ax identity as a URI SAN (`spiffe://ax/<role>/<name>`), which is
//! what axd authorizes on.
//!
//! Each viewer, operator and admin identity also gets `<stem>.p12`, a PKCS#12 bundle of its
//! certificate, key and the server CA to import into a browser or the operating system for the web
//! console, with its random password in `<stem>.p12.pass` (both 0600).
//!
//! Nothing is written unless every file can be (see `write`): an existing file or symbolic link is
//! refused, or replaced with `--force`, and a failure leaves the directory as it was.

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr},
    path::PathBuf,
    time::{Duration, SystemTime},
};

use anyhow::{Context as _, Result};
use clap::Args;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use serde::Serialize;

use super::{
    p12,
    write::{NewFile, write_all},
};
use crate::{
    commands::Context,
    output::{self, OutputFormat},
};

/// How long the certificates are valid.
const VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);

/// How far back validity starts, so that a host whose clock is slightly behind accepts them.
const CLOCK_SKEW_MARGIN: Duration = Duration::from_secs(5 * 60);

/// Arguments of `certs init`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// Directory to write into; created if missing.
    pub dir: PathBuf,
    /// App to issue a worker certificate for, spiffe://ax/worker/APP (repeatable).
    #[arg(long = "app", value_name = "APP", default_value = "demo", value_parser = parse_app)]
    pub apps: Vec<String>,
    /// Name of the admin certificate, spiffe://TD/admin/NAME (may change anything; give axd
    /// `--scope NAME=*` or a list of apps).
    #[arg(long, value_name = "NAME", default_value = "admin", value_parser = parse_name)]
    pub admin: String,
    /// Also issue a read-only certificate, spiffe://ax/viewer/NAME.
    #[arg(long, value_name = "NAME", value_parser = parse_name)]
    pub viewer: Option<String>,
    /// Also issue an operator certificate, spiffe://ax/operator/NAME (may trigger, cancel, retry,
    /// enable and disable, not create, update or delete).
    #[arg(long, value_name = "NAME", value_parser = parse_name)]
    pub operator: Option<String>,
    /// SPIFFE trust domain of the identities (axd's --trust-domain).
    #[arg(long, value_name = "TD", default_value = "ax", value_parser = parse_trust_domain)]
    pub trust_domain: String,
    /// Replace existing files.
    #[arg(long)]
    pub force: bool,
}

/// An app name as workers announce it: 1-64 characters of [a-z0-9._-], starting with a letter or
/// digit (the rule of Hello.app, so a certificate is never issued for an app no worker can use).
fn parse_app(text: &str) -> Result<String, String> {
    check_name(text, |c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
        .map_err(|e| format!("{e}; an app is 1-64 characters of a-z 0-9 . _ - starting with a letter or digit"))
}

/// An operator name: 1-64 characters of [A-Za-z0-9._-], starting with a letter or digit. It is
/// part of file names and of the SPIFFE id, so nothing that could leave DIR or add a path segment.
fn parse_name(text: &str) -> Result<String, String> {
    check_name(text, |c| c.is_ascii_alphanumeric() || "._-".contains(c))
        .map_err(|e| format!("{e}; a name is 1-64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit"))
}

/// A SPIFFE trust domain: 1-255 characters of [a-z0-9._-], no empty label.
fn parse_trust_domain(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 255
        && text.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
        && !text.starts_with('.')
        && !text.ends_with('.')
        && !text.contains("..");
    if ok { Ok(text.to_owned()) } else { Err(format!("`{text}` is not a trust domain (a-z 0-9 . _ -)")) }
}

fn check_name(text: &str, allowed: impl Fn(char) -> bool) -> Result<String, String> {
    let starts_well = text.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    if text.len() > 64 || !starts_well || !text.chars().all(allowed) {
        return Err(format!("`{text}` is not allowed"));
    }
    Ok(text.to_owned())
}

/// JSON output of `certs init`.
#[derive(Serialize)]
struct Written {
    dir: String,
    files: Vec<String>,
}

/// Generates and writes the certificates.
pub fn run(mut args: InitArgs, ctx: &Context) -> Result<()> {
    // `--app demo --app demo` means one app, not a write conflict with itself.
    let mut seen = std::collections::HashSet::new();
    args.apps.retain(|app| seen.insert(app.clone()));
    let files = generate(&args)?;
    let paths = write_all(&args.dir, &files, args.force)?;
    let view =
        Written { dir: args.dir.display().to_string(), files: paths.iter().map(|p| p.display().to_string()).collect() };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&instructions(&args, &view.files)),
    }
}

/// The server CA and axd's server certificate, then the client CA and one client certificate per
/// identity.
///
/// Two CAs, because people are told to trust one in a browser: the server CA (`server-ca.pem`)
/// signs axd's certificate for this machine's names and nothing else — its key is used once here
/// and never written, so trusting it lets nobody, not even whoever reads this directory, mint a
/// certificate for another site. The client CA (`client-ca.pem`, `client-ca.key`) issues the ax
/// identities and is what axd's `--tls-client-ca` trusts; nobody needs to trust it for servers.
fn generate(args: &InitArgs) -> Result<Vec<NewFile>> {
    let now = SystemTime::now();
    let validity = (now - CLOCK_SKEW_MARGIN, now + VALIDITY);
    let mut files = Vec::new();

    let (server_ca, server_issuer) = ca("ax dev server CA", validity)?;
    // The CA of a person's PKCS#12 bundle: what a browser importing it should trust, and nothing
    // more (the client CA, whose key exists, must never become a root for websites).
    let bundle_ca = server_ca.der().to_vec();
    files.push(NewFile { name: "server-ca.pem".into(), contents: server_ca.pem().into_bytes(), secret: false });
    let server_sans = vec![
        SanType::DnsName("localhost".try_into().context("localhost is a DNS name")?),
        SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        SanType::IpAddress(IpAddr::V6(Ipv6Addr::LOCALHOST)),
    ];
    let (server, _) =
        leaf(&server_issuer, "server", "localhost", server_sans, ExtendedKeyUsagePurpose::ServerAuth, validity)?;
    files.extend(server);
    // The server CA's key ends here: dropped, never serialized.
    drop(server_issuer);

    let (client_ca, issuer) = ca("ax dev client CA", validity)?;
    files.push(NewFile { name: "client-ca.pem".into(), contents: client_ca.pem().into_bytes(), secret: false });
    files.push(NewFile {
        name: "client-ca.key".into(),
        contents: issuer.key().serialize_pem().into_bytes(),
        secret: true,
    });

    let td = &args.trust_domain;
    let mut identities: Vec<(String, String)> =
        args.apps.iter().map(|app| (format!("worker-{app}"), format!("spiffe://{td}/worker/{app}"))).collect();
    identities.push((format!("admin-{}", args.admin), format!("spiffe://{td}/admin/{}", args.admin)));
    if let Some(operator) = &args.operator {
        identities.push((format!("operator-{operator}"), format!("spiffe://{td}/operator/{operator}")));
    }
    if let Some(viewer) = &args.viewer {
        identities.push((format!("viewer-{viewer}"), format!("spiffe://{td}/viewer/{viewer}")));
    }
    let rng = ring::rand::SystemRandom::new();
    for (stem, uri) in identities {
        let san = SanType::URI(uri.clone().try_into().with_context(|| format!("{uri} is not ASCII"))?);
        let (pems, der) = leaf(&issuer, &stem, &uri, vec![san], ExtendedKeyUsagePurpose::ClientAuth, validity)?;
        files.extend(pems);
        // People use the console from a browser, which imports PKCS#12; workers do not need one.
        if !stem.starts_with("worker-") {
            let password = p12::password(&rng)?;
            let friendly_name = format!("ax {}", stem.replacen('-', " ", 1));
            let bundle = p12::Bundle { cert: &der.cert, key: &der.key, ca: &bundle_ca, friendly_name: &friendly_name };
            let contents = p12::encode(&bundle, &password, &rng).with_context(|| format!("cannot write {stem}.p12"))?;
            files.push(NewFile { name: format!("{stem}.p12"), contents, secret: true });
            files.push(NewFile {
                name: format!("{stem}.p12.pass"),
                contents: format!("{password}\n").into_bytes(),
                secret: true,
            });
        }
    }
    Ok(files)
}

/// A CA that signs leaf certificates only (path length 0), and its issuer for signing them.
fn ca(common_name: &str, validity: (SystemTime, SystemTime)) -> Result<(rcgen::Certificate, Issuer<'static, KeyPair>)> {
    let key = KeyPair::generate().with_context(|| format!("cannot generate the key of the {common_name}"))?;
    let mut params = params(common_name, validity);
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let cert = params.self_signed(&key).with_context(|| format!("cannot sign the certificate of the {common_name}"))?;
    Ok((cert, Issuer::new(params, key)))
}

/// Parameters with a common name and validity, and nothing else.
fn params(common_name: &str, (not_before, not_after): (SystemTime, SystemTime)) -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    params.distinguished_name = name;
    params.not_before = not_before.into();
    params.not_after = not_after.into();
    params
}

/// A certificate and its key as DER, for a PKCS#12 bundle.
struct Der {
    cert: Vec<u8>,
    /// PKCS#8.
    key: Vec<u8>,
}

/// A certificate signed by the CA, as `<stem>.pem` and `<stem>.key`, and as DER.
fn leaf(
    issuer: &Issuer<'_, KeyPair>,
    stem: &str,
    common_name: &str,
    subject_alt_names: Vec<SanType>,
    usage: ExtendedKeyUsagePurpose,
    validity: (SystemTime, SystemTime),
) -> Result<([NewFile; 2], Der)> {
    let key = KeyPair::generate().with_context(|| format!("cannot generate the key of {stem}"))?;
    let mut params = params(common_name, validity);
    params.subject_alt_names = subject_alt_names;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![usage];
    params.use_authority_key_identifier_extension = true;
    let cert = params.signed_by(&key, issuer).with_context(|| format!("cannot sign the certificate of {stem}"))?;
    let der = Der { cert: cert.der().to_vec(), key: key.serialize_der() };
    Ok((
        [
            NewFile { name: format!("{stem}.pem"), contents: cert.pem().into_bytes(), secret: false },
            NewFile { name: format!("{stem}.key"), contents: key.serialize_pem().into_bytes(), secret: true },
        ],
        der,
    ))
}

/// What was written and how to use it.
fn instructions(args: &InitArgs, files: &[String]) -> String {
    let dir = args.dir.display();
    let mut text = String::new();
    for file in files {
        text.push_str(&format!("wrote {file}\n"));
    }
    text.push_str(&format!(
        "\nThe client CA key {dir}/client-ca.key can issue any ax identity: keep it private (these are development \
         certificates). The server CA {dir}/server-ca.pem signed server.pem only; its key was not kept.\n\
         \nStart axd with (each --scope NAME=APP,... or NAME=* says which apps that identity may act on):\n  axd --tls-cert {dir}/server.pem --tls-key {dir}/server.key --tls-client-ca {dir}/client-ca.pem --scope '{admin}=*'\n\
         \nPoint axctl at it with:\n  export AX_ENDPOINT=https://localhost:7070 AX_CA={dir}/server-ca.pem AX_CERT={dir}/admin-{admin}.pem AX_KEY={dir}/admin-{admin}.key\n",
        admin = args.admin
    ));
    if let Some(operator) = &args.operator {
        text.push_str(&format!(
            "  (operator: AX_CERT={dir}/operator-{operator}.pem AX_KEY={dir}/operator-{operator}.key)\n"
        ));
    }
    if let Some(viewer) = &args.viewer {
        text.push_str(&format!("  (read-only: AX_CERT={dir}/viewer-{viewer}.pem AX_KEY={dir}/viewer-{viewer}.key)\n"));
    }
    text.push_str(&format!(
        "\nFor the web console (axd --console-listen), import {dir}/admin-{admin}.p12 into the browser or the \
         operating system (its password is in {dir}/admin-{admin}.p12.pass) and trust {dir}/server-ca.pem for the server \
         (it can vouch for nothing else: its key is gone)\n",
        admin = args.admin
    ));
    text.push_str("\nWorkers connect with their app's certificate and the server CA:\n");
    for app in &args.apps {
        text.push_str(&format!("  app {app}: {dir}/worker-{app}.pem, {dir}/worker-{app}.key, {dir}/server-ca.pem\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use x509_parser::{extensions::GeneralName, pem::parse_x509_pem};

    use super::*;

    fn args(apps: &[&str], viewer: Option<&str>) -> InitArgs {
        InitArgs {
            dir: PathBuf::from("unused"),
            apps: apps.iter().map(|a| (*a).to_owned()).collect(),
            admin: "alice".into(),
            viewer: viewer.map(str::to_owned),
            operator: None,
            trust_domain: "ax".into(),
            force: false,
        }
    }

    #[test]
    fn operators_and_other_trust_domains_get_their_spiffe_ids() {
        let mut a = args(&["demo"], None);
        a.operator = Some("olga".into());
        a.trust_domain = "corp.example".into();
        let files = generate(&a).expect("generate");
        assert_eq!(inspect(&files, "operator-olga.pem").sans, ["URI:spiffe://corp.example/operator/olga"]);
        assert_eq!(inspect(&files, "worker-demo.pem").sans, ["URI:spiffe://corp.example/worker/demo"]);
        assert!(parse_trust_domain("Corp").is_err() && parse_trust_domain("a/b").is_err());
    }

    /// What a certificate says: its SANs as `URI:...`/`DNS:...`/`IP:...`, its extended key usages,
    /// whether it is a CA, and its validity in days.
    struct Seen {
        sans: Vec<String>,
        server_auth: bool,
        client_auth: bool,
        ca: bool,
        days: i64,
    }

    fn inspect(files: &[NewFile], name: &str) -> Seen {
        let file = files.iter().find(|f| f.name == name).expect("file written");
        let (_, pem) = parse_x509_pem(&file.contents).expect("PEM");
        let cert = pem.parse_x509().expect("X.509");
        let sans = cert
            .subject_alternative_name()
            .expect("valid SAN extension")
            .map(|ext| {
                ext.value
                    .general_names
                    .iter()
                    .map(|name| match name {
                        GeneralName::URI(u) => format!("URI:{u}"),
                        GeneralName::DNSName(d) => format!("DNS:{d}"),
                        GeneralName::IPAddress(ip) => format!("IP:{ip:?}"),
                        other => format!("{other:?}"),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let eku = cert.extended_key_usage().expect("valid EKU");
        let validity = cert.validity();
        Seen {
            sans,
            server_auth: eku.as_ref().is_some_and(|e| e.value.server_auth),
            client_auth: eku.as_ref().is_some_and(|e| e.value.client_auth),
            ca: cert.is_ca(),
            days: (validity.not_after.timestamp() - validity.not_before.timestamp()) / 86_400,
        }
    }

    #[test]
    fn every_identity_gets_exactly_one_spiffe_uri_and_client_auth() {
        let files = generate(&args(&["billing", "demo"], Some("bob"))).expect("generate");
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "server-ca.pem",
                "server.pem",
                "server.key",
                "client-ca.pem",
                "client-ca.key",
                "worker-billing.pem",
                "worker-billing.key",
                "worker-demo.pem",
                "worker-demo.key",
                "admin-alice.pem",
                "admin-alice.key",
                "admin-alice.p12",
                "admin-alice.p12.pass",
                "viewer-bob.pem",
                "viewer-bob.key",
                "viewer-bob.p12",
                "viewer-bob.p12.pass",
            ]
        );
        for (file, uri) in [
            ("worker-billing.pem", "spiffe://ax/worker/billing"),
            ("worker-demo.pem", "spiffe://ax/worker/demo"),
            ("admin-alice.pem", "spiffe://ax/admin/alice"),
            ("viewer-bob.pem", "spiffe://ax/viewer/bob"),
        ] {
            let seen = inspect(&files, file);
            assert_eq!(seen.sans, [format!("URI:{uri}")], "{file}");
            assert!(seen.client_auth && !seen.server_auth && !seen.ca, "{file}");
        }
        let secrets: Vec<&str> = files.iter().filter(|f| f.secret).map(|f| f.name.as_str()).collect();
        assert!(secrets.iter().all(|n| n.ends_with(".key") || n.ends_with(".p12") || n.ends_with(".p12.pass")));
        assert_eq!(secrets.len(), 10);
    }

    /// Runs `openssl` (OpenSSL 3, as Debian ships it; a missing openssl fails the test) and returns
    /// its stdout, failing with its stderr.
    fn openssl(args: &[&str]) -> String {
        let out = std::process::Command::new("openssl").args(args).output().expect("run openssl (OpenSSL 3)");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn openssl_reads_each_pkcs12_bundle_with_its_password_and_finds_the_same_key_and_certificate() {
        let mut a = args(&["demo"], Some("val"));
        a.operator = Some("olga".into());
        let files = generate(&a).expect("generate");
        let dir = std::env::temp_dir().join(format!("axctl-p12-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write_all(&dir, &files, false).expect("write");
        let pem_body = |text: &str, label: &str| -> String {
            let begin = format!("-----BEGIN {label}-----");
            let end = format!("-----END {label}-----");
            let start = text.find(&begin).unwrap_or_else(|| panic!("no {label} in {text}")) + begin.len();
            text[start..start + text[start..].find(&end).expect("end")].split_whitespace().collect()
        };
        for stem in ["admin-alice", "operator-olga", "viewer-val"] {
            let p12 = dir.join(format!("{stem}.p12")).display().to_string();
            let pass = format!("file:{}", dir.join(format!("{stem}.p12.pass")).display());
            // -info prints the algorithms: what OpenSSL 3 writes by default, nothing legacy.
            let info = std::process::Command::new("openssl")
                .args(["pkcs12", "-info", "-noout", "-in", &p12, "-passin", &pass])
                .output()
                .expect("openssl");
            let info = String::from_utf8_lossy(&info.stderr).into_owned() + &String::from_utf8_lossy(&info.stdout);
            assert!(info.contains("MAC: sha256, Iteration 2048"), "{info}");
            assert!(
                info.contains("Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256"),
                "{info}"
            );
            let key = openssl(&["pkcs12", "-in", &p12, "-passin", &pass, "-nocerts", "-noenc"]);
            let file =
                |name: String| String::from_utf8(files.iter().find(|f| f.name == name).expect(&name).contents.clone());
            let key_file = file(format!("{stem}.key")).expect("utf-8");
            assert_eq!(pem_body(&key, "PRIVATE KEY"), pem_body(&key_file, "PRIVATE KEY"), "{stem}: the same key");
            let cert = openssl(&["pkcs12", "-in", &p12, "-passin", &pass, "-nokeys", "-clcerts"]);
            let cert_file = file(format!("{stem}.pem")).expect("utf-8");
            assert_eq!(
                pem_body(&cert, "CERTIFICATE"),
                pem_body(&cert_file, "CERTIFICATE"),
                "{stem}: the same certificate"
            );
            assert!(cert.contains(&format!("friendlyName: ax {}", stem.replacen('-', " ", 1))), "{cert}");
            let ca = openssl(&["pkcs12", "-in", &p12, "-passin", &pass, "-nokeys", "-cacerts"]);
            let ca_file = file("server-ca.pem".into()).expect("utf-8");
            assert_eq!(pem_body(&ca, "CERTIFICATE"), pem_body(&ca_file, "CERTIFICATE"), "{stem}: the CA");
            // A wrong password fails the MAC.
            let wrong = std::process::Command::new("openssl")
                .args(["pkcs12", "-in", &p12, "-passin", "pass:wrong", "-noout"])
                .output()
                .expect("openssl");
            assert!(!wrong.status.success(), "{stem}: a wrong password is refused");
        }
        assert!(!dir.join("worker-demo.p12").exists(), "workers get no bundle");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            for name in ["admin-alice.p12", "admin-alice.p12.pass"] {
                let mode = std::fs::metadata(dir.join(name)).expect("meta").permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{name}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_server_certificate_is_for_this_machine_and_the_cas_sign_for_a_year() {
        let files = generate(&args(&["demo"], None)).expect("generate");
        let server = inspect(&files, "server.pem");
        assert_eq!(
            server.sans,
            ["DNS:localhost", "IP:[127, 0, 0, 1]", "IP:[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]"]
        );
        assert!(server.server_auth && !server.client_auth && !server.ca);
        assert_eq!(server.days, 365);
        for name in ["server-ca.pem", "client-ca.pem"] {
            let ca = inspect(&files, name);
            assert!(ca.ca && ca.sans.is_empty() && ca.days == 365, "{name}");
        }
        assert!(!files.iter().any(|f| f.name.starts_with("viewer-")));
    }

    /// The CA people trust in a browser (issue 33, item 9) vouches for axd's certificate and for
    /// nothing else, and no file holds its key; the client identities come from the other CA.
    #[test]
    fn the_server_ca_signs_only_the_server_certificate_and_its_key_is_not_kept() {
        let mut a = args(&["demo"], Some("val"));
        a.operator = Some("olga".into());
        let files = generate(&a).expect("generate");
        let dir = std::env::temp_dir().join(format!("axctl-two-cas-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write_all(&dir, &files, false).expect("write");
        let path = |name: &str| dir.join(name).display().to_string();
        let verify = |ca: &str, cert: &str| {
            std::process::Command::new("openssl")
                .args(["verify", "-CAfile", &path(ca), &path(cert)])
                .output()
                .expect("run openssl")
                .status
                .success()
        };
        assert!(verify("server-ca.pem", "server.pem"));
        assert!(!verify("client-ca.pem", "server.pem"));
        for client in ["worker-demo.pem", "admin-alice.pem", "operator-olga.pem", "viewer-val.pem"] {
            assert!(verify("client-ca.pem", client), "{client}");
            assert!(!verify("server-ca.pem", client), "{client}: the server CA vouches for no identity");
        }
        let spki = |name: &str| {
            let file = files.iter().find(|f| f.name == name).expect("file written");
            let (_, pem) = parse_x509_pem(&file.contents).expect("PEM");
            pem.parse_x509().expect("X.509").public_key().raw.to_vec()
        };
        let server_ca = spki("server-ca.pem");
        for key in files.iter().filter(|f| f.name.ends_with(".key")) {
            let pair = KeyPair::from_pem(std::str::from_utf8(&key.contents).expect("utf-8")).expect("a key");
            assert_ne!(
                rcgen::PublicKeyData::subject_public_key_info(&pair),
                server_ca,
                "{} is the server CA's key",
                key.name
            );
        }
        let client_ca_key = files.iter().find(|f| f.name == "client-ca.key").expect("client CA key");
        let pair = KeyPair::from_pem(std::str::from_utf8(&client_ca_key.contents).expect("utf-8")).expect("a key");
        assert_eq!(
            rcgen::PublicKeyData::subject_public_key_info(&pair),
            spki("client-ca.pem"),
            "client-ca.key is the client CA's"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_that_could_leave_the_directory_are_refused() {
        assert_eq!(parse_app("billing-v2.eu"), Ok("billing-v2.eu".to_owned()));
        assert!(parse_app("Billing").is_err(), "apps are lower case");
        assert!(parse_app("").is_err());
        assert!(parse_app("-x").is_err());
        assert!(parse_app(&"a".repeat(65)).is_err());
        assert_eq!(parse_name("Alice.Ops"), Ok("Alice.Ops".to_owned()));
        for bad in ["../x", "a/b", ".hidden", "", "a b"] {
            assert!(parse_name(bad).is_err(), "{bad:?}");
        }
    }
}
