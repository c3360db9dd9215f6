//! axd's OpenTelemetry spans (README "Tracing"): one trace per instance. Its root is the fire
//! (`ax.fire`) or the manual trigger (`ax.trigger`) that created it; each dispatch of an attempt
//! (`ax.dispatch`, whose context goes to the worker in `Assign.traceparent`), each recorded
//! result (`ax.result`) and each attempt the sweeper ends (`ax.expire`: ack timeout, run timeout,
//! worker lost) are children of the root.
//!
//! The root's `traceparent` is stored with the instance (`ax_instance.trace_parent`), so the axd
//! that dispatches an attempt or records its result — any axd of the cluster — continues the same
//! trace. Off (every method a no-op) unless axd has `--otlp-endpoint`.

use std::{sync::Arc, time::SystemTime};

use ax_proto::otlp::{EndpointError, Exporter, KeyValue, SpanContext, SpanKind, SpanRecord};

use crate::model::{Instance, InstanceSource, InstanceStatus};

/// Attribute names, shared with the SDK's `ax.run` span where they mean the same.
pub mod attr {
    /// The instance id (integer).
    pub const INSTANCE_ID: &str = "ax.instance.id";
    /// The attempt number (integer, 1 for the first run).
    pub const ATTEMPT: &str = "ax.attempt";
    /// The task's name.
    pub const TASK: &str = "ax.task";
    /// The task's app.
    pub const APP: &str = "ax.app";
    /// The handler.
    pub const HANDLER: &str = "ax.handler";
    /// What created the instance: SCHEDULE, CATCH_UP or MANUAL.
    pub const SOURCE: &str = "ax.instance.source";
    /// The instance's status after the step (e.g. PENDING, SKIPPED, SUCCESS, or PENDING again when
    /// a retry was scheduled).
    pub const STATUS: &str = "ax.instance.status";
    /// The time the instance was due (RFC 3339).
    pub const FIRE_AT: &str = "ax.fire_at";
    /// The worker's id.
    pub const WORKER: &str = "ax.worker.id";
    /// The worker's stream.
    pub const SESSION: &str = "ax.session.id";
    /// The axd that recorded the span.
    pub const SCHEDULER: &str = "ax.scheduler.id";
    /// Whether the Assign reached the stream (boolean).
    pub const DELIVERED: &str = "ax.delivered";
    /// The worker's outcome of the attempt: SUCCESS or FAILED.
    pub const OUTCOME: &str = "ax.result.outcome";
    /// Which deadline the sweeper applied: ack_timeout, timeout or worker_lost.
    pub const EXPIRED: &str = "ax.expire.reason";
}

/// Which deadline ended an attempt (the `ax.expire` span).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expired {
    /// DISPATCHED and not accepted in time: back to PENDING.
    AckTimeout,
    /// RUNNING past its run deadline: TIMEOUT (retry policy applies).
    Timeout,
    /// RUNNING with its lease expired: failed as worker lost (retry policy applies).
    WorkerLost,
}

impl Expired {
    /// The `ax.expire.reason` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Expired::AckTimeout => "ack_timeout",
            Expired::Timeout => "timeout",
            Expired::WorkerLost => "worker_lost",
        }
    }
}

struct Inner {
    exporter: Exporter,
    scheduler_id: String,
}

/// axd's span recorder; cheap to clone; [`Traces::off`] records nothing.
#[derive(Clone, Default)]
pub struct Traces {
    inner: Option<Arc<Inner>>,
}

impl std::fmt::Debug for Traces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Traces").field("on", &self.inner.is_some()).finish()
    }
}

fn rfc3339(t: crate::model::Ts) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

impl Traces {
    /// Records nothing.
    pub fn off() -> Traces {
        Traces { inner: None }
    }

    /// Exports to `endpoint` (an OTLP/gRPC collector); must run on a tokio runtime.
    pub fn start(endpoint: &str, service_name: &str, scheduler_id: &str) -> Result<Traces, EndpointError> {
        let resource = vec![KeyValue::string("service.instance.id", scheduler_id)];
        let exporter = Exporter::start(endpoint, service_name, resource)?;
        Ok(Traces { inner: Some(Arc::new(Inner { exporter, scheduler_id: scheduler_id.to_owned() })) })
    }

    /// Whether spans are recorded.
    pub fn is_on(&self) -> bool {
        self.inner.is_some()
    }

    /// The `traceparent` of a new instance's root span (a new trace), to store with it; `None`
    /// when off.
    pub fn new_root(&self) -> Option<String> {
        self.inner.as_ref().map(|_| SpanContext::new_root().traceparent())
    }

    fn record(&self, span: SpanRecord) {
        if let Some(inner) = &self.inner {
            inner.exporter.record(span.attr(KeyValue::string(attr::SCHEDULER, inner.scheduler_id.as_str())));
        }
    }

    /// The root span of a created instance (`trace_parent` as stored with it): `ax.fire` for a
    /// schedule's fire or catch-up, `ax.trigger` for a manual trigger. `start..end`: the
    /// transaction that created it.
    #[allow(clippy::too_many_arguments)]
    pub fn created(
        &self,
        trace_parent: Option<&str>,
        id: i64,
        task: &str,
        app: &str,
        source: InstanceSource,
        status: InstanceStatus,
        fire_at: crate::model::Ts,
        (start, end): (SystemTime, SystemTime),
    ) {
        let Some(root) = self.inner.as_ref().and(trace_parent).and_then(SpanContext::from_traceparent) else {
            return;
        };
        let name = if source == InstanceSource::Manual { "ax.trigger" } else { "ax.fire" };
        let span = SpanRecord::new(root, None, name, SpanKind::Producer, start, end)
            .attr(KeyValue::int(attr::INSTANCE_ID, id))
            .attr(KeyValue::string(attr::TASK, task))
            .attr(KeyValue::string(attr::APP, app))
            .attr(KeyValue::string(attr::SOURCE, source.as_str()))
            .attr(KeyValue::string(attr::STATUS, status.as_str()))
            .attr(KeyValue::string(attr::FIRE_AT, rfc3339(fire_at)));
        self.record(span);
    }

    /// A new dispatch span for `i` (just marked DISPATCHED): a child of its root, or the root of
    /// a new trace for an instance created while tracing was off. `None` when off.
    pub fn dispatch_context(&self, i: &Instance) -> Option<(SpanContext, Option<SpanContext>)> {
        self.inner.as_ref()?;
        let root = i.trace_parent.as_deref().and_then(SpanContext::from_traceparent);
        Some((root.map_or_else(SpanContext::new_root, |r| r.new_child()), root))
    }

    /// Records the dispatch span of `i`'s attempt (its context from [`Self::dispatch_context`]):
    /// the claim and the send of its Assign.
    pub fn dispatched(
        &self,
        (span, root): (SpanContext, Option<SpanContext>),
        i: &Instance,
        session_id: &str,
        delivered: bool,
        (start, end): (SystemTime, SystemTime),
    ) {
        let mut s = SpanRecord::new(span, root.as_ref(), "ax.dispatch", SpanKind::Producer, start, end)
            .attr(KeyValue::int(attr::INSTANCE_ID, i.id))
            .attr(KeyValue::int(attr::ATTEMPT, i64::from(i.attempt)))
            .attr(KeyValue::string(attr::TASK, i.task_name.as_str()))
            .attr(KeyValue::string(attr::APP, i.app.as_str()))
            .attr(KeyValue::string(attr::HANDLER, i.handler.as_str()))
            .attr(KeyValue::string(attr::WORKER, i.worker_id.clone().unwrap_or_default()))
            .attr(KeyValue::string(attr::SESSION, session_id))
            .attr(KeyValue::bool(attr::DELIVERED, delivered));
        if !delivered {
            s.error = Some(format!("could not be delivered to session {session_id}"));
        }
        self.record(s);
    }

    /// The span of a recorded result of `i`'s attempt `attempt` (`i` as written: its new status);
    /// `failed`: the handler's error. An error span when the attempt failed (the instance may
    /// still be retried).
    pub fn result(
        &self,
        i: &Instance,
        attempt: u32,
        worker_id: &str,
        failed: Option<&str>,
        (start, end): (SystemTime, SystemTime),
    ) {
        if self.inner.is_none() {
            return;
        }
        let Some(root) = i.trace_parent.as_deref().and_then(SpanContext::from_traceparent) else { return };
        let mut s = SpanRecord::new(root.new_child(), Some(&root), "ax.result", SpanKind::Consumer, start, end)
            .attr(KeyValue::int(attr::INSTANCE_ID, i.id))
            .attr(KeyValue::int(attr::ATTEMPT, i64::from(attempt)))
            .attr(KeyValue::string(attr::TASK, i.task_name.as_str()))
            .attr(KeyValue::string(attr::APP, i.app.as_str()))
            .attr(KeyValue::string(attr::WORKER, worker_id))
            .attr(KeyValue::string(attr::OUTCOME, if failed.is_some() { "FAILED" } else { "SUCCESS" }))
            .attr(KeyValue::string(attr::STATUS, i.status.as_str()));
        s.error = failed.map(str::to_owned);
        self.record(s);
    }

    /// The span of an attempt of `i` (as written: its new status) that the sweeper ended.
    pub fn expired(&self, i: &Instance, attempt: u32, why: Expired, (start, end): (SystemTime, SystemTime)) {
        if self.inner.is_none() {
            return;
        }
        let Some(root) = i.trace_parent.as_deref().and_then(SpanContext::from_traceparent) else { return };
        let mut s = SpanRecord::new(root.new_child(), Some(&root), "ax.expire", SpanKind::Internal, start, end)
            .attr(KeyValue::int(attr::INSTANCE_ID, i.id))
            .attr(KeyValue::int(attr::ATTEMPT, i64::from(attempt)))
            .attr(KeyValue::string(attr::TASK, i.task_name.as_str()))
            .attr(KeyValue::string(attr::APP, i.app.as_str()))
            .attr(KeyValue::string(attr::WORKER, i.worker_id.clone().unwrap_or_default()))
            .attr(KeyValue::string(attr::EXPIRED, why.as_str()))
            .attr(KeyValue::string(attr::STATUS, i.status.as_str()));
        s.error = Some(i.message.clone());
        self.record(s);
    }

    /// Sends every span recorded so far (shutdown), waiting at most 2 s for the collector;
    /// whether they were sent (true when off).
    pub async fn flush(&self) -> bool {
        match &self.inner {
            Some(inner) => inner.exporter.flush().await,
            None => true,
        }
    }
}
