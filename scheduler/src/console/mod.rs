//! The web console (`--console-listen`): a page embedded in axd and AdminService over gRPC-Web,
//! on a port of its own.
//!
//! The port is a second tonic server beside the gRPC port, built the same way: the same TLS
//! configuration (so the browser presents a client certificate when axd requires one), the same
//! limits before authentication and the same kind of connection tracking. It accepts HTTP/1.1 and
//! HTTP/2. Requests pass [`guard`] first: only gRPC-Web POSTs from the page's own origin reach
//! AdminService, reads of the page are answered from [`assets`], anything else is refused there.
//! The API behind it is the very [`AdminApi`] of the gRPC port, so identities, roles, app scopes,
//! validation, audit and errors are the same: a viewer's certificate reads and cannot act.
//!
//! Served without CORS: the page and its API share one origin, and no other origin may call it.

pub mod assets;
pub mod guard;

use std::{sync::Arc, time::Duration};

use ax_proto::v1::admin_service_server::AdminServiceServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::transport::{Server, ServerTlsConfig};

use crate::{
    config::Limits,
    core::Core,
    grpc::admin::AdminApi,
    transport::{self, TrackLayer, Tracker},
};

/// Serves the console on `listener` until `cancel` fires. `tls` is the gRPC port's configuration
/// (with its client CA), `None` for plaintext on loopback.
pub fn serve(
    listener: TcpListener,
    core: Arc<Core>,
    tls: Option<ServerTlsConfig>,
    limits: Limits,
    connections: Arc<Tracker>,
    cancel: CancellationToken,
) -> Result<impl Future<Output = ()>, tonic::transport::Error> {
    let secure = tls.is_some();
    let bound = listener.local_addr().unwrap_or_else(|_| std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
    let mut builder = Server::builder()
        // Browsers speak HTTP/1.1 to a plaintext origin; over TLS they negotiate HTTP/2.
        .accept_http1(true)
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .http2_keepalive_timeout(Some(Duration::from_secs(10)))
        .max_concurrent_streams(limits.max_concurrent_streams)
        .concurrency_limit_per_connection(limits.max_calls_per_connection as usize)
        .timeout(limits.request_timeout);
    if let Some(tls) = tls {
        builder = builder.tls_config(tls)?;
    }
    let router = builder
        .layer(TrackLayer(connections.clone()))
        .layer(guard::GuardLayer { tls: secure, bound })
        .layer(tonic_web::GrpcWebLayer::new())
        // Below gRPC-Web: checks the frames it decoded, and makes what it could not read the caller's.
        .layer(crate::framing::FramingLayer)
        .add_service(AdminServiceServer::new(AdminApi::new(core)));
    let incoming = transport::incoming(listener, connections, cancel.clone());
    Ok(async move {
        let served = router.serve_with_incoming_shutdown(incoming, cancel.cancelled_owned()).await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "the console server ended with an error");
        }
    })
}
