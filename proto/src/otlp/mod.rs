//! OpenTelemetry traces over OTLP/gRPC, shared by axd and the Rust worker SDK: the subset of the
//! OTLP trace messages they send (same packages, field numbers and method path as the
//! `opentelemetry-proto` definitions, so any collector reads them), W3C `traceparent` parsing and
//! formatting, and [`Exporter`], a bounded batching exporter.
//!
//! Why not the `opentelemetry_sdk` crates: their trace SDK needs rand 0.9 beside the rand 0.8 that
//! sqlx brings, a duplicate major version this workspace does not take, and ax records each span
//! once, with known ids and times, so a span builder, context propagation and samplers would be
//! unused weight. What is kept is the wire format, which is what a collector sees.
//!
//! ```no_run
//! # async fn f() -> Result<(), ax_proto::otlp::EndpointError> {
//! use ax_proto::otlp::{Exporter, SpanContext, SpanKind, SpanRecord};
//! let exporter = Exporter::start("http://127.0.0.1:4317", "my-service", vec![])?;
//! let root = SpanContext::new_root();
//! let now = std::time::SystemTime::now();
//! exporter.record(SpanRecord::new(root, None, "work", SpanKind::Internal, now, now));
//! exporter.flush().await; // also on shutdown: spans are sent in batches
//! # Ok(())
//! # }
//! ```

mod exporter;
pub mod service;
mod wire;

pub use exporter::{
    BATCH_DELAY, CONNECT_TIMEOUT, EXPORT_TIMEOUT, EndpointError, Exporter, FLUSH_WAIT, MAX_BATCH, QUEUE, SpanContext,
    SpanKind, SpanRecord, check_endpoint,
};
pub use wire::*;
