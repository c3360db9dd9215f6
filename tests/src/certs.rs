//! Test certificates with any URI SAN: a CA, axd's server certificate for localhost, and client
//! certificates whose identity the test chooses (including malformed ones that `axctl certs init`
//! refuses to issue).

use std::{
    net::{IpAddr, Ipv4Addr},
    path::{Path, PathBuf},
};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

/// A CA in a directory: `ca.pem`, `server.pem`/`server.key` for localhost, and `<stem>.pem`/`.key`
/// per [`TestCa::issue`].
pub struct TestCa {
    /// Where the files are.
    pub dir: PathBuf,
    issuer: Issuer<'static, KeyPair>,
}

fn params(cn: &str) -> CertificateParams {
    let mut p = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, cn);
    p.distinguished_name = name;
    p
}

impl TestCa {
    /// A fresh CA and server certificate in `dir` (created).
    pub fn create(dir: &Path) -> TestCa {
        std::fs::create_dir_all(dir).expect("cert dir");
        let key = KeyPair::generate().expect("ca key");
        let mut p = params("ax test CA");
        p.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
        let cert = p.self_signed(&key).expect("ca");
        std::fs::write(dir.join("ca.pem"), cert.pem()).expect("write ca");
        let ca = TestCa { dir: dir.to_owned(), issuer: Issuer::new(p, key) };
        let sans = vec![
            SanType::DnsName("localhost".try_into().expect("dns")),
            SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        ];
        ca.leaf("server", sans, ExtendedKeyUsagePurpose::ServerAuth);
        ca
    }

    /// A client certificate `<stem>.pem` whose only SAN is the URI `uri`.
    pub fn issue(&self, stem: &str, uri: &str) {
        let san = SanType::URI(uri.try_into().expect("ASCII URI"));
        self.leaf(stem, vec![san], ExtendedKeyUsagePurpose::ClientAuth);
    }

    fn leaf(&self, stem: &str, sans: Vec<SanType>, usage: ExtendedKeyUsagePurpose) {
        let key = KeyPair::generate().expect("key");
        let mut p = params(stem);
        p.subject_alt_names = sans;
        p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        p.extended_key_usages = vec![usage];
        let cert = p.signed_by(&key, &self.issuer).expect("sign");
        std::fs::write(self.dir.join(format!("{stem}.pem")), cert.pem()).expect("write pem");
        std::fs::write(self.dir.join(format!("{stem}.key")), key.serialize_pem()).expect("write key");
    }

    /// A TLS channel to axd at `addr` presenting `<stem>.pem`.
    pub async fn channel(&self, addr: &str, stem: &str) -> tonic::transport::Channel {
        use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
        let read = |f: String| std::fs::read(self.dir.join(&f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let tls = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(read("ca.pem".into())))
            .domain_name("localhost")
            .identity(Identity::from_pem(read(format!("{stem}.pem")), read(format!("{stem}.key"))));
        Endpoint::from_shared(format!("https://{addr}"))
            .expect("url")
            .tls_config(tls)
            .expect("tls")
            .connect()
            .await
            .expect("connect")
    }
}
