//! The OTLP trace messages that ax sends, with the field numbers of opentelemetry-proto
//! (`opentelemetry/proto/{common,resource,trace}/v1/*.proto` and
//! `collector/trace/v1/trace_service.proto`). Fields ax never sets (links, events, dropped
//! counts, schema URLs, trace state) are left out: a decoder skips what it does not know and a
//! collector reads their absence as the default, so the encoding is a valid OTLP request.

/// `opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`: one batch of spans.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExportTraceServiceRequest {
    /// The spans, grouped by the resource (service) that produced them.
    #[prost(message, repeated, tag = "1")]
    pub resource_spans: Vec<ResourceSpans>,
}

/// `ExportTraceServiceResponse`: empty on success.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExportTraceServiceResponse {
    /// Set when the collector kept only part of the batch.
    #[prost(message, optional, tag = "1")]
    pub partial_success: Option<ExportTracePartialSuccess>,
}

/// `ExportTracePartialSuccess`: how many spans the collector rejected, and why.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExportTracePartialSuccess {
    /// Spans rejected; 0 with a message is a warning.
    #[prost(int64, tag = "1")]
    pub rejected_spans: i64,
    /// Why, in English.
    #[prost(string, tag = "2")]
    pub error_message: String,
}

/// `opentelemetry.proto.trace.v1.ResourceSpans`: the spans of one resource.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResourceSpans {
    /// The producing service (`service.name` and other resource attributes).
    #[prost(message, optional, tag = "1")]
    pub resource: Option<Resource>,
    /// The spans, grouped by instrumentation scope.
    #[prost(message, repeated, tag = "2")]
    pub scope_spans: Vec<ScopeSpans>,
}

/// `opentelemetry.proto.resource.v1.Resource`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Resource {
    /// Attributes of the service, e.g. `service.name`.
    #[prost(message, repeated, tag = "1")]
    pub attributes: Vec<KeyValue>,
}

/// `opentelemetry.proto.trace.v1.ScopeSpans`: the spans of one instrumentation scope.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ScopeSpans {
    /// The library that recorded the spans (`ax` for axd and the SDK).
    #[prost(message, optional, tag = "1")]
    pub scope: Option<InstrumentationScope>,
    /// The spans.
    #[prost(message, repeated, tag = "2")]
    pub spans: Vec<Span>,
}

/// `opentelemetry.proto.common.v1.InstrumentationScope`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InstrumentationScope {
    /// Name of the recording library.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its version.
    #[prost(string, tag = "2")]
    pub version: String,
}

/// `opentelemetry.proto.trace.v1.Span`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Span {
    /// 16 bytes, not all zero.
    #[prost(bytes = "vec", tag = "1")]
    pub trace_id: Vec<u8>,
    /// 8 bytes, not all zero.
    #[prost(bytes = "vec", tag = "2")]
    pub span_id: Vec<u8>,
    /// 8 bytes, or empty for a root span.
    #[prost(bytes = "vec", tag = "4")]
    pub parent_span_id: Vec<u8>,
    /// W3C trace flags (bit 0: sampled) in the low byte.
    #[prost(fixed32, tag = "16")]
    pub flags: u32,
    /// Operation name, e.g. `ax.dispatch`.
    #[prost(string, tag = "5")]
    pub name: String,
    /// `SpanKind` enum value (1 internal, 2 server, 3 client, 4 producer, 5 consumer).
    #[prost(int32, tag = "6")]
    pub kind: i32,
    /// Start, in nanoseconds since the Unix epoch.
    #[prost(fixed64, tag = "7")]
    pub start_time_unix_nano: u64,
    /// End, in nanoseconds since the Unix epoch.
    #[prost(fixed64, tag = "8")]
    pub end_time_unix_nano: u64,
    /// Attributes, e.g. `ax.instance.id`.
    #[prost(message, repeated, tag = "9")]
    pub attributes: Vec<KeyValue>,
    /// Outcome; unset means "unset" (neither ok nor error).
    #[prost(message, optional, tag = "15")]
    pub status: Option<Status>,
}

/// `opentelemetry.proto.trace.v1.Status`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Status {
    /// Why it failed (for code 2).
    #[prost(string, tag = "2")]
    pub message: String,
    /// 0 unset, 1 ok, 2 error.
    #[prost(int32, tag = "3")]
    pub code: i32,
}

/// `opentelemetry.proto.common.v1.KeyValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct KeyValue {
    /// Attribute name.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Its value.
    #[prost(message, optional, tag = "2")]
    pub value: Option<AnyValue>,
}

impl KeyValue {
    /// A string attribute.
    pub fn string(key: impl Into<String>, value: impl Into<String>) -> KeyValue {
        KeyValue { key: key.into(), value: Some(AnyValue { value: Some(any_value::Value::StringValue(value.into())) }) }
    }

    /// An integer attribute.
    pub fn int(key: impl Into<String>, value: i64) -> KeyValue {
        KeyValue { key: key.into(), value: Some(AnyValue { value: Some(any_value::Value::IntValue(value)) }) }
    }

    /// A boolean attribute.
    pub fn bool(key: impl Into<String>, value: bool) -> KeyValue {
        KeyValue { key: key.into(), value: Some(AnyValue { value: Some(any_value::Value::BoolValue(value)) }) }
    }

    /// The value as a string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self.value.as_ref()?.value.as_ref()? {
            any_value::Value::StringValue(s) => Some(s),
            _ => None,
        }
    }

    /// The value as an integer, if it is one.
    pub fn as_int(&self) -> Option<i64> {
        match self.value.as_ref()?.value.as_ref()? {
            any_value::Value::IntValue(i) => Some(*i),
            _ => None,
        }
    }
}

/// `opentelemetry.proto.common.v1.AnyValue` (the scalar kinds).
#[derive(Clone, PartialEq, prost::Message)]
pub struct AnyValue {
    /// The value; unset is the empty value.
    #[prost(oneof = "any_value::Value", tags = "1, 2, 3, 4, 7")]
    pub value: Option<any_value::Value>,
}

/// The kinds of [`AnyValue`].
pub mod any_value {
    /// One attribute value.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        /// UTF-8 text.
        #[prost(string, tag = "1")]
        StringValue(String),
        /// A boolean.
        #[prost(bool, tag = "2")]
        BoolValue(bool),
        /// A signed integer.
        #[prost(int64, tag = "3")]
        IntValue(i64),
        /// A float.
        #[prost(double, tag = "4")]
        DoubleValue(f64),
        /// Raw bytes.
        #[prost(bytes, tag = "7")]
        BytesValue(Vec<u8>),
    }
}
