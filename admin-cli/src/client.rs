//! The connection to axd: endpoint and mTLS options, the gRPC channel, and how RPC failures are
//! turned into one-line errors.
//!
//! The channel is connected eagerly, so an unreachable or misconfigured endpoint fails before any
//! request is sent and the error names the endpoint. TLS trusts only the CA given with `--ca`: the
//! cluster's certificates come from its own CA (see `axctl certs init`), never from system roots.

use std::{fs, path::PathBuf, time::Duration};

use anyhow::{Context as _, Result, anyhow, bail};
use ax_proto::v1::admin_service_client::AdminServiceClient;
use clap::Args;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// The AdminService client every command uses.
pub type AdminClient = AdminServiceClient<Channel>;

/// How long to wait for the TCP connection and the TLS handshake.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one call may take. No admin call does long work, so a call this slow means something is
/// stuck, and the operator is better served by an error than by a hang.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Where axd is and how to authenticate to it. The flags work before or after the subcommand.
#[derive(Args, Debug, Clone)]
pub struct ConnectOptions {
    /// axd gRPC endpoint; use https:// with --ca (and --cert/--key for mTLS).
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "AX_ENDPOINT",
        default_value = "http://127.0.0.1:7070",
        value_name = "URL"
    )]
    pub endpoint: String,
    /// PEM file of the CA that signed axd's certificate.
    #[arg(long, global = true, help_heading = "Global options", env = "AX_CA", value_name = "PATH")]
    pub ca: Option<PathBuf>,
    /// PEM client certificate (mTLS); its URI SAN is the caller identity, e.g. spiffe://ax/admin/NAME.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "AX_CERT",
        value_name = "PATH",
        requires = "key"
    )]
    pub cert: Option<PathBuf>,
    /// PEM private key of --cert.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "AX_KEY",
        value_name = "PATH",
        requires = "cert"
    )]
    pub key: Option<PathBuf>,
}

/// Opens a connected channel to the endpoint.
pub async fn connect(options: &ConnectOptions) -> Result<AdminClient> {
    connect_for(options, REQUEST_TIMEOUT).await
}

/// [`connect`], with calls that may take up to `timeout` (a call that waits on purpose).
pub async fn connect_for(options: &ConnectOptions, timeout: Duration) -> Result<AdminClient> {
    let endpoint = endpoint(options, timeout)?;
    let channel = endpoint.connect().await.with_context(|| format!("cannot connect to {}", options.endpoint))?;
    Ok(AdminServiceClient::new(channel))
}

/// Builds the endpoint (with TLS for https) without connecting.
fn endpoint(options: &ConnectOptions, timeout: Duration) -> Result<Endpoint> {
    let url = &options.endpoint;
    let endpoint = Endpoint::from_shared(url.clone())
        .with_context(|| format!("invalid endpoint {url:?}; expected e.g. http://127.0.0.1:7070"))?
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(timeout);
    match endpoint.uri().scheme_str() {
        Some("https") => {
            let tls = tls_config(options, endpoint.uri().host().unwrap_or_default())?;
            endpoint.tls_config(tls).with_context(|| format!("cannot use TLS settings for {url}"))
        }
        Some("http") => {
            // Certificates with a plaintext endpoint would silently not be used; an operator who
            // set them believes the connection is authenticated, so say so instead.
            if options.ca.is_some() || options.cert.is_some() {
                bail!(
                    "--ca/--cert/--key (or AX_CA/AX_CERT/AX_KEY) need an https:// endpoint, but the endpoint is {url}"
                );
            }
            Ok(endpoint)
        }
        _ => bail!("invalid endpoint {url:?}: the scheme must be http:// or https://"),
    }
}

/// The rustls client settings: trust the given CA only, present the client certificate if given,
/// and check the server's certificate against the endpoint's host.
fn tls_config(options: &ConnectOptions, host: &str) -> Result<ClientTlsConfig> {
    let ca_path = options.ca.as_ref().ok_or_else(|| {
        anyhow!(
            "the https endpoint {} needs --ca (or AX_CA): axctl trusts only the CA that signed axd's certificate",
            options.endpoint
        )
    })?;
    let ca = fs::read(ca_path).with_context(|| format!("cannot read --ca {}", ca_path.display()))?;
    // An IPv6 host comes bracketed in a URI; certificate checks want the bare address.
    let server_name = host.trim_start_matches('[').trim_end_matches(']');
    let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca)).domain_name(server_name);
    if let (Some(cert_path), Some(key_path)) = (&options.cert, &options.key) {
        let cert = fs::read(cert_path).with_context(|| format!("cannot read --cert {}", cert_path.display()))?;
        let key = fs::read(key_path).with_context(|| format!("cannot read --key {}", key_path.display()))?;
        tls = tls.identity(Identity::from_pem(cert, key));
    }
    Ok(tls)
}

/// Unwraps a gRPC response, turning a failure into an [`RpcError`].
pub trait RpcResultExt<T> {
    /// The response message, or the status as an error.
    fn rpc(self) -> Result<T>;
}

impl<T> RpcResultExt<T> for std::result::Result<tonic::Response<T>, tonic::Status> {
    fn rpc(self) -> Result<T> {
        self.map(tonic::Response::into_inner).map_err(|status| RpcError::from(&status).into())
    }
}

/// A failed call, printed as `Code: message`, e.g.
/// `InvalidArgument: task.schedule.cron.expression: ...`.
#[derive(Debug)]
pub struct RpcError {
    message: String,
    /// The call failed on the connection (tonic made the status from a transport error) rather
    /// than with a status axd sent; only such failures are about the endpoint.
    transport: bool,
}

impl From<&tonic::Status> for RpcError {
    fn from(status: &tonic::Status) -> Self {
        let mut message = format!("{:?}", status.code());
        if !status.message().is_empty() {
            message.push_str(": ");
            message.push_str(status.message());
        }
        // tonic's message for a transport failure is often just "transport error"; the causes say
        // what happened.
        let mut source = std::error::Error::source(status);
        let transport = source.is_some();
        while let Some(cause) = source {
            let text = cause.to_string();
            if !message.ends_with(&text) {
                message.push_str(": ");
                message.push_str(&text);
            }
            source = cause.source();
        }
        RpcError { message, transport }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RpcError {}

impl ConnectOptions {
    /// The error with what the operator needs to act on a connection failure: the endpoint, and
    /// for mTLS without a client certificate the likely cause (axd refuses the handshake only when
    /// the first call is made, so this does not surface while connecting).
    pub fn explain(&self, err: anyhow::Error) -> anyhow::Error {
        match err.downcast_ref::<RpcError>() {
            Some(rpc) if rpc.transport => {
                let hint = if self.endpoint.starts_with("https://") && self.cert.is_none() {
                    " (no client certificate was given; if axd requires mTLS, set --cert and --key)"
                } else {
                    ""
                };
                err.context(format!("request to {} failed{hint}", self.endpoint))
            }
            _ => err,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(endpoint: &str) -> ConnectOptions {
        ConnectOptions { endpoint: endpoint.to_owned(), ca: None, cert: None, key: None }
    }

    #[test]
    fn rpc_errors_print_the_code_name_and_the_message() {
        let status =
            tonic::Status::invalid_argument("task.schedule.cron.expression: field 2 (hours) = 25 is out of range 0-23");
        assert_eq!(
            RpcError::from(&status).to_string(),
            "InvalidArgument: task.schedule.cron.expression: field 2 (hours) = 25 is out of range 0-23"
        );
        assert_eq!(RpcError::from(&tonic::Status::not_found("")).to_string(), "NotFound");
        let result: std::result::Result<tonic::Response<()>, _> = Err(tonic::Status::failed_precondition("running"));
        assert_eq!(result.rpc().expect_err("failed").to_string(), "FailedPrecondition: running");
    }

    #[test]
    fn only_transport_failures_are_explained_with_the_endpoint() {
        let https = options("https://localhost:7070");
        let from_axd: anyhow::Error = RpcError::from(&tonic::Status::not_found("task \"x\" does not exist")).into();
        assert_eq!(https.explain(from_axd).to_string(), "NotFound: task \"x\" does not exist");
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection closed");
        let lost: anyhow::Error = RpcError::from(&tonic::Status::from_error(Box::new(io))).into();
        let explained = format!("{:#}", https.explain(lost));
        assert!(
            explained.starts_with("request to https://localhost:7070 failed (no client certificate"),
            "{explained}"
        );
        assert!(explained.ends_with("connection closed"), "{explained}");
    }

    #[test]
    fn plaintext_endpoints_refuse_tls_files() {
        assert!(endpoint(&options("http://127.0.0.1:7070"), REQUEST_TIMEOUT).is_ok());
        let mut with_ca = options("http://127.0.0.1:7070");
        with_ca.ca = Some(PathBuf::from("ca.pem"));
        let err = endpoint(&with_ca, REQUEST_TIMEOUT).expect_err("http with --ca");
        assert!(err.to_string().contains("https://"), "{err}");
    }

    #[test]
    fn https_endpoints_need_a_ca_and_name_the_endpoint() {
        let err = endpoint(&options("https://localhost:7070"), REQUEST_TIMEOUT).expect_err("no --ca");
        assert!(err.to_string().contains("https://localhost:7070"), "{err}");
        assert!(err.to_string().contains("--ca"), "{err}");
    }

    #[test]
    fn unreadable_ca_files_are_named() {
        let mut missing = options("https://localhost:7070");
        missing.ca = Some(PathBuf::from("/nonexistent/ax/ca.pem"));
        let err = endpoint(&missing, REQUEST_TIMEOUT).expect_err("missing file");
        assert!(err.to_string().contains("/nonexistent/ax/ca.pem"), "{err}");
    }

    #[test]
    fn endpoints_without_a_known_scheme_are_refused() {
        assert!(endpoint(&options("127.0.0.1:7070"), REQUEST_TIMEOUT).is_err());
        assert!(endpoint(&options("ftp://127.0.0.1:7070"), REQUEST_TIMEOUT).is_err());
    }
}
