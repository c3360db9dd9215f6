//! OpenTelemetry traces (README "Tracing"): axd with `--otlp-endpoint` and a Rust SDK worker with
//! `otlp_endpoint` export to an in-process OTLP/gRPC collector; one instance is one trace, and the
//! worker's `ax.run` span is a child of the `ax.dispatch` span whose context axd sent in Assign.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use ax_proto::{
    otlp::{
        ExportTraceServiceRequest, ExportTraceServiceResponse, Span,
        service::trace_service_server::{TraceService, TraceServiceServer},
    },
    v1::InstanceStatus as S,
};
use ax_scheduler::config::{Config, Options};
use ax_tests::{
    TestDb,
    axd::Axd,
    client::{create, manual, once_after, spec, trigger, wait_status},
    eventually, on_server_backends,
};
use ax_worker::{Context, HandlerError, Worker};
use tokio_stream::wrappers::TcpListenerStream;

const LONG: Duration = Duration::from_secs(30);

/// A span as the collector received it, with the resource that sent it.
#[derive(Debug, Clone)]
struct Got {
    service: String,
    instance: String,
    span: Span,
}

impl Got {
    fn attr_int(&self, key: &str) -> Option<i64> {
        self.span.attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.as_int())
    }

    fn attr_str(&self, key: &str) -> Option<&str> {
        self.span.attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.as_str())
    }
}

/// An OTLP/gRPC collector on 127.0.0.1 that keeps every span it is sent.
#[derive(Clone, Default)]
struct Collector {
    spans: Arc<Mutex<Vec<Got>>>,
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = self.spans.lock().expect("spans");
        for rs in request.into_inner().resource_spans {
            let attrs = rs.resource.map(|r| r.attributes).unwrap_or_default();
            let find =
                |k: &str| attrs.iter().find(|kv| kv.key == k).and_then(|kv| kv.as_str()).unwrap_or("").to_owned();
            let (service, instance) = (find("service.name"), find("service.instance.id"));
            for ss in rs.scope_spans {
                for span in ss.spans {
                    spans.push(Got { service: service.clone(), instance: instance.clone(), span });
                }
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

impl Collector {
    async fn start() -> (Collector, String) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind collector");
        let addr = listener.local_addr().expect("addr");
        let c = Collector::default();
        let server = tonic::transport::Server::builder().add_service(TraceServiceServer::new(c.clone()));
        tokio::spawn(server.serve_with_incoming(TcpListenerStream::new(listener)));
        (c, format!("http://{addr}"))
    }

    /// The spans of instance `id` once all of `names` arrived (polled, within 20 s), by name.
    async fn spans_of(&self, id: i64, names: &[&str]) -> HashMap<String, Got> {
        eventually(Duration::from_secs(20), &format!("spans {names:?} of instance {id}"), || {
            let spans = self.spans.lock().expect("spans").clone();
            async move {
                let by_name: HashMap<String, Got> = spans
                    .into_iter()
                    .filter(|g| g.attr_int("ax.instance.id") == Some(id))
                    .map(|g| (g.span.name.clone(), g))
                    .collect();
                names.iter().all(|n| by_name.contains_key(*n)).then_some(by_name)
            }
        })
        .await
    }
}

/// A traced Rust SDK worker of app `demo` with handlers `echo` (succeeds) and `stuck` (runs until
/// canceled); stops when the sender drops.
fn traced_worker(endpoint: &str, collector: &str) -> tokio::sync::oneshot::Sender<()> {
    let worker = Worker::builder()
        .endpoint(endpoint)
        .app("demo")
        .worker_id("traced-worker")
        .otlp_endpoint(collector)
        .otlp_service_name("demo-worker")
        .handler("echo", |_ctx: Context| async move { Ok::<_, HandlerError>("done") })
        .handler("stuck", |ctx: Context| async move {
            ctx.cancellation().cancelled().await;
            Err::<(), _>(HandlerError::fatal("canceled"))
        })
        .build()
        .expect("worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(worker.run_until(async move {
        let _ = stopped.await;
    }));
    stop
}

/// The parent/child links of one instance's trace: trigger or fire at the root, dispatch and
/// result its children, the worker's run a child of the dispatch.
fn assert_one_trace(spans: &HashMap<String, Got>, root: &str) {
    let (r, d, run, res) = (&spans[root], &spans["ax.dispatch"], &spans["ax.run"], &spans["ax.result"]);
    assert_eq!(r.span.trace_id.len(), 16);
    for g in [d, run, res] {
        assert_eq!(g.span.trace_id, r.span.trace_id, "{} is in the trace of {root}", g.span.name);
    }
    assert!(r.span.parent_span_id.is_empty(), "{root} is the root");
    assert_eq!(d.span.parent_span_id, r.span.span_id, "dispatch is a child of {root}");
    assert_eq!(res.span.parent_span_id, r.span.span_id, "result is a child of {root}");
    assert_eq!(run.span.parent_span_id, d.span.span_id, "the worker's run is a child of axd's dispatch");
    assert_eq!(run.service, "demo-worker");
    assert_eq!(run.instance, "traced-worker");
    assert_eq!(run.attr_str("ax.result.outcome"), Some("SUCCESS"));
    assert_eq!(res.attr_str("ax.instance.status"), Some("SUCCESS"));
    assert_eq!(d.attr_str("ax.worker.id"), Some("traced-worker"));
    assert_eq!(d.attr_int("ax.attempt"), Some(1));
    for g in [r, d, res] {
        assert_eq!(g.service, "axd", "{} comes from axd", g.span.name);
        assert!(g.span.end_time_unix_nano >= g.span.start_time_unix_nano);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_is_one_trace_and_the_worker_run_is_a_child_of_the_dispatch() {
    let Some(db) = TestDb::create(ax_tests::Db::Sqlite).await else { return };
    let (collector, otlp) = Collector::start().await;
    let axd = Axd::start(&db, |o| o.otlp_endpoint = Some(otlp.clone())).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("by-hand", "demo", "echo", manual())).await;
    create(&mut admin, spec("on-time", "demo", "echo", once_after(Duration::from_millis(300)))).await;
    let _worker = traced_worker(&axd.endpoint, &otlp);

    let manual_id = trigger(&mut admin, "by-hand", "k1").await;
    let done = wait_status(&mut admin, manual_id, S::Success, LONG).await;
    let spans = collector.spans_of(manual_id, &["ax.trigger", "ax.dispatch", "ax.run", "ax.result"]).await;
    assert_one_trace(&spans, "ax.trigger");
    let hex: String = spans["ax.trigger"].span.trace_id.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(done.trace_id, hex, "GetInstance names the instance's trace");
    assert_eq!(spans["ax.trigger"].attr_str("ax.instance.source"), Some("MANUAL"));

    let fired = ax_tests::client::instance_of(&admin, "on-time").await;
    wait_status(&mut admin, fired.id, S::Success, LONG).await;
    let spans = collector.spans_of(fired.id, &["ax.fire", "ax.dispatch", "ax.run", "ax.result"]).await;
    assert_one_trace(&spans, "ax.fire");
    assert_eq!(spans["ax.fire"].attr_str("ax.task"), Some("on-time"));

    // An attempt the sweeper ends is a span of the trace too.
    let mut stuck = spec("stuck", "demo", "stuck", manual());
    stuck.timeout = Some(ax_tests::client::dur(Duration::from_secs(1)));
    create(&mut admin, stuck).await;
    let id = trigger(&mut admin, "stuck", "k1").await;
    wait_status(&mut admin, id, S::Timeout, LONG).await;
    let spans = collector.spans_of(id, &["ax.trigger", "ax.dispatch", "ax.run", "ax.expire"]).await;
    let (root, expire, run) = (&spans["ax.trigger"], &spans["ax.expire"], &spans["ax.run"]);
    assert_eq!(expire.span.trace_id, root.span.trace_id);
    assert_eq!(expire.span.parent_span_id, root.span.span_id);
    assert_eq!(expire.attr_str("ax.expire.reason"), Some("timeout"));
    assert_eq!(expire.attr_str("ax.instance.status"), Some("TIMEOUT"));
    assert_eq!(expire.span.status.as_ref().map(|s| s.code), Some(2), "an error span");
    assert_eq!(run.span.parent_span_id, spans["ax.dispatch"].span.span_id);
    assert_eq!(run.attr_str("ax.result.outcome"), Some("FAILED"));
    axd.stop().await;
    db.cleanup().await;
}

/// Created on one axd, dispatched and finished by another: the stored trace context joins them.
async fn an_instance_created_on_one_axd_and_run_through_another_is_one_trace(db: &TestDb) {
    let (collector, otlp) = Collector::start().await;
    let creator = Axd::start(db, |o| o.otlp_endpoint = Some(otlp.clone())).await;
    let runner = Axd::start(db, |o| o.otlp_endpoint = Some(otlp.clone())).await;
    let mut admin = creator.admin().await;
    create(&mut admin, spec("hand-over", "demo", "echo", manual())).await;
    // The only worker is on the other axd, so that axd dispatches and records the result.
    let _worker = traced_worker(&runner.endpoint, &otlp);
    let id = trigger(&mut admin, "hand-over", "k1").await;
    wait_status(&mut admin, id, S::Success, LONG).await;
    let spans = collector.spans_of(id, &["ax.trigger", "ax.dispatch", "ax.run", "ax.result"]).await;
    assert_one_trace(&spans, "ax.trigger");
    assert_eq!(spans["ax.trigger"].instance, creator.running.scheduler_id());
    assert_eq!(spans["ax.dispatch"].instance, runner.running.scheduler_id());
    assert_eq!(spans["ax.result"].instance, runner.running.scheduler_id());
    runner.stop().await;
    creator.stop().await;
}

on_server_backends!(an_instance_created_on_one_axd_and_run_through_another_is_one_trace);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_that_hangs_holds_back_neither_runs_nor_shutdown() {
    let Some(db) = TestDb::create(ax_tests::Db::Sqlite).await else { return };
    // Connections to it complete (the kernel's backlog) but nothing ever answers: every export
    // waits for its timeout (10 s).
    let hung = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let otlp = format!("http://{}", hung.local_addr().expect("addr"));
    let axd = Axd::start(&db, |o| o.otlp_endpoint = Some(otlp.clone())).await;
    let mut admin = axd.admin().await;
    create(&mut admin, spec("unhindered", "demo", "echo", manual())).await;
    let worker = traced_worker(&axd.endpoint, &otlp);
    for key in ["k1", "k2", "k3"] {
        let id = trigger(&mut admin, "unhindered", key).await;
        wait_status(&mut admin, id, S::Success, Duration::from_secs(5)).await;
    }
    drop(worker);
    let stopping = std::time::Instant::now();
    axd.stop().await;
    // Axd::stop gives a 5 s shutdown timeout; the last flush waits at most 2 s of it, after axd
    // left ax_scheduler.
    assert!(stopping.elapsed() < Duration::from_secs(4), "stopped in {:?}", stopping.elapsed());
    let left = db.store().await.conn().await.expect("conn").cluster().list_schedulers().await.expect("schedulers");
    assert!(left.is_empty(), "axd removed itself from ax_scheduler before waiting for the collector: {left:?}");
    drop(hung);
    db.cleanup().await;
}

#[test]
fn an_otlp_endpoint_that_is_not_plain_http_is_refused_by_name() {
    for bad in ["https://collector:4317", "collector:4317", "http://collector:4318/v1/traces"] {
        let o = Options { otlp_endpoint: Some(bad.into()), ..Options::default() };
        let err = Config::from_options(o).expect_err("refused").to_string();
        assert!(err.starts_with("otlp_endpoint: "), "{err}");
        let sdk = Worker::builder()
            .endpoint("http://127.0.0.1:7070")
            .app("demo")
            .otlp_endpoint(bad)
            .handler("echo", |_ctx: Context| async move { Ok::<_, HandlerError>(()) })
            .build();
        let err = sdk.err().expect("refused by the SDK").to_string();
        assert!(err.contains("otlp_endpoint: "), "{err}");
    }
    let o = Options { otlp_service_name: Some("x".into()), ..Options::default() };
    let err = Config::from_options(o).expect_err("a service name without an endpoint").to_string();
    assert!(err.starts_with("otlp_service_name: "), "{err}");
}
