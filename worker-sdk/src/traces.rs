//! The `ax.run` span of each attempt, when the application set [`crate::WorkerBuilder::otlp_endpoint`]:
//! a child of the dispatch span whose context axd sent in `Assign.traceparent`, so the run joins
//! the instance's trace. Off by default; an Assign without a (parsable) traceparent is not traced.

use std::{
    sync::OnceLock,
    time::{Duration, SystemTime},
};

use ax_proto::otlp::{Exporter, KeyValue, SpanContext, SpanKind, SpanRecord};

use crate::HandlerError;

/// Where the worker's spans go; the exporter starts with the first traced attempt (on the
/// worker's runtime).
pub(crate) struct Tracing {
    pub endpoint: String,
    pub service_name: String,
    pub worker_id: String,
    exporter: OnceLock<Option<Exporter>>,
}

impl Tracing {
    pub(crate) fn new(endpoint: String, service_name: String, worker_id: String) -> Tracing {
        Tracing { endpoint, service_name, worker_id, exporter: OnceLock::new() }
    }

    fn exporter(&self) -> Option<&Exporter> {
        self.exporter
            .get_or_init(|| {
                let resource = vec![KeyValue::string("service.instance.id", self.worker_id.as_str())];
                match Exporter::start(&self.endpoint, &self.service_name, resource) {
                    Ok(e) => Some(e),
                    Err(e) => {
                        tracing::warn!(error = %e, "OTLP tracing off");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Starts the run span of an attempt assigned with `traceparent`, to start after `hold`.
    pub(crate) fn start(&self, traceparent: &str, attrs: RunAttrs, hold: Option<Duration>) -> Option<RunSpan> {
        let parent = SpanContext::from_traceparent(traceparent)?;
        let exporter = self.exporter()?.clone();
        let start = SystemTime::now() + hold.unwrap_or_default();
        Some(RunSpan { exporter, parent, start, attrs, worker_id: self.worker_id.clone() })
    }

    /// Sends what was recorded (shutdown), waiting at most 2 s for the collector.
    pub(crate) async fn flush(&self) {
        if let Some(Some(e)) = self.exporter.get()
            && !e.flush().await
        {
            tracing::warn!(endpoint = %self.endpoint, "the OTLP collector did not take the last spans within 2 s; they are dropped");
        }
    }
}

/// What the run span says about its attempt.
pub(crate) struct RunAttrs {
    pub instance_id: i64,
    pub attempt: u32,
    pub task: String,
    pub handler: String,
}

/// A run span that has started; [`RunSpan::finish`] records it.
pub(crate) struct RunSpan {
    exporter: Exporter,
    parent: SpanContext,
    start: SystemTime,
    attrs: RunAttrs,
    worker_id: String,
}

impl RunSpan {
    /// Records the span, ended now, as an error span if the handler failed.
    pub(crate) fn finish(self, result: &Result<String, HandlerError>) {
        let a = self.attrs;
        let mut span = SpanRecord::new(
            self.parent.new_child(),
            Some(&self.parent),
            "ax.run",
            SpanKind::Consumer,
            self.start,
            SystemTime::now(),
        )
        .attr(KeyValue::int("ax.instance.id", a.instance_id))
        .attr(KeyValue::int("ax.attempt", i64::from(a.attempt)))
        .attr(KeyValue::string("ax.task", a.task))
        .attr(KeyValue::string("ax.handler", a.handler))
        .attr(KeyValue::string("ax.worker.id", self.worker_id))
        .attr(KeyValue::string("ax.result.outcome", if result.is_ok() { "SUCCESS" } else { "FAILED" }));
        if let Err(e) = result {
            span.error = Some(e.message.clone());
        }
        self.exporter.record(span);
    }
}
