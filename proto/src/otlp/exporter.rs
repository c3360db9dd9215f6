//! Span contexts, span records and the batching OTLP/gRPC exporter.
//!
//! [`Exporter::record`] never blocks and never fails: a span goes into a bounded queue (a full
//! queue drops the span and counts it, see [`Exporter::dropped`]); one background task sends the
//! queue in batches of up to [`MAX_BATCH`] spans, at most [`BATCH_DELAY`] after the first span of
//! a batch arrived, and at once on [`Exporter::flush`]. A failed export is logged and its batch
//! dropped: tracing never holds back scheduling.

use std::{
    fmt,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use tokio::sync::{mpsc, oneshot};
use tonic::transport::{Channel, Endpoint};

use super::{
    ExportTraceServiceRequest, InstrumentationScope, KeyValue, Resource, ResourceSpans, ScopeSpans, Span, Status,
    service::trace_service_client::TraceServiceClient,
};

/// Spans the queue holds before [`Exporter::record`] drops new ones.
pub const QUEUE: usize = 4096;
/// Most spans in one export request.
pub const MAX_BATCH: usize = 512;
/// Longest a recorded span waits before its batch is sent.
pub const BATCH_DELAY: Duration = Duration::from_millis(500);
/// Longest one export request may take.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a connection to the collector may take to open.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest [`Exporter::flush`] waits: a collector that does not answer must not hold a shutdown.
pub const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// The identity of a span, as a W3C `traceparent` carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanContext {
    /// 16 bytes, never all zero.
    pub trace_id: [u8; 16],
    /// 8 bytes, never all zero.
    pub span_id: [u8; 8],
    /// Trace flags; bit 0 is "sampled".
    pub flags: u8,
}

impl SpanContext {
    /// A new trace: random trace and span ids, sampled.
    pub fn new_root() -> SpanContext {
        SpanContext { trace_id: nonzero_u128().to_be_bytes(), span_id: new_span_id(), flags: 1 }
    }

    /// A new span in this span's trace (its child: the caller records `self.span_id` as parent).
    pub fn new_child(&self) -> SpanContext {
        SpanContext { trace_id: self.trace_id, span_id: new_span_id(), flags: self.flags }
    }

    /// Parses a W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`; a later version's extra fields
    /// are ignored, as the W3C recommendation says). `None` for anything else, or all-zero ids.
    pub fn from_traceparent(s: &str) -> Option<SpanContext> {
        let mut parts = s.trim().split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        if version.len() != 2 || version == "ff" || trace.len() != 32 || span.len() != 16 || flags.len() != 2 {
            return None;
        }
        if version == "00" && parts.next().is_some() {
            return None;
        }
        let hex = |s: &str| s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !(hex(version) && hex(trace) && hex(span) && hex(flags)) {
            return None;
        }
        let trace_id = u128::from_str_radix(trace, 16).ok().filter(|v| *v != 0)?.to_be_bytes();
        let span_id = u64::from_str_radix(span, 16).ok().filter(|v| *v != 0)?.to_be_bytes();
        let flags = u8::from_str_radix(flags, 16).ok()?;
        Some(SpanContext { trace_id, span_id, flags })
    }

    /// The W3C `traceparent` of this span (version 00).
    pub fn traceparent(&self) -> String {
        format!(
            "00-{:032x}-{:016x}-{:02x}",
            u128::from_be_bytes(self.trace_id),
            u64::from_be_bytes(self.span_id),
            self.flags
        )
    }

    /// The trace id as 32 lowercase hex digits (how Jaeger and Tempo show it).
    pub fn trace_id_hex(&self) -> String {
        format!("{:032x}", u128::from_be_bytes(self.trace_id))
    }
}

fn nonzero_u128() -> u128 {
    loop {
        let v = fastrand::u128(..);
        if v != 0 {
            return v;
        }
    }
}

fn new_span_id() -> [u8; 8] {
    loop {
        let v = fastrand::u64(..);
        if v != 0 {
            return v.to_be_bytes();
        }
    }
}

/// OTLP `SpanKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside one process.
    Internal = 1,
    /// Handling a request from a peer.
    Server = 2,
    /// A request to a peer.
    Client = 3,
    /// Handing work to a peer that runs it later.
    Producer = 4,
    /// Running work that a peer handed over.
    Consumer = 5,
}

/// One finished span.
#[derive(Debug, Clone)]
pub struct SpanRecord {
    /// Its identity.
    pub context: SpanContext,
    /// Its parent's span id; `None` for a trace's root.
    pub parent: Option<[u8; 8]>,
    /// Operation name.
    pub name: String,
    /// Its kind.
    pub kind: SpanKind,
    /// Start.
    pub start: SystemTime,
    /// End (not before `start`).
    pub end: SystemTime,
    /// Attributes.
    pub attributes: Vec<KeyValue>,
    /// `Some(why)` marks the span as failed.
    pub error: Option<String>,
}

impl SpanRecord {
    /// A span without attributes.
    pub fn new(
        context: SpanContext,
        parent: Option<&SpanContext>,
        name: impl Into<String>,
        kind: SpanKind,
        start: SystemTime,
        end: SystemTime,
    ) -> SpanRecord {
        SpanRecord {
            context,
            parent: parent.map(|p| p.span_id),
            name: name.into(),
            kind,
            start,
            end: end.max(start),
            attributes: Vec::new(),
            error: None,
        }
    }

    /// Adds an attribute.
    pub fn attr(mut self, kv: KeyValue) -> SpanRecord {
        self.attributes.push(kv);
        self
    }

    fn into_wire(self) -> Span {
        let nanos =
            |t: SystemTime| t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Span {
            trace_id: self.context.trace_id.to_vec(),
            span_id: self.context.span_id.to_vec(),
            parent_span_id: self.parent.map(|p| p.to_vec()).unwrap_or_default(),
            flags: u32::from(self.context.flags),
            name: self.name,
            kind: self.kind as i32,
            start_time_unix_nano: nanos(self.start),
            end_time_unix_nano: nanos(self.end),
            attributes: self.attributes,
            status: self.error.map(|message| Status { message, code: 2 }),
        }
    }
}

/// An OTLP endpoint that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// Not `http://host:port` (TLS to the collector is not supported: run a collector beside the
    /// process and let it forward).
    #[error(
        "{0:?} is not an http:// URL of an OTLP/gRPC collector (e.g. http://127.0.0.1:4317; https is not supported, run a collector beside this process to forward over TLS)"
    )]
    Url(String),
}

/// Checks an OTLP/gRPC endpoint URL without connecting.
pub fn check_endpoint(url: &str) -> Result<Endpoint, EndpointError> {
    let bad = || EndpointError::Url(url.to_owned());
    let rest = url.strip_prefix("http://").ok_or_else(bad)?;
    let authority = rest.trim_end_matches('/');
    if authority.is_empty() || authority.contains(['/', '?', '#', '@', ' ']) {
        return Err(bad());
    }
    Endpoint::from_shared(url.to_owned()).map_err(|_| bad())
}

enum Msg {
    Span(SpanRecord),
    Flush(oneshot::Sender<()>),
}

/// Records spans and sends them to an OTLP/gRPC collector in the background. Cheap to clone.
#[derive(Clone)]
pub struct Exporter {
    tx: mpsc::Sender<Msg>,
    dropped: Arc<AtomicU64>,
}

impl fmt::Debug for Exporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exporter").field("dropped", &self.dropped()).finish_non_exhaustive()
    }
}

impl Exporter {
    /// Starts the export task (on the current tokio runtime); connects lazily, so an unreachable
    /// collector costs only failed exports. `resource`: extra resource attributes beside
    /// `service.name`.
    pub fn start(endpoint: &str, service_name: &str, resource: Vec<KeyValue>) -> Result<Exporter, EndpointError> {
        let channel = check_endpoint(endpoint)?.timeout(EXPORT_TIMEOUT).connect_timeout(CONNECT_TIMEOUT).connect_lazy();
        let mut attributes = vec![KeyValue::string("service.name", service_name)];
        attributes.extend(resource);
        let (tx, rx) = mpsc::channel(QUEUE);
        let task = ExportTask {
            client: TraceServiceClient::new(channel),
            resource: Resource { attributes },
            rx,
            endpoint: endpoint.to_owned(),
        };
        tokio::spawn(task.run());
        Ok(Exporter { tx, dropped: Arc::new(AtomicU64::new(0)) })
    }

    /// Queues a finished span; drops it (and counts it) if the queue is full.
    pub fn record(&self, span: SpanRecord) {
        if self.tx.try_send(Msg::Span(span)).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Sends every span recorded so far and waits until that export has been answered (or failed),
    /// at most [`FLUSH_WAIT`]; whether it was.
    pub async fn flush(&self) -> bool {
        let wait = async {
            let (ack, done) = oneshot::channel();
            self.tx.send(Msg::Flush(ack)).await.is_ok() && done.await.is_ok()
        };
        tokio::time::timeout(FLUSH_WAIT, wait).await.unwrap_or(false)
    }

    /// Spans dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

struct ExportTask {
    client: TraceServiceClient<Channel>,
    resource: Resource,
    rx: mpsc::Receiver<Msg>,
    endpoint: String,
}

impl ExportTask {
    async fn run(mut self) {
        let mut batch: Vec<SpanRecord> = Vec::new();
        let mut due = tokio::time::Instant::now();
        loop {
            let msg = if batch.is_empty() {
                self.rx.recv().await
            } else {
                match tokio::time::timeout_at(due, self.rx.recv()).await {
                    Ok(msg) => msg,
                    Err(_) => {
                        self.export(&mut batch).await;
                        continue;
                    }
                }
            };
            match msg {
                None => {
                    self.export(&mut batch).await;
                    return;
                }
                Some(Msg::Span(span)) => {
                    if batch.is_empty() {
                        due = tokio::time::Instant::now() + BATCH_DELAY;
                    }
                    batch.push(span);
                    if batch.len() >= MAX_BATCH {
                        self.export(&mut batch).await;
                    }
                }
                Some(Msg::Flush(ack)) => {
                    self.export(&mut batch).await;
                    let _ = ack.send(());
                }
            }
        }
    }

    async fn export(&mut self, batch: &mut Vec<SpanRecord>) {
        if batch.is_empty() {
            return;
        }
        let n = batch.len();
        let spans = batch.drain(..).map(SpanRecord::into_wire).collect();
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(self.resource.clone()),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope { name: "ax".into(), version: env!("CARGO_PKG_VERSION").into() }),
                    spans,
                }],
            }],
        };
        match tokio::time::timeout(EXPORT_TIMEOUT, self.client.export(request)).await {
            Ok(Ok(answer)) => {
                if let Some(p) = answer.into_inner().partial_success.filter(|p| p.rejected_spans > 0) {
                    tracing::warn!(endpoint = %self.endpoint, rejected = p.rejected_spans, reason = %p.error_message, "OTLP collector rejected spans");
                }
            }
            Ok(Err(status)) => {
                tracing::warn!(endpoint = %self.endpoint, spans = n, error = %status.message(), "OTLP export failed; spans dropped");
            }
            Err(_) => {
                tracing::warn!(endpoint = %self.endpoint, spans = n, "OTLP export timed out; spans dropped");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trips_and_rejects_malformed_values() {
        let c = SpanContext::new_root();
        assert_eq!(SpanContext::from_traceparent(&c.traceparent()), Some(c));
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let parsed = SpanContext::from_traceparent(good).expect("parses");
        assert_eq!(parsed.traceparent(), good);
        assert_eq!(parsed.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        // A later version may append fields: the first four are read, the rest ignored.
        let future = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-ever";
        assert_eq!(SpanContext::from_traceparent(future).map(|c| c.span_id), Some(parsed.span_id));
        for bad in [
            "",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert_eq!(SpanContext::from_traceparent(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn endpoint_must_be_a_plain_http_authority() {
        assert!(check_endpoint("http://127.0.0.1:4317").is_ok());
        assert!(check_endpoint("http://otel-collector:4317/").is_ok());
        for bad in ["https://x:4317", "127.0.0.1:4317", "http://", "http://x:4317/v1/traces", "grpc://x"] {
            assert!(check_endpoint(bad).is_err(), "{bad}");
        }
    }
}
